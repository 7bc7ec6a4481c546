/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The nvidia backend: NVIDIA GPUs bound to the nvidia driver, as full GPUs
 * (MIG off) or as their MIG devices (MIG on). Facts come from PCI, from
 * /proc/driver/nvidia and, when libnvidia-ml loads, from NVML.
 *
 * Options: nvmlLibrary (default: the driver's own below driverRoot, else
 * libnvidia-ml.so.1), driverRoot,
 * hostDriverRoot, nvidiaSmi (nvidia_libs.c), sharing (nvidia_sharing.c). Attribute reference:
 * docs/attributes-gpu.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_backends.h"
#include "nvidia.h"
#include "../common/sharing_option.h"

static const char *const brand_names[] = {
	"Unknown", "Quadro", "Tesla", "NVS", "GRID", "GeForce", "TITAN", "NVIDIA vApps",
	"NVIDIA vPC", "NVIDIA vCS", "NVIDIA vWS", "NVIDIA Cloud Gaming", "Quadro RTX",
	"NVIDIA RTX", "NVIDIA", "GeForce RTX", "TITAN RTX",
};

static const char *const arch_names[] = {
	[2] = "Kepler", [3] = "Maxwell", [4] = "Pascal", [5] = "Volta", [6] = "Turing",
	[7] = "Ampere", [8] = "Ada", [9] = "Hopper", [10] = "Blackwell",
};

static const struct dralet_option nvidia_options[] = {
	{ "nvmlLibrary", DRALET_OPTION_TRUSTED_FILE },	/* dlopen'ed */
	{ "driverRoot", 0 },
	{ "hostDriverRoot", 0 },
	{ "nvidiaSmi", DRALET_OPTION_TRUSTED_FILE },	/* run by time-slicing */
	{ "dynamicMig", 0 },	/* "false": MIG-mode GPUs without instances publish nothing */
	{ "migStateDir", 0 },	/* where dynamic MIG GPUs are marked (nvidia_dynmig.c) */
	SHARING_OPTION,					/* nvidia_sharing.c */
	VFIO_FORM_OPTIONS,				/* gpu_vfio_form.c */
	{ NULL, 0 },
};

/* An NVIDIA GPU (nvidia_ids) driven by nvidia: on vfio-pci or nouveau it is
 * not ours to drive. */
static int nvidia_filter(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			 const struct dralet_pci_id *id, int score)
{
	(void)ctx;
	(void)id;
	return f->driver && !strcmp(f->driver, "nvidia") ? score : 0;
}

const char *nvidia_driver_version(const struct nvidia_state *st)
{
	return st->nvml_driver_version[0] ? st->nvml_driver_version : st->proc_driver_version;
}

static int nvidia_init(struct dralet_backend_ctx *ctx, void **ret_state)
{
	struct nvidia_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->major = dralet_char_major(ctx, "nvidia-frontend");
	if (st->major <= 0)
		st->major = dralet_char_major(ctx, "nvidia");
	if (st->major <= 0)
		st->major = NVIDIA_DEFAULT_MAJOR;
	st->uvm_major = dralet_char_major(ctx, "nvidia-uvm");
	st->caps_major = dralet_char_major(ctx, "nvidia-caps");
	pthread_mutex_init(&st->caps_lock, NULL);
	pthread_mutex_init(&st->mig_lock, NULL);
	nvidia_proc_driver_version(ctx, st->proc_driver_version, sizeof(st->proc_driver_version));
	nvidia_roots_init(ctx, st);
	*ret_state = st;
	return 0;
}

static void nvidia_fini(void *state)
{
	struct nvidia_state *st = state;

	if (!st)
		return;
	nvidia_watch_clear(st);	/* remove ran for every device; this is the rest */
	nvml_close(st->nvml);
	free(st->caps);
	pthread_mutex_destroy(&st->caps_lock);
	pthread_mutex_destroy(&st->mig_lock);
	free(st->dynamic);
	free(st);
}

/*
 * The NVML library to load: the option nvmlLibrary; else the running
 * driver's own libnvidia-ml.so.<version> below the driver root (the host's
 * files, mounted into the agent's container: driverRoot /host), when only
 * root can change it; else the loader's libnvidia-ml.so.1.
 */
