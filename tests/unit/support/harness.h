/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test support: temporary trees, and a backend context to call a backend's
 * operations on hand-built PCI facts or on a scanned tree.
 */
#ifndef DRALET_TEST_HARNESS_H
#define DRALET_TEST_HARNESS_H

#include <dralet/backend.h>
#include <dralet/prepare.h>

#include "agent/core/backend_ctx.h"
#include "agent/core/edits.h"
#include "hal/hal.h"

/* A temporary directory with sys/, dev/ and proc/ (malloc'd path). */
char *tree_new(void);
void tree_remove(char *dir);	/* removes and frees */
/* Writes @content (a trailing newline is added when missing) to
 * <dir>/<relpath>, creating directories. */
int tree_write(const char *dir, const char *relpath, const char *content);
/* Creates the symlink <dir>/<relpath> -> @target (relative or absolute). */
int tree_link(const char *dir, const char *relpath, const char *target);
int tree_mkdir(const char *dir, const char *relpath);
/* Adds a PCI function the HAL can enumerate: devices/<parent_path>/<address>
 * with vendor, device, class (and bus/pci/devices link). @parent_path is
 * like "pci0000:00" or "pci0000:00/0000:00:01.0". */
int tree_add_pci(const char *dir, const char *parent_path, const char *address,
		 unsigned vendor, unsigned device, unsigned class_code);

struct harness {
	struct dralet_backend_ctx ctx;	/* ctx.backend is ops */
	struct dralet_backend ops;	/* the backend's, defaults filled in (backend_call.h) */
	struct device_sink sink;
	struct hal_roots roots;
	struct hal_scan *scan;
	char *dir;		/* tree root when built from a tree */
	char sys[4096], dev[4096], proc[4096];
};

/* A context for @backend over the tree at @dir (sys/dev/proc below it; may be
 * NULL for hand-built facts), with @options (JSON object text or NULL).
 * Scans the tree when @dir is given. Calls the backend's init. */
int harness_init(struct harness *h, const struct dralet_backend *backend, const char *dir,
		 const char *options_json);
/* Probes @f into h->sink, telling the probe the best entry of the match
 * table for @f (NULL when none matches a hand-built @f; the filter is not
 * asked); returns the probe's result. */
int harness_probe(struct harness *h, const struct dralet_pci_func *f);
/* Probes every function of the scan that @backend scores > 0 (match table,
 * then filter, as the inventory does). */
int harness_probe_all(struct harness *h);
/* @b's score for @f (match table, then filter) with h's context. */
int harness_score(struct harness *h, const struct dralet_backend *b, const struct dralet_pci_func *f);
/* A backend whose probe adds nothing ("test", accel.dralet.dev), for
 * devices built by hand with dralet_device_new on h->ctx. */
extern const struct dralet_backend harness_plain_backend;

/* Adds @n healthy hand-built "accel" devices for @funcs (filled here:
 * addresses 0000:01:00.0, 0000:02:00.0 ...; they must outlive the devices)
 * to h->sink, in @ret. Returns 0 or the first error. */
int harness_add_devices(struct harness *h, struct dralet_pci_func *funcs, size_t n,
			struct dralet_device **ret);

/* The device named @name in the sink, or NULL. */
struct dralet_device *harness_device(struct harness *h, const char *name);
void harness_fini(struct harness *h);

/* Attribute lookups for assertions (NULL / 0 when missing or of another type). */
const char *attr_string(const struct dralet_device *d, const char *name);
long long attr_int(const struct dralet_device *d, const char *name, long long missing);
const char *capacity(const struct dralet_device *d, const char *name);

#endif
