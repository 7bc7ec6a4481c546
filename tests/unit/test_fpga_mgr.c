/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga_manager on an SoC (backends/fpga/fpga_mgr.h): the pure parts (which
 * way the kernel takes an image, a manager's state, dralet's marker, the
 * manifest's fpga_manager fields), then the fpga-region backend on an SoC
 * board snippet whose kernel is the board simulator's model: a device per
 * manager without a PCI function; an image loaded through a configfs
 * device-tree overlay and removed again (onUnprepare reset); refusals that
 * write nothing (no way to load it, reset through the firmware attribute);
 * a load the kernel accepts whose state does not reach operating fails
 * with the kernel's status text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "backends/fpga/fpga.h"
#include "backends/fpga/fpga_mgr.h"
#include "fpga_images.h"
#include "node_model.h"
#include "test_backend.h"

#define IFACE "6b7c2d4e8f1a3b5c9d0e2f4a6b8c1d3e"
#define ACCEL "a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define ACCEL2 "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define ACCEL3 "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"
#define DEV "fpga-fpga0"
#define CFG "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","

/* ---- pure ---- */

static void test_choose(void **state)
{
	struct fpga_image plain = { .kind = FPGA_IMAGE_RAW }, ov = plain;
	char why[400];

	(void)state;
	snprintf(ov.overlay, sizeof(ov.overlay), "design.dtbo");
	snprintf(ov.firmware_name, sizeof(ov.firmware_name), "design.bin");
	/* the firmware attribute first, whatever the manifest says */
	struct fpga_mgr_offer all = { "fpga0", true, true };
	assert_int_equal(fpga_mgr_choose(&all, &ov, why, sizeof(why)), FPGA_MGR_WAY_FIRMWARE);
	assert_int_equal(fpga_mgr_choose(&all, &plain, why, sizeof(why)), FPGA_MGR_WAY_FIRMWARE);
	struct fpga_mgr_offer cfs = { "fpga0", false, true };
	assert_int_equal(fpga_mgr_choose(&cfs, &ov, why, sizeof(why)), FPGA_MGR_WAY_OVERLAY);
	assert_int_equal(fpga_mgr_choose(&cfs, &plain, why, sizeof(why)), FPGA_MGR_WAY_NONE);
	assert_non_null(strstr(why, "no firmware attribute in class/fpga_manager/fpga0"));
	assert_non_null(strstr(why, "names no device-tree overlay"));
	struct fpga_mgr_offer none = { "fpga0", false, false };
	assert_int_equal(fpga_mgr_choose(&none, &ov, why, sizeof(why)), FPGA_MGR_WAY_NONE);
	assert_non_null(strstr(why, "neither a firmware attribute"));
	assert_non_null(strstr(why, "kernel/config/device-tree/overlays"));
}

static void test_state(void **state)
{
	static const struct {
		const char *text;
		int kind;
	} cases[] = {
		{ "operating", FPGA_MGR_STATE_OPERATING },
		{ "unknown", FPGA_MGR_STATE_IDLE },
		{ "power off", FPGA_MGR_STATE_IDLE },
		{ "reset", FPGA_MGR_STATE_IDLE },
		{ "firmware request", FPGA_MGR_STATE_BUSY },
		{ "write init", FPGA_MGR_STATE_BUSY },
		{ "write", FPGA_MGR_STATE_BUSY },
		{ "write complete", FPGA_MGR_STATE_BUSY },
		{ "parse header", FPGA_MGR_STATE_BUSY },
		{ "firmware request error", FPGA_MGR_STATE_FAILED },
		{ "write error", FPGA_MGR_STATE_FAILED },
		{ "write complete error", FPGA_MGR_STATE_FAILED },
		{ "", FPGA_MGR_STATE_IDLE },
		{ NULL, FPGA_MGR_STATE_IDLE },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (fpga_mgr_state_classify(cases[i].text) != cases[i].kind)
			fail_msg("state \"%s\": %d, want %d", cases[i].text ? cases[i].text : "(null)",
				 fpga_mgr_state_classify(cases[i].text), cases[i].kind);
}

static void test_marker(void **state)
{
	char sha[FPGA_SHA256_HEX], good[80];

	(void)state;
	memset(good, 'a', 64);
	good[64] = '\0';
	assert_true(fpga_mgr_marker_parse(good, sha));
	assert_string_equal(sha, good);
	strcat(good, "\n");
	assert_true(fpga_mgr_marker_parse(good, sha));
	strcat(good, "x");
	assert_false(fpga_mgr_marker_parse(good, sha));
	good[63] = 'G';
	good[64] = '\0';
	assert_false(fpga_mgr_marker_parse(good, sha));
	assert_false(fpga_mgr_marker_parse("abc", sha));
	assert_false(fpga_mgr_marker_parse("", sha));
	assert_false(fpga_mgr_marker_parse(NULL, sha));
}

static int manifest(const char *text, struct fpga_image *img, char *err)
{
	return fpga_manifest_parse(text, strlen(text), 100, img, err, 256);
}

static void test_manifest(void **state)
{
	struct fpga_image img;
	char err[256];

	(void)state;
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\", \"acceleratorID\": \"" ACCEL
				  "\", \"flags\": \"1\", \"overlay\": \"design.dtbo\", "
				  "\"firmwareName\": \"design.bin\"}", &img, err), 0);
	assert_int_equal(img.mgr_flags, 1);
	assert_string_equal(img.overlay, "design.dtbo");
	assert_string_equal(img.firmware_name, "design.bin");
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\"}", &img, err), 0);
	assert_int_equal(img.mgr_flags, 0);
	assert_string_equal(img.overlay, "");
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\", \"flags\": \"xyz\"}", &img, err),
			 -EINVAL);
	assert_non_null(strstr(err, "flags must be 1-8 hex digits"));
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\", \"flags\": 1}", &img, err),
			 -EINVAL);
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\", \"overlay\": \"a.dtbo\"}", &img,
				  err), -EINVAL);
	assert_non_null(strstr(err, "overlay and firmwareName go together"));
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\", \"overlay\": \"../x\", "
				  "\"firmwareName\": \"a\"}", &img, err), -EINVAL);
	assert_non_null(strstr(err, "overlay must be a file name"));
	assert_int_equal(manifest("{\"interfaceID\": \"" IFACE "\", \"bogus\": \"1\"}", &img, err),
			 -EINVAL);
	assert_non_null(strstr(err, "known: interfaceID, acceleratorID, flags, overlay, "
				    "firmwareName"));
}

