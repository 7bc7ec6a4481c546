/* SPDX-License-Identifier: Apache-2.0 */
/* Picks the store implementation the options name. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "agent/kube/store_open.h"
#include "agent/lib/err_msg.h"

void store_release_memory(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

const char *store_write_result_name(enum store_write_result r)
{
	static const char *const names[] = { "ok", "conflict", "invalid", "error" };

	return r < STORE_N_WRITE_RESULTS ? names[r] : "error";
}

void store_get_stats(struct store *s, struct store_stats *ret_stats)
{
	struct store_stats zero = { 0 };
	if (!s)
		*ret_stats = zero;
	else if (!strcmp(s->ops->name, "file"))
		store_file_get_stats(s, ret_stats);
	else
		store_apiserver_get_stats(s, ret_stats);
}

int store_open(uv_loop_t *loop, const struct store_options *opts, struct store **ret_store,
	       char *err, size_t errlen)
{
	if (!opts || !opts->node_name || !*opts->node_name) {
		return err_printf(err, errlen, -EINVAL, "no node name (set --node-name or NODE_NAME)");
	}
	if (opts->store_dir && opts->kubeconfig) {
		return err_printf(err, errlen, -EINVAL, "--store and --kubeconfig exclude each other");
	}
	if (opts->store_dir)
		return store_file_new(loop, opts, ret_store, err, errlen);
	return store_apiserver_new(loop, opts, ret_store, err, errlen);
}
