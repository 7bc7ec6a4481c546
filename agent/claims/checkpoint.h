/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The prepared-claims checkpoint of one DRA driver: data model and codec
 * (pure). The file (docs/claims.md) is
 *
 *   {"kind": "DraletCheckpoint", "version": 1,
 *    "checksum": "crc32:<8 hex digits>", "data": {...}}
 *
 * where the checksum covers the compact serialization of "data" (json-c,
 * JSON_C_TO_STRING_PLAIN | NOSLASHESCAPE, which re-serializes a parsed
 * object byte for byte because the data holds only strings, integers,
 * booleans, arrays and objects). "data" carries the driver, the boot ID and
 * one entry per claim: UID, namespace/name, state, and per device its pool,
 * name, shareID and consumedCapacity (shared devices only), requests, adminAccess, CDI class and ID, identity facts (PCI
 * address and IDs, uuid), the container edits (to write a lost CDI spec
 * again without touching hardware) and the backend's undo state.
 */
#ifndef DRALET_CHECKPOINT_H
#define DRALET_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/core/edits.h"

#define CHECKPOINT_VERSION 1
#define CHECKPOINT_KIND "DraletCheckpoint"
#define CHECKPOINT_MAX_BYTES (64u << 20)

enum ckpt_state {
	CKPT_PREPARE_STARTED,	/* hardware may be half prepared: roll back on start */
	CKPT_PREPARE_COMPLETED,	/* prepared, CDI spec written, answer may have been sent */
	CKPT_UNPREPARE_STARTED,	/* unprepare began: finish it on start */
};

/* What makes a device "the same one" across a restart. */
struct ckpt_identity {
	char *pci_address;	/* NULL for devices without a PCI function */
	uint16_t vendor_id, device_id;
	uint16_t subsystem_vendor_id, subsystem_device_id;
	char *uuid;		/* the device's "uuid" attribute, NULL when it has none */
};

struct ckpt_device {
	char *pool;
	char *device;
	/* a share of a shared device (claim_plan.h): its shareID and what it
	 * consumes; NULL / 0 for an exclusive allocation */
	char *share_id;
	struct dralet_capacity *consumed;	/* names and quantities owned */
	size_t n_consumed;
	char **requests;	/* full request names ("req" or "req/sub") */
	size_t n_requests;
	bool admin_access;
	bool prepared;		/* the backend's prepare succeeded; edits and undo are final */
	char *cdi_class;	/* class of the claim's spec file this device is in */
	char *cdi_id;		/* qualified CDI device name */
	struct ckpt_identity identity;
	struct dralet_edits edits;
	struct dralet_undo undo;
};

struct ckpt_claim {
	char *uid;
	char *namespace_;
	char *name;
	enum ckpt_state state;
	struct ckpt_device *devices;
	size_t n_devices;
	/* checkpoint_write's cache: this entry's compact JSON as last written;
	 * NULL until then, and after ckpt_claim_changed() */
	char *written;
};

struct checkpoint {
	char *driver;
	char *boot_id;		/* "" when unknown */
	struct ckpt_claim **claims;	/* owned */
	size_t n_claims;
};

/* A new, empty checkpoint (copies the strings). NULL on ENOMEM. */
struct checkpoint *checkpoint_new(const char *driver, const char *boot_id);
void checkpoint_free(struct checkpoint *ck);
void ckpt_claim_free(struct ckpt_claim *c);
/* Says that @c changed since the last checkpoint_write (its next write
 * serializes it again). Whoever changes an entry of a checkpoint calls it. */
void ckpt_claim_changed(struct ckpt_claim *c);
void ckpt_device_clear(struct ckpt_device *d);

/* The claim with @uid, or NULL. */
struct ckpt_claim *checkpoint_find(const struct checkpoint *ck, const char *uid);
/* Appends @claim (ownership passes to @ck on success). */
int checkpoint_add(struct checkpoint *ck, struct ckpt_claim *claim);
/* Removes the claim with @uid and returns it (the caller owns it), or NULL. */
struct ckpt_claim *checkpoint_take(struct checkpoint *ck, const char *uid);
/* Removes and frees the claim with @uid; 0, or -ENOENT. */
int checkpoint_remove(struct checkpoint *ck, const char *uid);

const char *ckpt_state_name(enum ckpt_state s);

/* Deep copies (0 or -ENOMEM; the destination is overwritten, not freed). */
int ckpt_consumed_copy(struct dralet_capacity **dst, size_t *ret_n,
		       const struct dralet_capacity *src, size_t n);
int ckpt_edits_copy(struct dralet_edits *dst, const struct dralet_edits *src);
int ckpt_undo_copy(struct dralet_undo *dst, const struct dralet_undo *src);

/* Writes the file content of @ck to @f, one claim's JSON tree at a time;
 * an entry unchanged since the last write is not serialized again (the
 * cache in ckpt_claim.written, which this fills). 0, -ENOMEM, or -EIO when a
 * write to @f failed. */
int checkpoint_write(struct checkpoint *ck, FILE *f);

/* The file content of @ck (malloc'd, NUL-terminated; *ret_len without NUL). */
int checkpoint_encode(struct checkpoint *ck, char **ret_text, size_t *ret_len);

/*
 * Parses a checkpoint file. Errors, with the reason in @err:
 *   -EBADMSG          not JSON, wrong kind, checksum mismatch, a required
 *                     field missing or of the wrong type (corrupt)
 *   -EPROTONOSUPPORT  a version this dralet does not know (newer)
 * Unknown fields are ignored so a newer minor change can be read.
 */
int checkpoint_decode(const char *text, size_t len, struct checkpoint **ret_ck, char *err,
		      size_t errlen);

/* CRC-32 (IEEE 802.3, as zlib's crc32) of @len bytes. */
uint32_t checkpoint_crc32(const void *data, size_t len);

#endif
