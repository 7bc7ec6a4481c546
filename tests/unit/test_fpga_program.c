/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Claims that name a bitstream (FpgaConfig.bitstream), on a DFL card (an
 * N3000: FME and one port) and an Alveo (xrt) whose kernel is the board
 * simulator's model: prepare refuses a bitstream that is missing, fails its
 * checksum, is of another kind or built for another interface, with the
 * reason, and writes nothing; a bitstream already loaded is not written
 * again; a DFL port is programmed (DFL_FPGA_FME_PORT_PR through the model)
 * and verified by its afu_id, a port in use is not; unprepare keeps the
 * image or loads the previous one (golden), and puts back a port caught
 * mid-programming from the undo state alone, as recovery after a crash does.
 * A port on a VF (a D5005 with SR-IOV) is never programmed: that would take
 * SR-IOV off on its PF; an image it has already is fine.
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
#include <json-c/json.h>

#include "backends/fpga/fpga.h"
#include "fpga_images.h"
#include "node_model.h"
#include "test_backend.h"

#define IFACE "9926ab6d6c925a68aabca7d84c545738"
#define OTHER_IFACE "0123456789abcdef0123456789abcdef"
#define AFU "d8424dc4a4a3c413f89e433683f9040b"
#define NEW_AFU "f7df405cbd7acf7222f144b0b93acd18"
#define XIFACE "5a4ab2ef5c8b4d62a1e7f3d8b2c09e61"
#define XCLBIN "2b0d3e6f9a1c4875b3e2d1f0a9c8b7e6"
#define VBNV "xilinx_u55c_gen3x16_xdma_base_3"
#define LIAR_AFU "00000000111111112222222233333333"
#define AFU_FILE "bus/platform/devices/dfl-port.0/afu_id"
#define GARBAGE "0badc0de0badc0de0badc0de0badc0de"
#define PORT "fpga-0000-3b-00-0-port0"
#define ALVEO "fpga-0000-65-00-1"
#define CFG "{\"apiVersion\":\"fpga.dralet.dev/v1alpha1\",\"kind\":\"FpgaConfig\","

static const char board[] =
	"board: fpga-program\n"
	"pci:\n"
	"  - root: \"0000:3a\"\n"
	"    devices:\n"
	"      - bdf: 3a:00.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 3b:00.0\n"
	"            id: \"8086:0b30\"\n"
	"            class: 0x120000\n"
	"            driver: dfl-pci\n"
	"            dfl:\n"
	"              fme: {bitstream_id: \"0x23000410010309\", compat_id: " IFACE ", socket_id: 0}\n"
	"              ports: [{afu_id: " AFU "}]\n"
	"  - root: \"0000:60\"\n"
	"    devices:\n"
	"      - bdf: 60:01.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 65:00.0\n"
	"            id: \"10ee:505c\"\n"
	"            class: 0x120000\n"
	"            driver: xclmgmt\n"
	"            chardevs: [{name: xclmgmt256, class: xrt, dev: \"240:7\"}]\n"
	"            files:\n"
	"              mgmt_pf: null\n"
	"              instance: \"256\"\n"
	"              interface_uuids: \"" XIFACE "\"\n"
	"              logic_uuids: \"" XIFACE "\"\n"
	"          - bdf: 65:00.1\n"
	"            id: \"10ee:505d\"\n"
	"            class: 0x120000\n"
	"            driver: xocl\n"
	"            drm: {card: 0, render: 128}\n"
	"            files:\n"
	"              user_pf: null\n"
	"              rom.u.0/VBNV: " VBNV "\n"
	"              xclbinuuid: " XCLBIN "\n";

/* Absolute path of a file of the build ("tests/lib/fake-xrt.so"). */
static char *build_path(const char *rel)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char path[4096], *abs;

	snprintf(path, sizeof(path), "%s/%s", build, rel);
	abs = realpath(path, NULL);
	return abs ? abs : strdup(path);
}

struct fixture {
	struct node_model m;
	struct harness h;		/* dfl */
	struct harness x;		/* xrt */
	char *store;
	char xrt_log[4200];		/* what the XRT stand-in loaded: "<bdf> <uuid>" lines */
	char index[2048];
	char sha_new[FPGA_SHA256_HEX], sha_same[FPGA_SHA256_HEX], sha_other_iface[FPGA_SHA256_HEX],
	     sha_liar[FPGA_SHA256_HEX], sha_u200[FPGA_SHA256_HEX],
	     sha_xclbin[FPGA_SHA256_HEX], sha_xclbin_other[FPGA_SHA256_HEX],
	     sha_xclbin_loaded[FPGA_SHA256_HEX];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct t_image img;
	char options[512];

