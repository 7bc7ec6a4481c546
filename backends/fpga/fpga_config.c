/* SPDX-License-Identifier: Apache-2.0 */
/*
 * FpgaConfig, the opaque configuration of fpga.dralet.dev:
 *
 *   {"apiVersion": "fpga.dralet.dev/v1alpha1", "kind": "FpgaConfig",
 *    "requireShell": "xilinx_u55c_gen3x16_xdma_base_3",  // XRT VBNV
 *    "requireInterfaceID": "<hex ID>",  // XRT interface UUID, DFL interface ID,
 *                                       // fpga_region compat_id
 *    "requireAfuID": "<hex ID>",        // DFL AFU ID, XRT loaded xclbin UUID
 *    "managementAccess": false,         // also hand out /dev/xclmgmtN or
 *                                       // /dev/dfl-fme.N
 *    "bitstream": ...}                  // not supported yet: fails
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fpga.h"
#include "../common/opaque.h"

static const char *const fpga_kinds[] = { "FpgaConfig", NULL };

const struct dralet_config_key fpga_config_admin_keys[] = {
	{ "managementAccess", "hands out the card's management node (xclmgmt, dfl-fme), which "
			      "reprograms the card's shell and firmware" },
	{ NULL, NULL },
};

static int read_id(const char *key, struct json_object *v, char *out, size_t size, char *err,
		   size_t errlen)
{
	char raw[80];
	int r = opaque_string("FpgaConfig", key, v, raw, sizeof(raw), err, errlen);

	if (r < 0)
		return r;
	if (!fpga_id_normalize(raw, out, size)) {
		snprintf(err, errlen, "FpgaConfig.%s \"%s\" is not a hex ID (up to 32 hex digits, "
			 "dashes allowed)", key, raw);
		return -EINVAL;
	}
	return 0;
}

int fpga_config_parse(const char *text, struct fpga_config *ret, char *err, size_t errlen)
{
	struct fpga_config c = { 0 };
	struct json_object *obj;
	const char *kind;
	int r;

	if (!text) {
		*ret = c;
		return 0;
	}
	r = opaque_parse(text, FPGA_API_VERSION, fpga_kinds, &obj, &kind, err, errlen);
	if (r < 0)
		return r;
	json_object_object_foreach(obj, key, v) {
		if (opaque_header_key(key))
			continue;
		if (!strcmp(key, "requireShell")) {
			r = opaque_string(kind, key, v, c.require_shell, sizeof(c.require_shell), err,
					  errlen);
			if (r == 0 && !c.require_shell[0]) {
				snprintf(err, errlen, "FpgaConfig.requireShell is empty");
				r = -EINVAL;
			}
		} else if (!strcmp(key, "requireInterfaceID")) {
			r = read_id(key, v, c.require_interface_id, sizeof(c.require_interface_id),
				    err, errlen);
		} else if (!strcmp(key, "requireAfuID")) {
			r = read_id(key, v, c.require_afu_id, sizeof(c.require_afu_id), err,
				    errlen);
		} else if (!strcmp(key, "managementAccess")) {
			r = opaque_bool(kind, key, v, &c.management_access, err, errlen);
		} else if (!strcmp(key, "bitstream")) {
			snprintf(err, errlen, "FpgaConfig.bitstream: programming a bitstream at "
				 "prepare is not supported yet; load it beforehand and select the "
				 "card with requireAfuID or the afuID/xclbinUUID attribute");
			r = -EOPNOTSUPP;
		} else {
			snprintf(err, errlen, "FpgaConfig: unknown field \"%.64s\" (known: "
				 "requireShell, requireInterfaceID, requireAfuID, "
				 "managementAccess, bitstream)", key);
			r = -EINVAL;
		}
		if (r < 0)
			break;
	}
	json_object_put(obj);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

int fpga_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	struct fpga_config c;
	char err[384];
	int r = fpga_config_parse(config, &c, err, sizeof(err));

	if (r < 0)
		dralet_ctx_error(ctx, "%s", err);
	return r;
}

static bool same_id(const char *want_norm, const char *have)
{
	char norm[40];
	return have && fpga_id_normalize(have, norm, sizeof(norm)) && !strcmp(norm, want_norm);
}

int fpga_config_check(struct dralet_backend_ctx *ctx, const char *config,
		      const struct fpga_identity *id, struct fpga_config *ret)
{
	struct fpga_config c;
	char err[384];
	int r = fpga_config_parse(config, &c, err, sizeof(err));

	if (r < 0) {
		dralet_ctx_error(ctx, "%s", err);
		return r;
	}
	if (c.require_shell[0] && (!id->shell || strcmp(id->shell, c.require_shell))) {
		dralet_ctx_error(ctx, "%s runs shell \"%s\", the claim requires \"%s\"", id->what,
				 id->shell ? id->shell : "(none)", c.require_shell);
		return -EINVAL;
	}
	if (c.require_interface_id[0] && !same_id(c.require_interface_id, id->interface_id)) {
		dralet_ctx_error(ctx, "%s has interface ID %s, the claim requires %s", id->what,
				 id->interface_id ? id->interface_id : "(none)",
				 c.require_interface_id);
		return -EINVAL;
	}
	if (c.require_afu_id[0] && !same_id(c.require_afu_id, id->afu_id)) {
		dralet_ctx_error(ctx, "%s has AFU/xclbin ID %s loaded, the claim requires %s",
				 id->what, id->afu_id ? id->afu_id : "(none)", c.require_afu_id);
		return -EINVAL;
	}
	if (c.management_access && !id->has_management) {
		dralet_ctx_error(ctx, "%s has no management node to hand out "
				 "(FpgaConfig.managementAccess)", id->what);
		return -EINVAL;
	}
	if (ret)
		*ret = c;
	return 0;
}
