/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCIe link width as a health source for every PCI device (docs/health.md,
 * "While the agent runs"): <function>/current_link_width, the lanes the link
 * trained to.
 * A link that retrains narrower than it ran before (a failing lane, a loose
 * riser or connector) keeps working at a fraction of its bandwidth, which is
 * worse than failing for a job that was scheduled for the bandwidth.
 *
 * Only the width counts and only against itself: the widest the agent has
 * seen for the function (at discovery or since), never max_link_width (a x16
 * card in a x8 slot is no fault), and never the speed (GPUs and NICs lower
 * their link speed when idle to save power). The verdict is pure.
 */
#ifndef DRALET_HEALTH_PCIE_LINK_H
#define DRALET_HEALTH_PCIE_LINK_H

#include <stdbool.h>
#include <stddef.h>

#include <dralet/device.h>

/* The taint key of a device that is Unhealthy for a narrower link. */
#define PCIE_LINK_TAINT_KEY "dralet.dev/link-degraded"

struct pcie_link_state {
	unsigned widest;	/* lanes; 0: nothing seen yet */
};

/* The lanes @dev's PCI function runs now; -ENOENT when the function has no
 * link (an integrated device) or says 0, and for a VF without reading: SR-IOV
 * reserves a VF's link registers (they read 0), the link it runs on is its
 * PF's, checked where the PF is a device. */
int pcie_link_width(const struct dralet_device *dev, unsigned *ret_lanes);

/* The verdict for @now lanes (@discovered: the width the discovery read, 0 when
 * unknown): true (Unhealthy) with the reason in @why while the link runs
 * narrower than the widest seen. Updates @st. */
bool pcie_link_verdict(struct pcie_link_state *st, unsigned discovered, unsigned now, char *why,
		       size_t why_size);

#endif
