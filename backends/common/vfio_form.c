/* SPDX-License-Identifier: Apache-2.0 */
/* The vfio form of a whole PCI function (vfio_form.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>

#include "pcidev.h"
#include "vfio_form.h"
#include "vfio_group.h"

#define UNDO_GROUP "vfio.group"
#define VFIO_PCI "vfio-pci"

bool vfio_form_enabled(struct dralet_backend_ctx *ctx)
{
	const char *v = dralet_ctx_option(ctx, "vfio");

	if (!v || !strcmp(v, "false"))
		return false;
	if (!strcmp(v, "true"))
		return true;
	dralet_ctx_warn(ctx, "option vfio=\"%.32s\" is neither \"true\" nor \"false\"; vfio "
			     "forms stay off", v);
	return false;
}

const char *vfio_form_driver(struct dralet_backend_ctx *ctx)
{
	const char *v = dralet_ctx_option(ctx, "vfioDriver");

	return v && *v ? v : VFIO_PCI;
}

static void undo_key(const struct vfio_form_family *fam, char *buf, size_t size)
{
	snprintf(buf, size, "vfio.%s", fam->name);
}

void vfio_form_describe(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			const struct dralet_pci_func *func, const char *native_driver)
{
	char pci_class[16];

	dralet_device_set_string(dev, "type", "vfio");
	dralet_device_set_string(dev, "driver", VFIO_PCI);
	dralet_device_set_string(dev, "nativeDriver", native_driver ? native_driver : "");
	snprintf(pci_class, sizeof(pci_class), "0x%04x", dralet_pci_class_sub(func));
	dralet_device_set_string(dev, "pciClass", pci_class);
	/* a shared group hands its other functions to the VM too */
	dralet_device_set_bool(dev, "vfioCapable", pcidev_vfio_capable(ctx, func));
}

bool vfio_form_impossible(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func)
{
	if (func->iommu_group >= 0)
		return false;
	dralet_ctx_warn(ctx, "%s: no IOMMU group (IOMMU off); its vfio form is not published",
			func->address);
	return true;
}

static bool own_node(const struct vfio_form_family *fam, const char *path)
{
	return fam->own_node ? fam->own_node(path) : strncmp(path, "/dev/vfio/", 10) != 0;
}

int vfio_form_add(const struct vfio_form_family *fam, struct dralet_device *native,
		  struct dralet_device *dev, struct vfio_form *form)
{
	const char *set = dralet_device_name(native);
	int r = 0;

	form->is_form = true;
	for (size_t i = 0; i < dralet_device_n_nodes(native) &&
			   form->n_host_nodes < VFIO_FORM_HOST_NODES_MAX; i++) {
		const struct dralet_devnode *n = dralet_device_node(native, i);
		if (n->path && own_node(fam, n->path) &&
		    strlen(n->path) < sizeof(form->host_nodes[0].path)) {
			struct vfio_form_host_node *h = &form->host_nodes[form->n_host_nodes++];
			snprintf(h->path, sizeof(h->path), "%s", n->path);
			h->major = n->major;
			h->minor = n->minor;
		}
	}
	/* one counter between the two forms; a device already carved by
	 * counters (dynamic MIG) gives its vfio form everything it consumes */
	if (!dralet_device_n_consumptions(native)) {
		if ((r = dralet_device_set_counter_int(native, set, fam->name, 1)) < 0 ||
		    (r = dralet_device_consume_counter_int(native, set, fam->name, 1)) < 0)
			return r;
	}
	for (size_t i = 0; i < dralet_device_n_consumptions(native); i++) {
		const struct dralet_counter_list *use = dralet_device_consumption(native, i);
		for (size_t k = 0; k < use->n && r >= 0; k++)
			r = dralet_device_consume_counter(dev, use->set, use->counters[k].name,
							  use->counters[k].quantity);
	}
	dralet_device_set_partition(dev, true);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return r < 0 ? r : 0;
}

/* ---- the mark ---- */

static bool mark_path(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
		      const char *address, char *buf, size_t size)
{
	const char *dir = dralet_ctx_state_dir(ctx);

	return dir && snprintf(buf, size, "%s/%s-vfio-%s", dir, fam->name, address) < (int)size;
}

