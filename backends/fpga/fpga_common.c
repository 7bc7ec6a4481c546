/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the FPGA backends: IDs and fpga_manager health. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "bitstream.h"
#include "fpga.h"

bool fpga_id_normalize(const char *id, char *out, size_t size)
{
	size_t o = 0;

	if (!id || !size)
		return false;
	if (id[0] == '0' && (id[1] == 'x' || id[1] == 'X'))
		id += 2;
	for (; *id; id++) {
		if (*id == '-')
			continue;
		if (!isxdigit((unsigned char)*id) || o + 1 >= size || o >= 32)
			return false;
		out[o++] = (char)tolower((unsigned char)*id);
	}
	out[o] = '\0';
	return o > 0;
}

bool fpga_id_equal(const char *a, const char *b)
{
	char na[40], nb[40];

	return fpga_id_normalize(a, na, sizeof(na)) && fpga_id_normalize(b, nb, sizeof(nb)) &&
	       !strcmp(na, nb);
}

static bool all_of(const char *id, char c)
{
	char norm[40];

	if (!fpga_id_normalize(id, norm, sizeof(norm)))
		return false;
	for (const char *p = norm; *p; p++)
		if (*p != c)
			return false;
	return true;
}

bool fpga_id_all_f(const char *id) { return all_of(id, 'f'); }
bool fpga_id_all_zero(const char *id) { return all_of(id, '0'); }

void fpga_set_id_attr(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		      const char *name, const char *id)
{
	char norm[40];

	if (!id)
		return;
	if (!fpga_id_normalize(id, norm, sizeof(norm))) {
		dralet_ctx_warn(ctx, "device %s: %s \"%.80s\" is not a hex ID; attribute skipped",
				dralet_device_name(dev), name, id);
		return;
	}
	dralet_device_set_string(dev, name, norm);
}

int fpga_health_worst(int a, int b)
{
	if (a == DRALET_HEALTH_UNHEALTHY || b == DRALET_HEALTH_UNHEALTHY)
		return DRALET_HEALTH_UNHEALTHY;
	if (a == DRALET_HEALTH_UNKNOWN || b == DRALET_HEALTH_UNKNOWN)
		return DRALET_HEALTH_UNKNOWN;
	return DRALET_HEALTH_HEALTHY;
}

/* linux-devices.md 5.1 state names. */
static int state_health(const char *state)
{
	size_t len = strlen(state);

	if (!strcmp(state, "operating") || !strcmp(state, "unknown"))
		return DRALET_HEALTH_HEALTHY;
	if (!strcmp(state, "power off") || (len >= 5 && !strcmp(state + len - 5, "error")))
		return DRALET_HEALTH_UNHEALTHY;
	return DRALET_HEALTH_UNKNOWN;	/* power up, reset, firmware request, write ... */
}

int fpga_managers_health(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func)
{
	int health = DRALET_HEALTH_HEALTHY;

	for (size_t i = 0; func && i < func->n_fpga_managers; i++) {
		const struct dralet_fpga_manager *m = &func->fpga_managers[i];
		char rel[160], state[64], status[256];
		const char *st = m->state, *stat = m->status;
		int r;

		snprintf(rel, sizeof(rel), "class/fpga_manager/%s/state", m->name);
		if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, state, sizeof(state)) >= 0)
			st = state;
		snprintf(rel, sizeof(rel), "class/fpga_manager/%s/status", m->name);
		r = dralet_read_file(ctx, DRALET_ROOT_SYS, rel, status, sizeof(status));
		if (r >= 0)
			stat = r > 0 ? status : NULL;
		if (stat && *stat)
			return DRALET_HEALTH_UNHEALTHY;	/* reconfig errors */
		health = fpga_health_worst(health, st ? state_health(st) : DRALET_HEALTH_UNKNOWN);
	}
	return health;
}


const struct dralet_option fpga_options[] = {
	{ "bitstreamDir", DRALET_OPTION_TRUSTED_FILE },
	{ "xrtLibrary", DRALET_OPTION_TRUSTED_FILE },	/* xrt: XRT's libxrt_coreutil */
	{ "programBytesPerSecond", 0 },			/* fpga.h: FPGA_PROGRAM_BUDGET_S */
	{ "firmwareDir", DRALET_OPTION_TRUSTED_FILE },	/* fpga_mgr.h: the firmware search path */
	{ "stateDir", DRALET_OPTION_TRUSTED_FILE },	/* fpga.h: marks of regions left mid-load */
	{ NULL, 0 },
};

const char *fpga_store_dir(const struct dralet_backend_ctx *ctx)
{
	const char *dir = dralet_ctx_option(ctx, "bitstreamDir");

	return dir && *dir ? dir : FPGA_STORE_DEFAULT_DIR;
}
