/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/claims/state.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/lib/atomic_file.h"
#include "agent/claims/checkpoint_file.h"

struct claims_state {
	pthread_mutex_t lock;
	pthread_cond_t written;
	struct checkpoint *ck;
	char *dir;
	uint64_t version;	/* bumped by every change */
	uint64_t durable;	/* the version the file on disk has */
	uint64_t failed;	/* the version whose write failed last */
	int failed_err;
	bool writing;
	enum atomic_file_sync sync;
	struct atomic_file file;	/* the write in progress (one at a time: writing) */
	uint64_t writes;
	struct prom_histogram write_seconds;	/* every write, failed ones too */
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int claims_state_new(const char *dir, struct checkpoint *ck, enum atomic_file_sync sync,
		     struct claims_state **ret_state)
{
	struct claims_state *s = calloc(1, sizeof(*s));

	if (!s || !(s->dir = strdup(dir))) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->written, NULL);
	s->ck = ck;
	s->write_seconds.bounds = prom_latency_bounds;
	s->write_seconds.n_bounds = prom_latency_n_bounds;
	s->sync = sync;
	*ret_state = s;
	return 0;
}

void claims_state_free(struct claims_state *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->written);
	checkpoint_free(s->ck);
	free(s->dir);
	free(s);
}

void claims_state_lock(struct claims_state *s) { pthread_mutex_lock(&s->lock); }
void claims_state_unlock(struct claims_state *s) { pthread_mutex_unlock(&s->lock); }
struct checkpoint *claims_state_checkpoint(struct claims_state *s) { return s->ck; }
void claims_state_changed(struct claims_state *s, struct ckpt_claim *c)
{
	s->version++;
	if (c) {
		ckpt_claim_changed(c);
		return;
	}
	for (size_t i = 0; i < s->ck->n_claims; i++)
		ckpt_claim_changed(s->ck->claims[i]);
}

void claims_state_replace(struct claims_state *s, struct checkpoint *ck)
{
	pthread_mutex_lock(&s->lock);
	checkpoint_free(s->ck);
	s->ck = ck;
	s->durable = s->version;
	pthread_mutex_unlock(&s->lock);
}

uint64_t claims_state_writes(struct claims_state *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->writes;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void claims_state_write_seconds(struct claims_state *s, struct prom_histogram *ret)
{
	pthread_mutex_lock(&s->lock);
	*ret = s->write_seconds;
	pthread_mutex_unlock(&s->lock);
}

int claims_state_sync(struct claims_state *s)
{
	uint64_t want;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	want = s->version;
	while (s->durable < want) {
		if (s->writing) {
			pthread_cond_wait(&s->written, &s->lock);
			if (s->failed >= want && s->durable < want) {
				r = s->failed_err;
				break;
			}
			continue;
		}
		/* written under the lock (a snapshot, straight to the temporary
		 * file: no copy of a large checkpoint in memory), made durable
		 * without it */
		uint64_t v = s->version;
		double started = now_seconds();

		r = atomic_file_begin(&s->file, s->dir, CHECKPOINT_FILE_NAME, 0600);
		if (!r)
			s->file.sync = s->sync;
		if (!r && (r = checkpoint_write(s->ck, s->file.out)) < 0)
			r = atomic_file_fail(&s->file, r);	/* ENOSPC, not EIO */
		if (r < 0)
			break;
		s->writing = true;
		pthread_mutex_unlock(&s->lock);
		r = atomic_file_commit(&s->file);
		pthread_mutex_lock(&s->lock);
		s->writing = false;
		s->writes++;
		prom_histogram_observe(&s->write_seconds, now_seconds() - started);
		if (r < 0) {
			s->failed = v;
			s->failed_err = r;
		} else if (v > s->durable) {
			s->durable = v;
		}
		pthread_cond_broadcast(&s->written);
		if (r < 0)
			break;
	}
	pthread_mutex_unlock(&s->lock);
	return r;
}