bool vfio_form_marked(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
		      const char *address, char *buf, size_t size)
{
	char path[4200];
	ssize_t n;
	int fd;

	if (!mark_path(ctx, fam, address, path, sizeof(path)) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* Written and synced before the first rebinding returns to the caller. */
static int write_mark(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
		      const char *address, const char *text)
{
	char path[4200], tmp[4300];
	size_t len = strlen(text);
	int fd, r = 0;

	if (!mark_path(ctx, fam, address, path, sizeof(path)))
		return 0;	/* no state directory (dralet discover): nothing outlives us */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		r = -errno;
	else {
		if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0)
			r = errno ? -errno : -EIO;
		close(fd);
		if (!r && rename(tmp, path) < 0)
			r = -errno;
		if (r)
			unlink(tmp);
	}
	if (r < 0)
		dralet_ctx_error(ctx, "%s: cannot write %s: %s", address, path, strerror(-r));
	return r;
}

static void remove_mark(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
			const char *address)
{
	char path[4200];

	if (mark_path(ctx, fam, address, path, sizeof(path)))
		unlink(path);
}

int vfio_form_mark_driver(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *func,
			  const char *mark, char *buf, size_t size)
{
	struct vfio_group was;

	if (vfio_group_parse(mark, &was) < 0 || strcmp(was.m[0].address, func->address)) {
		dralet_ctx_warn(ctx, "%s: its vfio mark \"%.64s\" is unreadable; ignored",
				func->address, mark);
		return -EINVAL;
	}
	snprintf(buf, size, "%s", was.m[0].driver);
	return 0;
}

int vfio_form_add_marked(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
			 const struct dralet_pci_func *func, struct dralet_device *dev,
			 struct vfio_form *form)
{
	const char *name = dralet_device_name(dev);
	char set[80];
	int r;

	form->is_form = true;
	/* the native form is gone while the function is on vfio: this one owns
	 * the set, named after the native form */
	snprintf(set, sizeof(set), "%.*s", (int)(strlen(name) - 5), name);
	if ((r = dralet_device_set_counter_int(dev, set, fam->name, 1)) < 0 ||
	    (r = dralet_device_consume_counter_int(dev, set, fam->name, 1)) < 0 ||
	    (r = pcidev_device_add_vfio(ctx, dev, func)) < 0)
		return r;
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	return 0;
}

/* ---- prepare and unprepare ---- */

/* /dev/iommu and /dev/vfio/devices/vfioN when the kernel made the iommufd
 * cdev of the function (Documentation/driver-api/vfio.rst, "VFIO device
 * cdev"): a VMM may use either interface. */
static int edit_iommufd(struct dralet_backend_ctx *ctx, struct dralet_edits *edits,
			const struct dralet_pci_func *f)
{
	char rel[512], path[4096], dev_rel[64], node_path[DRALET_DEVNODE_PATH_MAX];
	char iommu_path[DRALET_DEVNODE_PATH_MAX];
	struct dralet_devnode node, iommu;
	struct dirent *de;
	DIR *dir;
	int r = 0;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vfio-dev", f->address);
	if (dralet_root_path(ctx, DRALET_ROOT_SYS, rel, path, sizeof(path)) < 0 ||
	    !(dir = opendir(path)))
		return 0;	/* no cdev: the group interface only */
	if (pcidev_misc_node(ctx, "iommu", "iommu", 0, 0, iommu_path, &iommu) < 0 ||
	    !iommu.path) {
		closedir(dir);
		return 0;
	}
	while ((de = readdir(dir)) && r >= 0) {
		unsigned major = 0, minor = 0;
		char numbers[32];

		if (strncmp(de->d_name, "vfio", 4))
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vfio-dev/%s/dev", f->address,
			 de->d_name);
		if (dralet_read_file(ctx, DRALET_ROOT_SYS, rel, numbers, sizeof(numbers)) > 0)
			sscanf(numbers, "%u:%u", &major, &minor);
		snprintf(dev_rel, sizeof(dev_rel), "vfio/devices/%.32s", de->d_name);
		if (dralet_devnode(ctx, dev_rel, major, minor, node_path, &node) < 0 || !node.path)
			continue;
		if ((r = dralet_edits_add_node(edits, &node, NULL)) >= 0)
			r = dralet_edits_add_node(edits, &iommu, NULL);
		break;
	}
	closedir(dir);
	return r;
}

