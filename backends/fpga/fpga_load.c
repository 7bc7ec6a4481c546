/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga.h: loading a claim's image into a region and putting the region
 * back at unprepare, the same for every mechanism (DFL, XRT): the undo state
 * first, the write through the mechanism, the region's accelerator ID read
 * back to verify; unprepare from the undo state alone (docs/fpga.md 4).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dralet/pci_ctl.h>

#include "bitstream.h"
#include "fpga.h"

/* Undo state of a region prepared with a bitstream (prepare.h). */
#define UNDO_PREVIOUS "fpgaPreviousAfu"	/* accelerator before ("none") */
#define UNDO_ACCELERATOR "fpgaAfu"	/* the claim's image's accelerator */
#define UNDO_SHA256 "fpgaBitstream"	/* the claim's image */
#define UNDO_POLICY "fpgaOnUnprepare"	/* keep | reset | golden */

int fpga_program_rate(struct dralet_backend_ctx *ctx, unsigned long long *ret)
{
	const char *v = dralet_ctx_option(ctx, "programBytesPerSecond");
	unsigned long long rate;
	char *end;

	if (!v || !*v) {
		*ret = FPGA_PROGRAM_DEFAULT_RATE;
		return 0;
	}
	errno = 0;
	rate = strtoull(v, &end, 10);
	if (*end || errno || rate == 0 || v[0] == '-') {
		dralet_ctx_error(ctx, "option programBytesPerSecond \"%.40s\" is no positive number "
				 "of bytes per second", v);
		return -EINVAL;
	}
	*ret = rate;
	return 0;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Writes @img and checks that the region shows its accelerator afterwards;
 * the time the write took is told to the agent with @why ("for claim ns/name"). */
static int write_verified(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			  const struct fpga_loaded *img, const char *why)
{
	char buf[80];
	const char *now;
	struct timespec t0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = rg->write(ctx, rg->self, img);
	if (r >= 0)	/* the slices must show the region's new image */
		dralet_ctx_node_changed(ctx);
	if (r >= 0)
		dralet_ctx_info(ctx, "%s: programmed bitstream %s (%zu bytes) %s in %.3f s", rg->what,
				img->sha256, img->len, why, seconds_since(&t0));
	if (r < 0) {
		char cause[400];
		snprintf(cause, sizeof(cause), "%s", dralet_ctx_error_message(ctx));
		dralet_ctx_error(ctx, "%s: loading bitstream %s: %s", rg->what, img->sha256, cause);
		return r;
	}
	now = rg->loaded(ctx, rg->self, buf, sizeof(buf));
	if (!fpga_id_equal(now, img->image.accelerator_id)) {
		dralet_ctx_error(ctx, "%s: after loading bitstream %s it shows accelerator %s, the "
				 "image brings %s", rg->what, img->sha256, now ? now : "(none)",
				 img->image.accelerator_id);
		return -EIO;
	}
	return 0;
}

int fpga_load_for_claim(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			const struct dralet_prepare_req *req, const struct fpga_config *cfg,
			const struct fpga_loaded *img, bool loaded, const char *previous)
{
	static const char *const policies[] = { "keep", "reset", "golden" };
	char prev[40], why[320];
	unsigned long long rate;
	int r;

	if (cfg->on_unprepare == FPGA_ON_UNPREPARE_RESET && !rg->clear) {
		dralet_ctx_error(ctx, "%s cannot be cleared (FpgaConfig.onUnprepare: reset); use "
				 "keep or golden", rg->what);
		return -EINVAL;
	}
	if ((r = fpga_program_rate(ctx, &rate)) < 0)
		return r;
	/* refused rather than cut off by the kubelet's deadline mid-write */
	if (!loaded && (double)img->len / (double)rate > FPGA_PROGRAM_BUDGET_S) {
		dralet_ctx_error(ctx, "%s: bitstream %s (%zu bytes) would take about %.0f s to "
				 "program at %llu bytes/s (option programBytesPerSecond), more than "
				 "the %d s of the kubelet's %d s NodePrepareResources deadline "
				 "programming may use: not loading it", rg->what, img->sha256,
				 img->len, (double)img->len / (double)rate, rate, FPGA_PROGRAM_BUDGET_S,
				 FPGA_KUBELET_PREPARE_DEADLINE_S);
		return -ETIME;
	}
	if (!previous || fpga_id_all_zero(previous) ||
	    !fpga_id_normalize(previous, prev, sizeof(prev)))
		snprintf(prev, sizeof(prev), "none");
	/* what unprepare needs, also when the image is loaded already (golden) */
	r = dralet_undo_set_all(req->undo, (const struct dralet_undo_value[]){
		{ UNDO_PREVIOUS, prev },
		{ UNDO_ACCELERATOR, img->image.accelerator_id },
		{ UNDO_SHA256, img->sha256 },
		{ UNDO_POLICY, policies[cfg->on_unprepare] },
	}, 4);
	if (r < 0) {
		dralet_ctx_error(ctx, "%s: recording the undo state failed: %s", rg->what,
				 strerror(-r));
		return r;
	}
	if (loaded)
		return 0;
	snprintf(why, sizeof(why), "for claim %s/%s", req->claim.namespace_ ? req->claim.namespace_ : "",
		 req->claim.name ? req->claim.name : "");
	if ((r = write_verified(ctx, rg, img, why)) == 0)
		return 0;
	/* a failing prepare cleans up after itself (backend.h): the engine drops
	 * this undo state with the failed prepare */
	char first[400];
	snprintf(first, sizeof(first), "%s", dralet_ctx_error_message(ctx));
	if (fpga_restore(ctx, rg, req->undo) == 0)
		dralet_ctx_error(ctx, "%s; put back as it was", first);
	else {
		char second[400];
		snprintf(second, sizeof(second), "%s", dralet_ctx_error_message(ctx));
		dralet_ctx_error(ctx, "%s; putting it back failed too: %s", first, second);
	}
	return r;
}

int fpga_restore(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
		 const struct dralet_undo *undo)
{
	const char *sha = dralet_undo_get(undo, UNDO_SHA256);
	const char *accel = dralet_undo_get(undo, UNDO_ACCELERATOR);
	const char *previous = dralet_undo_get(undo, UNDO_PREVIOUS);
	const char *policy = dralet_undo_get(undo, UNDO_POLICY);
	char buf[80], err[384], iface[40] = "";
	const char *now;
	struct fpga_loaded img;
	int r;

	if (!sha || !accel || !previous || !policy)
		return 0;	/* prepared without a bitstream: nothing was written */
	if (!strcmp(policy, "reset") && rg->clear)
		return rg->clear(ctx, rg->self);
	now = rg->loaded(ctx, rg->self, buf, sizeof(buf));
	if (fpga_id_equal(now, accel) && strcmp(policy, "golden"))
		return 0;
	if (!strcmp(previous, "none")) {
		if (fpga_id_equal(now, accel))
			return 0;	/* golden, but nothing was loaded before */
		dralet_ctx_error(ctx, "%s shows accelerator %s after loading bitstream %s was "
				 "interrupted, and had none before to restore: load an image by hand",
				 rg->what, now ? now : "(none)", sha);
		return -EIO;
	}
	if (fpga_id_equal(now, previous))
		return 0;
	if (rg->interface_id && !fpga_id_normalize(rg->interface_id, iface, sizeof(iface)))
		iface[0] = '\0';
	r = fpga_store_find(fpga_store_dir(ctx), rg->kind, previous, iface, &img, err, sizeof(err));
	if (r < 0) {
		dralet_ctx_error(ctx, "%s: cannot restore its previous accelerator %s (it shows "
				 "%s): %s", rg->what, previous, now ? now : "(none)", err);
		return r;
	}
	r = write_verified(ctx, rg, &img, strcmp(policy, "golden") || !fpga_id_equal(now, accel)
						 ? "to put back its previous accelerator"
						 : "to load its golden (previous) image");
	fpga_store_unload(&img);
	return r;
}

/* <stateDir>/<key>.stranded into @buf (stateDir: the option, else the
 * driver's state directory); false without either or a key. */
static bool stranded_path(struct dralet_backend_ctx *ctx, const struct fpga_stranded *s,
			  char *buf, size_t size)
{
	const char *dir = dralet_ctx_option(ctx, "stateDir");

	if (!dir || !*dir)
		dir = dralet_ctx_state_dir(ctx);
	if (!dir || !s->key[0] || strchr(s->key, '/'))
		return false;
	return snprintf(buf, size, "%s/%s.stranded", dir, s->key) < (int)size;
}

/* Keeps @s on disk (set: the record; clear: no file). */
static void stranded_save(struct dralet_backend_ctx *ctx, const struct fpga_stranded *s)
{
	char path[4096], tmp[4200], text[160];
	FILE *f;

	if (!stranded_path(ctx, s, path, sizeof(path)))
		return;
	if (!s->set) {
		if (unlink(path) < 0 && errno != ENOENT)
			dralet_ctx_warn(ctx, "cannot remove %s: %s", path, strerror(errno));
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(text, sizeof(text), "%s %s %s\n", s->previous, s->accelerator, s->sha256);
	if (!(f = fopen(tmp, "we")) || fputs(text, f) < 0 || fflush(f) != 0 || fsync(fileno(f)) ||
	    fclose(f) != 0 || rename(tmp, path) < 0) {
		dralet_ctx_warn(ctx, "cannot keep %s (a region left mid-load): %s", path,
				strerror(errno));
		unlink(tmp);
	}
}

void fpga_stranded_load(struct dralet_backend_ctx *ctx, struct fpga_stranded *s,
			const char *device)
{
	char path[4096], text[200], prev[40], accel[40], sha[66];
	FILE *f;

	*s = (struct fpga_stranded){ 0 };
	snprintf(s->key, sizeof(s->key), "%s", device ? device : "");
	if (!stranded_path(ctx, s, path, sizeof(path)) || !(f = fopen(path, "re")))
		return;
	if (fgets(text, sizeof(text), f) &&
	    sscanf(text, "%39s %39s %65s", prev, accel, sha) == 3 && fpga_sha256_valid(sha) &&
	    (!strcmp(prev, "none") || fpga_id_normalize(prev, prev, sizeof(prev))) &&
	    fpga_id_normalize(accel, accel, sizeof(accel))) {
		s->set = true;
		memcpy(s->previous, prev, sizeof(s->previous));
		memcpy(s->accelerator, accel, sizeof(s->accelerator));
		memcpy(s->sha256, sha, sizeof(s->sha256));
	} else {
		dralet_ctx_warn(ctx, "%s is no mark of a region left mid-load; ignored", path);
	}
	fclose(f);
}

void fpga_stranded_note(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			const struct dralet_undo *undo, int r, struct fpga_stranded *s)
{
	const char *sha = dralet_undo_get(undo, UNDO_SHA256);
	const char *accel = dralet_undo_get(undo, UNDO_ACCELERATOR);
	const char *previous = dralet_undo_get(undo, UNDO_PREVIOUS);
	char buf[80];
	const char *now;

	if (!sha || !accel || !previous)
		return;
	now = r < 0 ? rg->loaded(ctx, rg->self, buf, sizeof(buf)) : NULL;
	if (r >= 0 || fpga_id_equal(now, accel) || fpga_id_equal(now, previous)) {
		if (s->set) {
			s->set = false;
			stranded_save(ctx, s);
		}
		return;
	}
	s->set = true;
	snprintf(s->previous, sizeof(s->previous), "%s", previous);
	snprintf(s->accelerator, sizeof(s->accelerator), "%s", accel);
	snprintf(s->sha256, sizeof(s->sha256), "%s", sha);
	stranded_save(ctx, s);
}

int fpga_stranded_health(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			 struct fpga_stranded *s)
{
	char buf[80];
	const char *now;

	if (!s->set)
		return DRALET_HEALTH_HEALTHY;
	now = rg->loaded(ctx, rg->self, buf, sizeof(buf));
	if (fpga_id_equal(now, s->accelerator) || fpga_id_equal(now, s->previous)) {
		s->set = false;		/* a known state again */
		stranded_save(ctx, s);
		return DRALET_HEALTH_HEALTHY;
	}
	dralet_ctx_error(ctx, "%s shows accelerator %s: loading bitstream %s was interrupted and "
			 "its previous accelerator %s could not be put back; load an image by hand",
			 rg->what, now ? now : "(none)", s->sha256, s->previous);
	return DRALET_HEALTH_UNHEALTHY;
}
