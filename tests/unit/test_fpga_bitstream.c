/* SPDX-License-Identifier: Apache-2.0 */
/*
 * FPGA images and the bitstream store (backends/fpga/bitstream.h): GBS and
 * xclbin headers (good, truncated, wrong magic, wrong lengths, broken
 * metadata), raw images with manifests, index.json, and loading from a store
 * (by name, by sha256, missing, failing its checksum).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fpga_images.h"

#define IFACE "9926ab6d-6c92-5a68-aabc-a7d84c545738"
#define IFACE_HEX "9926ab6d6c925a68aabca7d84c545738"
#define AFU "d8424dc4-a4a3-c413-f89e-433683f9040b"
#define AFU_HEX "d8424dc4a4a3c413f89e433683f9040b"
#define XUUID "2b0d3e6f9a1c4875b3e2d1f0a9c8b7e6"

static int parse(const struct t_image *img, struct fpga_image *out, char *err, size_t size)
{
	return fpga_image_parse(img->data, img->len, out, err, size);
}

static void expect_fail(const uint8_t *data, size_t len, const char *msg)
{
	struct fpga_image out = { .kind = FPGA_IMAGE_RAW };
	char err[256] = "";

	assert_int_equal(fpga_image_parse(data, len, &out, err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg))
		fail_msg("want \"%s\" in \"%s\"", msg, err);
	assert_int_equal(out.kind, FPGA_IMAGE_RAW);	/* untouched */
}

static void test_gbs(void **state)
{
	struct t_image img;
	struct fpga_image out;
	char err[256];

	(void)state;
	t_gbs(&img, IFACE, AFU, NULL, NULL, 100);
	assert_int_equal(parse(&img, &out, err, sizeof(err)), 0);
	assert_int_equal(out.kind, FPGA_IMAGE_GBS);
	assert_string_equal(out.interface_id, IFACE_HEX);
	assert_string_equal(out.accelerator_id, AFU_HEX);
	assert_string_equal(out.platform, "nlb0");
	assert_int_equal(out.payload_size, 100);
	assert_int_equal(out.payload_offset, img.len - 100);
	assert_memory_equal(img.data + out.payload_offset, "\xd8\x42\x4d\xc4", 4);
	assert_string_equal(fpga_image_kind_name(out.kind), "gbs");

	/* truncated anywhere in the header or metadata */
	expect_fail(img.data, 19, "shorter than its 20-byte header");
	expect_fail(img.data, 40, "truncated");
	expect_fail(img.data, img.len - 100, "no partial-reconfiguration data");
	/* wrong magic: one bit of the GUID */
	img.data[15] ^= 1;
	expect_fail(img.data, img.len, "unknown format");
	img.data[15] ^= 1;
	/* a length past the end, and zero */
	t_put_le32(img.data + 16, 0x7fffffff);
	expect_fail(img.data, img.len, "runs past the end");
	t_put_le32(img.data + 16, 0);
	expect_fail(img.data, img.len, "no metadata");

	/* broken metadata */
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"afu-image\": {\"interface-uuid\": \"" IFACE "\"", "unexpected end" },
		{ "[1]", "no \"afu-image\"" },
		{ "{\"afu-image\": {\"accelerator-clusters\": []}}", "interface-uuid is missing" },
		{ "{\"afu-image\": {\"interface-uuid\": \"12\"}}", "interface-uuid is not a UUID" },
		{ "{\"afu-image\": {\"interface-uuid\": \"" IFACE "\"}}", "accelerator-clusters is missing" },
		{ "{\"afu-image\": {\"interface-uuid\": \"" IFACE "\", \"accelerator-clusters\": []}}",
		  "missing or empty" },
		{ "{\"afu-image\": {\"interface-uuid\": \"" IFACE "\", \"accelerator-clusters\": [{}]}}",
		  "accelerator-type-uuid is missing" },
		{ "{\"afu-image\": {\"interface-uuid\": \"" IFACE "\", \"accelerator-clusters\": "
		  "[{\"accelerator-type-uuid\": 5}]}}", "accelerator-type-uuid is missing" },
		{ "{\"afu-image\": {}} trailing", "not one JSON value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t_gbs(&img, IFACE, AFU, bad[i].json, NULL, 32);
		expect_fail(img.data, img.len, bad[i].msg);
	}
	/* a NUL inside the metadata */
	t_gbs(&img, IFACE, AFU, NULL, NULL, 32);
	img.data[25] = '\0';
	expect_fail(img.data, img.len, "NUL");
}

