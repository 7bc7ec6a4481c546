/* SPDX-License-Identifier: Apache-2.0 */
/* board_node_ops.h: the kernel's rules for the sysfs writes and VF settings. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/lib/err_msg.h"
#include "boards/sim/board_node.h"
#include "hal/pci_binding.h"

static struct dralet_vf_settings fresh_vf(void)
{
	/* what a NIC reports for a VF nobody configured */
	struct dralet_vf_settings s = DRALET_VF_SETTINGS_INIT;

	s.has_mac = s.has_vlan = s.has_rate = true;
	s.trust = 0;
	s.spoof_check = 1;
	s.link_state = DRALET_VF_LINK_AUTO;
	return s;
}

struct board_func *bn_find(struct board_node *bn, const char *address)
{
	for (size_t i = 0; i < bn->b.n_funcs; i++)
		if (!bn->b.funcs[i]->physfn && !strcmp(bn->b.funcs[i]->bdf, address))
			return bn->b.funcs[i];
	for (size_t i = 0; i < bn->n_pfs; i++)
		for (unsigned k = 0; k < bn->pfs[i].num; k++)
			if (!strcmp(bn->pfs[i].vfs[k]->bdf, address))
				return bn->pfs[i].vfs[k];
	return NULL;
}

const char *bn_own_driver(const struct board_func *f)
{
	return f->physfn ? f->physfn->vf_driver : f->driver;
}

static struct bn_pf *pf_of(struct board_node *bn, const char *address)
{
	for (size_t i = 0; i < bn->n_pfs; i++)
		if (!strcmp(bn->pfs[i].pf->bdf, address))
			return &bn->pfs[i];
	return NULL;
}

static bool is_loaded(const struct board_node *bn, const char *driver)
{
	for (size_t i = 0; i < bn->n_modules; i++)
		if (!strcmp(bn->modules[i], driver))
			return bn->loaded[i];
	return false;
}

void board_node_set_loaded(struct board_node *bn, const char *driver, bool loaded)
{
	for (size_t i = 0; i < bn->n_modules; i++)
		if (!strcmp(bn->modules[i], driver)) {
			bn->loaded[i] = loaded;
			return;
		}
	if (bn->n_modules < BN_MAX_MODULES && (driver = arena_strdup(bn->b.arena, driver))) {
		bn->modules[bn->n_modules] = driver;
		bn->loaded[bn->n_modules++] = loaded;
	}
}

static int read_attr(struct board_node *bn, const char *address, const char *file, char *buf,
		     size_t size)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	return bn->real.read(bn->real.userdata, rel, buf, size);
}

static int write_attr(struct board_node *bn, const char *address, const char *file,
		      const char *value)
{
	char rel[256], line[300];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/%s", address, file);
	snprintf(line, sizeof(line), "%s\n", value);
	return bn->real.write(bn->real.userdata, rel, line);
}

/* The driver the driver core picks for @f: driver_override first (only that
 * driver matches then), else the function's own. */
static const char *wanted_driver(struct board_node *bn, const struct board_func *f, char *buf,
				 size_t size)
{
	if (read_attr(bn, f->bdf, "driver_override", buf, size) > 0 && strcmp(buf, "(null)"))
		return buf;
	return bn_own_driver(f);
}

static int bound_to(struct board_node *bn, const struct board_func *f, char *buf, size_t size)
{
	int r = hal_pci_driver(&bn->real, f->bdf, buf, size);

	return r < 0 ? r : buf[0] != '\0';
}

/* drivers/base/bus.c drivers_probe_store: -ENODEV for no such device; a
 * device no driver takes stays unbound, and the write succeeds. */
static int drivers_probe(struct board_node *bn, const char *address)
{
	struct board_func *f = bn_find(bn, address);
	char now[64], over[64];
	const char *want;

	if (!f)
		return -ENODEV;
	if (bound_to(bn, f, now, sizeof(now)))
		return 0;
	want = wanted_driver(bn, f, over, sizeof(over));
	return want && is_loaded(bn, want) ? bn_bind(bn, f, want) : 0;
}

/* bind_store / unbind_store of drivers/<driver>: -ENODEV unless the device
 * matches (bind) or is bound to that driver (unbind); -EBUSY when bound. */