static const char *nvml_library(struct dralet_backend_ctx *ctx, const struct nvidia_state *st,
				char *found, size_t size)
{
	const char *opt = dralet_ctx_option(ctx, "nvmlLibrary");
	char why[512];

	if (opt)
		return opt;
	if (!nvidia_driver_lib(st, "libnvidia-ml", found, size))
		return NVIDIA_NVML_DEFAULT;
	if (dralet_trusted_file(found, why, sizeof(why)) < 0) {
		dralet_ctx_warn(ctx, "not loading the driver's NVML %s: %s", found, why);
		return NVIDIA_NVML_DEFAULT;
	}
	return found;
}

/* NVML is opened at the first NVIDIA GPU, so nodes without one never warn. */
static void nvidia_open_nvml(struct dralet_backend_ctx *ctx, struct nvidia_state *st)
{
	const char *opt = dralet_ctx_option(ctx, "nvmlLibrary");
	char err[512], found[4096];
	int r, v;

	if (st->nvml_tried)
		return;
	st->nvml_tried = true;
	r = nvml_open(nvml_library(ctx, st, found, sizeof(found)), &st->nvml, err, sizeof(err));
	if (r == -ENOENT) {
		/* no library: proc facts only; say so only when it was asked for */
		if (opt)
			dralet_ctx_warn(ctx, "nvmlLibrary %s cannot be loaded (%s); publishing "
					     "procfs facts only", opt, err);
		return;
	}
	if (r < 0) {
		dralet_ctx_warn(ctx, "NVML unusable (%s); publishing procfs facts only", err);
		return;
	}
	if (st->nvml->system_driver_version &&
	    st->nvml->system_driver_version(st->nvml_driver_version,
					    sizeof(st->nvml_driver_version)) != NVML_OK)
		st->nvml_driver_version[0] = '\0';
	st->nvml_driver_version[sizeof(st->nvml_driver_version) - 1] = '\0';
	if (!gpu_text_ok(st->nvml_driver_version))
		st->nvml_driver_version[0] = '\0';
	if (st->nvml->system_cuda_version && st->nvml->system_cuda_version(&v) == NVML_OK &&
	    v > 0)
		snprintf(st->cuda_version, sizeof(st->cuda_version), "%d.%d", v / 1000,
			 (v % 1000) / 10);
}

void nvidia_add_nodes(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		      struct dralet_device *dev, int minor)
{
	char path[32];

	if (minor >= 0) {
		snprintf(path, sizeof(path), "nvidia%d", minor);
		gpu_add_node(ctx, dev, path, st->major, (unsigned)minor, true);
	} else {
		dralet_ctx_warn(ctx, "device %s: device minor unknown; /dev/nvidiaN not added",
				dralet_device_name(dev));
	}
	if (gpu_add_node(ctx, dev, "nvidiactl", st->major, NVIDIA_CTL_MINOR, !st->warned_ctl) < 0)
		st->warned_ctl = true;
	bool missing = gpu_add_node(ctx, dev, "nvidia-uvm", st->uvm_major, 0, !st->warned_uvm) < 0;
	missing |= gpu_add_node(ctx, dev, "nvidia-uvm-tools", st->uvm_major, 1, !st->warned_uvm) < 0;
	st->warned_uvm |= missing;
}

void nvidia_set_identity(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
			 struct dralet_device *dev, const struct nvidia_gpu_facts *g)
{
	const char *driver = nvidia_driver_version(st);

	(void)ctx;
	if (g->name[0])
		dralet_device_set_string(dev, "productName", g->name);
	if (g->brand)
		dralet_device_set_string(dev, "brand", g->brand);
	if (g->architecture)
		dralet_device_set_string(dev, "architecture", g->architecture);
	if (g->compute_capability[0])
		dralet_device_set_version(dev, "cudaComputeCapability", g->compute_capability);
	if (driver[0])
		dralet_device_set_version(dev, "driverVersion", driver);
	if (st->cuda_version[0])
		dralet_device_set_version(dev, "cudaDriverVersion", st->cuda_version);
	if (g->minor >= 0)
		dralet_device_set_int(dev, "minor", g->minor);
	if (g->index >= 0)
		dralet_device_set_int(dev, "index", g->index);
}