int vfio_form_prepare(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
		      const struct vfio_form *form, struct dralet_device *dev,
		      struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	struct vfio_group now, was;
	char text[VFIO_GROUP_TEXT_MAX], mark[VFIO_GROUP_TEXT_MAX], key[32];
	int r;

	if ((r = vfio_group_read(ctx, f, &now)) < 0)
		return r;
	/* marked: the group is ours since an earlier prepare whose unprepare did
	 * not finish; what it had then is what goes back */
	if (!vfio_form_marked(ctx, fam, f->address, mark, sizeof(mark)) ||
	    vfio_group_parse(mark, &was) < 0) {
		struct dralet_devnode nodes[VFIO_FORM_HOST_NODES_MAX];

		for (size_t i = 0; i < form->n_host_nodes; i++)
			nodes[i] = (struct dralet_devnode){ form->host_nodes[i].path,
							    form->host_nodes[i].major,
							    form->host_nodes[i].minor };
		was = now;
		if ((r = vfio_group_check_free(ctx, &now, nodes, form->n_host_nodes)) < 0)
			return r;
	}
	if ((r = vfio_group_text(&was, text, sizeof(text))) < 0) {
		dralet_ctx_error(ctx, "%s: its IOMMU group's bindings do not fit the undo state",
				 f->address);
		return r;
	}
	undo_key(fam, key, sizeof(key));
	{
		const struct dralet_undo_value values[] = {
			{ key, f->address }, { UNDO_GROUP, text },
		};
		if ((r = dralet_undo_set_all(req->undo, values, 2)) < 0) {
			dralet_ctx_error(ctx, "%s: cannot record its bindings before rebinding it: %s",
					 f->address, strerror(-r));
			return r;
		}
	}
	if ((r = write_mark(ctx, fam, f->address, text)) < 0)
		return r;
	dralet_ctx_node_changed(ctx);	/* from here on it is published from the mark */
	if ((r = vfio_group_bind(ctx, &now, vfio_form_driver(ctx))) < 0 ||
	    (r = pcidev_edit_vfio(ctx, req->edits, dev, f)) < 0 ||
	    (r = edit_iommufd(ctx, req->edits, f)) < 0) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", dralet_ctx_error_message(ctx));
		if (vfio_form_unprepare(ctx, fam, req->undo) < 0)
			dralet_ctx_error(ctx, "%s; putting the group back failed too: %s", msg,
					 dralet_ctx_error_message(ctx));
		else
			dralet_ctx_error(ctx, "%s", msg);
		return r;
	}
	dralet_ctx_info(ctx, "%s: IOMMU group %d (%zu function%s) moved to vfio (was: %s)",
			f->address, now.group, now.n, now.n == 1 ? "" : "s", text);
	return 0;
}

int vfio_form_unprepare(struct dralet_backend_ctx *ctx, const struct vfio_form_family *fam,
			const struct dralet_undo *undo)
{
	char key[32];
	const char *text = dralet_undo_get(undo, UNDO_GROUP);
	const char *address;
	struct vfio_group was;
	int r;

	undo_key(fam, key, sizeof(key));
	address = dralet_undo_get(undo, key);
	if (!text || !address)
		return 0;	/* prepare changed nothing */
	if (vfio_group_parse(text, &was) < 0) {
		dralet_ctx_error(ctx, "%s: the recorded bindings \"%.64s\" are unreadable", address,
				 text);
		return -EINVAL;
	}
	r = vfio_group_restore(ctx, &was);
	if (r < 0)
		return r;	/* the mark stays: the function is still published, and retried */
	remove_mark(ctx, fam, address);
	dralet_ctx_node_changed(ctx);	/* the native form comes back */
	dralet_ctx_info(ctx, "%s: IOMMU group given back (%s)", address, text);
	return 0;
}
