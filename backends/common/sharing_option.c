/* SPDX-License-Identifier: Apache-2.0 */
#include "sharing_option.h"

#include <string.h>

bool sharing_enabled(struct dralet_backend_ctx *ctx)
{
	const char *v = dralet_ctx_option(ctx, "sharing");

	if (!v || !strcmp(v, "false"))
		return false;
	if (!strcmp(v, "true"))
		return true;
	dralet_ctx_warn(ctx, "option sharing=\"%.32s\" is neither \"true\" nor \"false\"; "
				     "devices are not shared", v);
	return false;
}
