/* SPDX-License-Identifier: Apache-2.0 */
/* fpga.h: a claim's bitstream, loaded from the store and checked against its region. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bitstream.h"
#include "fpga.h"

static const char *mechanism(int kind)
{
	switch (kind) {
	case FPGA_IMAGE_GBS:
		return "a GBS (DFL partial reconfiguration)";
	case FPGA_IMAGE_XCLBIN:
		return "an xclbin (XRT)";
	default:
		return "a raw fpga_manager image with a manifest";
	}
}

int fpga_bitstream_for(struct dralet_backend_ctx *ctx, const struct fpga_config *cfg,
		       const struct fpga_identity *id, int want, struct fpga_loaded *ret)
{
	struct fpga_loaded l;
	const struct fpga_image *img = &l.image;
	char err[384], region[40] = "";
	const char *label = cfg->bitstream_name[0] ? cfg->bitstream_name : cfg->bitstream_sha256;
	int r = fpga_store_load(fpga_store_dir(ctx), cfg->bitstream_name, cfg->bitstream_sha256,
				&l, err, sizeof(err));

	if (r < 0) {
		dralet_ctx_error(ctx, "%s: %s", id->what, err);
		return r;
	}
	if ((int)img->kind != want) {
		dralet_ctx_error(ctx, "%s: bitstream %s is %s, this region takes %s", id->what, label,
				 mechanism(img->kind), mechanism(want));
		r = -EINVAL;
	} else if (id->interface_id && !fpga_id_normalize(id->interface_id, region, sizeof(region))) {
		dralet_ctx_error(ctx, "%s: its interface ID \"%.40s\" is unreadable; not loading "
				 "bitstream %s", id->what, id->interface_id, label);
		r = -ENODEV;
	} else if (img->interface_id[0] && !region[0]) {
		dralet_ctx_error(ctx, "%s has no interface ID to check bitstream %s (built for "
				 "interface %s) against; not loading it", id->what, label,
				 img->interface_id);
		r = -ENODEV;
	} else if (img->interface_id[0] && strcmp(img->interface_id, region)) {
		dralet_ctx_error(ctx, "%s: bitstream %s was built for interface %s, the region's "
				 "is %s", id->what, label, img->interface_id, region);
		r = -EINVAL;
	} else if (!img->interface_id[0] &&
		   (!id->shell || !img->platform[0] || strcmp(id->shell, img->platform))) {
		dralet_ctx_error(ctx, "%s: bitstream %s names no interface; its platform \"%s\" "
				 "is not the region's shell \"%s\"", id->what, label,
				 img->platform[0] ? img->platform : "(none)",
				 id->shell ? id->shell : "(none)");
		r = -EINVAL;
	} else if (cfg->require_afu_id[0] && strcmp(cfg->require_afu_id, img->accelerator_id)) {
		dralet_ctx_error(ctx, "%s: bitstream %s brings accelerator %s, the claim requires "
				 "%s (requireAfuID)", id->what, label,
				 img->accelerator_id[0] ? img->accelerator_id : "(none)",
				 cfg->require_afu_id);
		r = -EINVAL;
	}
	if (r < 0) {
		fpga_store_unload(&l);
		return r;
	}
	*ret = l;
	return 0;
}

int fpga_claim_bitstream(struct dralet_backend_ctx *ctx, const struct dralet_prepare_req *req,
			 struct fpga_identity *id, struct fpga_config *cfg, int want,
			 struct fpga_loaded *img, bool *ret_loaded)
{
	char err[384];
	int r = fpga_config_parse(req->config, cfg, err, sizeof(err));

	*ret_loaded = false;
	if (r < 0) {
		dralet_ctx_error(ctx, "%s", err);
		return r;
	}
	if (!cfg->has_bitstream)
		return 0;
	if (req->admin_access) {
		dralet_ctx_error(ctx, "%s: an adminAccess request never loads a bitstream "
				 "(FpgaConfig.bitstream)", id->what);
		return -EPERM;
	}
	r = fpga_bitstream_for(ctx, cfg, id, want, img);
	if (r < 0)
		return r;
	*ret_loaded = fpga_id_equal(id->afu_id, img->image.accelerator_id);
	if (*ret_loaded)
		id->afu_id = img->image.accelerator_id;
	return 0;
}

void fpga_set_loaded_attr(struct dralet_backend_ctx *ctx, struct dralet_device *dev, int kind,
			  const char *accelerator_id, const char *interface_id)
{
	char accel[40], iface[40] = "", sha[FPGA_SHA256_HEX], name[FPGA_NAME_MAX];
	const char *dir = fpga_store_dir(ctx);

	if (!accelerator_id || fpga_id_all_zero(accelerator_id) ||
	    !fpga_id_normalize(accelerator_id, accel, sizeof(accel)) || strlen(accel) != 32)
		return;
	if (interface_id && !fpga_id_normalize(interface_id, iface, sizeof(iface)))
		return;
	if (fpga_store_match(dir, kind, accel, iface, sha) < 0)
		return;
	fpga_store_name_of(dir, sha, name);
	if (name[0])
		dralet_device_set_string(dev, "loadedBitstream", name);
	else
		dralet_device_set_string(dev, "loadedBitstreamSHA256", sha);
}
