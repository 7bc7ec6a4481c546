/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vfio form of a GPU (gpu.h; docs/sharing.md, "Whole-device VFIO
 * passthrough"). A GPU on its vendor driver is published twice when the
 * backend's option vfio is "true": natively ("gpu-<address>", for
 * containers) and in its vfio form ("gpu-<address>-vfio", type "vfio", for
 * VMs: KubeVirt, confidential VMs), one counter between them so that only
 * one is allocated. Preparing the vfio form moves the GPU's whole IOMMU
 * group to vfio (backends/common/vfio_group.h); unprepare puts it back.
 *
 * Crash safety: the group's bindings go into the undo state ("vfio.group")
 * before the first rebinding, and into the mark <state dir>/gpu-vfio-<address>
 * right after, so a restart finds the GPU (no longer on its vendor driver,
 * so the gpu-vfio backend publishes it from the mark under the same name)
 * and the rollback or the kubelet's unprepare restores it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dralet/counters.h>
#include <dralet/pci_ctl.h>

#include "gpu.h"
#include "../common/pcidev.h"
#include "../common/vfio_group.h"

#define UNDO_GROUP "vfio.group"
#define UNDO_GPU "vfio.gpu"
#define VFIO_PCI "vfio-pci"
#define COUNTER "gpu"
#define IOMMUFD_MAJOR_MISC 10

bool gpu_vfio_form_enabled(struct dralet_backend_ctx *ctx)
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

static const char *vfio_driver(struct dralet_backend_ctx *ctx)
{
	const char *v = dralet_ctx_option(ctx, "vfioDriver");

	return v && *v ? v : VFIO_PCI;
}

bool gpu_is_vfio_form(const struct dralet_device *dev)
{
	const struct gpu_info *info = gpu_info_of(dev);

	return info && info->vfio_form;
}

/* A node that is the function's own (not one every GPU shares, like
 * /dev/nvidiactl or /dev/kfd): a host process holding it uses this GPU. */
static bool own_node(const char *path)
{
	return !strncmp(path, "/dev/dri/", 9) || !strncmp(path, "/dev/accel/", 11) ||
	       (!strncmp(path, "/dev/nvidia", 11) && path[11] >= '0' && path[11] <= '9');
}

/* The attributes every vfio form carries. */
static struct gpu_info *new_form(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
				 const char *native_driver, struct dralet_device **ret)
{
	struct gpu_info *info;
	char pci_class[16];

	if (dralet_device_new(ctx, f, "gpu", "vfio", ret) < 0 ||
	    !(info = gpu_info_attach(*ret, GPU_TYPE_FULL)))
		return NULL;
	info->vfio_form = true;
	gpu_set_common(*ret, "vfio");
	dralet_device_set_string(*ret, "driver", VFIO_PCI);
	dralet_device_set_string(*ret, "nativeDriver", native_driver);
	snprintf(pci_class, sizeof(pci_class), "0x%04x", dralet_pci_class_sub(f));
	dralet_device_set_string(*ret, "pciClass", pci_class);
	/* a shared group hands its other functions to the VM too */
	dralet_device_set_bool(*ret, "vfioCapable", pcidev_vfio_capable(ctx, f));
	gpu_set_defaults(*ret);
	return info;
}

