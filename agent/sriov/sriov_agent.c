/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/sriov/sriov_agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/core/config.h"
#include "agent/lib/log.h"
#include "hal/hal.h"
#include "hal/node_ops.h"
#include "hal/uevent.h"

#define DEFAULT_RETRY_MS 10000
#define RELOAD_DEBOUNCE_MS 200
#define HOTPLUG_DEBOUNCE_MS 500
#define BUSY_RETRY_MS 50
#define CONFIG_MAX_BYTES (1 << 20)

struct sriov_agent {
	uv_loop_t *loop;
	const struct hal_roots *roots;
	struct sriov_agent_ops ops;
	unsigned retry_ms;
	char *config_path, *config_dir, *config_base;
	char *config_text;		/* of the last load, to tell a real change */
	struct config *cfg;		/* the last reload (owns policies); NULL: the daemon's */
	const struct sriov_policies *policies;
	uv_signal_t sighup;
	uv_fs_event_t watch;
	uv_timer_t timer;
	uv_poll_t poll;
	struct hal_uevent_monitor *mon;
	bool watching, polling;
	bool want_reload, force_reload, want_apply, want_rediscover;
	unsigned open_handles;
	bool closing;
};

static void log_report(const struct sriov_report *rep, bool *ret_refused)
{
	bool refused = false;

	for (size_t i = 0; i < rep->n; i++) {
		const struct sriov_pf_report *p = &rep->pfs[i];
		if (p->also)
			log_warn("sriov: PF %s: policies %s and %s both select it; %s applies", p->pf,
				 p->policy, p->also, p->policy);
		switch (p->outcome) {
		case SRIOV_PF_CHANGED:
			log_info("sriov: PF %s (policy %s): %u VFs (was %u), %u rebound, %u with new "
				 "settings", p->pf, p->policy, p->after, p->before, p->vfs_rebound,
				 p->vfs_set);
			break;
		case SRIOV_PF_REFUSED:
			refused = true;
			log_error("sriov: %s", p->message);
			break;
		case SRIOV_PF_FAILED:
			log_error("sriov: %s%s", p->message,
				  p->errors > 1 ? " (and more errors on this PF)" : "");
			break;
		default:
			log_debug("sriov: PF %s (policy %s): as the policy says (%u VFs)", p->pf,
				  p->policy, p->after);
		}
	}
	if (ret_refused)
		*ret_refused = refused;
}

int sriov_agent_apply_once(const struct hal_roots *roots, const struct sriov_policies *pol,
			   const struct hal_scan *scan, const struct sriov_prepared *prep,
			   bool *ret_changed, bool *ret_refused)
{
	struct node_ops node = node_ops_real(roots);
	struct sriov_report *rep;
	int r;

	*ret_changed = false;
	if (ret_refused)
		*ret_refused = false;
	if (!pol || !pol->n)
		return 0;
	r = sriov_apply(&node, pol, scan, prep, NULL, &rep);
	if (r < 0)
		return r;
	log_report(rep, ret_refused);
	*ret_changed = rep->changed;
	sriov_report_free(rep);
	return 0;
}

/* ---- the work, on a timer (debounce, and waiting for idle) ---- */

static void on_timer(uv_timer_t *t);

static void schedule(struct sriov_agent *a, unsigned ms)
{
	if (!a->closing)
		uv_timer_start(&a->timer, on_timer, ms, 0);
}

