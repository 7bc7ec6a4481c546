/* SPDX-License-Identifier: Apache-2.0 */
/*
 * FPGA images and the node's bitstream store (docs/fpga.md sections 1-2).
 *
 * Pure parsers over bytes (no I/O, fuzzed by tests/fuzz/fuzz_fpga_image.c):
 *   fpga_image_parse     a GBS (DFL/OPAE) or an xclbin (XRT axlf) header
 *   fpga_manifest_parse  the sidecar manifest of a raw fpga_manager image
 *   fpga_index_parse     the store's index.json (name -> sha256)
 * and the store over a directory:
 *   <dir>/index.json, <dir>/<sha256> (the image), <dir>/<sha256>.json (manifest)
 *
 * Errors: -EINVAL (malformed, with the reason in @err), -ENOENT (not in the
 * store), -EBADMSG (an image whose content does not match its sha256 name),
 * -ENOMEM, or the -errno of a read. Nothing here logs.
 */
#ifndef DRALET_BACKENDS_FPGA_BITSTREAM_H
#define DRALET_BACKENDS_FPGA_BITSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FPGA_STORE_DEFAULT_DIR "/var/lib/dralet/bitstreams"
#define FPGA_SHA256_HEX 65		/* 64 hex digits and the NUL */
#define FPGA_ID_HEX 33			/* 32 hex digits and the NUL */
#define FPGA_NAME_MAX 64		/* 63 characters and the NUL */

enum fpga_image_kind {
	FPGA_IMAGE_UNKNOWN,		/* no header dralet knows, no manifest */
	FPGA_IMAGE_GBS,			/* OPAE green bitstream: DFL partial reconfiguration */
	FPGA_IMAGE_XCLBIN,		/* XRT axlf */
	FPGA_IMAGE_RAW,			/* fpga_manager image described by a manifest */
};

/* "gbs", "xclbin", "raw", "unknown". */
const char *fpga_image_kind_name(enum fpga_image_kind kind);

struct fpga_image {
	enum fpga_image_kind kind;
	char interface_id[FPGA_ID_HEX];	/* normalised hex; "" when the image names none */
	char accelerator_id[FPGA_ID_HEX];	/* AFU ID (GBS), xclbin UUID, manifest's */
	char platform[65];		/* xclbin VBNV, GBS cluster name; "" when none */
	/* a raw image's manifest: fpga_manager flags (FPGA_MGR_* bits), and the
	 * device-tree overlay (a file of the store) whose fpga-region asks for
	 * the image by firmware-name (both "" when none) */
	unsigned long mgr_flags;
	char overlay[FPGA_NAME_MAX];
	char firmware_name[FPGA_NAME_MAX];
	size_t payload_offset;		/* what goes to the device: GBS after its header, */
	size_t payload_size;		/* an xclbin or raw image whole */
};

/*
 * Parses the header of @data (@len bytes): a GBS (16-byte GUID, u32 LE JSON
 * length, JSON with afu-image.interface-uuid and
 * afu-image.accelerator-clusters[0].accelerator-type-uuid, then the PR data)
 * or an xclbin ("xclbin2\0", m_length, m_interface_uuid, VBNV, uuid,
 * m_numSections). Any other content is -EINVAL "unknown format" (a raw
 * image takes its facts from a manifest: fpga_manifest_parse). 0 and *ret,
 * or -EINVAL with the reason in @err.
 */
int fpga_image_parse(const uint8_t *data, size_t len, struct fpga_image *ret, char *err,
		     size_t errlen);

/* The sidecar manifest of a raw image, a JSON object with "interfaceID"
 * (required) and "acceleratorID" (optional), hex IDs; "flags" (optional,
 * hex FPGA_MGR_* bits for the fpga_manager's flags); "overlay" and
 * "firmwareName" (optional, together: a device-tree overlay file in the
 * store and the firmware-name its fpga-region names); nothing else. Fills
 * @img as kind RAW over @image_len bytes. 0, or -EINVAL with @err. */
int fpga_manifest_parse(const char *text, size_t len, size_t image_len, struct fpga_image *img,
			char *err, size_t errlen);

/* Whether @name is a valid store name: 1-63 of [A-Za-z0-9._-], not "." or "..". */
bool fpga_store_name_valid(const char *name);
/* Whether @hex is 64 lower-case hex digits. */
bool fpga_sha256_valid(const char *hex);

/* One index entry (the strings live in the index). */
struct fpga_index_entry {
	char name[FPGA_NAME_MAX];
	char sha256[FPGA_SHA256_HEX];
};

struct fpga_index {
	struct fpga_index_entry *entries;	/* sorted by name */
	size_t n;
};

/* Parses index.json text ({"<name>": "<sha256>", ...}); the caller frees
 * with fpga_index_free. 0, -EINVAL with @err, -ENOMEM. */
int fpga_index_parse(const char *text, size_t len, struct fpga_index *ret, char *err,
		     size_t errlen);
void fpga_index_free(struct fpga_index *idx);
/* The sha256 of @name, or NULL. */
const char *fpga_index_find(const struct fpga_index *idx, const char *name);

/* sha256 of @data as 64 lower-case hex digits into @hex. 0 or -ENOMEM/-EIO. */
int fpga_sha256_hex(const void *data, size_t len, char hex[FPGA_SHA256_HEX]);

/* ---- the store (I/O) ---- */

/* Reads <dir>/index.json (absent: an empty index). */
int fpga_store_index(const char *dir, struct fpga_index *ret, char *err, size_t errlen);

/* An image of the store mapped read-only, its checksum verified. */
struct fpga_loaded {
	char sha256[FPGA_SHA256_HEX];
	struct fpga_image image;
	const uint8_t *data;		/* the whole file */
	size_t len;
};

/*
 * Finds the image named @name (in the index) or @sha256 (either may be ""
 * or NULL, not both), maps it, checks that its content hashes to its name
 * and parses it (its manifest for a raw image). -ENOENT when the name or
 * file is not in the store, -EBADMSG when the checksum fails, -EINVAL when
 * it cannot be parsed; the reason, naming the store and the image, in @err.
 * Release with fpga_store_unload.
 */
int fpga_store_load(const char *dir, const char *name, const char *sha256,
		    struct fpga_loaded *ret, char *err, size_t errlen);
void fpga_store_unload(struct fpga_loaded *l);

/*
 * The image of kind @kind bringing accelerator @accelerator_id (normalised)
 * built for @interface_id ("" : any) in the store @dir, loaded as
 * fpga_store_load does (checksum verified); the first by sha256 when
 * several. -ENOENT with the reason in @err when there is none.
 */
int fpga_store_find(const char *dir, enum fpga_image_kind kind, const char *accelerator_id,
		    const char *interface_id, struct fpga_loaded *ret, char *err, size_t errlen);

/* Same, without loading or verifying: the sha256 of the match into @ret
 * (headers only, for discovery). 0 or -ENOENT. */
int fpga_store_match(const char *dir, enum fpga_image_kind kind, const char *accelerator_id,
		     const char *interface_id, char ret[FPGA_SHA256_HEX]);

/* The first name of @sha256 in the index of @dir into @name ("" when it has none). */
void fpga_store_name_of(const char *dir, const char *sha256, char name[FPGA_NAME_MAX]);

/* Facts of one file of the store for listing: its kind and IDs without the
 * checksum (kind UNKNOWN when it parses neither way; @err then says why). */
int fpga_store_describe(const char *dir, const char *sha256, struct fpga_image *ret,
			char *err, size_t errlen);

#endif
