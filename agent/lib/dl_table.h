/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening a library with dlopen and taking a table of its functions, for the
 * libraries dralet loads only when a feature needs them (libcurl:
 * agent/kube/curl_loader.c; libmicrohttpd: agent/daemon/mhd_loader.c).
 */
#ifndef DRALET_LIB_DL_TABLE_H
#define DRALET_LIB_DL_TABLE_H

#include <stddef.h>

/* One function to take: its name and where its address goes. */
struct dl_symbol {
	const char *name;
	void **slot;
};

/*
 * dlopen(@library, RTLD_NOW | RTLD_LOCAL) and every symbol of @symbols into
 * its slot (RTLD_LOCAL: they resolve inside the library, never to the
 * wrappers of the same name the binary defines). Returns the handle, or NULL
 * with the reason in @err ("cannot load libx.so.1 (install @package): ...",
 * "libx.so.1 lacks x_init"); then no slot is to be used.
 */
void *dl_table_open(const char *library, const char *package, const struct dl_symbol *symbols,
		    size_t n, char *err, size_t errlen);

#endif