/* The whole file, NUL-terminated (malloc'd), or NULL. */
static char *read_text(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = malloc(CONFIG_MAX_BYTES + 1);
	while (buf && len < CONFIG_MAX_BYTES &&
	       (n = read(fd, buf + len, CONFIG_MAX_BYTES - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

static void reload(struct sriov_agent *a)
{
	struct config *cfg = NULL;
	char err[1024], *text = read_text(a->config_path);
	int r;

	if (!a->force_reload && text && a->config_text && !strcmp(text, a->config_text)) {
		free(text);
		return;	/* touched, not changed */
	}
	a->force_reload = false;
	r = config_load(a->config_path, &cfg, err, sizeof(err));
	if (r < 0) {
		log_error("sriov: reloading the configuration failed, the policies in force stay: "
			  "%s", err);
		free(text);
		return;
	}
	free(a->config_text);
	a->config_text = text;
	config_free(a->cfg);
	a->cfg = cfg;
	a->policies = cfg->sriov;
	log_info("sriov: configuration %s reloaded: %zu polic%s (only the sriov section takes "
		 "effect without a restart)", a->config_path, a->policies->n,
		 a->policies->n == 1 ? "y" : "ies");
	a->want_apply = true;
}

static bool apply_now(struct sriov_agent *a)
{
	struct hal_scan_options so = { .no_names = true };
	struct sriov_prepared prep = { 0 };
	struct hal_scan *scan = NULL;
	bool changed = false, refused = false;
	char err[640] = "";
	int r;

	if (!a->policies || !a->policies->n)
		return false;
	r = a->ops.prepared(a->ops.userdata, &prep, err, sizeof(err));
	if (r < 0) {
		log_error("sriov: not changing anything: cannot tell which VFs are prepared for "
			  "claims: %s", err[0] ? err : strerror(-r));
		sriov_prepared_clear(&prep);
		return false;
	}
	r = hal_scan(a->roots, &so, &scan);
	if (r < 0) {
		log_error("sriov: cannot scan the node: %s", strerror(-r));
	} else if (sriov_agent_apply_once(a->roots, a->policies, scan, &prep, &changed,
					  &refused) < 0) {
		log_error("sriov: out of memory applying the policies");
	}
	hal_scan_free(scan);
	sriov_prepared_clear(&prep);
	if (refused) {
		/* takes effect once the claims holding the VFs are unprepared */
		a->want_apply = true;
		schedule(a, a->retry_ms);
	}
	return changed;
}

/* Events our own writes caused are covered by the rediscovery just done. */
static void drop_queued_uevents(struct sriov_agent *a)
{
	if (a->mon)
		hal_uevent_drain(a->mon, NULL, NULL);
}

static void on_timer(uv_timer_t *t)
{
	struct sriov_agent *a = t->data;
	bool changed = false, apply;

	if (a->want_reload) {
		a->want_reload = false;
		reload(a);
	}
	if (!a->want_apply && !a->want_rediscover)
		return;
	if (!a->ops.idle(a->ops.userdata)) {
		schedule(a, BUSY_RETRY_MS);
		return;
	}
	apply = a->want_apply;
	a->want_apply = false;
	if (apply)
		changed = apply_now(a);
	if (changed || a->want_rediscover) {
		a->want_rediscover = false;
		a->ops.rediscover(a->ops.userdata);
		if (changed)
			drop_queued_uevents(a);
	}
}

/* ---- triggers ---- */

static void on_sighup(uv_signal_t *s, int signum)
{
	struct sriov_agent *a = s->data;

	(void)signum;
	if (!a->config_path) {
		log_info("sriov: SIGHUP: no configuration file to reload; applying the policies");
		a->want_apply = true;
	} else {
		log_info("sriov: SIGHUP: reloading %s", a->config_path);
		a->want_reload = a->force_reload = true;
	}
	schedule(a, 0);
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct sriov_agent *a = h->data;

	(void)events;
	if (status < 0)
		return;
	/* the file itself, or a ConfigMap's ..data symlink swap */
	if (filename && strcmp(filename, a->config_base) && strcmp(filename, "..data"))
		return;
	a->want_reload = true;
	schedule(a, RELOAD_DEBOUNCE_MS);
}

static void on_uevent(void *userdata, const struct hal_uevent *ev)
{
	struct sriov_agent *a = userdata;

	if (strcmp(ev->subsystem, "pci") || (strcmp(ev->action, "add") &&
					     strcmp(ev->action, "remove")))
		return;
	log_debug("sriov: uevent %s %s", ev->action, ev->sysname);
	a->want_rediscover = true;
	if (!strcmp(ev->action, "add"))
		a->want_apply = true;	/* a PF a policy selects may have appeared */
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct sriov_agent *a = p->data;

	(void)events;
	if (status < 0)
		return;
	hal_uevent_drain(a->mon, on_uevent, a);
	if (a->want_rediscover || a->want_apply)
		schedule(a, HOTPLUG_DEBOUNCE_MS);
}

/* ---- life cycle ---- */

static void free_agent(struct sriov_agent *a)
{
	hal_uevent_close(a->mon);
	config_free(a->cfg);
	free(a->config_text);
	free(a->config_path);
	free(a->config_dir);
	free(a->config_base);
	free(a);
}

static void on_closed(uv_handle_t *h)
{
	struct sriov_agent *a = h->data;

	if (--a->open_handles == 0)
		free_agent(a);
}

static int watch_config(struct sriov_agent *a)
{
	char *slash;
	int r;

	if (!(a->config_dir = strdup(a->config_path)))
		return -ENOMEM;
	slash = strrchr(a->config_dir, '/');
	if (!slash) {
		free(a->config_dir);
		a->config_dir = strdup(".");
		a->config_base = strdup(a->config_path);
	} else {
		a->config_base = strdup(slash + 1);
		if (slash == a->config_dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (!a->config_dir || !a->config_base)
		return -ENOMEM;
	a->config_text = read_text(a->config_path);
	uv_fs_event_init(a->loop, &a->watch);
	a->watch.data = a;
	a->open_handles++;
	a->watching = true;
	r = uv_fs_event_start(&a->watch, on_fs_event, a->config_dir, 0);
	if (r < 0)
		log_warn("sriov: cannot watch %s for changes (%s); reload with SIGHUP",
			 a->config_dir, uv_strerror(r));
	return 0;
}

static void watch_hotplug(struct sriov_agent *a)
{
	int r = hal_uevent_open(&a->mon);

	if (r < 0) {
		log_warn("sriov: no hot-plug events (%s): a PF that appears later gets its policy "
			 "on SIGHUP, and VFs of a removed PF stay published until then",
			 strerror(-r));
		a->mon = NULL;
		return;
	}
	uv_poll_init(a->loop, &a->poll, hal_uevent_fd(a->mon));
	a->poll.data = a;
	a->open_handles++;
	a->polling = true;
	uv_poll_start(&a->poll, UV_READABLE, on_poll);
}

int sriov_agent_start(const struct sriov_agent_config *cfg, struct sriov_agent **ret)
{
	struct sriov_agent *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->loop = cfg->loop;
	a->roots = cfg->roots;
	a->ops = cfg->ops;
	a->policies = cfg->policies;
	a->retry_ms = cfg->retry_ms ? cfg->retry_ms : DEFAULT_RETRY_MS;
	uv_timer_init(a->loop, &a->timer);
	a->timer.data = a;
	uv_signal_init(a->loop, &a->sighup);
	a->sighup.data = a;
	a->open_handles = 2;
	uv_signal_start(&a->sighup, on_sighup, SIGHUP);
	if (cfg->config_path) {
		if (!(a->config_path = strdup(cfg->config_path)) || (r = watch_config(a)) < 0) {
			sriov_agent_close(a);
			return -ENOMEM;
		}
	}
	if (cfg->hotplug)
		watch_hotplug(a);
	/* a second look once the claims engines have recovered their checkpoints */
	a->want_apply = true;
	schedule(a, 0);
	*ret = a;
	return 0;
}

void sriov_agent_close(struct sriov_agent *a)
{
	if (!a || a->closing)
		return;
	a->closing = true;
	uv_timer_stop(&a->timer);
	uv_close((uv_handle_t *)&a->timer, on_closed);
	uv_close((uv_handle_t *)&a->sighup, on_closed);
	if (a->watching)
		uv_close((uv_handle_t *)&a->watch, on_closed);
	if (a->polling)
		uv_close((uv_handle_t *)&a->poll, on_closed);
}
