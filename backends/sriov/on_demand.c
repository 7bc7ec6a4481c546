/* SPDX-License-Identifier: Apache-2.0 */
#include "on_demand.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>
#include <dralet/vf_on_demand.h>

#include "on_demand_ledger.h"
#include "on_demand_plan.h"
#include "sriov.h"
#include "../common/pcidev.h"
#include "../common/vf.h"
#include "../common/vf_lifecycle.h"

#define UNDO_PF "sriov.onDemand.pf"
#define UNDO_VF "sriov.onDemand.vf"
#define UNDO_NUMVFS "sriov.onDemand.numVfs"

/* The private data of an on-demand device. */
struct od_device {
	char pf[24];
	unsigned index;
};

/* ---- publishing ---- */

/* "vfs-0000-01-00-0": the PF's counter set. */
static void set_name(const char *pf, char *buf, size_t size)
{
	snprintf(buf, size, "vfs-%s", pf);
	for (char *p = buf; *p; p++)
		if (*p == ':' || *p == '.')
			*p = '-';
}

static const struct dralet_pci_func *made_vf(const struct dralet_pci_func *pf, unsigned index)
{
	const struct dralet_pci_sriov *s = pf->sriov;

	return s && index < s->num_vfs && index < s->n_vfs ? s->vfs[index] : NULL;
}

static int publish_one(struct dralet_backend_ctx *ctx, const struct dralet_vf_on_demand *od,
		       unsigned index)
{
	const struct dralet_pci_func *pf = od->pf, *vf = made_vf(pf, index);
	struct od_device *priv;
	struct dralet_device *dev;
	char suffix[16], set[40], id[8];
	int r;

	snprintf(suffix, sizeof(suffix), "vf%u", index);
	set_name(pf->address, set, sizeof(set));
	if ((r = dralet_device_new(ctx, pf, "vf", suffix, &dev)) < 0)
		return r == -EEXIST ? 0 : r;
	if (!(priv = calloc(1, sizeof(*priv))))
		return -ENOMEM;
	snprintf(priv->pf, sizeof(priv->pf), "%s", pf->address);
	priv->index = index;
	dralet_device_set_private(dev, priv, free);
	if (vf) {
		/* the made VF's own facts, under the name that stays */
		vf_add_attributes(ctx, dev, vf);
		dralet_device_set_string(dev, DRALET_ATTR_PCI_BUS_ID, vf->address);
		snprintf(id, sizeof(id), "0x%04x", vf->device_id);
		dralet_device_set_string(dev, "deviceID", id);
		if (vf->device_name)
			dralet_device_set_string(dev, "productName", vf->device_name);
		else
			dralet_device_remove_attr(dev, "productName");	/* the PF's */
		if ((r = pcidev_device_add_vfio(ctx, dev, vf)) < 0)
			return r;
	} else {
		/* the PF's: a VF not made yet has no address, and its name is another */
		dralet_device_remove_attr(dev, DRALET_ATTR_PCI_BUS_ID);
		dralet_device_remove_attr(dev, "productName");
		dralet_device_set_int(dev, "vfID", index);
		dralet_device_set_string(dev, "pfPciAddress", pf->address);
		snprintf(id, sizeof(id), "0x%04x", pf->device_id);
		dralet_device_set_string(dev, "pfDeviceID", id);
		if (pf->sriov && pf->sriov->vf_device_id) {
			snprintf(id, sizeof(id), "0x%04x", pf->sriov->vf_device_id);
			dralet_device_set_string(dev, "deviceID", id);
		}
		if (pf->n_net && pf->net[0].ifname)
			dralet_device_set_string(dev, "pfName", pf->net[0].ifname);
		dralet_device_set_bool(dev, "isVF", true);
		/* a VF gets an IOMMU group of its own where its PF has one */
		dralet_device_set_bool(dev, "vfioCapable", pcidev_vfio_capable(ctx, pf));
	}
	dralet_device_set_bool(dev, "onDemand", true);
	dralet_device_set_bool(dev, "created", vf != NULL);
	if ((index == 0 && (r = dralet_device_set_counter_int(dev, set, "vfs",
							      od->max_vfs)) < 0) ||
	    (r = dralet_device_consume_counter_int(dev, set, "vfs", 1)) < 0)
		return r;
	dralet_device_set_partition(dev, vf == NULL);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return 0;
}

int sriov_on_demand_publish(struct dralet_backend_ctx *ctx)
{
	struct dralet_vf_on_demand od;
	int r = 0;

	for (size_t i = 0; r >= 0 && dralet_ctx_vf_on_demand(ctx, i, &od) == 0; i++)
		for (unsigned n = 0; r >= 0 && n < od.max_vfs; n++)
			r = publish_one(ctx, &od, n);
	return r;
}

bool sriov_on_demand_owns_vf(const struct dralet_backend_ctx *ctx,
			     const struct dralet_pci_func *vf)
{
	struct dralet_vf_on_demand od;

	return vf->physfn && dralet_ctx_vf_on_demand_of(ctx, vf->physfn->address, &od) == 0;
}

