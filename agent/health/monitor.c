/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/health/monitor.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/device_set.h"
#include "agent/health/pcie_aer.h"
#include "agent/health/pcie_link.h"
#include "agent/lib/log.h"

struct health_monitor {
	struct health_monitor_config cfg;
	char *driver;
	uv_timer_t timer;
	uv_work_t work;
	struct device_set *set;		/* a reference: what the table's entries point into */
	struct health_table table;
	int *results;			/* of the round in flight, one per entry */
	char (*reasons)[HEALTH_REASON_MAX];	/* and what each check said */
	const char **taints;		/* and the cause's taint key (NULL: generic) */
	bool busy;			/* a round is in flight */
	bool timer_closed;
	atomic_bool closing;		/* read by the workers: skip what is left */
};

static int64_t real_now(void)
{
	return (int64_t)time(NULL);
}

static void free_if_done(struct health_monitor *m)
{
	if (!m->timer_closed || m->busy)
		return;
	health_table_clear(&m->table);
	device_set_unref(m->set);
	free(m->results);
	free(m->reasons);
	free(m->taints);
	free(m->driver);
	free(m);
}

/* The agent's own sources after the backend's verdict @result: a device the
 * backend finds healthy is Unhealthy while its PCI function logs uncorrectable
 * AER errors (pcie_aer.h), else while its link runs narrower than before
 * (pcie_link.h). Both are followed whatever the verdict. Worker thread: only
 * the worker touches entry->aer, entry->no_aer and entry->link. */
static int agent_sources(struct health_monitor *m, size_t i, int result)
{
	struct health_entry *e = &m->table.entries[i];
	const struct dralet_pci_func *f = dralet_device_pci(e->dev);
	struct pcie_aer_counts counts;
	char aer_why[HEALTH_REASON_MAX], link_why[HEALTH_REASON_MAX];
	unsigned lanes;
	int read = e->no_aer ? -ENOENT : pcie_aer_read(e->dev, &counts);
	bool aer = read == 0 &&
		   pcie_aer_verdict(&e->aer, &counts, m->cfg.now(), aer_why, sizeof(aer_why));
	bool narrow = pcie_link_width(e->dev, &lanes) == 0 &&
		      pcie_link_verdict(&e->link, f ? f->link.current_width : 0, lanes, link_why,
					sizeof(link_why));

	if (read == -ENOENT && !e->aer.known)
		e->no_aer = true;	/* never had them: no source (pcie_aer.h) */
	if (result == DRALET_HEALTH_UNHEALTHY)
		m->taints[i] = device_backend_health_cause(e->dev);	/* NULL: generic */
	if (result != DRALET_HEALTH_HEALTHY || (!aer && !narrow))
		return result;
	memcpy(m->reasons[i], aer ? aer_why : link_why, HEALTH_REASON_MAX);
	m->taints[i] = aer ? PCIE_AER_TAINT_KEY : PCIE_LINK_TAINT_KEY;
	return DRALET_HEALTH_UNHEALTHY;
}

/* Worker thread: the set cannot change while busy (set_devices refuses). */
static void check_devices(uv_work_t *work)
{
	struct health_monitor *m = work->data;

	for (size_t i = 0; i < m->table.n; i++) {
		m->reasons[i][0] = '\0';
		m->taints[i] = NULL;
		if (atomic_load(&m->closing)) {
			m->results[i] = -ECANCELED;
			continue;
		}
		m->results[i] = agent_sources(m, i, m->cfg.check(m->cfg.userdata,
								 m->table.entries[i].dev,
								 m->reasons[i],
								 sizeof(m->reasons[i])));
	}
}

/* The backend name of @dev for log fields (NULL for a device without one). */
static const char *backend_name(const struct dralet_device *dev)
{
	struct dralet_backend_ctx *ctx = dev ? dralet_device_ctx(dev) : NULL;

	return ctx && ctx->backend ? ctx->backend->name : NULL;
}

static void log_change(const struct health_monitor *m, const struct health_entry *e,
		       const struct health_change *c)
{
	const char *const *kv = LOG_KV("driver", m->driver, "device", c->device, "backend",
				       backend_name(e->dev), "health",
				       health_name(c->new_health),
				       "err", c->error ? strerror(-c->error) : NULL);

	if (c->error)
		log_warn_kv(kv, "driver %s: device %s: health %s -> %s (%s)", m->driver, c->device,
			    health_name(c->old_health), health_name(c->new_health), c->reason);
	else if (c->reason && *c->reason)
		log_info_kv(kv, "driver %s: device %s: health %s -> %s: %s", m->driver, c->device,
			    health_name(c->old_health), health_name(c->new_health), c->reason);
	else
		log_info_kv(kv, "driver %s: device %s: health %s -> %s", m->driver, c->device,
			    health_name(c->old_health), health_name(c->new_health));
}