/* ---- on a board ---- */

static const char board_overlays[] =
	"board: soc\n"
	"pci: []\n"
	"configfs_overlays: true\n"
	"platform:\n"
	"  - device: firmware:zynqmp-firmware/firmware:zynqmp-firmware:pcap\n"
	"    driver: zynqmp_fpga_manager\n"
	"    fpga_managers: [{name: fpga0, driver_name: \"Xilinx ZynqMP FPGA Manager\", "
	"state: unknown}]\n"
	"  - device: fpga-full\n"
	"    driver: fpga-region\n"
	"    fpga_regions: [{name: region0, compat_id: \"" IFACE "\"}]\n";

static const char board_firmware[] =
	"board: soc\n"
	"pci: []\n"
	"platform:\n"
	"  - device: firmware:zynqmp-firmware/firmware:zynqmp-firmware:pcap\n"
	"    driver: zynqmp_fpga_manager\n"
	"    fpga_managers: [{name: fpga0, state: unknown, firmware: true}]\n"
	"  - device: fpga-full\n"
	"    driver: fpga-region\n"
	"    fpga_regions: [{name: region0, compat_id: \"" IFACE "\"}]\n";

struct fixture {
	struct node_model m;
	struct harness h;
	char *store;
	char fw[4200];
	char index[1024];
	char sha[FPGA_SHA256_HEX], sha_plain[FPGA_SHA256_HEX], sha_next[FPGA_SHA256_HEX];
};

static void put(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4400];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A flattened device tree (DTB) whose root node has firmware-name = @fw. */
static size_t dtbo(uint8_t *out, const char *fw)
{
	static const char strings[] = "firmware-name";
	size_t len = strlen(fw) + 1, off = 56, s;

	memset(out, 0, 256);
	be32(out, 0xd00dfeed);
	be32(out + 8, 56);		/* off_dt_struct, after the empty reserve map at 40 */
	be32(out + 20, 17);		/* version */
	be32(out + 24, 16);
	be32(out + off, 1);		/* BEGIN_NODE "" */
	off += 8;
	be32(out + off, 3);		/* PROP */
	be32(out + off + 4, (uint32_t)len);
	be32(out + off + 8, 0);
	memcpy(out + off + 12, fw, len);
	off += 12 + ((len + 3) & ~(size_t)3);
	be32(out + off, 2);		/* END_NODE */
	be32(out + off + 4, 9);		/* END */
	off += 8;
	be32(out + 36, (uint32_t)(off - 56));	/* size_dt_struct */
	s = off;
	memcpy(out + s, strings, sizeof(strings));
	be32(out + 12, (uint32_t)s);	/* off_dt_strings */
	be32(out + 32, sizeof(strings));
	be32(out + 4, (uint32_t)(s + sizeof(strings)));
	return s + sizeof(strings);
}