static int bind_unbind(struct board_node *bn, const char *driver, const char *file,
		       const char *address)
{
	struct board_func *f = bn_find(bn, address);
	char now[64], over[64];
	const char *want;

	if (!strcmp(file, "unbind")) {
		if (!f || bound_to(bn, f, now, sizeof(now)) <= 0 || strcmp(now, driver))
			return -ENODEV;
		return bn_unbind(bn, f);
	}
	if (strcmp(file, "bind"))
		return -EACCES;
	want = f ? wanted_driver(bn, f, over, sizeof(over)) : NULL;
	if (!want || strcmp(want, driver))
		return -ENODEV;
	if (bound_to(bn, f, now, sizeof(now)))
		return -EBUSY;
	return bn_bind(bn, f, driver);
}

/*
 * drivers/pci/iov.c, sriov_numvfs_store(): the count is parsed with
 * kstrtou16 (-EINVAL, -ERANGE when it does not fit), a count above
 * pci_sriov_get_totalvfs() is -ERANGE, the current count succeeds without
 * change, a PF without a driver having sriov_configure is -ENOENT, 0
 * disables through sriov_configure(pdev, 0), and a non-zero count while VFs
 * are enabled is -EBUSY ("Disable before enabling"); then
 * sriov_configure(pdev, n) and its error as it is.
 */
static int numvfs_store(struct board_node *bn, struct bn_pf *p, const char *value)
{
	const char *pf = p->pf->bdf;
	char *end, now[64], buf[16];
	unsigned long n = strtoul(value, &end, 0);
	int r;

	if (end == value || (*end && strcmp(end, "\n")) || value[0] == '-')
		return -EINVAL;
	if (n > 0xffff || n > p->pf->total_vfs)
		return -ERANGE;
	if (n == p->num)
		return 0;
	if (bound_to(bn, p->pf, now, sizeof(now)) <= 0)
		return -ENOENT;
	if (n && p->num)
		return -EBUSY;
	if (bn->hooks.sriov_configure &&
	    (r = bn->hooks.sriov_configure(bn->hooks.userdata, pf, (unsigned)n)) < 0)
		return r;
	if (n == 0)
		return bn_remove_vfs(bn, p);
	for (unsigned i = 0; i < n; i++)
		p->settings[i] = fresh_vf();
	return bn_add_vfs(bn, p, (unsigned)n,
			  read_attr(bn, pf, "sriov_drivers_autoprobe", buf, sizeof(buf)) <= 0 ||
				  atoi(buf) != 0);
}

