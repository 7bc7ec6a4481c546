/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl, loaded when the agent first talks to an apiserver.
 *
 * Linking libcurl would load it and its TLS, Kerberos and LDAP dependencies
 * into every dralet process — several MiB of RSS and most of the start-up
 * relocation work — although `discover`, `pci`, the file store and the
 * kubelet side never use it. So the binary does not link it: this file
 * defines the libcurl functions the apiserver client calls and forwards each
 * to libcurl.so.4, opened with dlopen on first use. The rest of the code
 * calls libcurl as usual. The process-wide handle is agent state.
 */
#define CURL_DISABLE_TYPECHECK	/* the type-checking macros would rename our definitions */
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "agent/kube/curl_loader.h"
#include "agent/lib/dl_table.h"
#include "agent/lib/err_msg.h"

#define CURL_LIBRARY "libcurl.so.4"

static struct {
	pthread_once_t once;
	void *handle;
	char error[256];
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_cleanup)(CURLM *);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} lib = { .once = PTHREAD_ONCE_INIT };

static void load(void)
{
	const struct dl_symbol symbols[] = {
		{ "curl_global_init", (void **)&lib.global_init },
		{ "curl_easy_init", (void **)&lib.easy_init },
		{ "curl_easy_cleanup", (void **)&lib.easy_cleanup },
		{ "curl_easy_setopt", (void **)&lib.easy_setopt },
		{ "curl_easy_getinfo", (void **)&lib.easy_getinfo },
		{ "curl_easy_strerror", (void **)&lib.easy_strerror },
		{ "curl_multi_init", (void **)&lib.multi_init },
		{ "curl_multi_cleanup", (void **)&lib.multi_cleanup },
		{ "curl_multi_setopt", (void **)&lib.multi_setopt },
		{ "curl_multi_add_handle", (void **)&lib.multi_add_handle },
		{ "curl_multi_remove_handle", (void **)&lib.multi_remove_handle },
		{ "curl_multi_socket_action", (void **)&lib.multi_socket_action },
		{ "curl_multi_info_read", (void **)&lib.multi_info_read },
		{ "curl_slist_append", (void **)&lib.slist_append },
		{ "curl_slist_free_all", (void **)&lib.slist_free_all },
	};
	lib.handle = dl_table_open(CURL_LIBRARY, "libcurl4", symbols,
				   sizeof(symbols) / sizeof(symbols[0]), lib.error,
				   sizeof(lib.error));
}

int curl_loader_load(char *err, size_t errlen)
{
	pthread_once(&lib.once, load);
	if (lib.handle)
		return 0;
	return err_printf(err, errlen, -ELIBACC, "%s", lib.error);
}

static bool ready(void)
{
	pthread_once(&lib.once, load);
	return lib.handle != NULL;
}

CURLcode (curl_global_init)(long flags)
{
	return ready() ? lib.global_init(flags) : CURLE_FAILED_INIT;
}

CURL *(curl_easy_init)(void)
{
	return ready() ? lib.easy_init() : NULL;
}

void (curl_easy_cleanup)(CURL *h)
{
	if (ready())
		lib.easy_cleanup(h);
}

/* An option's argument type is encoded in its number (curl.h CURLOPTTYPE_*),
 * so the one variadic argument is read with its real type and passed on. */
CURLcode (curl_easy_setopt)(CURL *h, CURLoption opt, ...)
{
	CURLcode r;
	va_list ap;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		r = lib.easy_setopt(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		r = lib.easy_setopt(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		r = lib.easy_setopt(h, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		r = lib.easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		r = lib.easy_setopt(h, opt, va_arg(ap, void *));
	va_end(ap);
	return r;
}

/* Every CURLINFO takes a pointer to where the answer goes. */
CURLcode (curl_easy_getinfo)(CURL *h, CURLINFO info, ...)
{
	CURLcode r;
	va_list ap;

	if (!ready())
		return CURLE_FAILED_INIT;
	va_start(ap, info);
	r = lib.easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return r;
}

const char *(curl_easy_strerror)(CURLcode code)
{
	return ready() ? lib.easy_strerror(code) : lib.error;
}

CURLM *(curl_multi_init)(void)
{
	return ready() ? lib.multi_init() : NULL;
}

CURLMcode (curl_multi_cleanup)(CURLM *m)
{
	return ready() ? lib.multi_cleanup(m) : CURLM_INTERNAL_ERROR;
}

CURLMcode (curl_multi_setopt)(CURLM *m, CURLMoption opt, ...)
{
	CURLMcode r;
	va_list ap;

	if (!ready())
		return CURLM_INTERNAL_ERROR;
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		r = lib.multi_setopt(m, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		r = lib.multi_setopt(m, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		r = lib.multi_setopt(m, opt, va_arg(ap, void (*)(void)));
	else
		r = lib.multi_setopt(m, opt, va_arg(ap, curl_off_t));
	va_end(ap);
	return r;
}

CURLMcode (curl_multi_add_handle)(CURLM *m, CURL *h)
{
	return ready() ? lib.multi_add_handle(m, h) : CURLM_INTERNAL_ERROR;
}

CURLMcode (curl_multi_remove_handle)(CURLM *m, CURL *h)
{
	return ready() ? lib.multi_remove_handle(m, h) : CURLM_INTERNAL_ERROR;
}

CURLMcode (curl_multi_socket_action)(CURLM *m, curl_socket_t s, int ev, int *running)
{
	return ready() ? lib.multi_socket_action(m, s, ev, running) : CURLM_INTERNAL_ERROR;
}

CURLMsg *(curl_multi_info_read)(CURLM *m, int *left)
{
	return ready() ? lib.multi_info_read(m, left) : NULL;
}

struct curl_slist *(curl_slist_append)(struct curl_slist *list, const char *s)
{
	return ready() ? lib.slist_append(list, s) : NULL;
}

void (curl_slist_free_all)(struct curl_slist *list)
{
	if (ready())
		lib.slist_free_all(list);
}