int gpu_vfio_form_add(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		      struct dralet_device *native)
{
	const char *set = dralet_device_name(native);
	struct dralet_device *dev;
	struct gpu_info *info;
	int r = 0;

	if (f->iommu_group < 0) {
		dralet_ctx_warn(ctx, "%s: no IOMMU group (IOMMU off); its vfio form is not "
				     "published", f->address);
		return 0;
	}
	if (!(info = new_form(ctx, f, f->driver ? f->driver : "", &dev)))
		return -ENOMEM;
	/* what the vendor backend knows better than the PCI name database, and
	 * the memory a VM gets with the whole GPU */
	const struct dralet_attr *product = dralet_device_find_attr(native, "productName");
	if (product && product->string_value)
		dralet_device_set_string(dev, "productName", product->string_value);
	for (size_t i = 0; i < dralet_device_n_capacities(native); i++) {
		const struct dralet_capacity *c = dralet_device_capacity(native, i);
		if (!strcmp(c->name, "memory"))
			dralet_device_set_capacity(dev, "memory", c->quantity);
	}
	for (size_t i = 0; i < dralet_device_n_nodes(native) && info->n_host_nodes < 8; i++) {
		const struct dralet_devnode *n = dralet_device_node(native, i);
		if (n->path && own_node(n->path) && strlen(n->path) < sizeof(info->host_nodes[0].path)) {
			struct gpu_host_node *h = &info->host_nodes[info->n_host_nodes++];
			snprintf(h->path, sizeof(h->path), "%s", n->path);
			h->major = n->major;
			h->minor = n->minor;
		}
	}
	/* one counter between the two forms; a GPU already carved by counters
	 * (dynamic MIG) gives its vfio form everything the whole GPU consumes */
	if (!dralet_device_n_consumptions(native)) {
		if ((r = dralet_device_set_counter_int(native, set, COUNTER, 1)) < 0 ||
		    (r = dralet_device_consume_counter_int(native, set, COUNTER, 1)) < 0)
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

static bool mark_path(struct dralet_backend_ctx *ctx, const char *address, char *buf,
		      size_t size)
{
	const char *dir = dralet_ctx_state_dir(ctx);

	return dir && snprintf(buf, size, "%s/gpu-vfio-%s", dir, address) < (int)size;
}

bool gpu_vfio_form_marked(struct dralet_backend_ctx *ctx, const char *address, char *buf,
			  size_t size)
{
	char path[4200];
	ssize_t n;
	int fd;

	if (!mark_path(ctx, address, path, sizeof(path)) ||
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
static int write_mark(struct dralet_backend_ctx *ctx, const char *address, const char *text)
{
	char path[4200], tmp[4300];
	size_t len = strlen(text);
	int fd, r = 0;

	if (!mark_path(ctx, address, path, sizeof(path)))
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

static void remove_mark(struct dralet_backend_ctx *ctx, const char *address)
{
	char path[4200];

	if (mark_path(ctx, address, path, sizeof(path)))
		unlink(path);
}

int gpu_vfio_form_publish_marked(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
				 const char *mark)
{
	struct vfio_group was;
	struct dralet_device *dev;
	char set[80];
	int r;

	if (vfio_group_parse(mark, &was) < 0 || strcmp(was.m[0].address, f->address)) {
		dralet_ctx_warn(ctx, "%s: its gpu-vfio mark \"%.64s\" is unreadable; ignored",
				f->address, mark);
		return 0;
	}
	if (!new_form(ctx, f, was.m[0].driver, &dev))
		return -ENOMEM;
	/* the native form is gone while the GPU is on vfio: this one owns the set */
	snprintf(set, sizeof(set), "%.*s", (int)(strlen(dralet_device_name(dev)) - 5),
		 dralet_device_name(dev));
	if ((r = dralet_device_set_counter_int(dev, set, COUNTER, 1)) < 0 ||
	    (r = dralet_device_consume_counter_int(dev, set, COUNTER, 1)) < 0 ||
	    (r = pcidev_device_add_vfio(ctx, dev, f)) < 0)
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

int gpu_vfio_form_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  struct dralet_prepare_req *req)
{
	const struct dralet_pci_func *f = dralet_device_pci(dev);
	const struct gpu_info *info = gpu_info_of(dev);
	struct vfio_group now, was;
	char text[VFIO_GROUP_TEXT_MAX], mark[VFIO_GROUP_TEXT_MAX];
	int r;

	if ((r = gpu_validate_config_no_sharing(ctx, req->config)) < 0)
		return r;
	if ((r = vfio_group_read(ctx, f, &now)) < 0)
		return r;
	/* marked: the group is ours since an earlier prepare whose unprepare did
	 * not finish; what it had then is what goes back */
	if (!gpu_vfio_form_marked(ctx, f->address, mark, sizeof(mark)) ||
	    vfio_group_parse(mark, &was) < 0) {
		struct dralet_devnode nodes[8];

		for (size_t i = 0; i < info->n_host_nodes; i++)
			nodes[i] = (struct dralet_devnode){ info->host_nodes[i].path,
							    info->host_nodes[i].major,
							    info->host_nodes[i].minor };
		was = now;
		if ((r = vfio_group_check_free(ctx, &now, nodes, info->n_host_nodes)) < 0)
			return r;
	}
	if ((r = vfio_group_text(&was, text, sizeof(text))) < 0) {
		dralet_ctx_error(ctx, "%s: its IOMMU group's bindings do not fit the undo state",
				 f->address);
		return r;
	}
	{
		const struct dralet_undo_value values[] = {
			{ UNDO_GPU, f->address }, { UNDO_GROUP, text },
		};
		if ((r = dralet_undo_set_all(req->undo, values, 2)) < 0) {
			dralet_ctx_error(ctx, "%s: cannot record its bindings before rebinding it: %s",
					 f->address, strerror(-r));
			return r;
		}
	}
	if ((r = write_mark(ctx, f->address, text)) < 0)
		return r;
	dralet_ctx_node_changed(ctx);	/* from here on it is published from the mark */
	if ((r = vfio_group_bind(ctx, &now, vfio_driver(ctx))) < 0)
		goto undo;
	if ((r = pcidev_edit_vfio(ctx, req->edits, dev, f)) < 0 ||
	    (r = edit_iommufd(ctx, req->edits, f)) < 0 ||
	    (r = gpu_prepare_env(ctx, dev, req)) < 0)
		goto undo;
	dralet_ctx_info(ctx, "%s: IOMMU group %d (%zu function%s) moved to vfio (was: %s)",
			f->address, now.group, now.n, now.n == 1 ? "" : "s", text);
	return 0;
undo:
	{
		char msg[512];
		snprintf(msg, sizeof(msg), "%s", dralet_ctx_error_message(ctx));
		if (gpu_vfio_form_unprepare(ctx, req->undo) < 0)
			dralet_ctx_error(ctx, "%s; putting the group back failed too: %s", msg,
					 dralet_ctx_error_message(ctx));
		else
			dralet_ctx_error(ctx, "%s", msg);
	}
	return r;
}

int gpu_vfio_form_unprepare(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo)
{
	const char *text = dralet_undo_get(undo, UNDO_GROUP);
	const char *address = dralet_undo_get(undo, UNDO_GPU);
	struct vfio_group was;
	int r;

	if (!text || !address)
		return 0;	/* prepare changed nothing */
	if (vfio_group_parse(text, &was) < 0) {
		dralet_ctx_error(ctx, "%s: the recorded bindings \"%.64s\" are unreadable", address,
				 text);
		return -EINVAL;
	}
	r = vfio_group_restore(ctx, &was);
	if (r < 0)
		return r;	/* the mark stays: the GPU is still published, and retried */
	remove_mark(ctx, address);
	dralet_ctx_node_changed(ctx);	/* the native form comes back */
	dralet_ctx_info(ctx, "%s: IOMMU group given back (%s)", address, text);
	return 0;
}

int gpu_prepare_plain_or_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			      struct dralet_prepare_req *req)
{
	return gpu_is_vfio_form(dev) ? gpu_vfio_form_prepare(ctx, dev, req)
				     : gpu_prepare_plain(ctx, dev, req);
}

int gpu_unprepare_vfio(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_claim_ref *claim, const struct dralet_undo *undo)
{
	(void)dev;
	(void)claim;
	return gpu_vfio_form_unprepare(ctx, undo);
}
