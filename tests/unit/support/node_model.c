/* SPDX-License-Identifier: Apache-2.0 */
#include "node_model.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "boards/sim/board.h"

static void say(struct node_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct node_model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->n_log >= NODE_MODEL_LOG)
		return;
	va_start(ap, fmt);
	vsnprintf(m->log[m->n_log++], sizeof(m->log[0]), fmt, ap);
	va_end(ap);
}

static const struct node_ops *model(const struct node_model *m)
{
	return board_node_ops(m->bn);
}

static int log_write(void *ud, const char *rel, const char *value)
{
	struct node_model *m = ud;
	const char *devs = "bus/pci/devices/";

	say(m, "%s=%s", strncmp(rel, devs, strlen(devs)) ? rel : rel + strlen(devs),
	    strcmp(value, "\n") ? value : "");
	return model(m)->write(model(m)->userdata, rel, value);
}

static int log_read(void *ud, const char *rel, char *buf, size_t size)
{
	struct node_model *m = ud;

	return model(m)->read(model(m)->userdata, rel, buf, size);
}

static int log_readlink(void *ud, const char *rel, char *buf, size_t size)
{
	struct node_model *m = ud;

	return model(m)->readlink(model(m)->userdata, rel, buf, size);
}

static int log_vf_get(void *ud, const char *ifname, int ifindex, unsigned vf,
		      struct dralet_vf_settings *ret)
{
	struct node_model *m = ud;

	return model(m)->vf_get(model(m)->userdata, ifname, ifindex, vf, ret);
}

static int log_vf_set(void *ud, const char *ifname, int ifindex, unsigned vf,
		      const struct dralet_vf_settings *n)
{
	struct node_model *m = ud;

	say(m, "vf_set if%d vf%u%s%s%s%s%s%s", ifindex, vf, n->has_mac ? " mac" : "",
	    n->has_vlan ? " vlan" : "", n->trust >= 0 ? " trust" : "",
	    n->spoof_check >= 0 ? " spoofchk" : "", n->link_state >= 0 ? " link" : "",
	    n->has_rate ? " rate" : "");
	return model(m)->vf_set(model(m)->userdata, ifname, ifindex, vf, n);
}

static int log_fpga_pr(void *ud, const char *fme, const char *port, unsigned port_id,
		       const void *image, size_t size)
{
	struct node_model *m = ud;

	say(m, "fpga_pr %s port %u (%s) %zu bytes", fme, port_id, port, size);
	return model(m)->fpga_pr(model(m)->userdata, fme, port, port_id, image, size);
}

static int log_fpga_mgr_load(void *ud, const char *manager, unsigned long flags, const char *image)
{
	struct node_model *m = ud;

	say(m, "fpga_mgr_load %s flags %lx %s", manager, flags, image);
	return model(m)->fpga_mgr_load(model(m)->userdata, manager, flags, image);
}

static int log_fpga_overlay(void *ud, const char *name, const char *dtbo)
{
	struct node_model *m = ud;

	say(m, "fpga_overlay %s %s", name, dtbo ? dtbo : "(remove)");
	return model(m)->fpga_overlay(model(m)->userdata, name, dtbo);
}

static int fault_fpga_pr(void *ud, const char *fme, unsigned port_id)
{
	const struct node_model *m = ud;

	(void)fme;
	(void)port_id;
	return m->fpga_pr_error;
}

static int fault_configure(void *ud, const char *pf, unsigned n)
{
	const struct node_model *m = ud;

	for (size_t i = 0; i < NODE_MODEL_FAULTS; i++) {
		const struct node_model_fault *f = &m->faults[i];

		if (!f->pf || strcmp(f->pf, pf))
			continue;
		if (!n && f->disable_error)
			return f->disable_error;
		if (n && f->enable_error)
			return f->enable_error;
		if (f->enospc_above && n > f->enospc_above)
			return -ENOSPC;
	}
	return 0;
}

static int fault_vf_config(void *ud, const char *pf, unsigned vf, bool set)
{
	const struct node_model *m = ud;

	(void)pf;
	(void)vf;
	return set ? m->vf_set_error : m->vf_get_error;
}

void node_model_init(struct node_model *m, const char *yaml)
{
	char file[] = "/tmp/dralet-board-XXXXXX", err[512] = "";
	size_t len = strlen(yaml);
	int fd = mkstemp(file), r = -1;

	memset(m, 0, sizeof(*m));
	if (fd < 0)
		fail_msg("cannot create a board file: %m");
	if (write(fd, yaml, len) == (ssize_t)len &&
	    (r = board_materialize_temp(file, &m->dir, err, sizeof(err))) == 0 &&
	    (r = board_node_open(file, m->dir, &m->bn, err, sizeof(err))) < 0)
		board_remove_tree(m->dir);
	close(fd);
	unlink(file);
	if (r < 0)
		fail_msg("board snippet: %s", err[0] ? err : "cannot write it");
	board_node_set_hooks(m->bn, &(struct board_node_hooks){ .sriov_configure = fault_configure,
								.vf_config = fault_vf_config,
								.fpga_pr = fault_fpga_pr,
								.userdata = m });
	m->roots = *board_node_roots(m->bn);
	m->real = node_ops_real(&m->roots);
	m->node = (struct node_ops){ .write = log_write, .read = log_read,
				     .readlink = log_readlink, .vf_get = log_vf_get,
				     .vf_set = log_vf_set, .fpga_pr = log_fpga_pr,
				     .fpga_mgr_load = log_fpga_mgr_load,
				     .fpga_overlay = log_fpga_overlay,
				     .userdata = m };
}

void node_model_fini(struct node_model *m)
{
	board_node_free(m->bn);
	board_remove_tree(m->dir);
	free(m->dir);
	m->bn = NULL;
	m->dir = NULL;
}

int node_model_find_log(const struct node_model *m, size_t from, const char *needle)
{
	for (size_t i = from; i < m->n_log; i++)
		if (strstr(m->log[i], needle))
			return (int)i;
	return -1;
}

struct dralet_vf_settings *node_model_vf(struct node_model *m, const char *pf, unsigned vf)
{
	struct dralet_vf_settings *s = board_node_vf_settings(m->bn, pf, vf);

	if (!s)
		fail_msg("%s keeps no settings for VF %u", pf, vf);
	return s;
}

bool node_model_has(const struct node_model *m, const char *address)
{
	char rel[96], buf[16];

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vendor", address);
	return m->real.read(m->real.userdata, rel, buf, sizeof(buf)) > 0;
}