static void add_raw(struct fixture *f, const char *name, const char *manifest_json, size_t size,
		    char *sha)
{
	struct t_image img = { .len = size };
	char mf[80];

	for (size_t i = 0; i < size; i++)
		img.data[i] = (uint8_t)(i * 13 + name[0]);
	assert_int_equal(t_store_add(f->store, &img, name, f->index, sizeof(f->index), sha), 0);
	snprintf(mf, sizeof(mf), "%s.json", sha);
	put(f->store, mf, manifest_json, strlen(manifest_json));
}

/* A discovery as the agent's start or a rediscovery makes: the devices anew. */
static void restart(struct fixture *f)
{
	char options[9000];

	harness_fini(&f->h);
	snprintf(options, sizeof(options), "{\"bitstreamDir\": \"%s\", \"firmwareDir\": \"%s\", "
		 "\"stateDir\": \"%s/state\"}", f->store, f->fw, f->store);
	assert_int_equal(harness_init(&f->h, &backend_fpga_region, f->m.dir, options), 0);
	f->h.ctx.node = &f->m.node;
	assert_int_equal(harness_probe_all(&f->h), 0);
}

static struct fixture *fixture_new(const char *board)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t blob[256];
	char options[4400];

	assert_non_null(f);
	node_model_init(&f->m, board);
	f->store = t_store_new();
	assert_non_null(f->store);
	strcpy(f->index, "{}");
	snprintf(f->fw, sizeof(f->fw), "%s/firmware", f->store);
	assert_int_equal(mkdir(f->fw, 0755), 0);
	add_raw(f, "design", "{\"interfaceID\": \"" IFACE "\", \"acceleratorID\": \"" ACCEL3 "\", "
		"\"overlay\": \"design.dtbo\", \"firmwareName\": \"design.bin\"}", 512, f->sha);
	add_raw(f, "plain", "{\"interfaceID\": \"" IFACE "\", \"acceleratorID\": \"" ACCEL "\"}",
		300, f->sha_plain);
	add_raw(f, "next", "{\"interfaceID\": \"" IFACE "\", \"acceleratorID\": \"" ACCEL2 "\"}",
		400, f->sha_next);
	put(f->store, "design.dtbo", blob, dtbo(blob, "design.bin"));
	/* the kernel's firmware search path is where dralet copies images */
	assert_int_equal(f->m.real.write(f->m.real.userdata, "module/firmware_class/parameters/path",
					 f->fw), 0);
	snprintf(options, sizeof(options), "%s/state", f->store);
	assert_int_equal(mkdir(options, 0755), 0);
	restart(f);
	return f;
}

static void fixture_free(struct fixture *f)
{
	harness_fini(&f->h);
	node_model_fini(&f->m);
	t_store_remove(f->store);
	free(f);
}

static int health_of(struct fixture *f, struct dralet_device *dev)
{
	f->h.ctx.error[0] = '\0';
	return f->h.ctx.backend->health(&f->h.ctx, dev);
}

static int prepare(struct fixture *f, const char *config, struct t_req *t)
{
	struct dralet_device *dev = harness_device(&f->h, DEV);

	assert_non_null(dev);
	t_req_init(t, config);
	f->h.ctx.error[0] = '\0';
	return f->h.ctx.backend->prepare(&f->h.ctx, dev, &t->req);
}

static void tree_read(struct fixture *f, const char *rel, char *buf, size_t size)
{
	buf[0] = '\0';
	f->m.real.read(f->m.real.userdata, rel, buf, size);
}

static void test_platform_device(void **state)
{
	struct fixture *f = fixture_new(board_overlays);
	struct dralet_device *dev = harness_device(&f->h, DEV);
	const struct dralet_attr *a;

	(void)state;
	assert_non_null(dev);
	assert_null(dralet_device_pci(dev));
	assert_non_null(a = dralet_device_find_attr(dev, "platformDevice"));
	assert_string_equal(a->string_value, "firmware:zynqmp-firmware:pcap");
	assert_non_null(a = dralet_device_find_attr(dev, "loadMechanism"));
	assert_string_equal(a->string_value, "overlay");
	assert_non_null(a = dralet_device_find_attr(dev, "interfaceID"));
	assert_string_equal(a->string_value, IFACE);
	assert_null(dralet_device_find_attr(dev, "loadedBitstream"));
	fixture_free(f);
}

