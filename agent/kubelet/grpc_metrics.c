/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/kubelet/grpc_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "agent/kubelet/grpc_frame.h"

void grpc_metrics_count(struct grpc_metrics *m, const char *method, int code)
{
	struct grpc_method_counts *rows;
	size_t i;

	if (!m)
		return;
	if (!method)
		method = GRPC_METRICS_UNKNOWN_METHOD;
	if (code < 0 || code >= GRPC_METRICS_N_CODES)
		code = GRPC_STATUS_UNKNOWN;
	for (i = 0; i < m->n; i++)
		if (!strcmp(m->methods[i].method, method))
			break;
	if (i == m->n) {
		char *copy = strdup(method);

		rows = copy ? realloc(m->methods, (m->n + 1) * sizeof(*rows)) : NULL;
		if (!rows) {
			free(copy);
			return;
		}
		m->methods = rows;
		memset(&m->methods[m->n], 0, sizeof(m->methods[m->n]));
		m->methods[m->n++].method = copy;
	}
	m->methods[i].by_code[code]++;
}

void grpc_metrics_clear(struct grpc_metrics *m)
{
	for (size_t i = 0; m && i < m->n; i++)
		free(m->methods[i].method);
	if (m) {
		free(m->methods);
		m->methods = NULL;
		m->n = 0;
	}
}
