/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test images for the FPGA tests, built byte by byte from the layouts in
 * docs/fpga.md 1.2-1.3 (a GBS and an xclbin), and a bitstream store in a
 * temporary directory. Header-only (static helpers).
 */
#ifndef DRALET_TEST_FPGA_IMAGES_H
#define DRALET_TEST_FPGA_IMAGES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/atomic_file.h"
#include "backends/fpga/bitstream.h"

struct t_image {
	uint8_t data[4096];
	size_t len;
};

static inline void t_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* 32 hex digits (dashes skipped) into 16 bytes. */
static inline void t_hex16(const char *hex, uint8_t *out)
{
	for (int i = 0; i < 16; i++) {
		while (*hex == '-')
			hex++;
		unsigned v;
		sscanf(hex, "%2x", &v);
		out[i] = (uint8_t)v;
		hex += 2;
	}
}

/*
 * A GBS: the metadata GUID, the JSON length, @json (when NULL, metadata with
 * @iface and @afu), then a payload whose first 16 bytes are @payload_afu
 * (the AFU ID the simulated FPGA reads from a loaded image; NULL: @afu) and
 * @payload_len bytes in all.
 */
static inline void t_gbs(struct t_image *img, const char *iface, const char *afu,
			 const char *json, const char *payload_afu, size_t payload_len)
{
	static const uint8_t guid[16] = { 0x58, 0x65, 0x6f, 0x6e, 0x46, 0x50, 0x47, 0x41,
					  0xb7, 0x47, 0x42, 0x53, 0x76, 0x30, 0x30, 0x31 };
	char meta[1024];

	if (!json) {
		snprintf(meta, sizeof(meta),
			 "{\"version\": 1, \"afu-image\": {\"magic-no\": 488605312, "
			 "\"interface-uuid\": \"%s\", \"clock-frequency-high\": 312, "
			 "\"accelerator-clusters\": [{\"name\": \"nlb0\", \"total-contexts\": 1, "
			 "\"accelerator-type-uuid\": \"%s\"}]}}", iface, afu);
		json = meta;
	}
	memset(img, 0, sizeof(*img));
	memcpy(img->data, guid, 16);
	t_put_le32(img->data + 16, (uint32_t)strlen(json));
	memcpy(img->data + 20, json, strlen(json));
	img->len = 20 + strlen(json);
	if (payload_len >= 16)
		t_hex16(payload_afu ? payload_afu : afu, img->data + img->len);
	for (size_t i = 16; i < payload_len; i++)
		img->data[img->len + i] = (uint8_t)(i * 7);
	img->len += payload_len;
}

/* An xclbin: magic, m_length, interface UUID (@iface NULL: zero), VBNV, uuid. */
static inline void t_xclbin(struct t_image *img, const char *iface, const char *vbnv,
			    const char *uuid, uint32_t sections)
{
	memset(img, 0, sizeof(*img));
	img->len = 456 + 40 * sections + 64;
	memcpy(img->data, "xclbin2", 8);
	t_put_le32(img->data + 8, 0xffffffffu);
	t_put_le32(img->data + 304, (uint32_t)img->len);
	if (iface)
		t_hex16(iface, img->data + 336);
	memcpy(img->data + 352, vbnv, strlen(vbnv));
	t_hex16(uuid, img->data + 416);
	t_put_le32(img->data + 448, sections);
}

/* A store directory (mkdtemp'd, malloc'd path) with no images yet. */
static inline char *t_store_new(void)
{
	char tmpl[] = "/tmp/dralet-store-XXXXXX";
	char *d = mkdtemp(tmpl);

	return d ? strdup(d) : NULL;
}

/* Adds @img as <dir>/<sha256> (into @sha) and names it @name in index.json
 * (@name NULL: unnamed); the index is rewritten with every name given so far
 * through @index (a JSON object text buffer the caller keeps, "{}" at first). */
static inline int t_store_add(const char *dir, const struct t_image *img, const char *name,
			      char *index, size_t index_size, char sha[FPGA_SHA256_HEX])
{
	int r = fpga_sha256_hex(img->data, img->len, sha);

	if (r == 0)
		r = atomic_file_write(dir, sha, img->data, img->len, 0644);
	if (r == 0 && name) {
		size_t n = strlen(index);
		snprintf(index + n - 1, index_size - n + 1, "%s\"%s\": \"%s\"}", n > 2 ? ", " : "",
			 name, sha);
		r = atomic_file_write(dir, "index.json", index, strlen(index), 0644);
	}
	return r;
}

static inline void t_store_remove(char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(dir);
}

#endif
