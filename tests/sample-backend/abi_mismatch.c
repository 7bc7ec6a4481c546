/* SPDX-License-Identifier: Apache-2.0 */
/* Backends claiming a future SDK ABI and the ABI before this one (2: a match
 * operation instead of filter, a probe not told the entry): the agent must
 * refuse both, loudly, and keep going. */
#include <dralet/backend.h>

static int never_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
		       const struct dralet_pci_id *id)
{
	(void)ctx;
	(void)func;
	(void)id;
	return 0;
}

static const struct dralet_pci_id any_ids[] = {
	DRALET_PCI_ANY_FUNCTION,
	{ 0, 0, 0, 0 },
};

static const struct dralet_backend future_backend = {
	.abi = DRALET_BACKEND_ABI + 100,
	.name = "future",
	.family = "accel",
	.default_driver = "future.example.com",
	.ids = any_ids,
	.probe = never_probe,
};

static const struct dralet_backend old_backend = {
	.abi = DRALET_BACKEND_ABI - 1,	/* the ABI before this one */
	.name = "old",
	.family = "accel",
	.default_driver = "old.example.com",
	.ids = any_ids,
	.probe = never_probe,
};

DRALET_BACKEND_EXPORT(&future_backend, &old_backend)