	assert_non_null(f);
	node_model_init(&f->m, board);
	f->store = t_store_new();
	assert_non_null(f->store);
	strcpy(f->index, "{}");
	t_gbs(&img, IFACE, NEW_AFU, NULL, NULL, 256);
	assert_int_equal(t_store_add(f->store, &img, "nlb3", f->index, sizeof(f->index), f->sha_new), 0);
	t_gbs(&img, IFACE, AFU, NULL, NULL, 128);
	assert_int_equal(t_store_add(f->store, &img, "nlb0", f->index, sizeof(f->index), f->sha_same), 0);
	t_gbs(&img, OTHER_IFACE, NEW_AFU, NULL, NULL, 64);
	assert_int_equal(t_store_add(f->store, &img, "other-shell", f->index, sizeof(f->index),
				     f->sha_other_iface), 0);
	/* metadata says NEW_AFU, the design loads as another AFU */
	t_gbs(&img, IFACE, NEW_AFU, NULL, LIAR_AFU, 200);
	assert_int_equal(t_store_add(f->store, &img, "liar", f->index, sizeof(f->index), f->sha_liar), 0);
	t_xclbin(&img, XIFACE, VBNV, "11112222333344445555666677778888", 1);
	assert_int_equal(t_store_add(f->store, &img, "vadd", f->index, sizeof(f->index),
				     f->sha_xclbin), 0);
	t_xclbin(&img, OTHER_IFACE, VBNV, "11112222333344445555666677778888", 1);
	assert_int_equal(t_store_add(f->store, &img, "vadd-u250", f->index, sizeof(f->index),
				     f->sha_xclbin_other), 0);
	t_xclbin(&img, NULL, "xilinx_u200_xdma_201830_2", "99990000999900009999000099990000", 1);
	assert_int_equal(t_store_add(f->store, &img, "u200", f->index, sizeof(f->index), f->sha_u200),
			 0);
	t_xclbin(&img, XIFACE, VBNV, XCLBIN, 2);
	assert_int_equal(t_store_add(f->store, &img, "loaded", f->index, sizeof(f->index),
				     f->sha_xclbin_loaded), 0);
	char *so = build_path("tests/lib/fake-xrt.so");
	snprintf(options, sizeof(options), "{\"bitstreamDir\": \"%s\", \"xrtLibrary\": \"%s\"}",
		 f->store, so);
	free(so);
	setenv("FAKE_XRT_SYSFS", f->m.roots.sys, 1);
	snprintf(f->xrt_log, sizeof(f->xrt_log), "%s/xrt.log", f->store);
	setenv("FAKE_XRT_LOG", f->xrt_log, 1);
	unsetenv("FAKE_XRT_FAIL");
	assert_int_equal(harness_init(&f->h, &backend_dfl, f->m.dir, options), 0);
	f->h.ctx.node = &f->m.node;
	assert_int_equal(harness_probe_all(&f->h), 0);
	assert_int_equal(harness_init(&f->x, &backend_xrt, f->m.dir, options), 0);
	f->x.ctx.node = &f->m.node;
	assert_int_equal(harness_probe_all(&f->x), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	harness_fini(&f->h);
	harness_fini(&f->x);
	node_model_fini(&f->m);
	t_store_remove(f->store);
	free(f);
	return 0;
}

/* Prepares @dev with @config; returns the result, the error in @err. */
static int prepare(struct harness *h, const char *dev_name, const char *config, bool admin,
		   struct t_req *t)
{
	struct dralet_device *dev = harness_device(h, dev_name);