bool sriov_on_demand_device(const struct dralet_device *dev)
{
	const struct dralet_attr *a = dralet_device_find_attr(dev, "onDemand");

	return a && a->type == DRALET_ATTR_BOOL && a->bool_value && dralet_device_private(dev);
}

bool sriov_on_demand_owns_undo(const struct dralet_undo *undo)
{
	return dralet_undo_get(undo, UNDO_PF) != NULL;
}

int sriov_on_demand_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	const struct od_device *d = dralet_device_private(dev);
	char driver[64];

	return d && dralet_pci_driver(ctx, d->pf, driver, sizeof(driver)) >= 0
	       ? DRALET_HEALTH_HEALTHY : DRALET_HEALTH_UNHEALTHY;
}

/* ---- giving a VF back ---- */

static bool autoprobe_of(const struct dralet_backend_ctx *ctx, const char *pf)
{
	struct dralet_vf_on_demand od;

	/* the policy's, or the kernel's default (on) when it no longer says */
	return dralet_ctx_vf_on_demand_of(ctx, pf, &od) < 0 || (od.vf_driver && !*od.vf_driver);
}

/* Claim @uid's VF @index goes back: out of the ledger, and the PF's count
 * back to its original when no claim holds a VF of it any more. */
static int give_back(struct dralet_backend_ctx *ctx, const struct vfod_file *f,
		     struct vfod_ledger *l, const char *pf, unsigned index, const char *uid,
		     unsigned fallback_original)
{
	unsigned num = 0, count;
	char address[24];
	int r;

	vfod_ledger_remove(l, index, uid);
	if ((r = vfod_file_write(ctx, f, l)) < 0)
		return r;
	r = dralet_pci_sriov_vf(ctx, pf, 0, &num, address, sizeof(address));
	if (r == -ENODEV && !l->n) {
		l->has_original = false;	/* the PF is gone: nothing to give back */
		return vfod_file_write(ctx, f, l);
	}
	if (r < 0)
		return r == -ENODEV ? 0 : r;
	if (vfod_plan_give_back(l, num, fallback_original, &count)) {
		r = dralet_pci_sriov_set_numvfs(ctx, pf, count, autoprobe_of(ctx, pf));
		dralet_ctx_node_changed(ctx);
		if (r < 0 || (unsigned)r != count)
			return r < 0 ? r : -EIO;
		dralet_ctx_info(ctx, "PF %s: the last VF made on demand was given back; "
				"sriov_numvfs %u again", pf, count);
	}
	if (!l->n && l->has_original) {
		l->has_original = false;	/* done: the ledger goes */
		return vfod_file_write(ctx, f, l);
	}
	return 0;
}

/* ---- prepare ---- */

/* The VF at @address, index @index of @pf, as the prepare needs it: the
 * discovery's function when it was there, else read now (made just now). */
static const struct dralet_pci_func *vf_now(struct dralet_backend_ctx *ctx,
					    const struct dralet_pci_func *pf, unsigned index,
					    const char *address, struct dralet_pci_func *buf,
					    char *sysfs, size_t sysfs_size, char *driver,
					    size_t driver_size)
{
	const struct dralet_pci_func *found = dralet_ctx_find_pci(ctx, address);
	char rel[96], path[PATH_MAX], link[PATH_MAX];
	ssize_t n;

	if (found && found->physfn == pf && found->vf_index == (int)index)
		return found;
	memset(buf, 0, sizeof(*buf));
	snprintf(buf->address, sizeof(buf->address), "%s", address);
	snprintf(sysfs, sysfs_size, "bus/pci/devices/%s", address);
	buf->sysfs_path = sysfs;
	buf->vendor_id = pf->vendor_id;
	buf->device_id = pf->sriov ? pf->sriov->vf_device_id : 0;
	buf->class_code = pf->class_code;
	buf->numa_node = pf->numa_node;
	buf->physfn = pf;
	buf->vf_index = (int)index;
	buf->iommu_group = -1;
	snprintf(buf->pcie_root, sizeof(buf->pcie_root), "%s", pf->pcie_root);
	snprintf(rel, sizeof(rel), "%s/iommu_group", sysfs);
	if (dralet_root_path(ctx, DRALET_ROOT_SYS, rel, path, sizeof(path)) == 0 &&
	    (n = readlink(path, link, sizeof(link) - 1)) > 0) {
		link[n] = '\0';
		const char *base = strrchr(link, '/');
		buf->iommu_group = atoi(base ? base + 1 : link);
	}
	/* iommu_group_size 0: unknown, so the vfio check reads the group's members */
	if (dralet_pci_driver(ctx, address, driver, driver_size) > 0)
		buf->driver = driver;
	return buf;
}

