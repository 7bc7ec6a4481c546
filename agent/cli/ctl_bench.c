/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet ctl bench: how fast this node prepares and unprepares claims, as the
 * kubelet sees it (one claim per call, over the DRA socket). Operators use it
 * to check a node; `make bench` uses it for the figures in
 * docs/performance.md.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/claims/checkpoint_file.h"
#include "agent/cli/ctl.h"
#include "agent/kubelet/grpc_client.h"
#include "agent/lib/yaml_load.h"
#include "proto/kubelet_pb.h"

struct worker {
	const struct ctl_opts *o;
	const struct ctl_claim *claims;	/* this worker's share */
	size_t n_claims;
	double *prepare_ms, *unprepare_ms;	/* one per call made */
	size_t n_prepare, n_unprepare;
	char error[256];
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One call with a single claim (or none); checks the per-claim error too. */
static int call(struct worker *w, struct grpc_client *client, const char *path,
		const struct ctl_claim *claim, double *ret_ms)
{
	dra_v1_claim c = DRA_V1_CLAIM_INIT, *cp = &c;
	dra_v1_prepare_request req = DRA_V1_PREPARE_REQUEST_INIT;	/* same shape both ways */
	struct grpc_client_result res;
	uint8_t buf[1024];
	size_t len;
	double start;
	int r;

	if (claim) {
		c.namespace_ = (char *)claim->namespace_;
		c.uid = (char *)claim->uid;
		c.name = (char *)claim->name;
		req.n_claims = 1;
		req.claims = &cp;
	}
	len = protobuf_c_message_pack(&req.base, buf);
	start = now_ms();
	r = grpc_client_call(client, path, buf, len, w->o->timeout_ms, &res);
	*ret_ms = now_ms() - start;
	if (r < 0) {
		snprintf(w->error, sizeof(w->error), "%s: %s", path, strerror(-r));
		return r;
	}
	if (res.status != 0) {
		snprintf(w->error, sizeof(w->error), "%s: gRPC status %d: %s", path, res.status,
			 res.message ? res.message : "");
		grpc_client_result_clear(&res);
		return -EIO;
	}
	if (claim && strstr(path, "NodePrepareResources")) {
		dra_v1_prepare_response *resp = (dra_v1_prepare_response *)
			protobuf_c_message_unpack(&dra_v1_prepare_response_descriptor, NULL,
						  res.response_len, res.response);
		bool ok = resp && resp->n_claims == 1 && resp->claims[0]->value &&
			  !*resp->claims[0]->value->error;
		if (!ok)
			snprintf(w->error, sizeof(w->error), "claim %s/%s: %s", claim->namespace_,
				 claim->name, resp && resp->n_claims && resp->claims[0]->value
						      ? resp->claims[0]->value->error : "no answer");
		if (resp)
			protobuf_c_message_free_unpacked(&resp->base, NULL);
		if (!ok) {
			grpc_client_result_clear(&res);
			return -EIO;
		}
	}
	grpc_client_result_clear(&res);
	return 0;
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	const struct ctl_opts *o = w->o;
	struct grpc_client *client;
	int rounds = o->rounds > 0 ? o->rounds : 1;
	int r = grpc_client_connect(o->socket, o->timeout_ms, &client);

	if (r < 0) {
		snprintf(w->error, sizeof(w->error), "%s: %s", o->socket, strerror(-r));
		return NULL;
	}
	for (int round = 0; round < rounds && !w->error[0]; round++) {
		if (o->null_calls) {
			if (call(w, client, KUBELET_PATH_V1_PREPARE, NULL,
				 &w->prepare_ms[w->n_prepare]) == 0)
				w->n_prepare++;
			continue;
		}
		for (size_t i = 0; i < w->n_claims && !w->error[0]; i++) {
			if (call(w, client, KUBELET_PATH_V1_PREPARE, &w->claims[i],
				 &w->prepare_ms[w->n_prepare]) < 0)
				break;
			w->n_prepare++;
			if (call(w, client, KUBELET_PATH_V1_UNPREPARE, &w->claims[i],
				 &w->unprepare_ms[w->n_unprepare]) < 0)
				break;
			w->n_unprepare++;
		}
	}
	grpc_client_free(client);
	return NULL;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static struct json_object *summary(double *v, size_t n)
{
	struct json_object *o = json_object_new_object();
	double sum = 0;

	json_object_object_add(o, "calls", json_object_new_int64((int64_t)n));
	if (!n)
		return o;
	qsort(v, n, sizeof(*v), compare_doubles);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	json_object_object_add(o, "p50_ms", json_object_new_double(v[n / 2]));
	json_object_object_add(o, "p99_ms", json_object_new_double(v[(n * 99) / 100 < n ?
									(n * 99) / 100 : n - 1]));
	json_object_object_add(o, "max_ms", json_object_new_double(v[n - 1]));
	json_object_object_add(o, "mean_ms", json_object_new_double(sum / (double)n));
	return o;
}

/*
 * Bench unprepares every claim it prepares, so it takes only claims nothing
 * holds: one already prepared (in the checkpoint next to the DRA socket,
 * <plugins-dir>/<driver>/) belongs to a pod, and bench would unprepare it
 * under that pod. True (with the reason on stderr) when it must refuse.
 */
static bool refuse_prepared(const char *socket, const struct ctl_claim *claims, size_t n)
{
	char real[PATH_MAX], err[512] = "";
	struct checkpoint *ck = NULL;
	bool refuse = false;
	int r;

	if (!realpath(socket, real)) {
		fprintf(stderr, "dralet ctl bench: %s: %s\n", socket, strerror(errno));
		return true;
	}
	r = checkpoint_file_load(dirname(real), &ck, err, sizeof(err));
	if (r == -ENOENT)
		return false;
	if (r < 0) {
		fprintf(stderr, "dralet ctl bench: cannot tell which claims are prepared (%s/%s: "
				"%s); not touching any\n", real, CHECKPOINT_FILE_NAME, err);
		return true;
	}
	for (size_t i = 0; i < n; i++)
		if (checkpoint_find(ck, claims[i].uid)) {
			fprintf(stderr, "dralet ctl bench: claim %s/%s (uid %s) is prepared already "
					"(%s/%s); bench unprepares what it prepares, so it takes only "
					"claims nothing holds\n", claims[i].namespace_,
				claims[i].name, claims[i].uid, real, CHECKPOINT_FILE_NAME);
			refuse = true;
		}
	checkpoint_free(ck);
	return refuse;
}

int ctl_bench(const struct ctl_opts *o)
{
	struct ctl_claim *claims = calloc(MAX_CLAIMS, sizeof(*claims));
	int workers = o->concurrency > 0 ? o->concurrency : 1;
	int rounds = o->rounds > 0 ? o->rounds : 1;
	struct worker *w = calloc((size_t)workers, sizeof(*w));
	pthread_t *threads = calloc((size_t)workers, sizeof(*threads));
	struct json_object *root = NULL, *out;
	double *all_p = NULL, *all_u = NULL, start, elapsed;
	size_t n = 0, n_p = 0, n_u = 0;
	int rc = 1;

	if (!claims || !w || !threads || workers > 256)
		goto done;
	if (!o->null_calls) {
		char err[256];
		int r = o->claim_file ? yaml_load_file(o->claim_file, &root, err, sizeof(err))
				      : -EINVAL;
		if (r < 0 || ctl_load_claims(root, claims, &n) < 0 || n < (size_t)workers) {
			fprintf(stderr, "dralet ctl bench: --claim must name a List of at least "
					"--concurrency claims that exist in the store\n");
			goto done;
		}
		if (refuse_prepared(o->socket, claims, n))
			goto done;
	}
	for (int i = 0; i < workers; i++) {
		/* claims split round-robin: no two workers ever use the same claim */
		size_t share = o->null_calls ? 1 : n / (size_t)workers + ((size_t)i < n % (size_t)workers);
		struct ctl_claim *mine = calloc(share + 1, sizeof(*mine));
		w[i].o = o;
		w[i].claims = mine;
		for (size_t j = 0; mine && !o->null_calls && j < share; j++)
			mine[j] = claims[(size_t)i + j * (size_t)workers];
		w[i].n_claims = share;
		w[i].prepare_ms = calloc(share * (size_t)rounds + 1, sizeof(double));
		w[i].unprepare_ms = calloc(share * (size_t)rounds + 1, sizeof(double));
		if (!mine || !w[i].prepare_ms || !w[i].unprepare_ms)
			goto done;
	}
	start = now_ms();
	for (int i = 0; i < workers; i++)
		pthread_create(&threads[i], NULL, run_worker, &w[i]);
	for (int i = 0; i < workers; i++)
		pthread_join(threads[i], NULL);
	elapsed = now_ms() - start;
	for (int i = 0; i < workers; i++) {
		if (w[i].error[0]) {
			fprintf(stderr, "dralet ctl bench: %s\n", w[i].error);
			goto done;
		}
		n_p += w[i].n_prepare;
		n_u += w[i].n_unprepare;
	}
	all_p = calloc(n_p + 1, sizeof(double));
	all_u = calloc(n_u + 1, sizeof(double));
	if (!all_p || !all_u)
		goto done;
	for (int i = 0, a = 0, b = 0; i < workers; i++) {
		memcpy(all_p + a, w[i].prepare_ms, w[i].n_prepare * sizeof(double));
		memcpy(all_u + b, w[i].unprepare_ms, w[i].n_unprepare * sizeof(double));
		a += (int)w[i].n_prepare;
		b += (int)w[i].n_unprepare;
	}
	out = json_object_new_object();
	json_object_object_add(out, "workers", json_object_new_int(workers));
	json_object_object_add(out, "seconds", json_object_new_double(elapsed / 1e3));
	json_object_object_add(out, o->null_calls ? "nullPrepare" : "prepare", summary(all_p, n_p));
	if (!o->null_calls) {
		json_object_object_add(out, "unprepare", summary(all_u, n_u));
		json_object_object_add(out, "claimsPerSecond",
				       json_object_new_double(n_u / (elapsed / 1e3)));
	}
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PRETTY));
	json_object_put(out);
	rc = 0;
done:
	for (int i = 0; w && i < workers; i++) {
		free((void *)w[i].claims);
		free(w[i].prepare_ms);
		free(w[i].unprepare_ms);
	}
	free(all_p);
	free(all_u);
	free(w);
	free(threads);
	free(claims);
	json_object_put(root);
	return rc;
}
