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
/* PCI functions remembered between hand-overs; more make it a change anyway */
#define PENDING_FUNCTIONS_MAX 32
#define PCI_ADDRESS_SIZE HAL_UEVENT_ADDRESS_SIZE

struct node_watch {
	struct node_watch_config cfg;
	char *config_path, *config_dir, *config_base, *dev_root;
	uv_signal_t sighup;
	uv_fs_event_t watch;
	uv_fs_event_t dev_watch;	/* the dev root, for NVIDIA nodes */
	uv_timer_t timer;		/* debounce, waiting for idle */
	uv_timer_t again;		/* node_watch_again */
	uv_poll_t poll;
	struct hal_uevent_monitor *mon;
	struct node_change pending;
	/* functions whose driver or class devices changed since the last hand-over */
	char functions[PENDING_FUNCTIONS_MAX][PCI_ADDRESS_SIZE];
	size_t n_functions;
	bool functions_overflow;
	bool watching, watching_dev, polling;
	unsigned open_handles;
	bool closing;
};

static bool any(const struct node_change *c)
{
	return c->config || c->sighup || c->pci_added || c->pci_removed || c->devices_changed ||
	       c->again;
}

struct node_response node_watch_plan(const struct node_change *c, bool have_file)
{
	return (struct node_response){
		.reload = c->config && have_file,
		.force_reload = c->sighup,
		/* a PF a policy selects may have appeared, or got its driver */
		.apply = c->again || c->pci_added || c->devices_changed || (c->sighup && !have_file),
		/* a removed PF's VFs are withdrawn, a new function published */
		.rediscover = c->pci_added || c->pci_removed || c->devices_changed,
	};
}

static bool is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

bool node_watch_event(const struct hal_uevent *ev, struct node_change *c,
		      const char **ret_address)
{
	/* class devices a backend publishes or hands over */
	static const char *const classes[] = {
		"net", "infiniband", "infiniband_verbs", "drm", "accel", "fpga_manager",
		"fpga_region", NULL,
	};
	static const char *const pci_changes[] = { "bind", "unbind", "change", NULL };
	static const char *const comings_and_goings[] = { "add", "remove", "move", NULL };
	const char *address = ev->pci_address ? ev->pci_address : "";

	*ret_address = "";
	if (!strcmp(ev->subsystem, "pci")) {
		if (!strcmp(ev->action, "add"))
			return c->pci_added = true;
		if (!strcmp(ev->action, "remove"))
			return c->pci_removed = true;
		if (!is_one_of(ev->action, pci_changes))
			return false;
		*ret_address = address[0] ? address : ev->sysname ? ev->sysname : "";
		if (!**ret_address)
			c->devices_changed = true;
		return true;
	}
	if (!strcmp(ev->subsystem, "module")) {
		if (strcmp(ev->action, "add") && strcmp(ev->action, "remove"))
			return false;
		return c->devices_changed = true;
	}
	if (!is_one_of(ev->subsystem, classes) || !is_one_of(ev->action, comings_and_goings))
		return false;
	if (address[0]) {
		*ret_address = address;
		return true;
	}
	/* a virtual netdev (a pod's veth, a bridge) comes and goes all day; a
	 * virtual RDMA device (soft-RoCE) or DRM card is one of ours */
	if (!strcmp(ev->subsystem, "net"))
		return false;
	return c->devices_changed = true;
}

/* ---- handing over, once idle ---- */

static bool functions_pending(const struct node_watch *w)
{
	return w->n_functions || w->functions_overflow;
}

/* Whether the functions that changed are all held by prepared claims. */
static bool functions_claimed(struct node_watch *w)
{
	const char *addresses[PENDING_FUNCTIONS_MAX];

	if (w->functions_overflow || !w->cfg.claimed)
		return false;
	for (size_t i = 0; i < w->n_functions; i++)
		addresses[i] = w->functions[i];
	return w->cfg.claimed(w->cfg.userdata, addresses, w->n_functions);
}

static void on_timer(uv_timer_t *t)
{
	struct node_watch *w = t->data;
	struct node_change c = w->pending;

	if (w->closing || (!any(&c) && !functions_pending(w)))
		return;
	if (!w->cfg.idle(w->cfg.userdata)) {
		uv_timer_start(&w->timer, on_timer, BUSY_RETRY_MS, 0);
		return;
	}
	if (functions_pending(w) && !functions_claimed(w))
		c.devices_changed = true;
	else if (functions_pending(w))
		log_debug("node: driver and class-device changes of prepared claims' functions "
			  "only: no rediscovery");
	memset(&w->pending, 0, sizeof(w->pending));
	w->n_functions = 0;
	w->functions_overflow = false;
	if (any(&c))
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

void node_watch_rediscover(struct node_watch *w)
{
	if (!w || w->closing)
		return;
	w->pending.devices_changed = true;
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

static void remember_function(struct node_watch *w, const char *address)
{
	for (size_t i = 0; i < w->n_functions; i++)
		if (!strcmp(w->functions[i], address))
			return;
	if (w->n_functions == PENDING_FUNCTIONS_MAX || strlen(address) >= PCI_ADDRESS_SIZE) {
		w->functions_overflow = true;
		return;
	}
	strcpy(w->functions[w->n_functions++], address);
}

static void on_uevent(void *userdata, const struct hal_uevent *ev)
{
	struct node_watch *w = userdata;
	const char *address;

	if (!node_watch_event(ev, &w->pending, &address))
		return;
	if (address[0])
		remember_function(w, address);
	log_debug("node: uevent %s %s %s%s%s", ev->action, ev->subsystem,
		  ev->sysname ? ev->sysname : "?", address[0] ? " of " : "", address);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	struct node_watch *w = p->data;

	(void)events;
	if (status < 0)
		return;
	hal_uevent_drain(w->mon, on_uevent, w);
	if (any(&w->pending) || functions_pending(w))
		schedule(w, HOTPLUG_DEBOUNCE_MS);
}

/* nvidia-modprobe and the driver's persistence daemon make /dev/nvidia*
 * with mknod, without a uevent */
static void on_dev_event(uv_fs_event_t *h, const char *filename, int events, int status)
{
	struct node_watch *w = h->data;

	(void)events;
	if (status < 0 || !filename || strncmp(filename, "nvidia", 6))
		return;
	log_debug("node: %s/%s appeared or went", w->cfg.dev_root, filename);
	w->pending.devices_changed = true;
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
	free(w->dev_root);
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

static void watch_dev_root(struct node_watch *w)
{
	int r;

	uv_fs_event_init(w->cfg.loop, &w->dev_watch);
	w->dev_watch.data = w;
	w->open_handles++;
	w->watching_dev = true;
	r = uv_fs_event_start(&w->dev_watch, on_dev_event, w->cfg.dev_root, 0);
	if (r < 0)
		log_warn("node: cannot watch %s for NVIDIA device nodes (%s); a GPU whose nodes "
			 "appear later is published at the next hot-plug event or SIGHUP",
			 w->cfg.dev_root, uv_strerror(r));
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
	w->cfg.dev_root = NULL;
	if (cfg->dev_root && !(w->dev_root = strdup(cfg->dev_root))) {
		node_watch_close(w);
		return -ENOMEM;
	}
	w->cfg.dev_root = w->dev_root;
	if (cfg->hotplug)
		watch_hotplug(w);
	if (w->dev_root)
		watch_dev_root(w);
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
	if (w->watching_dev)
		uv_close((uv_handle_t *)&w->dev_watch, on_closed);
	if (w->polling)
		uv_close((uv_handle_t *)&w->poll, on_closed);
}
