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
 *    "bitstream": {"name": "nlb0"} or {"sha256": "<64 hex>"},
 *                                       // an image of the node's bitstream
 *                                       // store (bitstream.h) to load at prepare
 *    "onUnprepare": "keep"}             // keep | reset | golden: what unprepare
 *                                       // does with the loaded image
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/options.h>

#include "bitstream.h"
#include "fpga.h"

static const char *const fpga_kinds[] = { "FpgaConfig", NULL };

const struct dralet_config_key fpga_config_admin_keys[] = {
	{ "managementAccess", "hands out the card's management node (xclmgmt, dfl-fme), which "
			      "reprograms the card's shell and firmware" },
	{ NULL, NULL },
};

static int parse_shell(const char *text, void *dst, char *why, size_t whylen)
{
	size_t size = sizeof(((struct fpga_config *)0)->require_shell);

	if (!*text) {
		snprintf(why, whylen, "is empty");
		return -EINVAL;
	}
	if (strlen(text) >= size) {
		snprintf(why, whylen, "is longer than %zu characters", size - 1);
		return -EINVAL;
	}
	memcpy(dst, text, strlen(text) + 1);
	return 0;
}

static int parse_id(const char *text, void *dst, char *why, size_t whylen)
{
	if (!fpga_id_normalize(text, dst, sizeof(((struct fpga_config *)0)->require_afu_id))) {
		snprintf(why, whylen, "\"%.80s\" is not a hex ID (up to 32 hex digits, dashes "
			 "allowed)", text);
		return -EINVAL;
	}
	return 0;
}

static int parse_name(const char *text, void *dst, char *why, size_t whylen)
{
	if (!fpga_store_name_valid(text)) {
		snprintf(why, whylen, "\"%.80s\" is not a bitstream name (1-63 of A-Z a-z 0-9 . _ -)",
			 text);
		return -EINVAL;
	}
	memcpy(dst, text, strlen(text) + 1);
	return 0;
}

static int parse_sha256(const char *text, void *dst, char *why, size_t whylen)
{
	if (!fpga_sha256_valid(text)) {
		snprintf(why, whylen, "\"%.80s\" is not a sha256 (64 lower-case hex digits)", text);
		return -EINVAL;
	}
	memcpy(dst, text, strlen(text) + 1);
	return 0;
}

static const struct dralet_field bitstream_fields[] = {
	{ "name", DRALET_FIELD_STRING, DRALET_AT(struct fpga_config, bitstream_name),
	  .parse = parse_name },
	{ "sha256", DRALET_FIELD_STRING, DRALET_AT(struct fpga_config, bitstream_sha256),
	  .parse = parse_sha256 },
	DRALET_FIELDS_END,
};

static const char *const on_unprepare_names[] = { "keep", "reset", "golden", NULL };

static const struct dralet_field fpga_fields[] = {
	{ "requireShell", DRALET_FIELD_STRING, DRALET_AT(struct fpga_config, require_shell),
	  .parse = parse_shell },
	{ "requireInterfaceID", DRALET_FIELD_STRING,
	  DRALET_AT(struct fpga_config, require_interface_id), .parse = parse_id },
	{ "requireAfuID", DRALET_FIELD_STRING, DRALET_AT(struct fpga_config, require_afu_id),
	  .parse = parse_id },
	{ "managementAccess", DRALET_FIELD_BOOL,
	  DRALET_AT(struct fpga_config, management_access) },
	{ "bitstream", DRALET_FIELD_OBJECT, .fields = bitstream_fields,
	  DRALET_SEEN(struct fpga_config, has_bitstream) },
	{ "onUnprepare", DRALET_FIELD_ENUM, DRALET_AT(struct fpga_config, on_unprepare),
	  .names = on_unprepare_names },
	DRALET_FIELDS_END,
};

int fpga_config_parse(const char *text, struct fpga_config *ret, char *err, size_t errlen)
{
	static const char *const api_versions[] = { FPGA_API_VERSION, NULL };
	static const struct dralet_config_type type = { api_versions, fpga_kinds, fpga_fields };
	struct fpga_config c = { 0 };
	int r;

	if (!text) {
		*ret = c;
		return 0;
	}
	if ((r = dralet_config_decode(text, &type, &c, NULL, err, errlen)) < 0)
		return r;
	if (c.has_bitstream && !c.bitstream_name[0] && !c.bitstream_sha256[0]) {
		snprintf(err, errlen, "FpgaConfig.bitstream: needs \"name\" or \"sha256\"");
		return -EINVAL;
	}
	if (c.on_unprepare != FPGA_ON_UNPREPARE_KEEP && !c.has_bitstream) {
		snprintf(err, errlen, "FpgaConfig.onUnprepare: applies to a claim that loads a "
			 "bitstream (FpgaConfig.bitstream)");
		return -EINVAL;
	}
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
