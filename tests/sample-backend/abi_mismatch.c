/* SPDX-License-Identifier: Apache-2.0 */
/* A backend claiming a future SDK ABI: the agent must refuse it, loudly, and
 * keep going. */
#include <dralet/backend.h>

static int never_probe(struct dralet_backend_ctx *ctx, const struct hal_pci_func *func,
		       const struct dralet_pci_id *id)
{
	(void)ctx;
	(void)func;
	(void)id;
	return 0;
}

static const struct dralet_pci_id any_ids[] = {
	DRALET_PCI_CLASS(0, 0),
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

DRALET_BACKEND_EXPORT(&future_backend)
