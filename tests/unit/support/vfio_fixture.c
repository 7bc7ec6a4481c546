/* SPDX-License-Identifier: Apache-2.0 */
/* vfio_fixture.h: the fixture of the vfio form tests. */
#include "vfio_fixture.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>

#include "agent/core/edits.h"
#include "hal/pci_binding.h"

static void probe(struct vfio_fixture *f, const struct dralet_backend *b, const char *options)
{
	assert_int_equal(harness_init(&f->h, b, f->k.dir, options), 0);
	f->h.ctx.node = &f->k.node;
	f->h.ctx.state_dir = f->state;
	assert_int_equal(harness_probe_all(&f->h), 0);
}

static void unprobe(struct vfio_fixture *f)
{
	f->h.ctx.state_dir = NULL;	/* the fixture's */
	harness_fini(&f->h);
}

struct vfio_fixture *vfio_fixture_new(const char *board, const struct dralet_backend *b,
				      const char *options, const char *mark)
{
	struct vfio_fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	node_model_init(&f->k, board);
	snprintf(f->state, sizeof(f->state), "%s/state", f->k.dir);
	snprintf(f->mark, sizeof(f->mark), "%s", mark);
	assert_int_equal(mkdir(f->state, 0755), 0);
	probe(f, b, options);
	f->k.n_log = 0;
	return f;
}

void vfio_fixture_restart(struct vfio_fixture *f, const struct dralet_backend *b,
			  const char *options)
{
	unprobe(f);
	probe(f, b, options);
}

void vfio_fixture_free(struct vfio_fixture *f)
{
	unprobe(f);
	node_model_fini(&f->k);
	free(f);
}

const char *vfio_driver_of(struct vfio_fixture *f, const char *address)
{
	static char buf[4][64];
	static int i;
	char *b = buf[i++ % 4];

	if (hal_pci_driver(&f->k.real, address, b, 64) < 0)
		return "(gone)";
	return b;
}

const char *vfio_override_of(struct vfio_fixture *f, const char *address)
{
	static char buf[64];

	hal_pci_driver_override(&f->k.real, address, buf, sizeof(buf));
	return buf;
}

bool vfio_marked(const struct vfio_fixture *f)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", f->state, f->mark);
	return access(path, F_OK) == 0;
}

void vfio_assert_one_counter(struct dralet_device *native, struct dralet_device *form,
			     const char *counter)
{
	const char *set = dralet_device_name(native);
	const struct dralet_counter_list *s, *use;

	assert_int_equal(dralet_device_n_counter_sets(native), 1);
	s = dralet_device_counter_set(native, 0);
	assert_string_equal(s->set, set);
	assert_int_equal(s->n, 1);
	assert_string_equal(s->counters[0].name, counter);
	assert_string_equal(s->counters[0].quantity, "1");
	for (int i = 0; i < 2; i++) {
		struct dralet_device *d = i ? form : native;
		assert_int_equal(dralet_device_n_consumptions(d), 1);
		use = dralet_device_consumption(d, 0);
		assert_string_equal(use->set, set);
		assert_string_equal(use->counters[0].name, counter);
		assert_string_equal(use->counters[0].quantity, "1");
	}
	assert_true(dralet_device_is_partition(form));
	assert_false(dralet_device_is_partition(native));
}

void vfio_hold_node(struct vfio_fixture *f, const char *comm, const char *devnode)
{
	char node[4400];

	snprintf(node, sizeof(node), "%s/dev/%s", f->k.dir, devnode);
	assert_int_equal(tree_mkdir(f->k.dir, "proc/4242/fd"), 0);
	assert_int_equal(tree_write(f->k.dir, "proc/4242/comm", comm), 0);
	assert_int_equal(tree_link(f->k.dir, "proc/4242/fd/7", node), 0);
}

int vfio_checkpoint_persist(void *userdata, const struct dralet_undo *undo)
{
	struct vfio_checkpoint *ck = userdata;

	for (const char *const *b = ck->bound; b && b[0]; b += 2)
		assert_string_equal(vfio_driver_of(ck->f, b[0]), b[1]);
	assert_false(vfio_marked(ck->f));
	assert_int_equal(undo_copy(&ck->saved, undo), 0);
	ck->writes++;
	return 0;
}

void vfio_checkpoint_watch(struct vfio_checkpoint *ck, struct dralet_undo *undo)
{
	undo->persist = vfio_checkpoint_persist;
	undo->persist_userdata = ck;
}

void vfio_leave_half_bound(struct vfio_fixture *f, struct dralet_undo *undo, const char *key,
			   const char *address, const char *companion, const char *was)
{
	char err[256];

	assert_int_equal(dralet_undo_set_all(undo, (struct dralet_undo_value[]){
		{ key, address }, { "vfio.group", was } }, 2), 0);
	assert_int_equal(tree_write(f->state, f->mark, was), 0);
	assert_int_equal(hal_pci_set_driver(&f->k.node, companion, "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(hal_pci_unbind(&f->k.node, address, err, sizeof(err)), 0);
	assert_string_equal(vfio_driver_of(f, address), "");
}
