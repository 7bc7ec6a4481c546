/* SPDX-License-Identifier: Apache-2.0 */
/* SR-IOV VFs on demand: what the agent offers a backend (include/dralet/vf_on_demand.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <dralet/vf_on_demand.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/sriov_policy_config.h"
#include "agent/lib/err_msg.h"
#include "hal/hal.h"
#include "hal/node_ops.h"
#include "hal/pci_sriov.h"

static bool on_demand(const struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      struct dralet_vf_on_demand *ret)
{
	const struct sriov_policy *p = sriov_policy_for(ctx->sriov, f, NULL);

	if (!p || !p->on_demand)
		return false;
	*ret = (struct dralet_vf_on_demand){
		.pf = f, .policy = p->name,
		.max_vfs = f->sriov && p->num_vfs > f->sriov->total_vfs ? f->sriov->total_vfs
									 : p->num_vfs,
		.vf_driver = p->vf_driver == SRIOV_VF_DRIVER_VFIO ? "vfio-pci"
			   : p->vf_driver == SRIOV_VF_DRIVER_DEFAULT ? "" : NULL,
	};
	return true;
}

int dralet_ctx_vf_on_demand(const struct dralet_backend_ctx *ctx, size_t i,
			    struct dralet_vf_on_demand *ret)
{
	size_t seen = 0;

	for (size_t k = 0; ctx->scan && k < ctx->scan->n_funcs; k++)
		if (on_demand(ctx, ctx->scan->funcs[k], ret) && seen++ == i)
			return 0;
	return -ENOENT;
}

int dralet_ctx_vf_on_demand_of(const struct dralet_backend_ctx *ctx, const char *pf_address,
			       struct dralet_vf_on_demand *ret)
{
	const struct dralet_pci_func *f = dralet_ctx_find_pci(ctx, pf_address);

	return f && on_demand(ctx, f, ret) ? 0 : -ENOENT;
}

/* The context's seam, or the real node below its roots (in @tmp). */
static const struct node_ops *node_of(const struct dralet_backend_ctx *ctx, struct node_ops *tmp)
{
	if (ctx->node)
		return ctx->node;
	*tmp = node_ops_real(ctx->roots);
	return tmp;
}

int dralet_pci_sriov_vf(struct dralet_backend_ctx *ctx, const char *pf, unsigned index,
			unsigned *ret_num_vfs, char *vf_address, size_t size)
{
	struct node_ops tmp;
	struct hal_pf_state st;
	int r = hal_pf_state_read(node_of(ctx, &tmp), pf, &st);

	if (size)
		vf_address[0] = '\0';
	if (r < 0) {
		dralet_ctx_error(ctx, "PF %s: cannot read its SR-IOV state: %s", pf,
				 r == -ENODEV ? "it is gone" : strerror(-r));
		return r;
	}
	*ret_num_vfs = st.num_vfs;
	for (size_t i = 0; i < st.n_vfs; i++)
		if (st.vfs[i].index == (int)index && index < st.num_vfs)
			snprintf(vf_address, size, "%s", st.vfs[i].address);
	hal_pf_state_clear(&st);
	return 0;
}

int dralet_pci_sriov_set_numvfs(struct dralet_backend_ctx *ctx, const char *pf, unsigned n,
				bool autoprobe)
{
	struct node_ops tmp;
	struct err_msg err = { "" };
	int r = hal_sriov_set_numvfs(node_of(ctx, &tmp), pf, n, autoprobe ? 1 : 0,
				     ERR_MSG_ARGS(&err));

	if (r < 0 || (unsigned)r < n)
		dralet_ctx_error(ctx, "%s", err.text[0] ? err.text : strerror(r < 0 ? -r : EIO));
	return r;
}