	assert_non_null(dev);
	t_req_init(t, config);
	t->req.admin_access = admin;
	h->ctx.error[0] = '\0';
	return h->ctx.backend->prepare(&h->ctx, dev, &t->req);
}

static void expect_refused(struct fixture *f, struct harness *h, const char *dev,
			   const char *config, bool admin, int want, const char *msg)
{
	struct t_req t;
	size_t before = f->m.n_log;
	int r = prepare(h, dev, config, admin, &t);

	if (r != want || !strstr(h->ctx.error, msg))
		fail_msg("%s: got %d \"%s\", want %d \"%s\"", config, r, h->ctx.error, want, msg);
	assert_int_equal(f->m.n_log, before);	/* nothing written */
	assert_int_equal(access(f->xrt_log, F_OK), -1);	/* nothing loaded through XRT */
	t_req_clear(&t);
}

static void test_refusals(void **state)
{
	struct fixture *f = *state;
	char cfg[512], path[4200];

	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nope\"}}", false, -ENOENT,
		       "bitstream \"nope\" is not in the store");
	snprintf(cfg, sizeof(cfg), CFG "\"bitstream\":{\"sha256\":\"%064d\"}}", 0);
	expect_refused(f, &f->h, PORT, cfg, false, -ENOENT, "no such file");
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"other-shell\"}}", false,
		       -EINVAL, "was built for interface " OTHER_IFACE ", the region's is " IFACE);
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"vadd\"}}", false, -EINVAL,
		       "is an xclbin (XRT), this region takes a GBS");
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"},\"requireAfuID\":\""
		       AFU "\"}", false, -EINVAL, "brings accelerator " NEW_AFU);
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", true, -EPERM,
		       "adminAccess");
	snprintf(cfg, sizeof(cfg), CFG "\"bitstream\":{\"name\":\"nlb3\",\"sha256\":\"%s\"}}",
		 f->sha_same);
	expect_refused(f, &f->h, PORT, cfg, false, -EINVAL, "the claim names");
	/* a store file whose content changed */
	snprintf(path, sizeof(path), "%s/%s", f->store, f->sha_new);
	FILE *fp = fopen(path, "r+b");
	assert_non_null(fp);
	fseek(fp, -1, SEEK_END);
	fputc(0x99, fp);
	fclose(fp);
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, -EBADMSG,
		       "fails its checksum");

	/* xrt: the interface of the shell's last interface_uuids line */
	expect_refused(f, &f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"vadd-u250\"}}", false,
		       -EINVAL, "was built for interface " OTHER_IFACE ", the region's is " XIFACE);
	expect_refused(f, &f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"nlb0\"}}", false, -EINVAL,
		       "is a GBS (DFL partial reconfiguration), this region takes an xclbin");
	/* an xclbin naming no interface is checked by its platform (VBNV) */
	expect_refused(f, &f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"u200\"}}", false, -EINVAL,
		       "names no interface; its platform \"xilinx_u200_xdma_201830_2\" is not the "
		       "region's shell \"" VBNV "\"");
	/* a requirement that fails stops it before anything is written */
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"liar\"},\"requireShell\":"
		       "\"x\"}", false, -EINVAL, "requires \"x\"");
}

static void test_already_loaded(void **state)
{
	struct fixture *f = *state;
	struct t_req t;

	/* the port has nlb0's AFU: nothing to write */
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb0\"}}", false, &t), 0);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_BITSTREAM_SHA256"), f->sha_same);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_AFU_ID"), AFU);
	assert_non_null(t_edit_node(&t, "/dev/dfl-port.0"));
	assert_int_equal(f->m.n_log, 0);
	t_req_clear(&t);
	/* the Alveo has that xclbin */
	assert_int_equal(prepare(&f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"loaded\"}}", false, &t), 0);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_BITSTREAM_SHA256"), f->sha_xclbin_loaded);
	assert_int_equal(f->m.n_log, 0);
	t_req_clear(&t);
}

/* The port's afu_id in the tree now. */
static const char *afu_now(struct fixture *f, char *buf, size_t size)
{
	assert_true(f->m.real.read(f->m.real.userdata, AFU_FILE, buf, size) > 0);
	return buf;
}

static int health(struct harness *h, struct dralet_device *dev)
{
	h->ctx.error[0] = '\0';
	return h->ctx.backend->health(&h->ctx, dev);
}

static int unprepare(struct fixture *f, struct t_req *t)
{
	struct dralet_device *dev = harness_device(&f->h, PORT);

	f->h.ctx.error[0] = '\0';
	return backend_dfl.unprepare(&f->h.ctx, dev, &t->req.claim, &t->undo);
}

static void test_program(void **state)
{
	struct fixture *f = *state;
	struct t_req t;
	char buf[80];
	size_t size = 0;

	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, &t), 0);
	assert_int_equal(f->m.n_log, 1);
	assert_string_equal(f->m.log[0], "fpga_pr dfl-fme.0 port 0 (dfl-port.0) 256 bytes");
	assert_int_equal(board_node_fpga_programs(f->m.bn, &size), 1);
	assert_int_equal(size, 256);	/* the PR data, without the GBS header */
	assert_string_equal(afu_now(f, buf, sizeof(buf)), NEW_AFU);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_AFU_ID"), NEW_AFU);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_3B_00_0_PORT0_BITSTREAM_SHA256"), f->sha_new);
	/* the undo state says what was there */
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaPreviousAfu"), AFU);
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaAfu"), NEW_AFU);
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaBitstream"), f->sha_new);
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaOnUnprepare"), "keep");
	/* keep: unprepare leaves it */
	assert_int_equal(unprepare(f, &t), 0);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 1);
	assert_string_equal(afu_now(f, buf, sizeof(buf)), NEW_AFU);
	t_req_clear(&t);

	/* the next claim for the same image: nothing written */
	char cfg[256];
	snprintf(cfg, sizeof(cfg), CFG "\"bitstream\":{\"sha256\":\"%s\"}}", f->sha_new);
	assert_int_equal(prepare(&f->h, PORT, cfg, false, &t), 0);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 1);
	assert_int_equal(f->m.n_log, 1);
	t_req_clear(&t);
}