/* Reads what NVML knows of @h into @g (unknown facts stay as they are). */
static void nvml_facts(struct nvidia_state *st, nvml_device h, struct nvidia_gpu_facts *g)
{
	const struct nvml *n = st->nvml;
	char buf[NVML_BUFFER];
	struct nvml_memory mem;
	unsigned u;
	int major, minor;

	if (n->uuid && n->uuid(h, buf, sizeof(buf)) == NVML_OK && gpu_text_ok(buf) &&
	    strlen(buf) < sizeof(buf))
		snprintf(g->uuid, sizeof(g->uuid), "%s", buf);
	if (n->name && n->name(h, buf, sizeof(buf)) == NVML_OK && gpu_text_ok(buf) &&
	    strlen(buf) < sizeof(buf))
		snprintf(g->name, sizeof(g->name), "%s", buf);
	if (n->brand && n->brand(h, &u) == NVML_OK && u < sizeof(brand_names) / sizeof(*brand_names))
		g->brand = brand_names[u];
	if (n->architecture && n->architecture(h, &u) == NVML_OK &&
	    u < sizeof(arch_names) / sizeof(*arch_names))
		g->architecture = arch_names[u];
	if (n->compute_capability && n->compute_capability(h, &major, &minor) == NVML_OK &&
	    major >= 0 && minor >= 0)
		snprintf(g->compute_capability, sizeof(g->compute_capability), "%d.%d", major, minor);
	if (n->memory && n->memory(h, &mem) == NVML_OK)
		g->memory = mem.total;
	if (n->minor && n->minor(h, &u) == NVML_OK && u < 255)
		g->minor = (int)u;
	if (n->index && n->index(h, &u) == NVML_OK && u < 1024)
		g->index = (int)u;
}

static int publish_gpu(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		       const struct dralet_pci_func *f, nvml_device h,
		       const struct nvidia_gpu_facts *gp, const struct nvidia_proc_gpu *proc,
		       bool mig_capable, bool mig_enabled, struct dralet_device **ret_dev);

static int nvidia_probe(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
			const struct dralet_pci_id *id)
{
	struct nvidia_state *st = dralet_ctx_state(ctx);
	struct nvidia_gpu_facts g = { .minor = -1, .index = -1 };
	struct nvidia_proc_gpu proc;
	struct dralet_device *dev = NULL;
	(void)id;
	nvml_device h = NULL;
	unsigned mig_current = 0, mig_pending = 0;
	bool mig_capable = false;
	int r;

	if (!st)
		return -EINVAL;
	nvidia_open_nvml(ctx, st);
	r = nvidia_proc_gpu_read(ctx, f->address, &proc);
	if (r < 0 && r != -ENOENT)
		dralet_ctx_warn(ctx, "%s: proc information unreadable: %s", f->address, strerror(-r));
	if (proc.excluded) {
		dralet_ctx_warn(ctx, "%s: GPU excluded by the NVIDIA driver (NVreg_ExcludedGpus); "
				     "not published", f->address);
		return 0;
	}
	snprintf(g.uuid, sizeof(g.uuid), "%s", proc.uuid);
	snprintf(g.name, sizeof(g.name), "%s", proc.model);
	g.minor = proc.minor;
	if (st->nvml) {
		r = st->nvml->by_pci_bus_id(f->address, &h);
		if (r == NVML_OK) {
			nvml_facts(st, h, &g);
			if (st->nvml->mig_mode &&
			    st->nvml->mig_mode(h, &mig_current, &mig_pending) == NVML_OK)
				mig_capable = true;
		} else {
			dralet_ctx_warn(ctx, "%s: NVML does not know this GPU: %s", f->address,
					nvml_error(st->nvml, r));
			h = NULL;
		}
	}
	if (!proc.found && !h) {
		dralet_ctx_warn(ctx, "%s: neither procfs (driver/nvidia/gpus/%s) nor NVML know this "
				     "GPU; not published", f->address, f->address);
		return 0;
	}
	if (mig_capable && mig_current != mig_pending)
		dralet_ctx_warn(ctx, "%s: MIG mode change to %s is pending a GPU reset; publishing "
				     "the current mode", f->address, mig_pending ? "on" : "off");
	bool dynamic = mig_capable && mig_current == 1 && nvidia_dynmig_applies(ctx, st, f, h);
	if (mig_capable && mig_current == 1 && !dynamic) {
		/* NVIDIA's own driver does the same: a GPU in MIG mode is only
		 * allocatable through its MIG devices */
		r = nvidia_probe_mig(ctx, st, f, h, &g);
		return r < 0 ? r : 0;
	}
	if (!h && nvidia_proc_has_gpu_instances(ctx, g.minor)) {
		dralet_ctx_warn(ctx, "%s: GPU has MIG instances but NVML is unavailable to describe "
				     "them; not published", f->address);
		return 0;
	}
	if ((r = publish_gpu(ctx, st, f, h, &g, &proc, mig_capable, dynamic, &dev)) < 0)
		return r;
	/* dynamic MIG: the whole GPU next to every profile x placement */
	if (dynamic && (r = nvidia_dynmig_probe(ctx, st, f, h, &g, dev)) < 0)
		return r;
	r = vfio_form_enabled(ctx) ? gpu_vfio_form_add(ctx, f, dev) : 0;
	return r < 0 ? r : 0;
}

