/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga.h: loading a claim's image into a region and putting the region
 * back at unprepare, the same for every mechanism (DFL, XRT): the undo state
 * first, the write through the mechanism, the region's accelerator ID read
 * back to verify; unprepare from the undo state alone (docs/fpga.md 4).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "bitstream.h"
#include "fpga.h"

/* Undo state of a region prepared with a bitstream (prepare.h). */
#define UNDO_PREVIOUS "fpgaPreviousAfu"	/* accelerator before ("none") */
#define UNDO_ACCELERATOR "fpgaAfu"	/* the claim's image's accelerator */
#define UNDO_SHA256 "fpgaBitstream"	/* the claim's image */
#define UNDO_POLICY "fpgaOnUnprepare"	/* keep | golden */

/* Writes @img and checks that the region shows its accelerator afterwards. */
static int write_verified(struct dralet_backend_ctx *ctx, const struct fpga_region *rg,
			  const struct fpga_loaded *img)
{
	char buf[80];
	const char *now;
	int r = rg->write(ctx, rg->self, img);

	if (r < 0) {
		char why[400];
		snprintf(why, sizeof(why), "%s", dralet_ctx_error_message(ctx));
		dralet_ctx_error(ctx, "%s: loading bitstream %s: %s", rg->what, img->sha256, why);
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
	char prev[40];
	int r;

	if (cfg->on_unprepare == FPGA_ON_UNPREPARE_RESET) {
		dralet_ctx_error(ctx, "%s cannot be cleared (FpgaConfig.onUnprepare: reset); use "
				 "keep or golden", rg->what);
		return -EINVAL;
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
	if (loaded || (r = write_verified(ctx, rg, img)) == 0)
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
	r = write_verified(ctx, rg, &img);
	fpga_store_unload(&img);
	return r;
}