static void test_xclbin(void **state)
{
	struct t_image img;
	struct fpga_image out;
	char err[256];

	(void)state;
	t_xclbin(&img, IFACE_HEX, "xilinx_u55c_gen3x16_xdma_base_3", XUUID, 2);
	assert_int_equal(parse(&img, &out, err, sizeof(err)), 0);
	assert_int_equal(out.kind, FPGA_IMAGE_XCLBIN);
	assert_string_equal(out.interface_id, IFACE_HEX);
	assert_string_equal(out.accelerator_id, XUUID);
	assert_string_equal(out.platform, "xilinx_u55c_gen3x16_xdma_base_3");
	assert_int_equal(out.payload_offset, 0);
	assert_int_equal(out.payload_size, img.len);

	/* a single-stage xclbin names no interface */
	t_xclbin(&img, NULL, "xilinx_u200_xdma_201830_2", XUUID, 0);
	assert_int_equal(parse(&img, &out, err, sizeof(err)), 0);
	assert_string_equal(out.interface_id, "");

	t_xclbin(&img, IFACE_HEX, "vbnv", XUUID, 1);
	expect_fail(img.data, 455, "shorter than its 456-byte header");
	expect_fail(img.data, img.len - 1, "truncated");
	img.data[6] = '1';	/* "xclbin1" */
	expect_fail(img.data, img.len, "unknown format");
	img.data[6] = '2';
	t_put_le32(img.data + 304, 100);
	expect_fail(img.data, img.len, "shorter than the header");
	t_put_le32(img.data + 304, (uint32_t)img.len);
	t_put_le32(img.data + 448, 3);	/* 3 x 40 bytes past m_length */
	expect_fail(img.data, img.len, "do not fit");
	t_put_le32(img.data + 448, 0x10001);
	expect_fail(img.data, img.len, "do not fit");
	t_put_le32(img.data + 448, 1);
	memset(img.data + 352, 'x', 64);
	expect_fail(img.data, img.len, "not NUL-terminated");
	img.data[352] = 7;
	expect_fail(img.data, img.len, "not printable");
	t_xclbin(&img, IFACE_HEX, "vbnv", "00000000000000000000000000000000", 0);
	expect_fail(img.data, img.len, "all zero");
	expect_fail((const uint8_t *)"", 0, "unknown format");
}

static void test_manifest(void **state)
{
	struct fpga_image out = { 0 };
	char err[256];
	const char *good = "{\"interfaceID\": \"" IFACE "\", \"acceleratorID\": \"" AFU_HEX "\"}";

	(void)state;
	assert_int_equal(fpga_manifest_parse(good, strlen(good), 1234, &out, err, sizeof(err)), 0);
	assert_int_equal(out.kind, FPGA_IMAGE_RAW);
	assert_string_equal(out.interface_id, IFACE_HEX);
	assert_string_equal(out.accelerator_id, AFU_HEX);
	assert_int_equal(out.payload_size, 1234);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "{\"acceleratorID\": \"" AFU_HEX "\"}", "interfaceID is required" },
		{ "{\"interfaceID\": \"abc\"}", "must be a 128-bit hex ID" },
		{ "{\"interfaceID\": 1}", "must be a 128-bit hex ID" },
		{ "{\"interfaceID\": \"" IFACE "\", \"url\": \"x\"}", "unknown field \"url\"" },
		{ "[]", "not a JSON object" },
		{ "{", "not one JSON value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(fpga_manifest_parse(bad[i].text, strlen(bad[i].text), 1, &out, err,
						     sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("case %zu: want \"%s\" in \"%s\"", i, bad[i].msg, err);
	}
}

static void test_index(void **state)
{
	struct fpga_index idx;
	char err[256];
	const char *sha_a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	char text[512];

	(void)state;
	snprintf(text, sizeof(text), "{\"zeta\": \"%s\", \"alpha-1.gbs\": \"%s\"}", sha_a, sha_a);
	assert_int_equal(fpga_index_parse(text, strlen(text), &idx, err, sizeof(err)), 0);
	assert_int_equal(idx.n, 2);
	assert_string_equal(idx.entries[0].name, "alpha-1.gbs");	/* sorted */
	assert_string_equal(fpga_index_find(&idx, "zeta"), sha_a);
	assert_null(fpga_index_find(&idx, "nope"));
	assert_null(fpga_index_find(&idx, "../zeta"));
	fpga_index_free(&idx);
	fpga_index_free(NULL);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "{\"a/b\": \"x\"}", "not a valid name" },
		{ "{\"..\": \"x\"}", "not a valid name" },
		{ "{\"a\": \"ABCD\"}", "64 lower-case hex" },
		{ "{\"a\": 5}", "64 lower-case hex" },
		{ "[\"a\"]", "not a JSON object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(fpga_index_parse(bad[i].text, strlen(bad[i].text), &idx, err,
						  sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].msg))
			fail_msg("case %zu: want \"%s\" in \"%s\"", i, bad[i].msg, err);
	}
	assert_true(fpga_store_name_valid("nlb0.gbs"));
	assert_false(fpga_store_name_valid(""));
	assert_false(fpga_store_name_valid("a b"));
	assert_false(fpga_store_name_valid("0123456789012345678901234567890123456789012345678901234567890123"));
}