/* The full GPU's device (*ret_dev). */
static int publish_gpu(struct dralet_backend_ctx *ctx, struct nvidia_state *st,
		       const struct dralet_pci_func *f, nvml_device h,
		       const struct nvidia_gpu_facts *gp, const struct nvidia_proc_gpu *proc,
		       bool mig_capable, bool mig_enabled, struct dralet_device **ret_dev)
{
	struct nvidia_gpu_facts g = *gp;
	struct dralet_device *dev;
	struct gpu_info *info;
	int r;

	r = dralet_device_new(ctx, f, "gpu", NULL, &dev);
	if (r < 0)
		return r;
	info = gpu_info_attach(dev, GPU_TYPE_FULL);
	if (!info)
		return -ENOMEM;
	snprintf(info->uuid, sizeof(info->uuid), "%s", g.uuid);
	info->minor = g.minor;
	info->index = g.index;
	gpu_set_common(dev, "gpu");
	if (g.uuid[0])
		dralet_device_set_string(dev, "uuid", g.uuid);
	nvidia_set_identity(ctx, st, dev, &g);
	if (h) {
		dralet_device_set_bool(dev, "migCapable", mig_capable);
		dralet_device_set_bool(dev, "migEnabled", mig_enabled);
	}
	if (proc->vbios[0])
		dralet_device_set_string(dev, "vbiosVersion", proc->vbios);
	if (g.memory) {
		dralet_device_set_capacity_bytes(dev, "memory", g.memory);
		/* a dynamic-MIG GPU is carved by partitions (counters), not shared */
		if (!mig_enabled)
			nvidia_publish_sharing(ctx, dev, g.memory);
	}
	gpu_set_defaults(dev);
	nvidia_add_nodes(ctx, st, dev, g.minor);
	dralet_device_set_health(dev, DRALET_HEALTH_HEALTHY);
	*ret_dev = dev;
	return nvidia_watch_add(st, dev, h, &(struct nvidia_place){ .mig = false });
}

static void nvidia_remove(struct dralet_backend_ctx *ctx, struct dralet_device *dev)
{
	nvidia_watch_remove(dralet_ctx_state(ctx), dev);
}

static const struct dralet_pci_id nvidia_ids[] = {
	DRALET_PCI_VENDOR_CLASS(0x10de, 0x030000, 0xffff00),
	DRALET_PCI_VENDOR_CLASS(0x10de, 0x030200, 0xffff00),
	DRALET_PCI_VENDOR_CLASS(0x10de, 0x038000, 0xffff00),
	{ 0, 0, 0, 0 },
};

const struct dralet_backend gpu_nvidia_backend = {
	.abi = DRALET_BACKEND_ABI,
	.name = "nvidia",
	.family = "gpu",
	.default_driver = GPU_DRIVER_DEFAULT,
	.ids = nvidia_ids,
	.filter = nvidia_filter,
	.init = nvidia_init,
	.fini = nvidia_fini,
	.probe = nvidia_probe,
	.remove = nvidia_remove,
	.validate_config = nvidia_validate_config,
	.prepare = nvidia_prepare,
	.unprepare = nvidia_unprepare,
	.health = nvidia_health,
	.options = nvidia_options,
};
