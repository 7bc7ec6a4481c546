/* SPDX-License-Identifier: Apache-2.0 */
/* The sriov backend: VFs of the PFs the "pfs" option selects. */
#include "sriov.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "on_demand.h"
#include "selector.h"
#include "../common/vf.h"
#include "../common/vf_config.h"

struct sriov_state {
	struct sriov_selector *sel;
	size_t n;
	const char *resource_name;	/* option "resourceName", owned by the config */
};

/* A Multus/SR-IOV device plugin style resource name ("intel.com/sriov_net"). */
static bool valid_resource_name(const char *s)
{
	if (!*s || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || strchr("._/-", *s)))
			return false;
	return true;
}

static void sriov_fini(void *state)
{
	struct sriov_state *s = state;

	if (s)
		free(s->sel);
	free(s);
}

static int sriov_init(struct dralet_backend_ctx *ctx, void **ret_state)
{
	struct sriov_state *s = calloc(1, sizeof(*s));
	char err[256];
	int r;

	if (!s)
		return -ENOMEM;
	r = sriov_selectors_parse(dralet_ctx_option(ctx, "pfs"), &s->sel, &s->n, err,
				  sizeof(err));
	if (r < 0) {
		if (r == -EINVAL)
			dralet_ctx_error(ctx, "%s", err);
		free(s);
		return r;
	}
	s->resource_name = dralet_ctx_option(ctx, "resourceName");
	/* the VFs of PFs whose policy makes them on demand, made or not */
	if ((r = sriov_on_demand_publish(ctx)) < 0) {
		free(s->sel);
		free(s);
		return r;
	}
	if (s->resource_name && !valid_resource_name(s->resource_name)) {
		dralet_ctx_error(ctx, "resourceName \"%.80s\" must be 1-64 characters of "
				 "letters, digits, '.', '_', '/' and '-'", s->resource_name);
		free(s->sel);
		free(s);
		return -EINVAL;
	}
	*ret_state = s;
	return 0;
}

static int sriov_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const struct dralet_pci_id *id)
{
	const struct sriov_state *s = dralet_ctx_state(ctx);
	struct dralet_device *dev;
	int r;

	(void)id;
	if (sriov_on_demand_owns_vf(ctx, func))
		return 0;	/* published with its PF's VFs on demand (init) */
	r = vf_probe_device(ctx, func, &dev);
	if (dev && s && s->resource_name)
		dralet_device_set_string(dev, "k8s.cni.cncf.io/resourceName", s->resource_name);
	return r;
}

/* Whatever their IDs, the VFs of the PFs the "pfs" option selects are ours. */
static const struct dralet_pci_id sriov_ids[] = {
	DRALET_PCI_ANY_FUNCTION,
	{ 0, 0, 0, 0 },
};

/* A selected PF's VF scores SRIOV_SCORE, above every table score, so the
 * operator's selection wins over nic-vf and rdma (sriov.h). */
static int sriov_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			const struct dralet_pci_id *id, int score)
{
	const struct sriov_state *s = dralet_ctx_state(ctx);

	(void)id;
	(void)score;
	if (sriov_on_demand_owns_vf(ctx, func))
		return SRIOV_SCORE;
	return s && sriov_selectors_match_vf(s->sel, s->n, func) ? SRIOV_SCORE : 0;
}

static int sriov_validate_config(struct dralet_backend_ctx *ctx, const char *config)
{
	return vf_validate_config(ctx, config, SRIOV_API_VERSION);
}

static int sriov_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			 struct dralet_prepare_req *req)
{
	if (sriov_on_demand_device(dev))
		return sriov_on_demand_prepare(ctx, dev, req, SRIOV_API_VERSION);
	return vf_prepare(ctx, dev, req, SRIOV_API_VERSION);
}

static int sriov_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			   const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	if (sriov_on_demand_owns_undo(undo))
		return sriov_on_demand_unprepare(ctx, claim, undo);
	return vf_unprepare(ctx, dev, claim, undo);
}

static int sriov_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	if (sriov_on_demand_device(dev))
		return sriov_on_demand_health(ctx, dev);
	return vf_health(ctx, dev);
}

static const struct dralet_option sriov_options[] = {
	{ "pfs", 0 },
	{ "resourceName", 0 },
	{ NULL, 0 },
};

const struct dralet_backend backend_sriov = {
	.abi = DRALET_BACKEND_ABI,
	.name = "sriov",
	.family = "sriov",
	.default_driver = SRIOV_DRIVER,
	.ids = sriov_ids,
	.filter = sriov_filter,
	.init = sriov_init,
	.fini = sriov_fini,
	.probe = sriov_probe,
	.validate_config = sriov_validate_config,
	.admin_config_keys = vf_config_admin_keys,
	.prepare = sriov_prepare,
	.unprepare = sriov_unprepare,
	.health = sriov_health,
	.options = sriov_options,
};
