/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga_mgr.h's pure part: which way the kernel takes an image, what a
 * manager's state means, the marker of the image dralet loaded. No I/O.
 */
#include <stdio.h>
#include <string.h>

#include "bitstream.h"
#include "fpga_mgr.h"

int fpga_mgr_choose(const struct fpga_mgr_offer *k, const struct fpga_image *img, char *why,
		    size_t len)
{
	if (k->firmware_attr)
		return FPGA_MGR_WAY_FIRMWARE;
	if (img->overlay[0] && k->configfs_overlays)
		return FPGA_MGR_WAY_OVERLAY;
	if (img->overlay[0])
		snprintf(why, len, "the kernel has neither a firmware attribute in "
			 "class/fpga_manager/%s nor device-tree overlays in configfs "
			 "(kernel/config/device-tree/overlays, a vendor kernel's)", k->manager);
	else
		snprintf(why, len, "the kernel has no firmware attribute in class/fpga_manager/%s "
			 "(the Xilinx kernel's) and the image's manifest names no device-tree "
			 "overlay (overlay, firmwareName) to load it by", k->manager);
	return FPGA_MGR_WAY_NONE;
}

int fpga_mgr_state_classify(const char *state)
{
	static const char *const busy[] = { "firmware request", "parse header", "write init",
					    "write", "write complete", NULL };
	size_t n = state ? strlen(state) : 0;

	if (!state || !n)
		return FPGA_MGR_STATE_IDLE;
	if (!strcmp(state, "operating"))
		return FPGA_MGR_STATE_OPERATING;
	if (n > 6 && !strcmp(state + n - 6, " error"))
		return FPGA_MGR_STATE_FAILED;
	for (size_t i = 0; busy[i]; i++)
		if (!strcmp(state, busy[i]))
			return FPGA_MGR_STATE_BUSY;
	return FPGA_MGR_STATE_IDLE;	/* unknown, power off, power up, reset */
}

bool fpga_mgr_marker_parse(const char *text, char sha256[FPGA_SHA256_HEX])
{
	char buf[FPGA_SHA256_HEX];
	size_t n = text ? strcspn(text, "\n") : 0;

	if (n != 64 || (text[n] && strcmp(text + n, "\n")))
		return false;
	memcpy(buf, text, 64);
	buf[64] = '\0';
	if (!fpga_sha256_valid(buf))
		return false;
	memcpy(sha256, buf, sizeof(buf));
	return true;
}