/* A bitstream too big to program within the kubelet's deadline at the
 * configured rate is refused before anything is written; an image loaded
 * already needs no programming and is not; a bad rate is an error. */
static void test_program_time(void **state)
{
	struct fixture *f = *state;
	struct t_req t;
	char buf[80];

	/* nlb3's file is some 500 bytes: a minute at 8 bytes/s, over the 30 s */
	json_object_object_add(f->h.ctx.options, "programBytesPerSecond",
			       json_object_new_string("8"));
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, -ETIME,
		       "bytes/s (option programBytesPerSecond), more than the 30 s of the "
		       "kubelet's 45 s NodePrepareResources deadline programming may use: not "
		       "loading it");
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 0);
	assert_string_equal(afu_now(f, buf, sizeof(buf)), AFU);
	/* the image the port has already: nothing to program, prepared */
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb0\"}}", false,
				 &t), 0);
	t_req_clear(&t);
	/* at 1 MB/s it is programmed */
	json_object_object_add(f->h.ctx.options, "programBytesPerSecond",
			       json_object_new_string("1000000"));
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false,
				 &t), 0);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 1);
	t_req_clear(&t);
	static const char *const bad[] = { "0", "-5", "fast", "12k", "" "99999999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		json_object_object_add(f->h.ctx.options, "programBytesPerSecond",
				       json_object_new_string(bad[i]));
		expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb0\"}}", false,
			       -EINVAL, "is no positive number of bytes per second");
	}
}

static void test_program_verified(void **state)
{
	struct fixture *f = *state;
	struct t_req t;

	/* the port shows another AFU than the image promised */
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"liar\"}}", false, &t),
			 -EIO);
	assert_non_null(strstr(f->h.ctx.error, "it shows accelerator " LIAR_AFU ", the image brings "
			       NEW_AFU "; put back as it was"));
	/* the failed prepare cleaned up after itself: nlb0 (the previous AFU) again */
	char buf[80];
	assert_string_equal(afu_now(f, buf, sizeof(buf)), AFU);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 2);
	t_req_clear(&t);
	/* a port in use: the kernel's O_EXCL answer */
	f->m.fpga_pr_error = -EBUSY;
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, &t),
			 -EBUSY);
	assert_non_null(strstr(f->h.ctx.error, "/dev/dfl-port.0 is open (in use): not reprogramming"));
	t_req_clear(&t);
	f->m.fpga_pr_error = -EIO;
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, &t),
			 -EIO);
	assert_non_null(strstr(f->h.ctx.error, "the FPGA refused the image"));
	/* the port still shows its AFU (the refused load changed nothing) */
	assert_non_null(strstr(f->h.ctx.error, "put back as it was"));
	t_req_clear(&t);
	/* reset is not a DFL notion */
	expect_refused(f, &f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"},\"onUnprepare\":"
		       "\"reset\"}", false, -EINVAL, "cannot be cleared");
}

static void test_unprepare_golden(void **state)
{
	struct fixture *f = *state;
	struct t_req t;
	char buf[80];

	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"},"
				 "\"onUnprepare\":\"golden\"}", false, &t), 0);
	assert_string_equal(afu_now(f, buf, sizeof(buf)), NEW_AFU);
	/* golden: the image with the previous AFU (nlb0) comes back */
	assert_int_equal(unprepare(f, &t), 0);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 2);
	assert_string_equal(afu_now(f, buf, sizeof(buf)), AFU);
	assert_non_null(strstr(f->m.log[1], "fpga_pr dfl-fme.0 port 0 (dfl-port.0) 128 bytes"));
	/* idempotent */
	assert_int_equal(unprepare(f, &t), 0);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 2);
	t_req_clear(&t);
}