static void apply_round(uv_work_t *work, int status)
{
	struct health_monitor *m = work->data;
	int64_t now = m->cfg.now();
	bool changed = false;

	m->busy = false;
	if (atomic_load(&m->closing) || status < 0) {
		free_if_done(m);
		return;
	}
	for (size_t i = 0; i < m->table.n; i++) {
		struct health_change c;
		if (health_table_apply(&m->table, i, m->results[i], m->reasons[i], m->taints[i], now,
				       &c)) {
			log_change(m, &m->table.entries[i], &c);
			if (m->cfg.on_change)
				m->cfg.on_change(m->cfg.userdata, &c);
			changed = true;
		}
	}
	if (m->cfg.on_round)
		m->cfg.on_round(m->cfg.userdata, changed);
}

int health_monitor_run_round(struct health_monitor *m)
{
	int *results;
	int r;

	if (atomic_load(&m->closing))
		return -ECANCELED;
	if (m->busy)
		return -EBUSY;
	if (!(results = realloc(m->results, (m->table.n + 1) * sizeof(*results))))
		return -ENOMEM;
	m->results = results;
	{
		char (*reasons)[HEALTH_REASON_MAX] = realloc(m->reasons,
							     (m->table.n + 1) * sizeof(*reasons));
		if (!reasons)
			return -ENOMEM;
		m->reasons = reasons;
	}
	{
		const char **taints = realloc(m->taints, (m->table.n + 1) * sizeof(*taints));
		if (!taints)
			return -ENOMEM;
		m->taints = taints;
	}
	r = uv_queue_work(m->cfg.loop, &m->work, check_devices, apply_round);
	if (r < 0)
		return r;
	m->busy = true;
	return 0;
}

static void on_tick(uv_timer_t *timer)
{
	struct health_monitor *m = timer->data;
	int r = health_monitor_run_round(m);

	if (r == -EBUSY)
		log_debug("driver %s: the last health round is still running; skipping one",
			  m->driver);
	else if (r < 0)
		log_error_kv(LOG_KV("driver", m->driver, "err", strerror(-r)),
			     "driver %s: cannot start a health round: %s", m->driver, strerror(-r));
}

/* The table over @set's devices, and the monitor's reference moved to @set. */
static int take_set(struct health_monitor *m, struct device_set *set)
{
	int r = health_table_set_devices(&m->table, device_set_devices(set), device_set_n(set),
					 m->cfg.now());

	if (r < 0)
		return r;
	device_set_unref(m->set);
	m->set = device_set_ref(set);
	return 0;
}

int health_monitor_new(const struct health_monitor_config *cfg, struct device_set *set,
		       struct health_monitor **ret_monitor)
{
	struct health_monitor *m;
	uint64_t interval;

	if (!cfg->check)
		return -EINVAL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	m->cfg = *cfg;
	if (!m->cfg.now)
		m->cfg.now = real_now;
	m->driver = strdup(cfg->driver ? cfg->driver : "");
	if (!m->driver || take_set(m, set) < 0) {
		free(m->driver);
		free(m);
		return -ENOMEM;
	}
	m->work.data = m;
	atomic_init(&m->closing, false);
	interval = cfg->interval_ms ? cfg->interval_ms : HEALTH_DEFAULT_INTERVAL_S * 1000;
	uv_timer_init(cfg->loop, &m->timer);
	m->timer.data = m;
	uv_timer_start(&m->timer, on_tick, interval, interval);
	*ret_monitor = m;
	return 0;
}

bool health_monitor_busy(const struct health_monitor *m)
{
	return m->busy;
}

int health_monitor_set_devices(struct health_monitor *m, struct device_set *set)
{
	if (m->busy)
		return -EBUSY;
	return take_set(m, set);
}

const struct health_table *health_monitor_table(const struct health_monitor *m)
{
	return &m->table;
}

static void on_timer_closed(uv_handle_t *handle)
{
	struct health_monitor *m = handle->data;

	m->timer_closed = true;
	free_if_done(m);
}

void health_monitor_close(struct health_monitor *m)
{
	if (!m || atomic_load(&m->closing))
		return;
	atomic_store(&m->closing, true);
	uv_close((uv_handle_t *)&m->timer, on_timer_closed);
}
