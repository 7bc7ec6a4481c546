/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCIe AER as a health source for every PCI device (docs/health.md,
 * "While the agent runs"): the uncorrectable error counters the kernel keeps per function,
 * <function>/aer_dev_fatal and aer_dev_nonfatal (one "<name> <count>" line per
 * error kind and a TOTAL_ERR_FATAL / TOTAL_ERR_NONFATAL line; Linux
 * drivers/pci/pcie/aer.c, aer_stats_attrs, since 5.1). Correctable errors are
 * retried by the link and are not a health problem.
 *
 * The verdict is pure: the counts a device had when the agent first read them
 * are its baseline (errors from before are history); a round whose counts rose
 * makes the device Unhealthy, and it stays so until PCIE_AER_HOLD_S seconds
 * pass without a new error (a flapping link must not hand the device out
 * between two bursts). A function without the files (no AER capability, a
 * kernel without the counters, a simulated board without them) is no source.
 */
#ifndef DRALET_HEALTH_PCIE_AER_H
#define DRALET_HEALTH_PCIE_AER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dralet/device.h>

#define PCIE_AER_HOLD_S 600
/* The taint key of a device that is Unhealthy for AER errors. */
#define PCIE_AER_TAINT_KEY "dralet.dev/pcie-aer"

struct pcie_aer_counts {
	uint64_t fatal, nonfatal;
};

/* What the verdict remembers of one device between rounds (zeroed: nothing
 * read yet). */
struct pcie_aer_state {
	bool known;			/* base holds the first counts read */
	struct pcie_aer_counts base, last;
	int64_t last_increase;		/* Unix seconds of the last round that saw new errors */
};

/* Parses the text of an aer_dev_* file: the TOTAL_ERR_* line's count.
 * -EINVAL when there is none. */
int pcie_aer_parse_total(const char *text, uint64_t *ret_total);

/* Reads the counters of @dev's PCI function (through the device's backend
 * context, so below the agent's sysfs root). -ENOENT when the function has
 * none or the device is no PCI function. */
int pcie_aer_read(const struct dralet_device *dev, struct pcie_aer_counts *ret);

/* The verdict for counts @now read at @now_s: true (Unhealthy) with the reason
 * in @why, or false. Updates @st. */
bool pcie_aer_verdict(struct pcie_aer_state *st, const struct pcie_aer_counts *now, int64_t now_s,
		      char *why, size_t why_size);

#endif
