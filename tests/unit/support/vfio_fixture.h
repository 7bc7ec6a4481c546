/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fixture of the vfio form tests (backends/common/vfio_form.h): a board
 * snippet under the board simulator's kernel model (node_model.h), one
 * backend probed over it with the fixture's state directory (where the form's
 * marks go), and what the tests read back: a function's driver and
 * driver_override, whether the form's mark exists, the one counter both forms
 * consume. A family's test keeps its board, its device names and its checks.
 */
#ifndef DRALET_TEST_VFIO_FIXTURE_H
#define DRALET_TEST_VFIO_FIXTURE_H

#include <stdbool.h>

#include "agent/core/edits.h"

#include "harness.h"
#include "node_model.h"

struct vfio_fixture {
	struct node_model k;
	struct harness h;
	char state[4200];	/* <tree>/state: the backend's state directory */
	char mark[128];		/* the form's mark file in state, e.g. "gpu-vfio-0000:03:00.0" */
};

/* Materializes @board, probes backend @b with @options (JSON or NULL) and
 * empties the model's log; fails the test on any error. Free with
 * vfio_fixture_free. */
struct vfio_fixture *vfio_fixture_new(const char *board, const struct dralet_backend *b,
				      const char *options, const char *mark);
/* A new process: the backend @b probed again over the same tree. */
void vfio_fixture_restart(struct vfio_fixture *f, const struct dralet_backend *b,
			  const char *options);
void vfio_fixture_free(struct vfio_fixture *f);

/* @address's driver ("" unbound, "(gone)" no such function); the text stays
 * valid for the next three calls. */
const char *vfio_driver_of(struct vfio_fixture *f, const char *address);
/* @address's driver_override ("" none); valid until the next call. */
const char *vfio_override_of(struct vfio_fixture *f, const char *address);
bool vfio_marked(const struct vfio_fixture *f);

/* @native owns one counter set (named after it) of one counter @counter of
 * 1, which @native and its vfio form @form both consume; the form is a
 * partition, the native form is not. */
void vfio_assert_one_counter(struct dralet_device *native, struct dralet_device *form,
			     const char *counter);

/* A prepare's checkpoint: every persist of the undo state (one
 * dralet_undo_set_all) is one write, copied into saved; at each the
 * functions of @bound ("address", "driver" pairs, NULL-terminated) are still
 * on their drivers and the mark is not made yet. Set t_req's
 * undo.persist = vfio_checkpoint_persist, persist_userdata = &checkpoint. */
struct vfio_checkpoint {
	struct vfio_fixture *f;
	const char *const *bound;
	struct dralet_undo saved;	/* undo_clear when done */
	int writes;
};
int vfio_checkpoint_persist(void *userdata, const struct dralet_undo *undo);
/* @undo's writes go to @ck. */
void vfio_checkpoint_watch(struct vfio_checkpoint *ck, struct dralet_undo *undo);

/* What a crash inside the rebinding leaves (vfio_group_bind): the undo state
 * recorded in @undo (@key = @address, vfio.group = @was), the mark written,
 * @companion already on vfio-pci, @address unbound. */
void vfio_leave_half_bound(struct vfio_fixture *f, struct dralet_undo *undo, const char *key,
			   const char *address, const char *companion, const char *was);

/* A host process (pid 4242, @comm) holding the node @devnode (relative to
 * the tree's /dev, e.g. "dri/card0") open. */
void vfio_hold_node(struct vfio_fixture *f, const char *comm, const char *devnode);

#endif
