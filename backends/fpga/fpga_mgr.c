/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga_mgr.h: the devices of an SoC's FPGA managers (no PCI function) and
 * loading a claim's raw image into one (docs/fpga.md 4, "fpga_manager").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dralet/pci_ctl.h>

#include "bitstream.h"
#include "fpga.h"
#include "fpga_mgr.h"
#include "../common/pcidev.h"

#define OVERLAYS "kernel/config/device-tree/overlays"
#define DEFAULT_FIRMWARE_DIR "/lib/firmware"

/* A device's private data: its manager (valid while the device lives). */
struct fpga_mgr_dev {
	char manager[64];		/* "fpga0" */
	char parent[128];		/* the platform device: "firmware:zynqmp-firmware:pcap" */
	char compat[40];		/* the SoC's region's compat_id, "" when none */
	char what[96];			/* "fpga_manager fpga0" */
	struct fpga_stranded stranded;
};

static bool sys_exists(const struct dralet_backend_ctx *ctx, const char *rel)
{
	char path[PATH_MAX];

	return dralet_root_path(ctx, DRALET_ROOT_SYS, rel, path, sizeof(path)) == 0 &&
	       access(path, F_OK) == 0;
}

/* <sys>/@dir/@name/@attr into @buf ("" when unreadable); length or -errno. */
static int read_sys(struct dralet_backend_ctx *ctx, char *buf, size_t size, const char *dir,
		    const char *name, const char *attr)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s/%s", dir, name, attr);
	buf[0] = '\0';
	int r = dralet_read_file(ctx, DRALET_ROOT_SYS, rel, buf, size);
	if (r < 0)
		buf[0] = '\0';
	return r;
}

/* Whether a sysfs path component is a PCI address ("0000:3b:00.0"). */
static bool pci_component(const char *s, size_t n)
{
	unsigned d, b, v, f;
	char tail, comp[32];

	if (n < 12 || n >= sizeof(comp))
		return false;
	memcpy(comp, s, n);
	comp[n] = '\0';
	return sscanf(comp, "%x:%x:%x.%x%c", &d, &b, &v, &f, &tail) == 4;
}

/* The platform device a class device's link ends below, or false when the
 * link passes through a PCI function (the probe of that function has it). */
static bool platform_parent(const char *link, const char *cls, char *parent, size_t size)
{
	const char *p = link, *prev = NULL, *prev_end = NULL;

	while (*p) {
		size_t n = strcspn(p, "/");
		if (pci_component(p, n))
			return false;
		if (n == strlen(cls) && !strncmp(p, cls, n) && prev) {
			snprintf(parent, size, "%.*s", (int)(prev_end - prev), prev);
			return true;
		}
		prev = p;
		prev_end = p + n;
		p += n;
		p += *p == '/';
	}
	return false;
}

/* Calls @fn for each class device of @cls that belongs to no PCI function. */
static void for_each_platform(struct dralet_backend_ctx *ctx, const char *cls,
			      void (*fn)(struct dralet_backend_ctx *, const char *, const char *,
					 void *),
			      void *userdata)
{
	char dir[PATH_MAX], rel[PATH_MAX], link[PATH_MAX], parent[128];
	struct dirent *de;
	DIR *d;

	snprintf(rel, sizeof(rel), "class/%s", cls);
	if (dralet_root_path(ctx, DRALET_ROOT_SYS, rel, dir, sizeof(dir)) < 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX + 256];
		ssize_t n;
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (platform_parent(link, cls, parent, sizeof(parent)))
			fn(ctx, de->d_name, parent, userdata);
	}
	closedir(d);
}

static void first_compat(struct dralet_backend_ctx *ctx, const char *name, const char *parent,
			 void *userdata)
{
	char *compat = userdata, buf[80];

	(void)parent;
	if (!compat[0] && read_sys(ctx, buf, sizeof(buf), "class/fpga_region", name, "compat_id") > 0)
		fpga_id_normalize(buf, compat, 40);
}

/* ---- the firmware directory and dralet's marker ---- */

/* The directory the kernel looks for firmware in first: option firmwareDir,
 * else firmware_class's path parameter, else /lib/firmware. */
