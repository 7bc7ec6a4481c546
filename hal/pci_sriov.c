/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/pci_sriov.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/err_msg.h"
#include "hal/scan_internal.h"

int hal_pci_read_uint(const struct node_ops *node, const char *address, const char *file,
		      unsigned *ret)
{
	char rel[160], buf[32], *end;
	unsigned long v;
	int r;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	r = node->read(node->userdata, rel, buf, sizeof(buf));
	if (r < 0)
		return r;
	v = strtoul(buf, &end, 10);
	if (end == buf || *end || v > 0xffff)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int hal_pf_state_read(const struct node_ops *node, const char *address,
		      struct hal_pf_state *ret)
{
	struct hal_pf_state st = { .autoprobe = -1 };
	unsigned probe;
	char rel[160], target[4096];
	int r;

	r = hal_pci_read_uint(node, address, "sriov_totalvfs", &st.total_vfs);
	if (r < 0) {
		char vendor[16];
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vendor", address);
		if (node->read(node->userdata, rel, vendor, sizeof(vendor)) < 0)
			return -ENODEV;
		return r == -ENOENT ? -ENOTSUP : r;
	}
	if ((r = hal_pci_read_uint(node, address, "sriov_numvfs", &st.num_vfs)) < 0)
		return r;
	if (hal_pci_read_uint(node, address, "sriov_drivers_autoprobe", &probe) == 0)
		st.autoprobe = probe ? 1 : 0;
	if ((r = hal_pci_driver(node, address, st.driver, sizeof(st.driver))) < 0)
		return r;
	st.vfs = calloc(st.num_vfs + 1, sizeof(*st.vfs));
	if (!st.vfs)
		return -ENOMEM;
	for (unsigned i = 0; i < st.num_vfs; i++) {
		struct hal_vf_state *vf = &st.vfs[st.n_vfs];

		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/virtfn%u", address, i);
		if (node->readlink(node->userdata, rel, target, sizeof(target)) < 0)
			continue;	/* being created or removed right now */
		if (snprintf(vf->address, sizeof(vf->address), "%s", path_basename(target)) >=
		    (int)sizeof(vf->address))
			continue;
		vf->index = (int)i;
		if (hal_pci_driver(node, vf->address, vf->driver, sizeof(vf->driver)) < 0 ||
		    hal_pci_driver_override(node, vf->address, vf->override, sizeof(vf->override)) < 0)
			continue;
		st.n_vfs++;
	}
	*ret = st;
	return 0;
}

void hal_pf_state_clear(struct hal_pf_state *st)
{
	if (!st)
		return;
	free(st->vfs);
	st->vfs = NULL;
	st->n_vfs = 0;
}

const struct hal_vf_state *hal_pf_state_vf(const struct hal_pf_state *st, const char *address)
{
	for (size_t i = 0; st && i < st->n_vfs; i++)
		if (!strcmp(st->vfs[i].address, address))
			return &st->vfs[i];
	return NULL;
}

int hal_sriov_set_autoprobe(const struct node_ops *node, const char *address, int on,
			    char *err, size_t errlen)
{
	char rel[160];
	unsigned now;
	int r;

	if (hal_pci_read_uint(node, address, "sriov_drivers_autoprobe", &now) == 0 && (now != 0) == (on != 0))
		return 0;
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/sriov_drivers_autoprobe", address);
	r = node->write(node->userdata, rel, on ? "1" : "0");
	if (r < 0)
		err_printf(err, errlen, 0, "%s: cannot set sriov_drivers_autoprobe: %s", address, strerror(-r));
	return r;
}

static int write_uint(const struct node_ops *node, const char *address, const char *file,
		      unsigned v)
{
	char rel[160], buf[16];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	snprintf(buf, sizeof(buf), "%u", v);
	return node->write(node->userdata, rel, buf);
}

static const char *numvfs_cause(int r)
{
	switch (r) {
	case -ENOENT: return "no driver is bound to the PF, or it cannot configure SR-IOV";
	case -EBUSY: return "VFs are enabled or in use";
	case -ENOSPC: return "the PF ran out of resources (MSI-X vectors, queues, bus numbers)";
	case -ERANGE: return "more than sriov_totalvfs";
	case -EINVAL: return "the PF driver refused the count";
	default: return strerror(-r);
	}
}

int hal_sriov_set_numvfs(const struct node_ops *node, const char *address, unsigned n,
			 int autoprobe, char *err, size_t errlen)
{
	unsigned total, current, probe = 1;
	int r;

	if ((r = hal_pci_read_uint(node, address, "sriov_totalvfs", &total)) < 0) {
		err_printf(err, errlen, 0, "%s: not an SR-IOV physical function (%s)", address,
		    r == -ENOENT ? "no sriov_totalvfs" : strerror(-r));
		return r == -ENOENT ? -ENOTSUP : r;
	}
	if (n > total) {
		err_printf(err, errlen, 0, "%s: %u VFs asked, the PF supports %u", address, n, total);
		return -ERANGE;
	}
	if ((r = hal_pci_read_uint(node, address, "sriov_numvfs", &current)) < 0) {
		err_printf(err, errlen, 0, "%s: cannot read sriov_numvfs: %s", address, strerror(-r));
		return r;
	}
	hal_pci_read_uint(node, address, "sriov_drivers_autoprobe", &probe);
	bool probe_changes = autoprobe >= 0 && (unsigned)autoprobe != probe && n > 0;
	if (current == n && !probe_changes)
		return (int)n;

	if (current != 0) {
		r = write_uint(node, address, "sriov_numvfs", 0);
		if (r < 0) {
			err_printf(err, errlen, 0, "%s: cannot disable its %u VFs: %s", address, current,
			    numvfs_cause(r));
			return r;
		}
	}
	if (probe_changes) {
		r = write_uint(node, address, "sriov_drivers_autoprobe", (unsigned)autoprobe);
		if (r < 0) {
			err_printf(err, errlen, 0, "%s: cannot set sriov_drivers_autoprobe: %s", address,
			    strerror(-r));
			return r;
		}
	}
	if (n == 0)
		return 0;
	r = write_uint(node, address, "sriov_numvfs", n);
	if (r < 0) {
		err_printf(err, errlen, 0, "%s: enabling %u VFs failed: %s", address, n, numvfs_cause(r));
		return r;
	}
	if ((r = hal_pci_read_uint(node, address, "sriov_numvfs", &current)) < 0)
		return r;
	if (current < n)
		err_printf(err, errlen, 0, "%s: %u VFs asked, the driver enabled %u", address, n, current);
	return (int)current;
}
