/* SPDX-License-Identifier: Apache-2.0 */
/* bitstream.h: the pure parsers (GBS, axlf, manifest, index). Layouts: docs/fpga.md 1.2-1.3. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "bitstream.h"
#include "fpga.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const char *fpga_image_kind_name(enum fpga_image_kind kind)
{
	switch (kind) {
	case FPGA_IMAGE_GBS:
		return "gbs";
	case FPGA_IMAGE_XCLBIN:
		return "xclbin";
	case FPGA_IMAGE_RAW:
		return "raw";
	default:
		return "unknown";
	}
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* 16 raw bytes as 32 hex digits */
static void hex16(const uint8_t *p, char out[FPGA_ID_HEX])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[32] = '\0';
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* A full 128-bit ID (32 hex digits, dashes allowed) into @out. */
static bool full_id(const char *text, char out[FPGA_ID_HEX])
{
	char norm[40];

	if (!text || !fpga_id_normalize(text, norm, sizeof(norm)) || strlen(norm) != 32)
		return false;
	memcpy(out, norm, FPGA_ID_HEX);
	return true;
}

/* ---- GBS ---- */

#define GBS_GUID_LEN 16
#define GBS_HEADER_LEN (GBS_GUID_LEN + 4)
/* 58656F6E-4650-4741-B747-425376303031 in string byte order */
static const uint8_t gbs_guid[GBS_GUID_LEN] = { 0x58, 0x65, 0x6f, 0x6e, 0x46, 0x50, 0x47, 0x41,
						0xb7, 0x47, 0x42, 0x53, 0x76, 0x30, 0x30, 0x31 };

static struct json_object *parse_json(const char *text, size_t len, char *why, size_t whylen)
{
	struct json_tokener *tok;
	struct json_object *obj;