static void test_overlay_load_and_reset(void **state)
{
	struct fixture *f = fixture_new(board_overlays);
	struct t_req t;
	char buf[256], path[4400];

	(void)state;
	int pr = prepare(f, CFG "\"bitstream\": {\"name\": \"design\"}, "
				 "\"onUnprepare\": \"reset\"}", &t);
	if (pr != 0)
		fail_msg("%s", f->h.ctx.error);
	tree_read(f, "kernel/config/device-tree/overlays/dralet-fpga0/status", buf, sizeof(buf));
	assert_string_equal(buf, "applied");
	tree_read(f, "class/fpga_manager/fpga0/state", buf, sizeof(buf));
	assert_string_equal(buf, "operating");
	snprintf(path, sizeof(path), "%s/design.bin", f->fw);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/dralet-fpga0.loaded", f->fw);
	assert_int_equal(access(path, F_OK), 0);
	/* an earlier overlay of the manager is removed before the new one */
	assert_string_equal(f->m.log[0], "fpga_overlay dralet-fpga0 (remove)");
	assert_string_equal(f->m.log[1], "fpga_overlay dralet-fpga0 design.dtbo");
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaOnUnprepare"), "reset");

	/* a new discovery publishes the image */
	restart(f);
	const struct dralet_attr *a = dralet_device_find_attr(harness_device(&f->h, DEV),
							      "loadedBitstream");
	assert_non_null(a);
	assert_string_equal(a->string_value, "design");

	/* reset: the overlay goes, and the marker with it */
	struct dralet_device *dev = harness_device(&f->h, DEV);
	assert_int_equal(f->h.ctx.backend->unprepare(&f->h.ctx, dev, &t.req.claim, &t.undo), 0);
	snprintf(path, sizeof(path), "%s/kernel/config/device-tree/overlays/dralet-fpga0",
		 f->m.roots.sys);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/dralet-fpga0.loaded", f->fw);
	assert_int_equal(access(path, F_OK), -1);
	t_req_clear(&t);
	fixture_free(f);
}

static void test_no_way_writes_nothing(void **state)
{
	struct fixture *f = fixture_new(board_overlays);
	struct t_req t;

	(void)state;
	/* configfs but no overlay named, no firmware attribute */
	assert_int_equal(prepare(f, CFG "\"bitstream\": {\"name\": \"plain\"}}", &t), -EOPNOTSUPP);
	assert_non_null(strstr(f->h.ctx.error, "names no device-tree overlay"));
	assert_int_equal(f->m.n_log, 0);
	assert_null(dralet_undo_get(&t.undo, "fpgaBitstream"));
	t_req_clear(&t);
	fixture_free(f);
}

static void test_reset_through_firmware_refused(void **state)
{
	struct fixture *f = fixture_new(board_firmware);
	struct t_req t;
	char buf[64];

	(void)state;
	assert_int_equal(prepare(f, CFG "\"bitstream\": {\"name\": \"plain\"}, "
				 "\"onUnprepare\": \"reset\"}", &t), -EINVAL);
	assert_non_null(strstr(f->h.ctx.error, "cannot be cleared (FpgaConfig.onUnprepare: reset)"));
	assert_int_equal(f->m.n_log, 0);
	tree_read(f, "class/fpga_manager/fpga0/flags", buf, sizeof(buf));
	assert_string_equal(buf, "0");
	t_req_clear(&t);
	fixture_free(f);
}

/* A kernel that takes the firmware write but whose FPGA ends in an error
 * state: what the load reports is the manager's state and status. */
static struct fixture *current;

static int accepting_load(void *ud, const char *manager, unsigned long flags, const char *image)
{
	(void)ud;
	(void)manager;
	(void)flags;
	(void)image;
	current->m.real.write(current->m.real.userdata, "class/fpga_manager/fpga0/state",
			      "write complete error\n");
	current->m.real.write(current->m.real.userdata, "class/fpga_manager/fpga0/status",
			      "reconfig CRC error\n");
	return 0;
}