/* kstrtobool: 1/y/Y/on and 0/n/N/off. */
static int parse_bool(const char *v, bool *ret)
{
	if (strchr("1yY", v[0]) && v[0])
		*ret = true;
	else if (strchr("0nN", v[0]) && v[0])
		*ret = false;
	else if (!strncmp(v, "on", 2))
		*ret = true;
	else if (!strncmp(v, "of", 2))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

static int attr_store(struct board_node *bn, const char *address, const char *file,
		      const char *v)
{
	struct board_func *f = bn_find(bn, address);
	struct bn_pf *p = f ? pf_of(bn, address) : NULL;
	bool on;

	if (!f)
		return -ENOENT;
	if (!strcmp(file, "driver_override"))	/* empty clears it */
		return write_attr(bn, address, file, v[0] ? v : "(null)");
	if (p && !strcmp(file, "sriov_drivers_autoprobe"))
		return parse_bool(v, &on) < 0 ? -EINVAL : write_attr(bn, address, file, on ? "1" : "0");
	if (p && !strcmp(file, "sriov_numvfs"))
		return numvfs_store(bn, p, v);
	if (f->kfd && !strcmp(file, "current_compute_partition"))
		return bn_compute_partition(bn, f, v);
	if (!strcmp(file, "driver/unbind") || !strcmp(file, "driver/bind")) {
		char now[64];

		if (bound_to(bn, f, now, sizeof(now)) <= 0)
			return -ENOENT;	/* no driver link to write through */
		return bind_unbind(bn, now, file + 7, v);
	}
	return -EACCES;
}

static int model_write_unlocked(void *userdata, const char *relpath, const char *value)
{
	struct board_node *bn = userdata;
	char v[256], a[64], b[64];
	size_t len = strlen(value);
	int r;

	/* a sysfs store gets the value with its newline; the rules ignore it */
	if (len && value[len - 1] == '\n')
		len--;
	if (len >= sizeof(v))
		return -EINVAL;
	memcpy(v, value, len);
	v[len] = '\0';
	if (!strcmp(relpath, "bus/pci/drivers_probe"))
		return drivers_probe(bn, v);
	if (sscanf(relpath, "bus/pci/drivers/%63[^/]/%63s", a, b) == 2) {
		char rel[96];

		snprintf(rel, sizeof(rel), "bus/pci/drivers/%s", a);
		if (faccessat(bn->sysfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			return -ENOENT;
		return bind_unbind(bn, a, b, v);
	}
	if (sscanf(relpath, "bus/pci/devices/%63[^/]", a) == 1 &&
	    relpath[strlen("bus/pci/devices/") + strlen(a)] == '/' &&
	    (r = attr_store(bn, a, relpath + strlen("bus/pci/devices/") + strlen(a) + 1, v)) !=
		    -EACCES)
		return r;
	/* what the model does not know: a read-only attribute, or nothing */
	return faccessat(bn->sysfd, relpath, F_OK, 0) == 0 ? -EACCES : -ENOENT;
}

static int model_read_unlocked(void *userdata, const char *relpath, char *buf, size_t size)
{
	struct board_node *bn = userdata;

	return bn->real.read(bn->real.userdata, relpath, buf, size);
}

static int model_readlink_unlocked(void *userdata, const char *relpath, char *buf, size_t size)
{
	struct board_node *bn = userdata;

	return bn->real.readlink(bn->real.userdata, relpath, buf, size);
}

/* The PF whose netdev is @ifname with index @ifindex in the tree. */
static struct bn_pf *pf_of_netdev(struct board_node *bn, const char *ifname, int ifindex)
{
	char rel[96], buf[PATH_MAX];
	const char *slash;

	if (!ifname || !ifname[0] || strchr(ifname, '/') || strlen(ifname) > 15)
		return NULL;
	snprintf(rel, sizeof(rel), "class/net/%s/ifindex", ifname);
	if (bn->real.read(bn->real.userdata, rel, buf, sizeof(buf)) <= 0 || atoi(buf) != ifindex)
		return NULL;
	snprintf(rel, sizeof(rel), "class/net/%s/device", ifname);
	if (bn->real.readlink(bn->real.userdata, rel, buf, sizeof(buf)) < 0)
		return NULL;
	slash = strrchr(buf, '/');
	return pf_of(bn, slash ? slash + 1 : buf);
}

static int vf_settings_of(struct board_node *bn, const char *ifname, int ifindex, unsigned vf,
			  bool set, struct dralet_vf_settings **ret)
{
	struct bn_pf *p = pf_of_netdev(bn, ifname, ifindex);
	int r;

	if (!p)
		return -ENODEV;
	if (vf >= p->num)
		return -EINVAL;
	if (bn->hooks.vf_config &&
	    (r = bn->hooks.vf_config(bn->hooks.userdata, p->pf->bdf, vf, set)) < 0)
		return r;
	*ret = &p->settings[vf];
	return 0;
}

static int model_vf_get_unlocked(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
			struct dralet_vf_settings *ret)
{
	struct dralet_vf_settings *s;
	int r = vf_settings_of(userdata, pf_ifname, pf_ifindex, vf, false, &s);

	if (r == 0)
		*ret = *s;
	return r;
}

static int model_vf_set_unlocked(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
			const struct dralet_vf_settings *n)
{
	struct dralet_vf_settings *s;
	int r = vf_settings_of(userdata, pf_ifname, pf_ifindex, vf, true, &s);

	if (r < 0)
		return r;
	if (n->has_mac)
		memcpy(s->mac, n->mac, 6);
	if (n->has_vlan) {
		s->vlan = n->vlan;
		s->qos = n->qos;
	}
	if (n->trust >= 0)
		s->trust = n->trust;
	if (n->spoof_check >= 0)
		s->spoof_check = n->spoof_check;
	if (n->link_state >= 0)
		s->link_state = n->link_state;
	if (n->has_rate) {
		s->min_tx_mbps = n->min_tx_mbps;
		s->max_tx_mbps = n->max_tx_mbps;
	}
	return 0;
}

/* The DFL port with id @port_id of the FME named @fme ("dfl-fme.N"), or NULL. */
static const struct board_dfl_port *dfl_port(struct board_node *bn, const char *fme,
					     unsigned port_id)
{
	int id;
	char end;

	if (sscanf(fme, "dfl-fme.%d%c", &id, &end) != 1)
		return NULL;
	for (size_t i = 0; i < bn->b.n_funcs; i++) {
		const struct board_dfl *d = bn->b.funcs[i]->dfl;

		for (size_t k = 0; d && d->fme_id == id && k < d->n_ports; k++)
			if (d->ports[k].id >= 0 && (unsigned)d->ports[k].id == port_id)
				return &d->ports[k];
	}
	return NULL;
}

static int model_fpga_pr_unlocked(void *userdata, const char *fme, const char *port, unsigned port_id,
			 const void *image, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	struct board_node *bn = userdata;
	const struct board_dfl_port *p;
	const uint8_t *bytes = image;
	char rel[96], afu[40];
	int r;

	if (!fme || strchr(fme, '/') || faccessat(bn->devfd, fme, F_OK, 0) < 0 ||
	    !port || strchr(port, '/') || faccessat(bn->devfd, port, F_OK, 0) < 0)
		return -ENOENT;
	if (!(p = dfl_port(bn, fme, port_id)) || size == 0)
		return -EINVAL;
	snprintf(rel, sizeof(rel), "dfl-port.%d", p->id);
	if (strcmp(port, rel))
		return -EINVAL;	/* the caller holds another port than it programs */
	if (bn->hooks.fpga_pr && (r = bn->hooks.fpga_pr(bn->hooks.userdata, fme, port_id)) < 0)
		return r;
	if (size < 16)
		return -EIO;
	for (int i = 0; i < 16; i++) {
		afu[2 * i] = digits[bytes[i] >> 4];
		afu[2 * i + 1] = digits[bytes[i] & 15];
	}
	snprintf(afu + 32, sizeof(afu) - 32, "\n");
	snprintf(rel, sizeof(rel), "bus/platform/devices/dfl-port.%d/afu_id", p->id);
	if ((r = bn->real.write(bn->real.userdata, rel, afu)) < 0)
		return r;
	bn->fpga_programs++;
	bn->fpga_last_size = size;
	return 0;
}

/* The ops the table holds: each rule runs under the model's lock, so the
 * daemon's worker threads (prepares, health checks) may share one model. */
#define LOCKED(call)                                   \
	do {                                           \
		struct board_node *bn_ = userdata;     \
		int r_;                                \
		pthread_mutex_lock(&bn_->lock);        \
		r_ = call;                             \
		pthread_mutex_unlock(&bn_->lock);      \
		return r_;                             \
	} while (0)

static int model_write(void *userdata, const char *relpath, const char *value)
{
	LOCKED(model_write_unlocked(userdata, relpath, value));
}

static int model_read(void *userdata, const char *relpath, char *buf, size_t size)
{
	LOCKED(model_read_unlocked(userdata, relpath, buf, size));
}

static int model_readlink(void *userdata, const char *relpath, char *buf, size_t size)
{
	LOCKED(model_readlink_unlocked(userdata, relpath, buf, size));
}

static int model_vf_get(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
			struct dralet_vf_settings *ret)
{
	LOCKED(model_vf_get_unlocked(userdata, pf_ifname, pf_ifindex, vf, ret));
}

static int model_vf_set(void *userdata, const char *pf_ifname, int pf_ifindex, unsigned vf,
			const struct dralet_vf_settings *n)
{
	LOCKED(model_vf_set_unlocked(userdata, pf_ifname, pf_ifindex, vf, n));
}

static int model_fpga_pr(void *userdata, const char *fme, const char *port, unsigned port_id,
			 const void *image, size_t size)
{
	LOCKED(model_fpga_pr_unlocked(userdata, fme, port, port_id, image, size));
}

static int model_fpga_mgr_load(void *userdata, const char *manager, unsigned long flags,
			       const char *image)
{
	LOCKED(bn_fpga_mgr_load(userdata, manager, flags, image));
}

static int model_fpga_overlay(void *userdata, const char *name, const char *dtbo)
{
	LOCKED(bn_fpga_overlay(userdata, name, dtbo));
}

unsigned board_node_fpga_programs(const struct board_node *bn, size_t *ret_last_size)
{
	struct board_node *m = (struct board_node *)bn;
	unsigned n;

	pthread_mutex_lock(&m->lock);
	if (ret_last_size)
		*ret_last_size = bn->fpga_last_size;
	n = bn->fpga_programs;
	pthread_mutex_unlock(&m->lock);
	return n;
}

static int add_pfs(struct board_node *bn)
{
	struct arena *a = bn->b.arena;

	bn->pfs = arena_alloc(a, (bn->b.n_funcs + 1) * sizeof(*bn->pfs));
	if (!bn->pfs)
		return -ENOMEM;
	for (size_t i = 0; i < bn->b.n_funcs; i++) {
		struct board_func *f = bn->b.funcs[i];
		struct bn_pf *p = &bn->pfs[bn->n_pfs];

		if (!f->has_sriov || f->physfn)
			continue;
		p->pf = f;
		p->num = f->num_vfs;
		p->vfs = arena_alloc(a, (f->total_vfs + 1) * sizeof(*p->vfs));
		p->settings = arena_alloc(a, (f->total_vfs + 1) * sizeof(*p->settings));
		if (!p->vfs || !p->settings)
			return -ENOMEM;
		for (unsigned k = 0; k < f->total_vfs; k++) {
			p->vfs[k] = k < f->num_vfs ? f->vfs[k] : NULL;
			p->settings[k] = fresh_vf();
		}
		bn->n_pfs++;
	}
	return 0;
}

int board_node_open(const char *board_path, const char *dir, struct board_node **ret,
		    char *err, size_t errlen)
{
	struct board_node *bn = calloc(1, sizeof(*bn));
	char probe[64];
	int r;

	if (!bn)
		return -ENOMEM;
	bn->sysfd = bn->devfd = -1;
	pthread_mutex_init(&bn->lock, NULL);
	if ((r = board_load(board_path, &bn->b, err, errlen)) < 0)
		goto fail;
	snprintf(bn->dir, sizeof(bn->dir), "%s", dir);
	snprintf(bn->sys, sizeof(bn->sys), "%s/sys", dir);
	snprintf(bn->dev, sizeof(bn->dev), "%s/dev", dir);
	snprintf(bn->proc, sizeof(bn->proc), "%s/proc", dir);
	bn->roots = (struct hal_roots){ bn->sys, bn->dev, bn->proc };
	bn->real = node_ops_real(&bn->roots);
	bn->ops = (struct node_ops){
		.write = model_write,
		.read = model_read,
		.readlink = model_readlink,
		.vf_get = model_vf_get,
		.vf_set = model_vf_set,
		.fpga_pr = model_fpga_pr,
		.fpga_mgr_load = model_fpga_mgr_load,
		.fpga_overlay = model_fpga_overlay,
		.userdata = bn,
	};
	bn->sysfd = open(bn->sys, O_PATH | O_DIRECTORY | O_CLOEXEC);
	bn->devfd = open(bn->dev, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (bn->sysfd < 0 || bn->devfd < 0 ||
	    bn->real.read(bn->real.userdata, "bus/pci/drivers_autoprobe", probe, sizeof(probe)) < 0) {
		r = err_printf(err, errlen, -ENOENT, "%s holds no materialized board", dir);
		goto fail;
	}
	if ((r = add_pfs(bn)) < 0) {
		err_printf(err, errlen, r, "%s: out of memory", board_path);
		goto fail;
	}
	for (size_t i = 0; i < bn->b.n_funcs; i++) {
		const struct board_func *f = bn->b.funcs[i];

		if (f->driver)
			board_node_set_loaded(bn, f->driver, true);
		if (f->vf_driver)
			board_node_set_loaded(bn, f->vf_driver, true);
	}
	board_node_set_loaded(bn, "vfio-pci", true);
	*ret = bn;
	return 0;
fail:
	board_node_free(bn);
	return r;
}

void board_node_free(struct board_node *bn)
{
	if (!bn)
		return;
	if (bn->sysfd >= 0)
		close(bn->sysfd);
	if (bn->devfd >= 0)
		close(bn->devfd);
	board_free(&bn->b);
	pthread_mutex_destroy(&bn->lock);
	free(bn);
}

const struct node_ops *board_node_ops(struct board_node *bn)
{
	return &bn->ops;
}

const struct hal_roots *board_node_roots(const struct board_node *bn)
{
	return &bn->roots;
}

void board_node_set_hooks(struct board_node *bn, const struct board_node_hooks *hooks)
{
	bn->hooks = hooks ? *hooks : (struct board_node_hooks){ 0 };
}

struct dralet_vf_settings *board_node_vf_settings(struct board_node *bn, const char *pf,
						  unsigned vf)
{
	struct bn_pf *p = pf_of(bn, pf);

	return p && vf < p->pf->total_vfs ? &p->settings[vf] : NULL;
}
