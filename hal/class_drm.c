/* SPDX-License-Identifier: Apache-2.0 */
/* Character-node classes: DRM primary and render nodes (class/drm cardN,
 * renderDN) and compute accelerators (class/accel accelN). */
#include <stdio.h>
#include <string.h>

#include "hal/class.h"

static void on_drm(struct hal_scan_private *s, const char *name, int fd, const char *path,
		   void *userdata)
{
	struct dralet_pci_func *f;
	struct dralet_classdev *d;
	char dev_path[96];

	(void)userdata;
	/* connectors ("card0-HDMI-A-1") and "version" are not device nodes */
	if ((strncmp(name, "card", 4) && strncmp(name, "renderD", 7)) || strchr(name, '-'))
		return;
	f = scan_owner_of_path(s, path);
	if (!f)
		return;
	d = scan_append(s, (const void **)&f->drm, &f->n_drm, sizeof(*d));
	if (!d)
		return;
	d->name = arena_strdup(s->arena, name);
	snprintf(dev_path, sizeof(dev_path), "dri/%s", name);
	scan_devnode(s, fd, "dev", dev_path, &d->node);
}

static void on_accel(struct hal_scan_private *s, const char *name, int fd, const char *path,
		     void *userdata)
{
	struct dralet_pci_func *f = scan_owner_of_path(s, path);
	struct dralet_classdev *d;
	char dev_path[96];

	(void)userdata;
	if (!f || !(d = scan_append(s, (const void **)&f->accel, &f->n_accel, sizeof(*d))))
		return;
	d->name = arena_strdup(s->arena, name);
	snprintf(dev_path, sizeof(dev_path), "accel/%s", name);
	scan_devnode(s, fd, "dev", dev_path, &d->node);
}

void class_drm_scan(struct hal_scan_private *s)
{
	static const char *const drm_nodes[] = { "card", "renderD", NULL };

	static const char *const accel_nodes[] = { "accel", NULL };

	class_for_each(s, "class/drm", drm_nodes, on_drm, NULL);
	class_for_each(s, "class/accel", accel_nodes, on_accel, NULL);
}
