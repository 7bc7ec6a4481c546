/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sriov/status.h"

#include <stdlib.h>
#include <string.h>

#include "hal/hal.h"
#include "hal/pci_sriov.h"

static void put_string(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static void put_int(struct json_object *o, const char *key, long long v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static struct json_object *vf_json(const struct hal_vf_state *vf,
				   const struct sriov_prepared *prep)
{
	const struct sriov_prepared_vf *p = sriov_prepared_find(prep, vf->address);
	struct json_object *o = json_object_new_object();

	put_int(o, "index", vf->index);
	put_string(o, "address", vf->address);
	put_string(o, "driver", vf->driver[0] ? vf->driver : NULL);
	put_string(o, "driverOverride", vf->override[0] ? vf->override : NULL);
	put_string(o, "claim", p ? p->claim : NULL);
	put_string(o, "claimDriver", p ? p->driver : NULL);
	json_object_object_add(o, "inFlight", json_object_new_boolean(p && p->in_flight));
	return o;
}

/* What the policy would do to the PF now, or why it may not. */
static void put_pending(struct json_object *o, const struct sriov_policy *pol, const char *pf,
			const struct hal_pf_state *st, const struct sriov_prepared *prep)
{
	struct sriov_count_plan plan;
	char text[800];

	sriov_plan_count(pol, pf, st, prep, &plan);
	if (plan.action == SRIOV_COUNT_KEEP)
		return;
	if (plan.action == SRIOV_COUNT_SET)
		snprintf(text, sizeof(text), "VF count %u -> %u at the next apply", plan.from, plan.to);
	else
		snprintf(text, sizeof(text), "refused: %s", plan.reason);
	put_string(o, "pending", text);
}

static struct json_object *pf_json(const struct node_ops *node, const struct dralet_pci_func *pf,
				   const struct sriov_policies *pol,
				   const struct sriov_prepared *prep)
{
	const struct sriov_policy *also, *p = sriov_policy_for(pol, pf, &also);
	struct json_object *o = json_object_new_object(), *vfs = json_object_new_array();
	struct hal_pf_state st;
	bool live = hal_pf_state_read(node, pf->address, &st) == 0;

	put_string(o, "address", pf->address);
	put_string(o, "interface", pf->n_net ? pf->net[0].ifname : NULL);
	put_string(o, "driver", live ? (st.driver[0] ? st.driver : NULL) : pf->driver);
	put_string(o, "policy", p ? p->name : NULL);
	put_string(o, "alsoSelectedBy", also ? also->name : NULL);
	if (p) {
		put_int(o, "wantedVfs", p->num_vfs);
		put_string(o, "vfDriver", sriov_vf_driver_name(p->vf_driver));
		if (p->on_demand)
			json_object_object_add(o, "onDemand", json_object_new_boolean(true));
	}
	put_int(o, "actualVfs", live ? st.num_vfs : pf->sriov->num_vfs);
	put_int(o, "totalVfs", live ? st.total_vfs : pf->sriov->total_vfs);
	if (live && st.autoprobe >= 0)
		json_object_object_add(o, "autoprobe", json_object_new_boolean(st.autoprobe));
	if (live && p)
		put_pending(o, p, pf->address, &st, prep);
	for (size_t i = 0; live && i < st.n_vfs; i++)
		json_object_array_add(vfs, vf_json(&st.vfs[i], prep));
	json_object_object_add(o, "vfs", vfs);
	if (live)
		hal_pf_state_clear(&st);
	return o;
}

struct json_object *sriov_status_json(const struct node_ops *node, const struct hal_scan *scan,
				      const struct sriov_policies *pol,
				      const struct sriov_prepared *prep)
{
	struct json_object *root = json_object_new_object();
	struct json_object *pfs = json_object_new_array(), *unused = json_object_new_array();

	if (!root || !pfs || !unused) {
		json_object_put(root);
		json_object_put(pfs);
		json_object_put(unused);
		return NULL;
	}
	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *f = scan->funcs[i];
		if (f->sriov && !f->physfn)
			json_object_array_add(pfs, pf_json(node, f, pol, prep));
	}
	for (size_t i = 0; pol && i < pol->n; i++) {
		bool used = false;
		for (size_t j = 0; j < scan->n_funcs && !used; j++) {
			const struct dralet_pci_func *f = scan->funcs[j];
			used = f->sriov && !f->physfn && sriov_selector_matches(&pol->items[i].pf, f);
		}
		if (!used)
			json_object_array_add(unused, json_object_new_string(pol->items[i].name));
	}
	json_object_object_add(root, "pfs", pfs);
	json_object_object_add(root, "unusedPolicies", unused);
	return root;
}

static const char *str(struct json_object *o, const char *key, const char *none)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return none;
	return json_object_get_string(v);
}

