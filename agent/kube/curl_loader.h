/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl is opened with dlopen on first use (agent/kube/curl_loader.c);
 * code calls the usual curl_* functions. This says whether it can be.
 */
#ifndef DRALET_CURL_LOADER_H
#define DRALET_CURL_LOADER_H

#include <errno.h>
#include <stddef.h>

/* Loads libcurl.so.4 now. 0, or -ELIBACC with the reason in @err. */
int curl_loader_load(char *err, size_t errlen);

#endif