static void firmware_dir(struct dralet_backend_ctx *ctx, char *buf, size_t size)
{
	const char *opt = dralet_ctx_option(ctx, "firmwareDir");
	char param[PATH_MAX];

	if (opt && *opt)
		snprintf(buf, size, "%s", opt);
	else if (dralet_read_file(ctx, DRALET_ROOT_SYS, "module/firmware_class/parameters/path",
				  param, sizeof(param)) > 0 && param[0] == '/')
		snprintf(buf, size, "%s", param);
	else
		snprintf(buf, size, "%s", DEFAULT_FIRMWARE_DIR);
}

static void marker_path(struct dralet_backend_ctx *ctx, const struct fpga_mgr_dev *m, char *buf,
			size_t size)
{
	char dir[PATH_MAX];

	firmware_dir(ctx, dir, sizeof(dir));
	if (snprintf(buf, size, "%s/dralet-%s.loaded", dir, m->manager) >= (int)size)
		buf[0] = '\0';
}

/* Writes @len bytes to @path through a temporary file and a rename. */
static int put_file(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX + 8];
	const char *p = data;
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (len && r == 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/* ---- the region ops (self: struct fpga_mgr_dev) ---- */

static const char *mgr_loaded(struct dralet_backend_ctx *ctx, const void *self, char *buf,
			      size_t size)
{
	const struct fpga_mgr_dev *m = self;
	char state[64], path[PATH_MAX + 64], text[80], sha[FPGA_SHA256_HEX], why[160];
	struct fpga_image img;
	ssize_t n;
	int fd;

	if (read_sys(ctx, state, sizeof(state), "class/fpga_manager", m->manager, "state") < 0 ||
	    fpga_mgr_state_classify(state) != FPGA_MGR_STATE_OPERATING)
		return NULL;
	marker_path(ctx, m, path, sizeof(path));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	if (!fpga_mgr_marker_parse(text, sha) ||
	    fpga_store_describe(fpga_store_dir(ctx), sha, &img, why, sizeof(why)) < 0 ||
	    !img.accelerator_id[0])
		return NULL;
	snprintf(buf, size, "%s", img.accelerator_id);
	return buf;
}

/* "state \"write error\", status: reconfig CRC error" of the manager now. */
static void state_words(struct dralet_backend_ctx *ctx, const struct fpga_mgr_dev *m, char *buf,
			size_t size)
{
	char state[64], status[256];

	if (read_sys(ctx, state, sizeof(state), "class/fpga_manager", m->manager, "state") < 0)
		snprintf(state, sizeof(state), "(unreadable)");
	if (read_sys(ctx, status, sizeof(status), "class/fpga_manager", m->manager, "status") < 0)
		status[0] = '\0';
	for (char *nl; (nl = strchr(status, '\n'));)
		*nl = ';';
	snprintf(buf, size, "state \"%s\"%s%s", state, status[0] ? ", status: " : "", status);
}

/* Waits (at most FPGA_MGR_WAIT_MS) for the manager to read operating. */
static int wait_operating(struct dralet_backend_ctx *ctx, const struct fpga_mgr_dev *m,
			  const char *image)
{
	char state[64], words[400];

	for (int waited = 0;; waited += 10) {
		int kind = read_sys(ctx, state, sizeof(state), "class/fpga_manager", m->manager,
				    "state") < 0 ? FPGA_MGR_STATE_IDLE : fpga_mgr_state_classify(state);
		if (kind == FPGA_MGR_STATE_OPERATING)
			return 0;
		if (kind != FPGA_MGR_STATE_BUSY || waited >= FPGA_MGR_WAIT_MS)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	state_words(ctx, m, words, sizeof(words));
	dralet_ctx_error(ctx, "after loading %s the manager reads %s, not \"operating\"", image,
			 words);
	return -EIO;
}

static int copy_overlay(struct dralet_backend_ctx *ctx, const char *dir, const char *name)
{
	char src[PATH_MAX + 64], dst[PATH_MAX + 64], *data = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd, r = 0;

	snprintf(src, sizeof(src), "%s/%s", fpga_store_dir(ctx), name);
	if ((fd = open(src, O_RDONLY | O_CLOEXEC)) < 0) {
		r = -errno;
		dralet_ctx_error(ctx, "the overlay %s its manifest names is not in the store %s: %s",
				 name, fpga_store_dir(ctx), strerror(-r));
		return r;
	}
	for (;;) {
		if (len == cap) {
			char *more = cap < (1u << 20) ? realloc(data, cap = cap ? cap * 2 : 4096) : NULL;
			if (!more) {
				r = cap >= (1u << 20) ? -EFBIG : -ENOMEM;
				break;
			}
			data = more;
		}
		n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : 0;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	if (r == 0 && (r = put_file(dst, data, len)) < 0)
		dralet_ctx_error(ctx, "copying overlay %s to %s failed: %s", name, dir, strerror(-r));
	else if (r < 0)
		dralet_ctx_error(ctx, "reading overlay %s from the store failed: %s", name,
				 strerror(-r));
	free(data);
	return r;
}

static struct fpga_mgr_offer offer_of(struct dralet_backend_ctx *ctx, const struct fpga_mgr_dev *m)
{
	char rel[160];

	snprintf(rel, sizeof(rel), "class/fpga_manager/%s/firmware", m->manager);
	return (struct fpga_mgr_offer){
		.manager = m->manager,
		.firmware_attr = sys_exists(ctx, rel),
		.configfs_overlays = sys_exists(ctx, OVERLAYS),
	};
}

static int mgr_write(struct dralet_backend_ctx *ctx, const void *self,
		     const struct fpga_loaded *img)
{
	const struct fpga_mgr_dev *m = self;
	struct fpga_mgr_offer k = offer_of(ctx, m);
	char why[400], dir[PATH_MAX], marker[PATH_MAX + 64], file[PATH_MAX + 128], image[128];
	char overlay[96], status[64];
	int way = fpga_mgr_choose(&k, &img->image, why, sizeof(why)), r;

	if (way == FPGA_MGR_WAY_NONE) {
		dralet_ctx_error(ctx, "%s", why);
		return -EOPNOTSUPP;
	}
	firmware_dir(ctx, dir, sizeof(dir));
	marker_path(ctx, m, marker, sizeof(marker));
	/* from here on what the region holds is unknown until the load is over */
	if (unlink(marker) < 0 && errno != ENOENT) {
		r = -errno;
		dralet_ctx_error(ctx, "cannot remove %s: %s", marker, strerror(-r));
		return r;
	}
	if (way == FPGA_MGR_WAY_FIRMWARE)
		snprintf(image, sizeof(image), "dralet-%.16s.bin", img->sha256);
	else
		snprintf(image, sizeof(image), "%s", img->image.firmware_name);
	snprintf(file, sizeof(file), "%s/%s", dir, image);
	r = put_file(file, img->data + img->image.payload_offset, img->image.payload_size);
	if (r < 0) {
		dralet_ctx_error(ctx, "copying the image to %s (the kernel's firmware search path; "
				 "option firmwareDir) failed: %s", file, strerror(-r));
		return r;
	}
	if (way == FPGA_MGR_WAY_FIRMWARE) {
		r = dralet_fpga_mgr_load(ctx, m->manager, img->image.mgr_flags, image);
		if (r == -ENOENT)	/* the attribute is there (fpga_mgr_choose) */
			dralet_ctx_error(ctx, "the kernel did not find %s on its firmware search "
					 "path (%s; option firmwareDir)", image, dir);
	} else {
		snprintf(overlay, sizeof(overlay), "dralet-%s", m->manager);
		if ((r = copy_overlay(ctx, dir, img->image.overlay)) == 0 &&
		    (r = dralet_fpga_overlay(ctx, overlay, NULL)) == 0 &&
		    (r = dralet_fpga_overlay(ctx, overlay, img->image.overlay)) == 0 &&
		    (read_sys(ctx, status, sizeof(status), OVERLAYS, overlay, "status") < 0 ||
		     strcmp(status, "applied"))) {
			dralet_ctx_error(ctx, "the kernel did not apply device-tree overlay %s (%s): its "
					 "status reads \"%s\"", overlay, img->image.overlay, status);
			r = -EIO;
		}
	}
	if (r < 0) {
		char cause[400], words[400];
		snprintf(cause, sizeof(cause), "%s", dralet_ctx_error_message(ctx));
		state_words(ctx, m, words, sizeof(words));
		dralet_ctx_error(ctx, "%s; the manager reads %s", cause, words);
		return r;
	}
	if ((r = wait_operating(ctx, m, image)) < 0)
		return r;
	char text[FPGA_SHA256_HEX + 1];
	snprintf(text, sizeof(text), "%s\n", img->sha256);
	if ((r = put_file(marker, text, strlen(text))) < 0)
		dralet_ctx_error(ctx, "the image is loaded, but recording it in %s failed: %s", marker,
				 strerror(-r));
	return r;
}

/* onUnprepare reset: the overlay removed (its fpga-region then holds nothing
 * dralet knows), the marker with it. */
static int mgr_clear(struct dralet_backend_ctx *ctx, const void *self)
{
	const struct fpga_mgr_dev *m = self;
	char overlay[96], marker[PATH_MAX + 64];
	int r;

	snprintf(overlay, sizeof(overlay), "dralet-%s", m->manager);
	marker_path(ctx, m, marker, sizeof(marker));
	if (unlink(marker) < 0 && errno != ENOENT) {
		r = -errno;
		dralet_ctx_error(ctx, "%s: cannot remove %s: %s", m->what, marker, strerror(-r));
		return r;
	}
	if ((r = dralet_fpga_overlay(ctx, overlay, NULL)) < 0)
		return r;
	dralet_ctx_node_changed(ctx);
	return 0;
}

static struct fpga_region mgr_region(const struct fpga_mgr_dev *m, bool can_clear)
{
	return (struct fpga_region){
		.what = m->what,
		.kind = FPGA_IMAGE_RAW,
		.interface_id = m->compat[0] ? m->compat : NULL,
		.loaded = mgr_loaded,
		.write = mgr_write,
		.clear = can_clear ? mgr_clear : NULL,
		.self = m,
	};
}

/* ---- the devices ---- */

static int health_now(struct dralet_backend_ctx *ctx, const struct fpga_mgr_dev *m)
{
	char state[64], status[256];

	if (read_sys(ctx, state, sizeof(state), "class/fpga_manager", m->manager, "state") < 0)
		return DRALET_HEALTH_UNHEALTHY;	/* gone */
	if (read_sys(ctx, status, sizeof(status), "class/fpga_manager", m->manager, "status") > 0) {
		dralet_ctx_error(ctx, "%s reports %s", m->what, status);
		return DRALET_HEALTH_UNHEALTHY;
	}
	switch (fpga_mgr_state_classify(state)) {
	case FPGA_MGR_STATE_FAILED:
		dralet_ctx_error(ctx, "%s reads state \"%s\"", m->what, state);
		return DRALET_HEALTH_UNHEALTHY;
	case FPGA_MGR_STATE_BUSY:
		return DRALET_HEALTH_UNKNOWN;
	default:
		return DRALET_HEALTH_HEALTHY;
	}
}

static void make_device(struct dralet_backend_ctx *ctx, const char *name, const char *parent,
			void *userdata)
{
	const char *compat = userdata;
	struct fpga_mgr_dev *m;
	struct dralet_device *dev;
	char buf[160], accel[80];

	if (dralet_device_new(ctx, NULL, "fpga", name, &dev) < 0)
		return;
	if (!(m = calloc(1, sizeof(*m))))
		return;
	snprintf(m->manager, sizeof(m->manager), "%s", name);
	snprintf(m->parent, sizeof(m->parent), "%s", parent);
	snprintf(m->compat, sizeof(m->compat), "%s", compat);
	snprintf(m->what, sizeof(m->what), "fpga_manager %s", name);
	dralet_device_set_private(dev, m, free);
	fpga_stranded_load(ctx, &m->stranded, dralet_device_name(dev));
	dralet_device_set_string(dev, "framework", "fpga-manager");
	dralet_device_set_string(dev, "platformDevice", parent);
	if (read_sys(ctx, buf, sizeof(buf), "class/fpga_manager", name, "name") > 0)
		dralet_device_set_string(dev, "managerName", buf);
	if (read_sys(ctx, buf, sizeof(buf), "class/fpga_manager", name, "state") > 0)
		dralet_device_set_string(dev, "managerState", buf);
	struct fpga_mgr_offer k = offer_of(ctx, m);
	dralet_device_set_string(dev, "loadMechanism", k.firmware_attr ? "firmware"
						       : k.configfs_overlays ? "overlay" : "none");
	if (m->compat[0]) {
		fpga_set_id_attr(ctx, dev, "regionCompatID", m->compat);
		fpga_set_id_attr(ctx, dev, "interfaceID", m->compat);
	}
	if (mgr_loaded(ctx, m, accel, sizeof(accel))) {
		fpga_set_id_attr(ctx, dev, "acceleratorID", accel);
		fpga_set_loaded_attr(ctx, dev, FPGA_IMAGE_RAW, accel, m->compat);
	}
	dralet_device_set_health(dev, fpga_mgr_health(ctx, dev));
}

int fpga_mgr_discover(struct dralet_backend_ctx *ctx)
{
	char compat[40] = "";

	for_each_platform(ctx, "fpga_region", first_compat, compat);
	for_each_platform(ctx, "fpga_manager", make_device, compat);
	return 0;
}

int fpga_mgr_health(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	struct fpga_mgr_dev *m = dralet_device_private(dev);
	int health = health_now(ctx, m);

	if (health != DRALET_HEALTH_HEALTHY || !m->stranded.set)
		return health;
	struct fpga_region rg = mgr_region(m, false);
	return fpga_stranded_health(ctx, &rg, &m->stranded);
}

int fpga_mgr_prepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		     struct dralet_prepare_req *req)
{
	struct fpga_mgr_dev *m = dralet_device_private(dev);
	struct dralet_edits *e = req->edits;
	char accel[80], norm[40];
	const char *now = mgr_loaded(ctx, m, accel, sizeof(accel));
	struct fpga_identity id = { .what = m->what, .interface_id = m->compat[0] ? m->compat : NULL,
				    .afu_id = now };
	struct fpga_config cfg;
	struct fpga_loaded img = { 0 };
	bool loaded;
	int r;

	r = fpga_claim_bitstream(ctx, req, &id, &cfg, FPGA_IMAGE_RAW, &img, &loaded);
	if (r < 0)
		goto out;
	if (cfg.has_bitstream && !img.image.accelerator_id[0]) {
		dralet_ctx_error(ctx, "%s: bitstream %s has no acceleratorID in its manifest, which "
				 "the region's image is known by once loaded: not loading it", m->what,
				 img.sha256);
		r = -EINVAL;
		goto out;
	}
	if (cfg.has_bitstream)
		id.afu_id = img.image.accelerator_id;
	r = fpga_config_check(ctx, req->config, &id, &cfg);
	if (r >= 0 && cfg.has_bitstream) {
		struct fpga_mgr_offer k = offer_of(ctx, m);
		char why[400];
		int way = fpga_mgr_choose(&k, &img.image, why, sizeof(why));
		struct fpga_region rg = mgr_region(m, way == FPGA_MGR_WAY_OVERLAY);
		if (way == FPGA_MGR_WAY_NONE && !loaded) {	/* before anything is recorded */
			dralet_ctx_error(ctx, "%s: cannot load bitstream %s: %s", m->what, img.sha256,
					 why);
			r = -EOPNOTSUPP;
			goto out;
		}
		r = fpga_load_for_claim(ctx, &rg, req, &cfg, &img, loaded, now);
		fpga_stranded_note(ctx, &rg, req->undo, r, &m->stranded);
	}
	if (r < 0)
		goto out;
	r = pcidev_env(e, dev, "MANAGER", m->manager);
	if (r >= 0)
		r = pcidev_env(e, dev, "PLATFORM_DEVICE", m->parent);
	if (r >= 0 && m->compat[0])
		r = pcidev_env(e, dev, "INTERFACE_ID", m->compat);
	if (r >= 0 && id.afu_id && fpga_id_normalize(id.afu_id, norm, sizeof(norm)))
		r = pcidev_env(e, dev, "ACCELERATOR_ID", norm);
	if (r >= 0 && img.data)
		r = pcidev_env(e, dev, "BITSTREAM_SHA256", img.sha256);
	if (r < 0)
		dralet_ctx_error(ctx, "%s: preparing the container edits failed: %s", m->what,
				 strerror(-r));
out:
	fpga_store_unload(&img);
	return r < 0 ? r : 0;
}

int fpga_mgr_unprepare(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
		       const struct dralet_undo *undo)
{
	struct fpga_mgr_dev *m = dralet_device_private(dev);
	struct fpga_region rg = mgr_region(m, true);
	int r = fpga_restore(ctx, &rg, undo);

	fpga_stranded_note(ctx, &rg, undo, r, &m->stranded);
	return r;
}
