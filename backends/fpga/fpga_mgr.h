/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga_manager on embedded SoC FPGAs (Zynq, ZynqMP, Versal, SoCFPGA):
 * docs/fpga.md 1.4 and 4. An SoC's FPGA manager has no PCI function: the
 * fpga-region backend makes one device per such manager at init
 * (fpga_mgr.c) and loads a claim's raw image through the kernel's firmware
 * attribute or a device-tree overlay in configfs, whichever the kernel
 * offers (fpga_mgr_choose), waiting for the manager's state to read
 * operating.
 *
 * What is loaded is not something the kernel tells: dralet keeps a marker,
 * <firmware dir>/dralet-<manager>.loaded holding the image's sha256, written
 * after a load reached operating and removed before the next load starts,
 * so a load cut short leaves no marker (the region's image is unknown).
 */
#ifndef DRALET_BACKENDS_FPGA_MGR_H
#define DRALET_BACKENDS_FPGA_MGR_H

#include <stdbool.h>
#include <stddef.h>

#include "bitstream.h"

/* How long a load may take to reach operating after the kernel accepted it. */
#define FPGA_MGR_WAIT_MS 5000

enum fpga_mgr_way {
	FPGA_MGR_WAY_NONE,
	FPGA_MGR_WAY_FIRMWARE,	/* class/fpga_manager/<m>/firmware (Xilinx kernels) */
	FPGA_MGR_WAY_OVERLAY,	/* kernel/config/device-tree/overlays (vendor kernels) */
};

/* What the kernel offers for manager @manager. */
struct fpga_mgr_offer {
	const char *manager;		/* "fpga0" */
	bool firmware_attr;		/* class/fpga_manager/<m>/firmware exists */
	bool configfs_overlays;		/* kernel/config/device-tree/overlays exists */
};

/* The firmware attribute when there is one, else an overlay when the
 * image's manifest names one and configfs offers overlays; else
 * FPGA_MGR_WAY_NONE with @why naming what is missing. */
int fpga_mgr_choose(const struct fpga_mgr_offer *k, const struct fpga_image *img, char *why,
		    size_t len);

enum fpga_mgr_state_kind {
	FPGA_MGR_STATE_IDLE,		/* unknown, power off, power up, reset */
	FPGA_MGR_STATE_BUSY,		/* firmware request, write init, write, ... */
	FPGA_MGR_STATE_FAILED,		/* "... error" */
	FPGA_MGR_STATE_OPERATING,
};

/* The kind of a manager's state text (drivers/fpga/fpga-mgr.c state_str). */
int fpga_mgr_state_classify(const char *state);

/* The sha256 in a marker's text (64 lower-case hex digits, an optional
 * newline); false when it is anything else. */
bool fpga_mgr_marker_parse(const char *text, char sha256[FPGA_SHA256_HEX]);

/* ---- the devices (fpga_mgr.c), for the fpga-region backend ---- */

struct dralet_backend_ctx;
struct dralet_device;
struct dralet_prepare_req;
struct dralet_undo;

/* Makes a device "fpga-<manager>" for each FPGA manager of the node that
 * belongs to no PCI function (class/fpga_manager links through none), with
 * the compat_id of such a region as its interface ID. */
int fpga_mgr_discover(struct dralet_backend_ctx *ctx);
int fpga_mgr_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev);
int fpga_mgr_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		     struct dralet_prepare_req *req);
int fpga_mgr_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_undo *undo);

#endif