static void test_recover_mid_programming(void **state)
{
	struct fixture *f = *state;
	struct t_req t;
	char buf[80], path[4200];

	/* the load fails half-way: the port shows garbage; the undo state was
	 * recorded before the first byte */
	f->m.fpga_pr_error = -EIO;
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, &t),
			 -EIO);
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE,
					 "ffffffffffffffffffffffffffffffff\n"), 0);
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaPreviousAfu"), AFU);
	f->m.fpga_pr_error = 0;
	/* what the claims engine's recovery does with the checkpointed undo state */
	assert_int_equal(unprepare(f, &t), 0);
	assert_string_equal(afu_now(f, buf, sizeof(buf)), AFU);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 1);

	/* without the previous image in the store it cannot be put back: an error
	 * (kept for another try), nothing written */
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE,
					 "ffffffffffffffffffffffffffffffff\n"), 0);
	snprintf(path, sizeof(path), "%s/%s", f->store, f->sha_same);
	assert_int_equal(unlink(path), 0);
	size_t before = f->m.n_log;
	assert_int_equal(unprepare(f, &t), -ENOENT);
	assert_non_null(strstr(f->h.ctx.error, "cannot restore its previous accelerator " AFU));
	assert_int_equal(f->m.n_log, before);
	t_req_clear(&t);
}

/* A port whose interrupted load could not be undone is Unhealthy, with the
 * reason, until it shows a known accelerator again or an unprepare succeeds. */
static void test_stranded_unhealthy(void **state)
{
	struct fixture *f = *state;
	struct dralet_device *dev = harness_device(&f->h, PORT);
	struct t_req t;
	char path[4200];

	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_HEALTHY);
	/* a crash mid-load (the undo state recorded, the port showing neither AFU),
	 * and the previous image is not in the store: recovery's unprepare fails */
	f->m.fpga_pr_error = -EIO;
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, &t),
			 -EIO);
	f->m.fpga_pr_error = 0;
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_HEALTHY);	/* put back */
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE, GARBAGE "\n"), 0);
	snprintf(path, sizeof(path), "%s/%s", f->store, f->sha_same);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_HEALTHY);	/* nothing known yet */
	assert_int_equal(unprepare(f, &t), -ENOENT);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(f->h.ctx.error, "shows accelerator " GARBAGE ": loading bitstream"));
	assert_non_null(strstr(f->h.ctx.error, "its previous accelerator " AFU " could not be put "
					       "back; load an image by hand"));
	/* the next try cannot put it back either: still Unhealthy */
	assert_int_equal(unprepare(f, &t), -ENOENT);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_UNHEALTHY);
	/* an operator loads the previous AFU by hand: known again, and the mark
	 * is gone (a later change is not this load's) */
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE, AFU "\n"), 0);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_HEALTHY);
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE, GARBAGE "\n"), 0);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_HEALTHY);
	/* another failed unprepare marks it again; one that succeeds (the port
	 * shows the claim's AFU: keep) clears it */
	assert_int_equal(unprepare(f, &t), -ENOENT);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_UNHEALTHY);
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE, NEW_AFU "\n"), 0);
	assert_int_equal(unprepare(f, &t), 0);
	assert_int_equal(f->m.real.write(f->m.real.userdata, AFU_FILE, GARBAGE "\n"), 0);
	assert_int_equal(health(&f->h, dev), DRALET_HEALTH_HEALTHY);
	t_req_clear(&t);
}

/* An Alveo left mid-load whose previous xclbin cannot be put back is
 * Unhealthy, like a DFL port, until it shows a known xclbin again. */
static void test_xrt_stranded_unhealthy(void **state)
{
	struct fixture *f = *state;
	struct dralet_device *dev = harness_device(&f->x, ALVEO);
	const char *uuid_file = "bus/pci/devices/0000:65:00.1/xclbinuuid";
	struct t_req t;
	char path[4200];

	assert_non_null(dev);
	assert_int_equal(prepare(&f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"vadd\"}}", false, &t), 0);
	assert_int_equal(health(&f->x, dev), DRALET_HEALTH_HEALTHY);
	/* a crash mid-load, and the previous xclbin gone from the store */
	assert_int_equal(f->m.real.write(f->m.real.userdata, uuid_file, GARBAGE "\n"), 0);
	snprintf(path, sizeof(path), "%s/%s", f->store, f->sha_xclbin_loaded);
	assert_int_equal(unlink(path), 0);
	f->x.ctx.error[0] = '\0';
	assert_int_equal(backend_xrt.unprepare(&f->x.ctx, dev, &t.req.claim, &t.undo), -ENOENT);
	assert_int_equal(health(&f->x, dev), DRALET_HEALTH_UNHEALTHY);
	assert_non_null(strstr(f->x.ctx.error, "Alveo 0000:65:00.1 shows accelerator " GARBAGE));
	assert_non_null(strstr(f->x.ctx.error, "its previous accelerator " XCLBIN " could not be put "
					       "back; load an image by hand"));
	/* loaded by hand: known again */
	assert_int_equal(f->m.real.write(f->m.real.userdata, uuid_file, XCLBIN "\n"), 0);
	assert_int_equal(health(&f->x, dev), DRALET_HEALTH_HEALTHY);
	t_req_clear(&t);
}

