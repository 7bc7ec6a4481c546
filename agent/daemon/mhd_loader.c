/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libmicrohttpd, loaded when the daemon starts its metrics endpoint.
 *
 * Debian's libmicrohttpd links GnuTLS, and with it nettle, gmp, p11-kit,
 * libtasn1, libidn2 and libunistring: linked into the binary, they cost every
 * dralet process (discover, the CLI, a daemon without --metrics-address)
 * about 2.5 MiB of RSS and their relocations at start. So, as libcurl
 * (agent/kube/curl_loader.c), the binary does not link it: this file defines
 * the six MHD functions metrics_server.c calls and forwards each to
 * libmicrohttpd.so.12, opened with dlopen on first use. The process-wide
 * handle is daemon state.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "agent/daemon/mhd_loader.h"
#include "agent/lib/dl_table.h"
#include "agent/lib/err_msg.h"

#define MHD_LIBRARY "libmicrohttpd.so.12"

static struct {
	pthread_once_t once;
	void *handle;
	char error[256];
	struct MHD_Daemon *(*start_daemon_va)(unsigned, uint16_t, MHD_AcceptPolicyCallback, void *,
					      MHD_AccessHandlerCallback, void *, va_list);
	void (*stop_daemon)(struct MHD_Daemon *);
	struct MHD_Response *(*create_response_from_buffer)(size_t, void *,
							     enum MHD_ResponseMemoryMode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned,
					  struct MHD_Response *);
	void (*destroy_response)(struct MHD_Response *);
} lib = { .once = PTHREAD_ONCE_INIT };

static void load(void)
{
	const struct dl_symbol symbols[] = {
		{ "MHD_start_daemon_va", (void **)&lib.start_daemon_va },
		{ "MHD_stop_daemon", (void **)&lib.stop_daemon },
		{ "MHD_create_response_from_buffer", (void **)&lib.create_response_from_buffer },
		{ "MHD_add_response_header", (void **)&lib.add_response_header },
		{ "MHD_queue_response", (void **)&lib.queue_response },
		{ "MHD_destroy_response", (void **)&lib.destroy_response },
	};
	lib.handle = dl_table_open(MHD_LIBRARY, "libmicrohttpd12", symbols,
				   sizeof(symbols) / sizeof(symbols[0]), lib.error,
				   sizeof(lib.error));
}

int mhd_loader_load(char *err, size_t errlen)
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

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port,
				    MHD_AcceptPolicyCallback apc, void *apc_cls,
				    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	if (!ready())
		return NULL;
	va_start(ap, dh_cls);
	d = lib.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon)
{
	if (ready())
		lib.stop_daemon(daemon);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	return ready() ? lib.create_response_from_buffer(size, buffer, mode) : NULL;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header,
					const char *content)
{
	return ready() ? lib.add_response_header(response, header, content) : MHD_NO;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
				   struct MHD_Response *response)
{
	return ready() ? lib.queue_response(connection, status_code, response) : MHD_NO;
}

void MHD_destroy_response(struct MHD_Response *response)
{
	if (ready())
		lib.destroy_response(response);
}