static void test_sha256(void **state)
{
	char hex[FPGA_SHA256_HEX];

	(void)state;
	/* FIPS 180-2 test vectors */
	assert_int_equal(fpga_sha256_hex("abc", 3, hex), 0);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(fpga_sha256_hex("", 0, hex), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_store(void **state)
{
	char *dir = t_store_new();
	char index[1024] = "{}", sha_gbs[FPGA_SHA256_HEX], sha_x[FPGA_SHA256_HEX],
	     sha_raw[FPGA_SHA256_HEX], err[512], path[4200];
	struct t_image gbs, xcl, raw = { .len = 300 };
	struct fpga_loaded l;
	struct fpga_image d;

	(void)state;
	assert_non_null(dir);
	/* no index: nothing named */
	assert_int_equal(fpga_store_load(dir, "nlb0", NULL, &l, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "not in the store"));

	t_gbs(&gbs, IFACE, AFU, NULL, NULL, 64);
	t_xclbin(&xcl, IFACE_HEX, "xilinx_u55c_gen3x16_xdma_base_3", XUUID, 1);
	memset(raw.data, 0x5a, raw.len);
	assert_int_equal(t_store_add(dir, &gbs, "nlb0", index, sizeof(index), sha_gbs), 0);
	assert_int_equal(t_store_add(dir, &xcl, "hello", index, sizeof(index), sha_x), 0);
	assert_int_equal(t_store_add(dir, &raw, NULL, index, sizeof(index), sha_raw), 0);

	/* by name, by sha256 */
	assert_int_equal(fpga_store_load(dir, "nlb0", NULL, &l, err, sizeof(err)), 0);
	assert_string_equal(l.sha256, sha_gbs);
	assert_int_equal(l.image.kind, FPGA_IMAGE_GBS);
	assert_int_equal(l.len, gbs.len);
	assert_memory_equal(l.data, gbs.data, gbs.len);
	fpga_store_unload(&l);
	assert_int_equal(fpga_store_load(dir, NULL, sha_x, &l, err, sizeof(err)), 0);
	assert_int_equal(l.image.kind, FPGA_IMAGE_XCLBIN);
	assert_string_equal(l.image.accelerator_id, XUUID);
	fpga_store_unload(&l);
	/* a name and a sha256 that disagree */
	assert_int_equal(fpga_store_load(dir, "nlb0", sha_x, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the claim names"));
	/* neither */
	assert_int_equal(fpga_store_load(dir, "", "ABC", &l, err, sizeof(err)), -EINVAL);

	/* a raw image without manifest cannot be used; with one it can */
	assert_int_equal(fpga_store_load(dir, NULL, sha_raw, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown format"));
	assert_int_equal(fpga_store_describe(dir, sha_raw, &d, err, sizeof(err)), -EINVAL);
	assert_int_equal(d.kind, FPGA_IMAGE_UNKNOWN);
	snprintf(path, sizeof(path), "%s.json", sha_raw);
	const char *manifest = "{\"interfaceID\": \"" IFACE_HEX "\"}";
	assert_int_equal(atomic_file_write(dir, path, manifest, strlen(manifest), 0644), 0);
	assert_int_equal(fpga_store_load(dir, NULL, sha_raw, &l, err, sizeof(err)), 0);
	assert_int_equal(l.image.kind, FPGA_IMAGE_RAW);
	assert_string_equal(l.image.interface_id, IFACE_HEX);
	assert_int_equal(l.image.payload_size, 300);
	fpga_store_unload(&l);

	/* a file that does not hash to its name */
	snprintf(path, sizeof(path), "%s/%s", dir, sha_gbs);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	fseek(f, 40, SEEK_SET);
	fputc('X', f);
	fclose(f);
	assert_int_equal(fpga_store_load(dir, "nlb0", NULL, &l, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "fails its checksum"));
	/* describing (listing) does not check it */
	assert_int_equal(fpga_store_describe(dir, sha_gbs, &d, err, sizeof(err)), -EINVAL);

	/* named but missing */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(fpga_store_load(dir, "nlb0", NULL, &l, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "no such file"));

	/* a broken index is an error, not an empty store */
	assert_int_equal(atomic_file_write(dir, "index.json", "{", 1, 0644), 0);
	assert_int_equal(fpga_store_load(dir, "hello", NULL, &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "index.json"));
	t_store_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gbs),
		cmocka_unit_test(test_xclbin),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
