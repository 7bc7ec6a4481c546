/* SPDX-License-Identifier: Apache-2.0 */
/* A library's function table through dlopen (dl_table.h). */
#include "agent/lib/dl_table.h"

#include <dlfcn.h>

#include "agent/lib/err_msg.h"

void *dl_table_open(const char *library, const char *package, const struct dl_symbol *symbols,
		    size_t n, char *err, size_t errlen)
{
	void *h = dlopen(library, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		err_printf(err, errlen, 0, "cannot load %s (install %s): %s", library, package,
			   dlerror());
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		*symbols[i].slot = dlsym(h, symbols[i].name);
		if (!*symbols[i].slot) {
			err_printf(err, errlen, 0, "%s lacks %s", library, symbols[i].name);
			dlclose(h);
			return NULL;
		}
	}
	return h;
}
