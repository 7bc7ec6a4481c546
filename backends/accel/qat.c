/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Intel QuickAssist facts (Documentation/ABI/testing/sysfs-driver-qat):
 * qat/cfg_services and qat/state live on the PF; a VF serves what its PF is
 * configured for, which is what Intel's QAT DRA driver publishes as
 * "services".
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accel.h"

static int read_qat_file(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			 const char *name, char *buf, size_t size)
{
	const struct dralet_pci_func *pf = func->physfn ? func->physfn : func;
	int r;

	if (pf->vendor_id != 0x8086)
		return -ENOENT;
	r = dralet_read_pci_file(ctx, pf, name, buf, size);
	if (r == 0)
		return -ENOENT;
	return r;
}

int accel_qat_services(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       char *buf, size_t size)
{
	int r = read_qat_file(ctx, func, "qat/cfg_services", buf, size);

	if (r < 0)
		return r;
	for (size_t i = 0; buf[i]; i++)
		if (!(isalnum((unsigned char)buf[i]) || buf[i] == ';')) {
			dralet_ctx_warn(ctx, "%s: qat/cfg_services \"%s\" is not a service list",
					func->address, buf);
			return -EINVAL;
		}
	return r;
}

int accel_qat_state(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func, char *buf,
		    size_t size)
{
	return read_qat_file(ctx, func, "qat/state", buf, size);
}

int accel_qat_ring_pairs(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func)
{
	char buf[32], *end;
	long n;
	int r;

	if (func->vendor_id != 0x8086)
		return -ENOENT;
	r = dralet_read_pci_file(ctx, func, "qat/num_rps", buf, sizeof(buf));
	if (r <= 0)
		return -ENOENT;
	n = strtol(buf, &end, 10);
	if (end == buf || *end || n <= 0 || n > 4096) {
		dralet_ctx_warn(ctx, "%s: qat/num_rps \"%s\" is not a ring pair count",
				func->address, buf);
		return -EINVAL;
	}
	return (int)n;
}
