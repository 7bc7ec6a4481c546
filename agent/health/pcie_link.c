/* SPDX-License-Identifier: Apache-2.0 */
/* PCIe link width as a health source (pcie_link.h). */
#include "agent/health/pcie_link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/core/backend_ctx.h"

int pcie_link_width(const struct dralet_device *dev, unsigned *ret_lanes)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	char buf[32], *end;
	unsigned long v;
	int r;

	if (!f || f->physfn)
		return -ENOENT;
	r = dralet_read_pci_file(dralet_device_ctx(dev), f, "current_link_width", buf, sizeof(buf));
	if (r < 0)
		return r;
	v = strtoul(buf, &end, 10);
	if (end == buf || *end || v == 0 || v > 32)
		return -ENOENT;
	*ret_lanes = (unsigned)v;
	return 0;
}

bool pcie_link_verdict(struct pcie_link_state *st, unsigned discovered, unsigned now, char *why,
		       size_t why_size)
{
	if (discovered > st->widest)
		st->widest = discovered;
	if (now >= st->widest) {
		st->widest = now;
		return false;
	}
	snprintf(why, why_size,
		 "PCIe link degraded: it runs x%u, narrower than the x%u it ran before (a lane "
		 "or connector fault; the link retrained)", now, st->widest);
	return true;
}