static void test_state_not_operating(void **state)
{
	struct fixture *f = fixture_new(board_firmware);
	struct node_ops ops = f->m.node;
	struct t_req t;

	(void)state;
	current = f;
	ops.fpga_mgr_load = accepting_load;
	f->h.ctx.node = &ops;
	assert_int_equal(prepare(f, CFG "\"bitstream\": {\"name\": \"plain\"}}", &t), -EIO);
	assert_non_null(strstr(f->h.ctx.error, "after loading dralet-"));
	assert_non_null(strstr(f->h.ctx.error, "the manager reads state \"write complete error\", "
					       "status: reconfig CRC error"));
	/* recorded before the write: the accelerator before (none) and the image's */
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaPreviousAfu"), "none");
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaAfu"), ACCEL);
	/* the manager is Unhealthy with the kernel's words */
	f->h.ctx.error[0] = '\0';
	assert_int_equal(f->h.ctx.backend->health(&f->h.ctx, harness_device(&f->h, DEV)),
			 DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(f->h.ctx.error, "reconfig CRC error"));
	t_req_clear(&t);
	fixture_free(f);
}

static int unprepare(struct fixture *f, struct t_req *t)
{
	f->h.ctx.error[0] = '\0';
	return f->h.ctx.backend->unprepare(&f->h.ctx, harness_device(&f->h, DEV), &t->req.claim,
					   &t->undo);
}

static void marker_is(struct fixture *f, const char *sha)
{
	char path[4400], text[80] = "";
	FILE *m;

	snprintf(path, sizeof(path), "%s/dralet-fpga0.loaded", f->fw);
	m = fopen(path, "r");
	if (!sha) {
		assert_null(m);
		return;
	}
	assert_non_null(m);
	assert_non_null(fgets(text, sizeof(text), m));
	fclose(m);
	text[strcspn(text, "\n")] = '\0';
	assert_string_equal(text, sha);
}

static void drop_marker(struct fixture *f)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/dralet-fpga0.loaded", f->fw);
	unlink(path);
}

/* The claims engine's recovery after a crash in the middle of loading "next"
 * over "plain": it has only the undo state recorded before the first write,
 * and unprepares with it. Every crash point ends with a region in a known
 * state, or, when the previous image is gone from the store, Unhealthy. */