void sriov_status_print(struct json_object *status, FILE *out)
{
	struct json_object *pfs, *unused;
	size_t n_pfs;

	json_object_object_get_ex(status, "pfs", &pfs);
	json_object_object_get_ex(status, "unusedPolicies", &unused);
	n_pfs = pfs ? json_object_array_length(pfs) : 0;
	if (!n_pfs)
		fprintf(out, "no SR-IOV physical function on this node\n");
	else
		fprintf(out, "%-14s %-12s %-10s %-20s %6s %6s %6s %-9s %s\n", "PF", "INTERFACE",
			"DRIVER", "POLICY", "WANTED", "ACTUAL", "TOTAL", "AUTOPROBE", "VF DRIVER");
	for (size_t i = 0; i < n_pfs; i++) {
		struct json_object *pf = json_object_array_get_idx(pfs, i), *vfs, *pending;

		fprintf(out, "%-14s %-12s %-10s %-20s %6s %6s %6s %-9s %s\n", str(pf, "address", "-"),
			str(pf, "interface", "-"), str(pf, "driver", "-"), str(pf, "policy", "-"),
			str(pf, "wantedVfs", "-"), str(pf, "actualVfs", "-"), str(pf, "totalVfs", "-"),
			!strcmp(str(pf, "autoprobe", "-"), "true") ? "on"
			: !strcmp(str(pf, "autoprobe", "-"), "false") ? "off" : "-",
			str(pf, "vfDriver", "-"));
		if (json_object_object_get_ex(pf, "alsoSelectedBy", &pending) && pending)
			fprintf(out, "  note: policy %s selects it too and is ignored (the first "
				"policy wins)\n", json_object_get_string(pending));
		if (json_object_object_get_ex(pf, "onDemand", &pending) && pending)
			fprintf(out, "  on demand: claims' prepares make up to %d VFs, the last "
				"unprepare gives the count back (docs/sriov.md)\n",
				json_object_get_int(json_object_object_get(pf, "wantedVfs")));
		if (json_object_object_get_ex(pf, "pending", &pending) && pending)
			fprintf(out, "  pending: %s\n", json_object_get_string(pending));
		json_object_object_get_ex(pf, "vfs", &vfs);
		for (size_t j = 0; vfs && j < json_object_array_length(vfs); j++) {
			struct json_object *vf = json_object_array_get_idx(vfs, j), *claim;
			fprintf(out, "  VF %-4s %-14s %-10s", str(vf, "index", "?"),
				str(vf, "address", "-"), str(vf, "driver", "(none)"));
			if (json_object_object_get_ex(vf, "claim", &claim) && claim)
				fprintf(out, " prepared for claim %s (%s)%s", json_object_get_string(claim),
					str(vf, "claimDriver", "?"),
					!strcmp(str(vf, "inFlight", "false"), "true") ? ", in flight" : "");
			fprintf(out, "\n");
		}
	}
	for (size_t i = 0; unused && i < json_object_array_length(unused); i++)
		fprintf(out, "policy %s selects no SR-IOV PF on this node\n",
			json_object_get_string(json_object_array_get_idx(unused, i)));
}
