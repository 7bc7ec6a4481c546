/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libmicrohttpd is opened with dlopen when the metrics endpoint starts
 * (agent/daemon/mhd_loader.c); metrics_server.c calls the usual MHD_*
 * functions. This says whether it can be.
 */
#ifndef DRALET_MHD_LOADER_H
#define DRALET_MHD_LOADER_H

#include <errno.h>
#include <stddef.h>

/* Loads libmicrohttpd.so.12 now. 0, or -ELIBACC with the reason in @err. */
int mhd_loader_load(char *err, size_t errlen);

#endif