/* The real seam on a tree of plain files: it opens the port exclusively and
 * the FME, and the ioctl is what a plain file refuses. */
static void test_real_seam(void **state)
{
	struct fixture *f = *state;
	uint8_t image[32] = { 0 };

	assert_int_equal(f->m.real.fpga_pr(f->m.real.userdata, "dfl-fme.0", "dfl-port.0", 0, image,
					   sizeof(image)), -ENOTTY);
	assert_int_equal(f->m.real.fpga_pr(f->m.real.userdata, "../dfl-fme.0", "dfl-port.0", 0,
					   image, sizeof(image)), -EINVAL);
	assert_int_equal(f->m.real.fpga_pr(f->m.real.userdata, "dfl-fme.0", "dfl-port.9", 0, image,
					   sizeof(image)), -ENOENT);
	assert_int_equal(f->m.real.fpga_pr(f->m.real.userdata, "dfl-fme.0", "dfl-port.0", 0, image,
					   0), -EINVAL);
	/* the model: a port that is not the FME's */
	assert_int_equal(f->m.node.fpga_pr(f->m.node.userdata, "dfl-fme.0", "dfl-port.0", 3, image,
					   sizeof(image)), -EINVAL);
	assert_int_equal(f->m.node.fpga_pr(f->m.node.userdata, "dfl-fme.7", "dfl-port.0", 0, image,
					   sizeof(image)), -ENOENT);
	assert_int_equal(f->m.node.fpga_pr(f->m.node.userdata, "dfl-fme.0", "dfl-port.0", 0, image,
					   8), -EIO);
	assert_int_equal(board_node_fpga_programs(f->m.bn, NULL), 0);
}

