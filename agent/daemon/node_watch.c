/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/daemon/node_watch.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "agent/lib/log.h"
#include "hal/uevent.h"

#define RELOAD_DEBOUNCE_MS 200
#define HOTPLUG_DEBOUNCE_MS 500
#define BUSY_RETRY_MS 50

struct node_watch {
	struct node_watch_config cfg;
	char *config_path, *config_dir, *config_base;
	uv_signal_t sighup;
	uv_fs_event_t watch;
	uv_timer_t timer;		/* debounce, waiting for idle */
	uv_timer_t again;		/* node_watch_again */
	uv_poll_t poll;
	struct hal_uevent_monitor *mon;
	struct node_change pending;
	bool watching, polling;
	unsigned open_handles;
	bool closing;
};

static bool any(const struct node_change *c)
{
	return c->config || c->sighup || c->pci_added || c->pci_removed || c->again;
}

struct node_response node_watch_plan(const struct node_change *c, bool have_file)
{
	return (struct node_response){
		.reload = c->config && have_file,
		.force_reload = c->sighup,
		/* a PF a policy selects may have appeared */
		.apply = c->again || c->pci_added || (c->sighup && !have_file),
		/* a removed PF's VFs are withdrawn, a new function published */
		.rediscover = c->pci_added || c->pci_removed,
	};
}

/* ---- handing over, once idle ---- */

static void on_timer(uv_timer_t *t)
{
	struct node_watch *w = t->data;
	struct node_change c = w->pending;

	if (w->closing || !any(&c))
		return;
	if (!w->cfg.idle(w->cfg.userdata)) {
		uv_timer_start(&w->timer, on_timer, BUSY_RETRY_MS, 0);
		return;
	}
	memset(&w->pending, 0, sizeof(w->pending));
	w->cfg.changed(w->cfg.userdata, &c);
}

/* Hands over what is pending in @ms; an earlier hand-over already due stays. */
static void schedule(struct node_watch *w, unsigned ms)
{
	if (w->closing)
		return;
	if (uv_is_active((uv_handle_t *)&w->timer) && uv_timer_get_due_in(&w->timer) <= ms)
		return;
	uv_timer_start(&w->timer, on_timer, ms, 0);
}

static void on_again(uv_timer_t *t)
{
	struct node_watch *w = t->data;

	w->pending.again = true;
	schedule(w, 0);
}

void node_watch_again(struct node_watch *w, unsigned ms)
{
	if (w && !w->closing)
		uv_timer_start(&w->again, on_again, ms, 0);
}

/* ---- triggers ---- */

static void on_sighup(uv_signal_t *s, int signum)
{
	struct node_watch *w = s->data;

	(void)signum;
	if (!w->config_path)
		log_info("sriov: SIGHUP: no configuration file to reload; applying the policies");
	else
		log_info("sriov: SIGHUP: reloading %s", w->config_path);
	w->pending.sighup = true;
	w->pending.config = w->config_path != NULL;
	schedule(w, 0);
}

static void on_fs_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct node_watch *w = h->data;

	(void)events;
	if (status < 0)
		return;
	/* the file itself, or a ConfigMap's ..data symlink swap */
	if (filename && strcmp(filename, w->config_base) && strcmp(filename, "..data"))
		return;
	w->pending.config = true;
	schedule(w, RELOAD_DEBOUNCE_MS);
}

static void on_uevent(void *userdata, const struct hal_uevent *ev)
{
	struct node_watch *w = userdata;

	if (strcmp(ev->subsystem, "pci"))
		return;
	if (!strcmp(ev->action, "add"))
		w->pending.pci_added = true;
	else if (!strcmp(ev->action, "remove"))
		w->pending.pci_removed = true;
	else
		return;
	log_debug("sriov: uevent %s %s", ev->action, ev->sysname);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct node_watch *w = p->data;

	(void)events;
	if (status < 0)
		return;
	hal_uevent_drain(w->mon, on_uevent, w);
	if (w->pending.pci_added || w->pending.pci_removed)
		schedule(w, HOTPLUG_DEBOUNCE_MS);
}

void node_watch_drop_uevents(struct node_watch *w)
{
	if (w && w->mon)
		hal_uevent_drain(w->mon, NULL, NULL);
}

/* ---- life cycle ---- */

static void free_watch(struct node_watch *w)
{
	hal_uevent_close(w->mon);
	free(w->config_path);
	free(w->config_dir);
	free(w->config_base);
	free(w);
}

static void on_closed(uv_handle_t *h)
{
	struct node_watch *w = h->data;

	if (--w->open_handles == 0)
		free_watch(w);
}

static int watch_config(struct node_watch *w)
{
	char *slash;
	int r;

	if (!(w->config_dir = strdup(w->config_path)))
		return -ENOMEM;
	slash = strrchr(w->config_dir, '/');
	if (!slash) {
		free(w->config_dir);
		w->config_dir = strdup(".");
		w->config_base = strdup(w->config_path);
	} else {
		w->config_base = strdup(slash + 1);
		if (slash == w->config_dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (!w->config_dir || !w->config_base)
		return -ENOMEM;
	uv_fs_event_init(w->cfg.loop, &w->watch);
	w->watch.data = w;
	w->open_handles++;
	w->watching = true;
	r = uv_fs_event_start(&w->watch, on_fs_event, w->config_dir, 0);
	if (r < 0)
		log_warn("sriov: cannot watch %s for changes (%s); reload with SIGHUP",
			 w->config_dir, uv_strerror(r));
	return 0;
}

static void watch_hotplug(struct node_watch *w)
{
	int r = hal_uevent_open(&w->mon);

	if (r < 0) {
		log_warn("sriov: no hot-plug events (%s): a PF that appears later gets its policy "
			 "on SIGHUP, and VFs of a removed PF stay published until then",
			 strerror(-r));
		w->mon = NULL;
		return;
	}
	uv_poll_init(w->cfg.loop, &w->poll, hal_uevent_fd(w->mon));
	w->poll.data = w;
	w->open_handles++;
	w->polling = true;
	uv_poll_start(&w->poll, UV_READABLE, on_poll);
}

int node_watch_start(const struct node_watch_config *cfg, struct node_watch **ret_watch)
{
	struct node_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	uv_timer_init(cfg->loop, &w->timer);
	uv_timer_init(cfg->loop, &w->again);
	uv_signal_init(cfg->loop, &w->sighup);
	w->timer.data = w->again.data = w->sighup.data = w;
	w->open_handles = 3;
	uv_signal_start(&w->sighup, on_sighup, SIGHUP);
	if (cfg->config_path &&
	    (!(w->config_path = strdup(cfg->config_path)) || watch_config(w) < 0)) {
		node_watch_close(w);
		return -ENOMEM;
	}
	w->cfg.config_path = w->config_path;
	if (cfg->hotplug)
		watch_hotplug(w);
	*ret_watch = w;
	return 0;
}

void node_watch_close(struct node_watch *w)
{
	if (!w || w->closing)
		return;
	w->closing = true;
	uv_close((uv_handle_t *)&w->timer, on_closed);
	uv_close((uv_handle_t *)&w->again, on_closed);
	uv_close((uv_handle_t *)&w->sighup, on_closed);
	if (w->watching)
		uv_close((uv_handle_t *)&w->watch, on_closed);
	if (w->polling)
		uv_close((uv_handle_t *)&w->poll, on_closed);
}
