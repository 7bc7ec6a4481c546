/* SPDX-License-Identifier: Apache-2.0 */
/* PCIe AER counters as a health source (pcie_aer.h). */
#include "agent/health/pcie_aer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/core/backend_ctx.h"

int pcie_aer_parse_total(const char *text, uint64_t *ret_total)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
		char *end;
		unsigned long long v;

		if (strncmp(line, "TOTAL_ERR_", 10))
			continue;
		line = strchr(line, ' ');
		if (!line)
			return -EINVAL;
		errno = 0;
		v = strtoull(line + 1, &end, 10);
		if (errno || end == line + 1 || (*end && *end != '\n'))
			return -EINVAL;
		*ret_total = v;
		return 0;
	}
	return -EINVAL;
}

static int read_total(const struct dralet_device *dev, const char *file, uint64_t *ret)
{
	char buf[2048];
	int r = dralet_read_pci_file(dralet_device_ctx(dev), dralet_device_pci(dev), file, buf,
				     sizeof(buf));

	if (r < 0)
		return r;
	return pcie_aer_parse_total(buf, ret);
}

int pcie_aer_read(const struct dralet_device *dev, struct pcie_aer_counts *ret)
{
	int r;

	if (!dralet_device_pci(dev))
		return -ENOENT;
	if ((r = read_total(dev, "aer_dev_fatal", &ret->fatal)) < 0)
		return r;
	return read_total(dev, "aer_dev_nonfatal", &ret->nonfatal);
}

bool pcie_aer_verdict(struct pcie_aer_state *st, const struct pcie_aer_counts *now, int64_t now_s,
		      char *why, size_t why_size)
{
	if (!st->known) {
		st->known = true;
		st->base = st->last = *now;
		return false;
	}
	/* counters only go down when the function was reset or re-enumerated */
	if (now->fatal < st->last.fatal || now->nonfatal < st->last.nonfatal)
		st->base = *now;
	else if (now->fatal > st->last.fatal || now->nonfatal > st->last.nonfatal)
		st->last_increase = now_s;
	st->last = *now;
	if (!st->last_increase || now_s - st->last_increase >= PCIE_AER_HOLD_S)
		return false;
	snprintf(why, why_size,
		 "PCIe AER: %" PRIu64 " fatal and %" PRIu64 " non-fatal uncorrectable error(s) "
		 "since the agent first saw the function, the last %" PRId64 " s ago (Unhealthy "
		 "until %d s pass without one)",
		 now->fatal - st->base.fatal, now->nonfatal - st->base.nonfatal,
		 now_s - st->last_increase, PCIE_AER_HOLD_S);
	return true;
}