/* The image a region has loaded, when the store holds it, is published. */
static void test_loaded_attribute(void **state)
{
	struct fixture *f = *state;
	struct harness h;
	char options[512];

	assert_string_equal(attr_string(harness_device(&f->h, PORT), "loadedBitstream"), "nlb0");
	assert_string_equal(attr_string(harness_device(&f->x, ALVEO), "loadedBitstream"), "loaded");
	/* after programming, the next discovery shows the new image */
	struct t_req t;
	assert_int_equal(prepare(&f->h, PORT, CFG "\"bitstream\":{\"name\":\"nlb3\"}}", false, &t), 0);
	t_req_clear(&t);
	snprintf(options, sizeof(options), "{\"bitstreamDir\": \"%s\"}", f->store);
	assert_int_equal(harness_init(&h, &backend_dfl, f->m.dir, options), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_string_equal(attr_string(harness_device(&h, PORT), "afuID"), NEW_AFU);
	/* nlb3 and liar both say they bring NEW_AFU: the first by sha256 is named */
	const char *loaded = attr_string(harness_device(&h, PORT), "loadedBitstream");
	assert_non_null(loaded);
	assert_string_equal(loaded, strcmp(f->sha_new, f->sha_liar) < 0 ? "nlb3" : "liar");
	harness_fini(&h);
	/* no store: no attribute */
	assert_int_equal(harness_init(&h, &backend_dfl, f->m.dir, "{\"bitstreamDir\": \"/nonexistent\"}"),
			 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_null(attr_string(harness_device(&h, PORT), "loadedBitstream"));
	harness_fini(&h);
}

/* XRT: the xclbin goes through XRT's C API (a stand-in, tests/lib/fake-xrt),
 * verified by xclbinuuid; golden brings the previous one back. */
static void test_xrt_load(void **state)
{
	struct fixture *f = *state;
	struct t_req t;
	char buf[80];
	struct dralet_device *dev = harness_device(&f->x, ALVEO);

	assert_int_equal(prepare(&f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"vadd\"},"
				 "\"onUnprepare\":\"golden\"}", false, &t), 0);
	assert_int_equal(dralet_read_pci_file(&f->x.ctx, dralet_device_pci(dev), "xclbinuuid", buf,
					      sizeof(buf)), 32);
	assert_string_equal(buf, "11112222333344445555666677778888");
	assert_int_equal(access(f->xrt_log, F_OK), 0);
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_65_00_1_XCLBIN_UUID"),
			    "11112222333344445555666677778888");
	assert_string_equal(dralet_undo_get(&t.undo, "fpgaPreviousAfu"), XCLBIN);
	/* golden: the xclbin that was loaded before ("loaded") comes back */
	f->x.ctx.error[0] = '\0';
	assert_int_equal(backend_xrt.unprepare(&f->x.ctx, dev, &t.req.claim, &t.undo), 0);
	assert_int_equal(dralet_read_pci_file(&f->x.ctx, dralet_device_pci(dev), "xclbinuuid", buf,
					      sizeof(buf)), 32);
	assert_string_equal(buf, XCLBIN);
	t_req_clear(&t);

	/* XRT refusing it */
	setenv("FAKE_XRT_FAIL", "5", 1);
	assert_int_equal(prepare(&f->x, ALVEO, CFG "\"bitstream\":{\"name\":\"vadd\"}}", false, &t),
			 -EIO);
	assert_non_null(strstr(f->x.ctx.error, "XRT did not load it"));
	unsetenv("FAKE_XRT_FAIL");
	t_req_clear(&t);
	/* no XRT */
	struct harness h;
	char options[512];
	snprintf(options, sizeof(options), "{\"bitstreamDir\": \"%s\", \"xrtLibrary\": "
		 "\"/nonexistent/libxrt_coreutil.so\"}", f->store);
	assert_int_equal(harness_init(&h, &backend_xrt, f->m.dir, options), 0);
	assert_int_equal(harness_probe_all(&h), 0);
	assert_int_equal(prepare(&h, ALVEO, CFG "\"bitstream\":{\"name\":\"vadd\"}}", false, &t),
			 -ENOENT);
	assert_non_null(strstr(h.ctx.error, "XRT is needed"));
	t_req_clear(&t);
	harness_fini(&h);
}

static void test_config(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *json;
		int want;
		const char *msg;
	} cases[] = {
		{ CFG "\"bitstream\":{\"name\":\"nlb0\"},\"onUnprepare\":\"golden\"}", 0, NULL },
		{ CFG "\"bitstream\":{}}", -EINVAL, "needs \"name\" or \"sha256\"" },
		{ CFG "\"bitstream\":{\"name\":\"a/b\"}}", -EINVAL, "not a bitstream name" },
		{ CFG "\"bitstream\":{\"sha256\":\"ABC\"}}", -EINVAL, "not a sha256" },
		{ CFG "\"bitstream\":{\"url\":\"https://example.com/a.gbs\"}}", -EINVAL,
		  "unknown field \"url\"" },
		{ CFG "\"bitstream\":\"nlb0\"}", -EINVAL, "FpgaConfig.bitstream" },
		{ CFG "\"onUnprepare\":\"reset\"}", -EINVAL, "applies to a claim that loads" },
		{ CFG "\"bitstream\":{\"name\":\"x\"},\"onUnprepare\":\"wipe\"}", -EINVAL,
		  "onUnprepare" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f->h.ctx.error[0] = '\0';
		int r = backend_dfl.validate_config(&f->h.ctx, cases[i].json);
		if (r != cases[i].want || (cases[i].msg && !strstr(f->h.ctx.error, cases[i].msg)))
			fail_msg("case %zu %s: got %d \"%s\", want %d \"%s\"", i, cases[i].json, r,
				 f->h.ctx.error, cases[i].want, cases[i].msg ? cases[i].msg : "");
	}
}

/* A D5005 whose port was released to its VF (DFL_FPGA_FME_PORT_RELEASE, then
 * sriov_numvfs 1): the port shows on the VF, the FME stays on the PF. */
static const char vf_board[] =
	"board: fpga-vf\n"
	"pci:\n"
	"  - root: \"0000:5d\"\n"
	"    devices:\n"
	"      - bdf: 5d:00.0\n"
	"        id: \"8086:352a\"\n"
	"        devices:\n"
	"          - bdf: 5e:00.0\n"
	"            id: \"8086:0b2b\"\n"
	"            class: 0x120000\n"
	"            driver: dfl-pci\n"
	"            sriov: {total: 1, num: 1, vf_id: \"8086:0b2c\", vf_driver: dfl-pci}\n"
	"            dfl: {fme: {bitstream_id: \"0x0\", compat_id: " IFACE "}, ports: []}\n";
#define VF_R "pci0000:5d/0000:5d:00.0"
#define VF_ADDR "0000:5e:00.1"
#define VF_PORT_DIR "fpga_region/region9/dfl-port.1"
#define VF_PORT_DEV "fpga-0000-5e-00-1-port0"

/* Programming a port on a VF would take SR-IOV off on its PF, removing every
 * VF of the card: prepare refuses before anything is recorded or written (the
 * seam's double logs nothing); an image the VF's port has already is fine. */
static void test_vf_port(void **state)
{
	struct node_model m;
	struct harness h;
	struct t_image img;
	struct t_req t;
	char index[1024] = "{}", sha_new[FPGA_SHA256_HEX], sha_same[FPGA_SHA256_HEX];
	char options[512], *store = t_store_new();

	(void)state;
	assert_non_null(store);
	node_model_init(&m, vf_board);
	/* the port on the VF, as the VF's dfl-pci enumerates it (boards put DFL
	 * ports on the functions they declare only) */
	t_write(m.dir, VF_R, VF_ADDR, VF_PORT_DIR "/afu_id", AFU);
	t_write(m.dir, VF_R, VF_ADDR, VF_PORT_DIR "/id", "0");
	t_write(m.dir, VF_R, VF_ADDR, VF_PORT_DIR "/dev", "507:1");
	t_syslink(m.dir, "bus/platform/devices/dfl-port.1", "devices/" VF_R "/" VF_ADDR "/"
		  VF_PORT_DIR);
	t_node(m.dir, "dfl-port.1");
	t_gbs(&img, IFACE, NEW_AFU, NULL, NULL, 256);
	assert_int_equal(t_store_add(store, &img, "nlb3", index, sizeof(index), sha_new), 0);
	t_gbs(&img, IFACE, AFU, NULL, NULL, 128);
	assert_int_equal(t_store_add(store, &img, "nlb0", index, sizeof(index), sha_same), 0);
	snprintf(options, sizeof(options), "{\"bitstreamDir\": \"%s\"}", store);
	assert_int_equal(harness_init(&h, &backend_dfl, m.dir, options), 0);
	h.ctx.node = &m.node;
	assert_int_equal(harness_probe_all(&h), 0);
	struct dralet_device *dev = harness_device(&h, VF_PORT_DEV);
	assert_non_null(dev);
	assert_int_equal(attr_bool(dev, "isVF"), 1);

	/* another image: refused with the kernel's rule, nothing recorded or written */
	t_req_init(&t, CFG "\"bitstream\":{\"name\":\"nlb3\"}}");
	h.ctx.error[0] = '\0';
	assert_int_equal(backend_dfl.prepare(&h.ctx, dev, &t.req), -EBUSY);
	if (!strstr(h.ctx.error, "DFL port dfl-port.1 of " VF_ADDR ": loading bitstream ") ||
	    !strstr(h.ctx.error, sha_new) ||
	    !strstr(h.ctx.error, "the port is on VF " VF_ADDR " of 0000:5e:00.0: the kernel "
			    "programs a port only through its PF's FME, with SR-IOV off there "
			    "(sriov_numvfs 0 removes all 1 VF of the card, in use or not): not "
			    "reprogramming it; load the image with SR-IOV off (docs/fpga.md 1.1.1) "
			    "or claim a port on a PF"))
		fail_msg("the refusal says: %s", h.ctx.error);
	assert_int_equal(m.n_log, 0);
	assert_int_equal(board_node_fpga_programs(m.bn, NULL), 0);
	assert_null(dralet_undo_get(&t.undo, "fpgaBitstream"));
	assert_null(dralet_undo_get(&t.undo, "fpgaPreviousAfu"));
	t_req_clear(&t);

	/* the image the VF's port has already: prepared, nothing written */
	t_req_init(&t, CFG "\"bitstream\":{\"name\":\"nlb0\"}}");
	h.ctx.error[0] = '\0';
	assert_int_equal(backend_dfl.prepare(&h.ctx, dev, &t.req), 0);
	assert_non_null(t_edit_node(&t, "/dev/dfl-port.1"));
	assert_string_equal(t_env(&t, "DRALET_FPGA_0000_5E_00_1_PORT0_BITSTREAM_SHA256"), sha_same);
	assert_int_equal(m.n_log, 0);
	assert_int_equal(board_node_fpga_programs(m.bn, NULL), 0);
	t_req_clear(&t);

	harness_fini(&h);
	node_model_fini(&m);
	t_store_remove(store);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_already_loaded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_seam, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loaded_attribute, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xrt_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_verified, setup, teardown),
		cmocka_unit_test_setup_teardown(test_program_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprepare_golden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_mid_programming, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stranded_unhealthy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_xrt_stranded_unhealthy, setup, teardown),
		cmocka_unit_test(test_vf_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