	if (len > (size_t)INT32_MAX || memchr(text, '\0', len)) {
		snprintf(why, whylen, "holds a NUL byte or is too long");
		return NULL;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	obj = json_tokener_parse_ex(tok, text, (int)len);
	if (!obj || tok->char_offset != (int)len) {
		enum json_tokener_error e = json_tokener_get_error(tok);
		snprintf(why, whylen, "is not one JSON value (%s at byte %d)",
			 e == json_tokener_continue ? "unexpected end" : json_tokener_error_desc(e),
			 tok->char_offset);
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

static const char *get_string(struct json_object *obj, const char *key)
{
	struct json_object *v;

	if (!json_object_is_type(obj, json_type_object) || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int parse_gbs(const uint8_t *data, size_t len, struct fpga_image *img, char *err,
		     size_t errlen)
{
	struct json_object *root, *afu, *clusters, *first;
	const char *iface, *accel, *name;
	char why[160];
	uint32_t json_len;
	int r = -EINVAL;

	if (len < GBS_HEADER_LEN)
		return fail(err, errlen, "GBS: %zu bytes, shorter than its 20-byte header", len);
	json_len = le32(data + GBS_GUID_LEN);
	if (json_len == 0)
		return fail(err, errlen, "GBS: no metadata (JSON length 0), so no interface ID "
			    "to check it against");
	if (json_len > len - GBS_HEADER_LEN)
		return fail(err, errlen, "GBS: metadata length %u runs past the end of the file "
			    "(%zu bytes): truncated", json_len, len);
	root = parse_json((const char *)data + GBS_HEADER_LEN, json_len, why, sizeof(why));
	if (!root)
		return fail(err, errlen, "GBS: metadata %s", why);
	if (!json_object_object_get_ex(root, "afu-image", &afu) ||
	    !json_object_is_type(afu, json_type_object)) {
		fail(err, errlen, "GBS: metadata has no \"afu-image\" object");
		goto out;
	}
	iface = get_string(afu, "interface-uuid");
	if (!full_id(iface, img->interface_id)) {
		fail(err, errlen, "GBS: afu-image.interface-uuid is %s", iface ? "not a UUID" : "missing");
		goto out;
	}
	if (!json_object_object_get_ex(afu, "accelerator-clusters", &clusters) ||
	    !json_object_is_type(clusters, json_type_array) ||
	    json_object_array_length(clusters) < 1 ||
	    !(first = json_object_array_get_idx(clusters, 0))) {
		fail(err, errlen, "GBS: afu-image.accelerator-clusters is missing or empty");
		goto out;
	}
	accel = get_string(first, "accelerator-type-uuid");
	if (!full_id(accel, img->accelerator_id)) {
		fail(err, errlen, "GBS: accelerator-clusters[0].accelerator-type-uuid is %s",
		     accel ? "not a UUID" : "missing");
		goto out;
	}
	name = get_string(first, "name");
	if (name)
		snprintf(img->platform, sizeof(img->platform), "%s", name);
	img->payload_offset = GBS_HEADER_LEN + (size_t)json_len;
	img->payload_size = len - img->payload_offset;
	if (!img->payload_size) {
		fail(err, errlen, "GBS: no partial-reconfiguration data after the metadata");
		goto out;
	}
	img->kind = FPGA_IMAGE_GBS;
	r = 0;
out:
	json_object_put(root);
	return r;
}

/* ---- axlf (xclbin2) ---- */

#define AXLF_HEADER_AT 304
#define AXLF_SECTIONS_AT 456
#define AXLF_SECTION_SIZE 40
#define AXLF_MAX_SECTIONS 0x10000

static int parse_axlf(const uint8_t *data, size_t len, struct fpga_image *img, char *err,
		      size_t errlen)
{
	uint64_t length;
	uint32_t sections;
	const uint8_t *vbnv = data + 352;
	size_t vlen;

	if (len < AXLF_SECTIONS_AT)
		return fail(err, errlen, "xclbin: %zu bytes, shorter than its %d-byte header", len,
			    AXLF_SECTIONS_AT);
	length = le64(data + AXLF_HEADER_AT);
	if (length < AXLF_SECTIONS_AT)
		return fail(err, errlen, "xclbin: m_length %llu is shorter than the header",
			    (unsigned long long)length);
	if (length > len)
		return fail(err, errlen, "xclbin: m_length %llu but the file has %zu bytes: "
			    "truncated", (unsigned long long)length, len);
	sections = le32(data + 448);
	if (sections > AXLF_MAX_SECTIONS ||
	    AXLF_SECTIONS_AT + (uint64_t)sections * AXLF_SECTION_SIZE > length)
		return fail(err, errlen, "xclbin: %u section headers do not fit in m_length %llu",
			    sections, (unsigned long long)length);
	for (vlen = 0; vlen < 64 && vbnv[vlen]; vlen++)
		if (vbnv[vlen] < 0x20 || vbnv[vlen] > 0x7e)
			return fail(err, errlen, "xclbin: m_platformVBNV is not printable text");
	if (vlen == 64)
		return fail(err, errlen, "xclbin: m_platformVBNV is not NUL-terminated");
	if (all_zero(data + 416, 16))
		return fail(err, errlen, "xclbin: its uuid is all zero");
	memcpy(img->platform, vbnv, vlen);
	img->platform[vlen] = '\0';
	if (!all_zero(data + 336, 16))
		hex16(data + 336, img->interface_id);
	hex16(data + 416, img->accelerator_id);
	img->payload_offset = 0;
	img->payload_size = (size_t)length;
	img->kind = FPGA_IMAGE_XCLBIN;
	return 0;
}

int fpga_image_parse(const uint8_t *data, size_t len, struct fpga_image *ret, char *err,
		     size_t errlen)
{
	struct fpga_image img = { 0 };
	int r;

	if (len >= GBS_GUID_LEN && !memcmp(data, gbs_guid, GBS_GUID_LEN))
		r = parse_gbs(data, len, &img, err, errlen);
	else if (len >= 8 && !memcmp(data, "xclbin2\0", 8))
		r = parse_axlf(data, len, &img, err, errlen);
	else
		r = fail(err, errlen, "unknown format (neither a GBS nor an xclbin2 header) and "
			 "no manifest");
	if (r == 0)
		*ret = img;
	return r;
}

/* ---- manifest of a raw image ---- */

int fpga_manifest_parse(const char *text, size_t len, size_t image_len, struct fpga_image *ret,
			char *err, size_t errlen)
{
	struct fpga_image img = { .kind = FPGA_IMAGE_RAW, .payload_size = image_len };
	struct json_object *root;
	char why[160];
	int r = -EINVAL;

	root = parse_json(text, len, why, sizeof(why));
	if (!root)
		return fail(err, errlen, "manifest %s", why);
	if (!json_object_is_type(root, json_type_object)) {
		fail(err, errlen, "manifest is not a JSON object");
		goto out;
	}
	json_object_object_foreach(root, key, val) {
		const char *s = json_object_is_type(val, json_type_string) ? json_object_get_string(val)
									   : NULL;
		char *dst;

		if (!strcmp(key, "flags")) {	/* fpga_manager flags: hex digits */
			char *end;
			if (!s || !*s || strlen(s) > 8 || (img.mgr_flags = strtoul(s, &end, 16), *end)) {
				fail(err, errlen, "manifest: flags must be 1-8 hex digits (FPGA_MGR_* "
				     "bits, 1: partial reconfiguration)");
				goto out;
			}
			continue;
		}
		if (!strcmp(key, "overlay") || !strcmp(key, "firmwareName")) {
			dst = key[0] == 'o' ? img.overlay : img.firmware_name;
			if (!fpga_store_name_valid(s)) {
				fail(err, errlen, "manifest: %s must be a file name of 1-63 characters "
				     "of [A-Za-z0-9._-]", key);
				goto out;
			}
			snprintf(dst, FPGA_NAME_MAX, "%s", s);
			continue;
		}
		if (!strcmp(key, "interfaceID"))
			dst = img.interface_id;
		else if (!strcmp(key, "acceleratorID"))
			dst = img.accelerator_id;
		else {
			fail(err, errlen, "manifest: unknown field \"%.40s\" (known: interfaceID, "
			     "acceleratorID, flags, overlay, firmwareName)", key);
			goto out;
		}
		if (!full_id(s, dst)) {
			fail(err, errlen, "manifest: %s must be a 128-bit hex ID", key);
			goto out;
		}
	}
	if (!img.overlay[0] != !img.firmware_name[0]) {
		fail(err, errlen, "manifest: overlay and firmwareName go together (the overlay's "
		     "fpga-region asks for the image by its firmware-name)");
		goto out;
	}
	if (!img.interface_id[0]) {
		fail(err, errlen, "manifest: interfaceID is required (the region compat_id the "
		     "image was built for)");
		goto out;
	}
	*ret = img;
	r = 0;
out:
	json_object_put(root);
	return r;
}

/* ---- names and the index ---- */

bool fpga_store_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= FPGA_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

bool fpga_sha256_valid(const char *hex)
{
	return hex && strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct fpga_index_entry *)a)->name,
		      ((const struct fpga_index_entry *)b)->name);
}

int fpga_index_parse(const char *text, size_t len, struct fpga_index *ret, char *err,
		     size_t errlen)
{
	struct fpga_index idx = { 0 };
	struct json_object *root;
	char why[160];
	int r = -EINVAL;

	root = parse_json(text, len, why, sizeof(why));
	if (!root)
		return fail(err, errlen, "index.json %s", why);
	if (!json_object_is_type(root, json_type_object)) {
		fail(err, errlen, "index.json is not a JSON object of names and sha256 sums");
		goto out;
	}
	idx.entries = calloc((size_t)json_object_object_length(root) + 1, sizeof(*idx.entries));
	if (!idx.entries) {
		r = -ENOMEM;
		goto out;
	}
	json_object_object_foreach(root, key, val) {
		const char *s = json_object_is_type(val, json_type_string) ? json_object_get_string(val)
									   : NULL;

		if (!fpga_store_name_valid(key)) {
			fail(err, errlen, "index.json: \"%.70s\" is not a valid name (1-63 of "
			     "A-Z a-z 0-9 . _ -)", key);
			goto out;
		}
		if (!fpga_sha256_valid(s)) {
			fail(err, errlen, "index.json: %s: want 64 lower-case hex digits (sha256)", key);
			goto out;
		}
		memcpy(idx.entries[idx.n].name, key, strlen(key) + 1);
		memcpy(idx.entries[idx.n].sha256, s, FPGA_SHA256_HEX);
		idx.n++;
	}
	qsort(idx.entries, idx.n, sizeof(*idx.entries), by_name);
	*ret = idx;
	idx.entries = NULL;
	r = 0;
out:
	free(idx.entries);
	json_object_put(root);
	return r;
}

void fpga_index_free(struct fpga_index *idx)
{
	if (!idx)
		return;
	free(idx->entries);
	*idx = (struct fpga_index){ 0 };
}

const char *fpga_index_find(const struct fpga_index *idx, const char *name)
{
	struct fpga_index_entry key = { 0 }, *e;

	if (!fpga_store_name_valid(name) || !idx->n)
		return NULL;
	memcpy(key.name, name, strlen(name) + 1);
	e = bsearch(&key, idx->entries, idx->n, sizeof(*idx->entries), by_name);
	return e ? e->sha256 : NULL;
}