static void test_crash_points(void **state)
{
	struct fixture *f = fixture_new(board_firmware);
	struct dralet_device *dev = harness_device(&f->h, DEV);
	struct t_req first, t;
	char buf[64], path[4400];
	size_t before;

	(void)state;
	assert_int_equal(prepare(f, CFG "\"bitstream\": {\"name\": \"plain\"}}", &first), 0);
	marker_is(f, f->sha_plain);
	t_req_init(&t, NULL);
	assert_int_equal(dralet_undo_set_all(&t.undo, (const struct dralet_undo_value[]){
		{ "fpgaPreviousAfu", ACCEL },
		{ "fpgaAfu", ACCEL2 },
		{ "fpgaBitstream", f->sha_next },
		{ "fpgaOnUnprepare", "keep" },
	}, 4), 0);

	/* A: after the undo state, before anything else: nothing to do */
	before = f->m.n_log;
	assert_int_equal(unprepare(f, &t), 0);
	assert_int_equal(f->m.n_log, before);
	marker_is(f, f->sha_plain);

	/* B: the marker removed (the image may be copied), no write yet; C: in the
	 * middle of the write; D: loaded, the marker not yet written. Each time
	 * what the region holds is unknown: the previous image is loaded again */
	static const char *const states[] = { "operating\n", "write\n", "operating\n" };
	for (int i = 0; i < 3; i++) {
		drop_marker(f);
		assert_int_equal(f->m.real.write(f->m.real.userdata,
						 "class/fpga_manager/fpga0/state", states[i]), 0);
		before = f->m.n_log;
		if (unprepare(f, &t) != 0)
			fail_msg("crash point %d: %s", i, f->h.ctx.error);
		assert_int_equal(f->m.n_log, before + 1);
		assert_non_null(strstr(f->m.log[before], "fpga_mgr_load fpga0 flags 0 dralet-"));
		marker_is(f, f->sha_plain);
		tree_read(f, "class/fpga_manager/fpga0/state", buf, sizeof(buf));
		assert_string_equal(buf, "operating");
		assert_int_equal(health_of(f, dev), DRALET_HEALTH_HEALTHY);
	}

	/* E: the previous image is gone from the store: unprepare fails, nothing is
	 * written, the manager is Unhealthy until it holds a known image */
	drop_marker(f);
	snprintf(path, sizeof(path), "%s/%s", f->store, f->sha_plain);
	assert_int_equal(rename(path, "/tmp/dralet-test-fpga-mgr-plain"), 0);
	before = f->m.n_log;
	assert_int_equal(unprepare(f, &t), -ENOENT);
	assert_non_null(strstr(f->h.ctx.error, "cannot restore its previous accelerator " ACCEL));
	assert_int_equal(f->m.n_log, before);
	assert_int_equal(health_of(f, dev), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(f->h.ctx.error, "fpga_manager fpga0 shows accelerator (none): "
					       "loading bitstream"));
	/* kept on disk (stateDir): a restart or rediscovery finds it again */
	char mark[4400];
	snprintf(mark, sizeof(mark), "%s/state/" DEV ".stranded", f->store);
	assert_int_equal(access(mark, F_OK), 0);
	restart(f);
	dev = harness_device(&f->h, DEV);
	assert_int_equal(health_of(f, dev), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(f->h.ctx.error, "its previous accelerator " ACCEL " could not be "
					       "put back"));
	/* the image back in the store, recovery's retry puts it back: known again,
	 * the mark gone from memory and disk */
	assert_int_equal(rename("/tmp/dralet-test-fpga-mgr-plain", path), 0);
	assert_int_equal(unprepare(f, &t), 0);
	marker_is(f, f->sha_plain);
	assert_int_equal(health_of(f, dev), DRALET_HEALTH_HEALTHY);
	assert_int_equal(access(mark, F_OK), -1);
	restart(f);
	assert_int_equal(health_of(f, harness_device(&f->h, DEV)), DRALET_HEALTH_HEALTHY);

	/* F: marked again, then the region reaches a known state by itself (an
	 * image loaded by hand): the health op clears the mark, on disk too */
	drop_marker(f);
	assert_int_equal(rename(path, "/tmp/dralet-test-fpga-mgr-plain"), 0);
	assert_int_equal(unprepare(f, &t), -ENOENT);
	assert_int_equal(access(mark, F_OK), 0);
	assert_int_equal(rename("/tmp/dralet-test-fpga-mgr-plain", path), 0);
	put(f->fw, "dralet-fpga0.loaded", f->sha_plain, 64);
	restart(f);
	assert_int_equal(health_of(f, harness_device(&f->h, DEV)), DRALET_HEALTH_HEALTHY);
	assert_int_equal(access(mark, F_OK), -1);
	t_req_clear(&t);
	t_req_clear(&first);
	fixture_free(f);
}

/* The real seam on a tree of plain files: names that are not one path
 * component are refused; the firmware load writes flags in hex, then the
 * image's name; removing an overlay that is not there is no error. */
static void test_real_seam(void **state)
{
	struct fixture *f = fixture_new(board_firmware);
	const struct node_ops *real = &f->m.real;
	char buf[64];

	(void)state;
	assert_int_equal(real->fpga_mgr_load(real->userdata, "../fpga0", 0, "a.bin"), -EINVAL);
	assert_int_equal(real->fpga_mgr_load(real->userdata, "fpga0", 0, "x/a.bin"), -EINVAL);
	assert_int_equal(real->fpga_mgr_load(real->userdata, "fpga9", 0, "a.bin"), -ENOENT);
	assert_int_equal(real->fpga_mgr_load(real->userdata, "fpga0", 0x11, "a.bin"), 0);
	tree_read(f, "class/fpga_manager/fpga0/flags", buf, sizeof(buf));
	assert_string_equal(buf, "11");
	assert_int_equal(real->fpga_overlay(real->userdata, "..", "a.dtbo"), -EINVAL);
	assert_int_equal(real->fpga_overlay(real->userdata, "dralet-fpga0", "../a.dtbo"), -EINVAL);
	/* this board has no configfs overlays */
	assert_int_equal(real->fpga_overlay(real->userdata, "dralet-fpga0", "a.dtbo"), -ENOENT);
	assert_int_equal(real->fpga_overlay(real->userdata, "dralet-fpga0", NULL), 0);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_state),
		cmocka_unit_test(test_marker),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_platform_device),
		cmocka_unit_test(test_overlay_load_and_reset),
		cmocka_unit_test(test_no_way_writes_nothing),
		cmocka_unit_test(test_reset_through_firmware_refused),
		cmocka_unit_test(test_state_not_operating),
		cmocka_unit_test(test_crash_points),
		cmocka_unit_test(test_real_seam),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