int sriov_on_demand_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			    struct dralet_prepare_req *req, const char *api_version)
{
	const struct od_device *d = dralet_device_private(dev);
	struct dralet_vf_on_demand od;
	struct vfod_file f = { .lock_fd = -1 };
	struct vfod_ledger *l = calloc(1, sizeof(*l));
	struct vfod_plan plan;
	struct dralet_pci_func buf;
	const struct dralet_pci_func *vf;
	char claim[VFOD_CLAIM_MAX], address[24], index_text[16], original_text[16];
	char sysfs[64], driver[64];
	unsigned num = 0;
	int r;

	if (!l)
		return -ENOMEM;
	if (dralet_ctx_vf_on_demand_of(ctx, d->pf, &od) < 0) {
		dralet_ctx_error(ctx, "PF %s: its VFs are no longer made on demand (no policy "
				 "with onDemand selects it)", d->pf);
		r = -ENOENT;
		goto out;
	}
	snprintf(claim, sizeof(claim), "%s/%s", req->claim.namespace_, req->claim.name);
	if ((r = vfod_file_open(ctx, d->pf, &f)) < 0 || (r = vfod_file_read(ctx, &f, l)) < 0 ||
	    (r = dralet_pci_sriov_vf(ctx, d->pf, d->index, &num, address, sizeof(address))) < 0)
		goto out;
	vfod_plan_prepare(l, d->pf, d->index, num, od.max_vfs, req->claim.uid, claim, &plan);
	if (plan.action == VFOD_REFUSE) {
		dralet_ctx_error(ctx, "%s", plan.reason);
		r = -EBUSY;
		goto out;
	}
	/* what gives the VF and the count back, on disk before anything changes */
	snprintf(index_text, sizeof(index_text), "%u", d->index);
	snprintf(original_text, sizeof(original_text), "%u", plan.original);
	r = dralet_undo_set_all(req->undo, (const struct dralet_undo_value[]){
		{ UNDO_PF, d->pf }, { UNDO_VF, index_text }, { UNDO_NUMVFS, original_text } }, 3);
	if (r < 0) {
		dralet_ctx_error(ctx, "PF %s: cannot record its state before making VF %u: %s",
				 d->pf, d->index, strerror(-r));
		goto out;
	}
	if (!l->has_original) {
		l->has_original = true;
		l->original = plan.original;
	}
	if ((r = vfod_ledger_add(l, d->index, req->claim.uid, claim)) < 0 ||
	    (r = vfod_file_write(ctx, &f, l)) < 0)
		goto out;
	if (plan.action == VFOD_CREATE) {
		r = dralet_pci_sriov_set_numvfs(ctx, d->pf, plan.count,
						od.vf_driver && !*od.vf_driver);
		dralet_ctx_node_changed(ctx);
		if (r >= 0 && (unsigned)r < plan.count)
			r = -ENOSPC;
		if (r >= 0)
			r = dralet_pci_sriov_vf(ctx, d->pf, d->index, &num, address,
						sizeof(address));
		if (r < 0)
			goto undo;
		dralet_ctx_info(ctx, "PF %s: %u VFs made on demand for claim %s (sriov_numvfs "
				"was %u)", d->pf, plan.count, claim, plan.original);
	}
	if (!address[0]) {
		dralet_ctx_error(ctx, "PF %s: VF %u is not there after making %u VFs", d->pf,
				 d->index, plan.count);
		r = -ENODEV;
		goto undo;
	}
	vf = vf_now(ctx, od.pf, d->index, address, &buf, sysfs, sizeof(sysfs), driver,
		    sizeof(driver));
	if ((r = vf_prepare_vf(ctx, dev, vf, req, api_version, od.vf_driver)) >= 0)
		goto out;
undo: {
	/* the first reason stays; the VF and the count go back */
	char msg[640];

	snprintf(msg, sizeof(msg), "%s", dralet_ctx_error_message(ctx));
	if (give_back(ctx, &f, l, d->pf, d->index, req->claim.uid, plan.original) < 0)
		dralet_ctx_error(ctx, "%s; giving the PF its VF count back failed too: %s", msg,
				 dralet_ctx_error_message(ctx));
	else
		dralet_ctx_error(ctx, "%s", msg);
}
out:
	vfod_file_close(&f);
	free(l);
	return r;
}

/* ---- unprepare ---- */

static bool parse_uint(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return false;
	v = strtoul(s, &end, 10);
	if (*end || v > 0xffff)
		return false;
	*ret = (unsigned)v;
	return true;
}

int sriov_on_demand_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_claim_ref *claim,
			      const struct dralet_undo *undo)
{
	const char *pf = dralet_undo_get(undo, UNDO_PF);
	struct vfod_file f = { .lock_fd = -1 };
	struct vfod_ledger *l;
	unsigned index, original;
	int r;

	if (!parse_uint(dralet_undo_get(undo, UNDO_VF), &index) ||
	    !parse_uint(dralet_undo_get(undo, UNDO_NUMVFS), &original)) {
		dralet_ctx_error(ctx, "VF made on demand on PF %s: the undo state is incomplete",
				 pf);
		return -EINVAL;
	}
	if ((r = vf_lifecycle_restore(ctx, undo)) < 0)
		return r;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	if ((r = vfod_file_open(ctx, pf, &f)) >= 0 && (r = vfod_file_read(ctx, &f, l)) >= 0)
		r = give_back(ctx, &f, l, pf, index, claim->uid, original);
	vfod_file_close(&f);
	free(l);
	return r;
}
