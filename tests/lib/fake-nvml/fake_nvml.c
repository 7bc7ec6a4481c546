/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake libnvidia-ml for tests and simulated boards: exports the NVML entry
 * points dralet's nvidia backend calls, with the NVML C ABI (signatures and
 * structure layouts declared here), and answers from the JSON file named by
 * the environment variable FAKE_NVML_DATA, read at nvmlInit:
 *
 *   {"driverVersion":"550.54.15","cudaDriverVersion":12040,
 *    "devices":[{"pciBusId":"0000:18:00.0","index":0,"minor":0,"uuid":"GPU-...",
 *      "name":"NVIDIA H100 80GB HBM3","brand":"NVIDIA","architecture":"Hopper",
 *      "cudaComputeCapability":"9.0","memoryTotalBytes":85520809984,
 *      "migMode":{"current":1,"pending":1},
 *      "migDevices":[{"uuid":"MIG-...","profile":"1g.10gb","giProfileId":0,
 *        "ciProfileId":0,"gi":9,"ci":0,"placementStart":0,"placementSize":1,
 *        "memoryBytes":10200547328,"multiprocessors":16,"copyEngines":1,
 *        "decoders":1,"encoders":0,"jpegEngines":1,"ofaEngines":0,
 *        "giAccessMinor":21,"ciAccessMinor":22}]}]}
 *
 * Test-only extras: top-level "initError" (nvmlInit returns it); per device
 * "lost" (every call returns GPU_IS_LOST), "retiredPagesPending",
 * "remappedRowsFailure" (bools), "eventTypes" (the nvmlEventType bits the
 * GPU supports; default XID, double- and single-bit ECC; 0: no events) and
 * "recoveryAction" (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION's value, default 0;
 * -1: the field is not supported). A device without "migMode" is not MIG
 * capable. Without FAKE_NVML_DATA, nvmlInit fails with DRIVER_NOT_LOADED.
 *
 * Dynamic MIG: per device "migProfiles":[{"id":0,"name":"1g.10gb","slices":1,
 * "instances":7,"multiprocessors":16,"copyEngines":1,"decoders":1,
 * "encoders":0,"jpegEngines":0,"ofaEngines":0,"memoryBytes":10737418240,
 * "placements":[[0,1],[1,1],...]}] (a profile's index is its id) answers the
 * GPU instance profile calls and lets nvmlDeviceCreateGpuInstanceWithPlacement
 * and nvmlGpuInstanceCreateComputeInstance make instances (one compute
 * instance spanning its GPU instance), which then show as MIG devices like
 * the static ones; the destroy calls remove them. The instances made are
 * kept in a state file (FAKE_NVML_STATE, else "nvml-mig-state.json" beside
 * FAKE_NVML_DATA), rewritten at every change and read at nvmlInit, so they
 * outlive the process as the driver's do. FAKE_NVML_FAIL=create-ci makes
 * every compute instance creation fail (INSUFFICIENT_RESOURCES).
 *
 * Events, injected while the library runs, come from the events file:
 * FAKE_NVML_EVENTS, else "nvml-events" beside the FAKE_NVML_DATA file (a
 * board's tree holds both). Tests append one line per event:
 *
 *   <pciBusId> xid <N> [<gpuInstanceId> <computeInstanceId>]
 *   <pciBusId> dbe            a double-bit ECC error (sbe: single-bit)
 *   <pciBusId> recovery <N>   the GPU's recovery action from then on
 *
 * An event set delivers, once and in order, the event lines of its GPUs
 * written after its first registration; nvmlEventSetWait_v2 never sleeps
 * (NVML_ERROR_TIMEOUT when none is left), so tests are deterministic. Built
 * with FAKE_NVML_NO_EVENTS (tests/lib/fake-nvml-no-events) the library
 * exports neither the event calls nor nvmlDeviceGetFieldValues, as an NVML
 * older than the events.
 *
 * Library state is process-global, as NVML's own is. NVML is thread-safe:
 * dralet prepares different claims on different threads, so the calls that
 * make or destroy instances run under one lock (mig_lock).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#define EXPORT __attribute__((visibility("default")))

enum {
	OK = 0, ERR_UNINITIALIZED = 1, ERR_INVALID_ARGUMENT = 2, ERR_NOT_SUPPORTED = 3,
	ERR_NOT_FOUND = 6, ERR_INSUFFICIENT_SIZE = 7, ERR_DRIVER_NOT_LOADED = 9, ERR_TIMEOUT = 10,
	ERR_GPU_IS_LOST = 15, ERR_IN_USE = 19, ERR_INSUFFICIENT_RESOURCES = 23,
	ERR_ARGUMENT_VERSION_MISMATCH = 25, ERR_UNKNOWN = 999,
};

enum tag { TAG_GPU = 0x67707521, TAG_MIG = 0x6d696721, TAG_GI = 0x67692121, TAG_SET = 0x73657421,
	   TAG_CI = 0x63692121 };

struct fake_gpu;

struct fake_gi {
	enum tag tag;
	struct fake_mig *mig;
};

/* A MIG device: a static one from the data file, or a GPU instance made
 * through the create calls (dynamic; visible as a MIG device once it has
 * its compute instance). */
struct fake_mig {
	enum tag tag;
	struct fake_gpu *parent;
	struct fake_gi gi_handle;
	struct fake_gi ci_handle;	/* tag TAG_CI */
	int live, has_ci, dynamic;
	char uuid_buf[64], profile_buf[48];
	const char *uuid, *profile;
	unsigned gi_profile_id, gi, ci, start, size;
	unsigned long long memory;
	unsigned mp, ce, dec, enc, jpeg, ofa;
	unsigned gi_slices, ci_slices;
	char gi_name[48];	/* profile without its "Nc." compute part */
};

struct fake_gpu {
	enum tag tag;
	unsigned domain, bus, dev, fn;
	const char *uuid, *name;
	unsigned brand, arch, index, minor;
	int cc_major, cc_minor;
	unsigned long long memory;
	int mig_current, mig_pending;	/* -1: not MIG capable */
	int lost, retired_pending, remap_failure;
	unsigned long long event_types;
	int recovery_action;		/* -1: not supported */
	struct fake_mig *migs;
	size_t n_migs, cap_migs;	/* cap_migs: slots for dynamic instances too */
	struct fake_profile *profiles;	/* dynamic MIG: the GPU instance profiles */
	size_t n_profiles;
};

#define FAKE_PLACEMENTS_MAX 16
struct fake_profile {
	unsigned id, slices, instances, mp, ce, dec, enc, jpeg, ofa;
	unsigned long long memory;
	const char *name;
	unsigned pl_start[FAKE_PLACEMENTS_MAX], pl_size[FAKE_PLACEMENTS_MAX];
	unsigned n_pl;
};

static void load_profiles(struct fake_gpu *g, struct json_object *o);
static void load_state(void);

struct nvml_memory { unsigned long long total, free, used; };
struct nvml_attributes {
	unsigned mp, ce, dec, enc, jpeg, ofa, gi_slices, ci_slices;
	unsigned long long memory_mib;
};
struct nvml_gi_info {
	void *device;
	unsigned id, profile_id, start, size;
};
struct nvml_gi_profile_v1 {
	unsigned id, p2p, slices, instances, mp, ce, dec, enc, jpeg, ofa;
	unsigned long long memory_mib;
};
struct nvml_gi_profile_v2 {
	unsigned version, id, p2p, slices, instances, mp, ce, dec, enc, jpeg, ofa;
	unsigned long long memory_mib;
	char name[96];
};
struct nvml_placement { unsigned start, size; };
struct nvml_ci_profile_v1 {
	unsigned id, slices, instances, mp, ce, dec, enc, jpeg, ofa;
};

static struct json_object *data;
static struct fake_gpu *gpus;
static size_t n_gpus;
static int initialized;
static char driver_version[80];
static char events_path[4096];
static int cuda_version;

static const char *const brands[] = {
	"Unknown", "Quadro", "Tesla", "NVS", "GRID", "GeForce", "TITAN", "NVIDIA vApps",
	"NVIDIA vPC", "NVIDIA vCS", "NVIDIA vWS", "NVIDIA Cloud Gaming", "Quadro RTX",
	"NVIDIA RTX", "NVIDIA", "GeForce RTX", "TITAN RTX",
};
static const char *const archs[] = {
	"", "", "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada", "Hopper",
	"Blackwell",
};

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;
	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *str(struct json_object *o, const char *key, const char *def)
{
	struct json_object *v = get(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : def;
}

static long long num(struct json_object *o, const char *key, long long def)
{
	struct json_object *v = get(o, key);
	return v && (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double))
		       ? json_object_get_int64(v) : def;
}

static int flag(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);
	return v && json_object_get_boolean(v);
}

static unsigned lookup(const char *const *names, size_t n, const char *name, unsigned def)
{
	for (size_t i = 0; name && i < n; i++)
		if (names[i][0] && !strcasecmp(names[i], name))
			return (unsigned)i;
	return def;
}

static void parse_mig(struct fake_gpu *g, struct fake_mig *m, struct json_object *o)
{
	const char *gi_part;
	unsigned ci = 0, gi = 0;

	m->tag = TAG_MIG;
	m->parent = g;
	m->gi_handle.tag = TAG_GI;
	m->gi_handle.mig = m;
	m->ci_handle.tag = TAG_CI;
	m->ci_handle.mig = m;
	m->live = m->has_ci = 1;
	m->uuid = str(o, "uuid", "MIG-00000000-0000-0000-0000-000000000000");
	m->profile = str(o, "profile", "1g.10gb");
	m->gi_profile_id = (unsigned)num(o, "giProfileId", 0);
	m->gi = (unsigned)num(o, "gi", 0);
	m->ci = (unsigned)num(o, "ci", 0);
	m->start = (unsigned)num(o, "placementStart", 0);
	m->size = (unsigned)num(o, "placementSize", 1);
	m->memory = (unsigned long long)num(o, "memoryBytes", 0);
	m->mp = (unsigned)num(o, "multiprocessors", 0);
	m->ce = (unsigned)num(o, "copyEngines", 0);
	m->dec = (unsigned)num(o, "decoders", 0);
	m->enc = (unsigned)num(o, "encoders", 0);
	m->jpeg = (unsigned)num(o, "jpegEngines", 0);
	m->ofa = (unsigned)num(o, "ofaEngines", 0);
	/* "1c.2g.20gb": compute slices 1 of a 2-slice GPU instance */
	gi_part = m->profile;
	int used = 0;
	if (sscanf(m->profile, "%u%n", &ci, &used) == 1 && !strncmp(m->profile + used, "c.", 2))
		gi_part = m->profile + used + 2;
	else
		ci = 0;
	sscanf(gi_part, "%ug", &gi);
	snprintf(m->gi_name, sizeof(m->gi_name), "%s", gi_part);
	m->gi_slices = gi;
	m->ci_slices = ci ? ci : gi;
}

static int load(void)
{
	const char *path = getenv("FAKE_NVML_DATA");
	struct json_object *devs, *mm;

	if (!path || !(data = json_object_from_file(path)))
		return ERR_DRIVER_NOT_LOADED;
	if (num(data, "initError", 0)) {
		int e = (int)num(data, "initError", 0);
		json_object_put(data);
		data = NULL;
		return e;
	}
	snprintf(driver_version, sizeof(driver_version), "%s", str(data, "driverVersion", ""));
	if (getenv("FAKE_NVML_EVENTS")) {
		snprintf(events_path, sizeof(events_path), "%s", getenv("FAKE_NVML_EVENTS"));
	} else {
		const char *slash = strrchr(path, '/');
		snprintf(events_path, sizeof(events_path), "%.*snvml-events",
			 slash ? (int)(slash - path + 1) : 0, path);
	}
	cuda_version = (int)num(data, "cudaDriverVersion", 0);
	devs = get(data, "devices");
	n_gpus = devs && json_object_is_type(devs, json_type_array) ? json_object_array_length(devs)
								     : 0;
	gpus = calloc(n_gpus ? n_gpus : 1, sizeof(*gpus));
	if (!gpus)
		return ERR_UNKNOWN;
	for (size_t i = 0; i < n_gpus; i++) {
		struct json_object *o = json_object_array_get_idx(devs, i), *migs;
		struct fake_gpu *g = &gpus[i];

		g->tag = TAG_GPU;
		sscanf(str(o, "pciBusId", ""), "%x:%x:%x.%x", &g->domain, &g->bus, &g->dev, &g->fn);
		g->uuid = str(o, "uuid", "");
		g->name = str(o, "name", "NVIDIA Fake GPU");
		g->brand = lookup(brands, sizeof(brands) / sizeof(*brands), str(o, "brand", NULL), 0);
		g->arch = lookup(archs, sizeof(archs) / sizeof(*archs), str(o, "architecture", NULL),
				 0xffffffffu);
		g->index = (unsigned)num(o, "index", (long long)i);
		g->minor = (unsigned)num(o, "minor", (long long)i);
		if (sscanf(str(o, "cudaComputeCapability", ""), "%d.%d", &g->cc_major, &g->cc_minor) != 2)
			g->cc_major = g->cc_minor = -1;
		g->memory = (unsigned long long)num(o, "memoryTotalBytes", 0);
		mm = get(o, "migMode");
		g->mig_current = mm ? (int)num(mm, "current", 0) : -1;
		g->mig_pending = mm ? (int)num(mm, "pending", g->mig_current) : -1;
		g->lost = flag(o, "lost");
		g->retired_pending = flag(o, "retiredPagesPending");
		g->remap_failure = flag(o, "remappedRowsFailure");
		g->event_types = (unsigned long long)num(o, "eventTypes", 0xb);
		g->recovery_action = (int)num(o, "recoveryAction", 0);
		migs = get(o, "migDevices");
		g->n_migs = migs && json_object_is_type(migs, json_type_array)
				    ? json_object_array_length(migs) : 0;
		g->cap_migs = g->n_migs + 64;
		g->migs = calloc(g->cap_migs, sizeof(*g->migs));
		if (!g->migs)
			return ERR_UNKNOWN;
		for (size_t m = 0; m < g->n_migs; m++)
			parse_mig(g, &g->migs[m], json_object_array_get_idx(migs, m));
		load_profiles(g, o);
	}
	load_state();
	return OK;
}

static void unload(void)
{
	for (size_t i = 0; i < n_gpus; i++) {
		free(gpus[i].migs);
		free(gpus[i].profiles);
	}
	free(gpus);
	gpus = NULL;
	n_gpus = 0;
	json_object_put(data);
	data = NULL;
}

/* Resolves a device handle: a GPU, or a MIG device (with *mig set). */
static int device(void *h, struct fake_gpu **g, struct fake_mig **mig)
{
	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!h)
		return ERR_INVALID_ARGUMENT;
	*mig = NULL;
	if (*(enum tag *)h == TAG_MIG) {
		*mig = h;
		*g = (*mig)->parent;
	} else if (*(enum tag *)h == TAG_GPU) {
		*g = h;
	} else {
		return ERR_INVALID_ARGUMENT;
	}
	return (*g)->lost ? ERR_GPU_IS_LOST : OK;
}

#define DEVICE(h)                                        \
	struct fake_gpu *g;                              \
	struct fake_mig *mig;                            \
	int r_ = device((h), &g, &mig);                  \
	if (r_ != OK)                                    \
		return r_;                               \
	(void)mig

static int copy_out(const char *s, char *buf, unsigned len)
{
	if (!buf)
		return ERR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return ERR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return OK;
}

EXPORT int nvmlInit_v2(void);
EXPORT int nvmlInit_v2(void)
{
	int r;

	if (initialized++)
		return OK;
	r = load();
	if (r != OK) {
		unload();
		initialized = 0;
	}
	return r;
}

EXPORT int nvmlInit(void);
EXPORT int nvmlInit(void) { return nvmlInit_v2(); }

EXPORT int nvmlShutdown(void);
EXPORT int nvmlShutdown(void)
{
	if (!initialized)
		return ERR_UNINITIALIZED;
	if (--initialized == 0)
		unload();
	return OK;
}

EXPORT const char *nvmlErrorString(int r);
EXPORT const char *nvmlErrorString(int r)
{
	switch (r) {
	case OK: return "Success";
	case ERR_UNINITIALIZED: return "Uninitialized";
	case ERR_INVALID_ARGUMENT: return "Invalid Argument";
	case ERR_NOT_SUPPORTED: return "Not Supported";
	case ERR_NOT_FOUND: return "Not Found";
	case ERR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case ERR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case ERR_GPU_IS_LOST: return "GPU is lost";
	default: return "Unknown Error";
	}
}

EXPORT int nvmlSystemGetDriverVersion(char *buf, unsigned len);
EXPORT int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	return initialized ? copy_out(driver_version, buf, len) : ERR_UNINITIALIZED;
}

EXPORT int nvmlSystemGetCudaDriverVersion_v2(int *v);
EXPORT int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!cuda_version)
		return ERR_NOT_SUPPORTED;
	*v = cuda_version;
	return OK;
}

EXPORT int nvmlSystemGetCudaDriverVersion(int *v);
EXPORT int nvmlSystemGetCudaDriverVersion(int *v) { return nvmlSystemGetCudaDriverVersion_v2(v); }

EXPORT int nvmlDeviceGetCount_v2(unsigned *count);
EXPORT int nvmlDeviceGetCount_v2(unsigned *count)
{
	if (!initialized)
		return ERR_UNINITIALIZED;
	*count = (unsigned)n_gpus;
	return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
	if (!initialized)
		return ERR_UNINITIALIZED;
	for (size_t k = 0; k < n_gpus; k++)
		if (gpus[k].index == i) {
			*h = &gpus[k];
			return OK;
		}
	return ERR_INVALID_ARGUMENT;
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, void **h);
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, void **h)
{
	unsigned d, b, s, f;

	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!id || !h || sscanf(id, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
		return ERR_INVALID_ARGUMENT;
	for (size_t k = 0; k < n_gpus; k++)
		if (gpus[k].domain == d && gpus[k].bus == b && gpus[k].dev == s && gpus[k].fn == f) {
			*h = &gpus[k];
			return gpus[k].lost ? ERR_GPU_IS_LOST : OK;
		}
	return ERR_NOT_FOUND;
}

EXPORT int nvmlDeviceGetHandleByPciBusId(const char *id, void **h);
EXPORT int nvmlDeviceGetHandleByPciBusId(const char *id, void **h)
{
	return nvmlDeviceGetHandleByPciBusId_v2(id, h);
}

EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **h);
EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **h)
{
	if (!initialized)
		return ERR_UNINITIALIZED;
	for (size_t k = 0; uuid && k < n_gpus; k++) {
		if (!strcmp(gpus[k].uuid, uuid)) {
			*h = &gpus[k];
			return OK;
		}
		for (size_t m = 0; m < gpus[k].n_migs; m++)
			if (!strcmp(gpus[k].migs[m].uuid, uuid)) {
				*h = &gpus[k].migs[m];
				return OK;
			}
	}
	return ERR_NOT_FOUND;
}

EXPORT int nvmlDeviceGetUUID(void *h, char *buf, unsigned len);
EXPORT int nvmlDeviceGetUUID(void *h, char *buf, unsigned len)
{
	DEVICE(h);
	return copy_out(mig ? mig->uuid : g->uuid, buf, len);
}

EXPORT int nvmlDeviceGetName(void *h, char *buf, unsigned len);
EXPORT int nvmlDeviceGetName(void *h, char *buf, unsigned len)
{
	char name[160];

	DEVICE(h);
	if (mig)
		snprintf(name, sizeof(name), "%s MIG %s", g->name, mig->profile);
	else
		snprintf(name, sizeof(name), "%s", g->name);
	return copy_out(name, buf, len);
}

EXPORT int nvmlDeviceGetBrand(void *h, unsigned *brand);
EXPORT int nvmlDeviceGetBrand(void *h, unsigned *brand)
{
	DEVICE(h);
	*brand = g->brand;
	return OK;
}

EXPORT int nvmlDeviceGetArchitecture(void *h, unsigned *arch);
EXPORT int nvmlDeviceGetArchitecture(void *h, unsigned *arch)
{
	DEVICE(h);
	*arch = g->arch;
	return OK;
}

EXPORT int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor);
EXPORT int nvmlDeviceGetCudaComputeCapability(void *h, int *major, int *minor)
{
	DEVICE(h);
	if (g->cc_major < 0)
		return ERR_NOT_SUPPORTED;
	*major = g->cc_major;
	*minor = g->cc_minor;
	return OK;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *h, struct nvml_memory *m);
EXPORT int nvmlDeviceGetMemoryInfo(void *h, struct nvml_memory *m)
{
	DEVICE(h);
	m->total = mig ? mig->memory : g->memory;
	m->used = 0;
	m->free = m->total;
	return OK;
}

EXPORT int nvmlDeviceGetMinorNumber(void *h, unsigned *minor);
EXPORT int nvmlDeviceGetMinorNumber(void *h, unsigned *minor)
{
	DEVICE(h);
	if (mig)
		return ERR_NOT_SUPPORTED;
	*minor = g->minor;
	return OK;
}

EXPORT int nvmlDeviceGetIndex(void *h, unsigned *index);
EXPORT int nvmlDeviceGetIndex(void *h, unsigned *index)
{
	DEVICE(h);
	*index = g->index;
	return OK;
}

EXPORT int nvmlDeviceGetMigMode(void *h, unsigned *current, unsigned *pending);
EXPORT int nvmlDeviceGetMigMode(void *h, unsigned *current, unsigned *pending)
{
	DEVICE(h);
	if (mig || g->mig_current < 0)
		return ERR_NOT_SUPPORTED;
	*current = (unsigned)g->mig_current;
	*pending = (unsigned)g->mig_pending;
	return OK;
}

EXPORT int nvmlDeviceGetMaxMigDeviceCount(void *h, unsigned *count);
EXPORT int nvmlDeviceGetMaxMigDeviceCount(void *h, unsigned *count)
{
	DEVICE(h);
	if (mig || g->mig_current < 0)
		return ERR_NOT_SUPPORTED;
	*count = g->n_migs > 7 ? (unsigned)g->n_migs : 7;
	return OK;
}

/* The @i-th MIG device of @g that exists (live, with its compute instance). */
static struct fake_mig *visible_mig(struct fake_gpu *g, unsigned i)
{
	for (size_t m = 0; m < g->n_migs; m++)
		if (g->migs[m].live && g->migs[m].has_ci && i-- == 0)
			return &g->migs[m];
	return NULL;
}

EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(void *h, unsigned i, void **out);
EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(void *h, unsigned i, void **out)
{
	DEVICE(h);
	if (mig || g->mig_current != 1)
		return ERR_NOT_SUPPORTED;
	if (!(*out = visible_mig(g, i)))
		return ERR_NOT_FOUND;
	return OK;
}

EXPORT int nvmlDeviceIsMigDeviceHandle(void *h, unsigned *is_mig);
EXPORT int nvmlDeviceIsMigDeviceHandle(void *h, unsigned *is_mig)
{
	DEVICE(h);
	*is_mig = mig != NULL;
	return OK;
}

EXPORT int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(void *h, void **parent);
EXPORT int nvmlDeviceGetDeviceHandleFromMigDeviceHandle(void *h, void **parent)
{
	DEVICE(h);
	if (!mig)
		return ERR_INVALID_ARGUMENT;
	*parent = g;
	return OK;
}

EXPORT int nvmlDeviceGetGpuInstanceId(void *h, unsigned *id);
EXPORT int nvmlDeviceGetGpuInstanceId(void *h, unsigned *id)
{
	DEVICE(h);
	if (!mig)
		return ERR_NOT_SUPPORTED;
	*id = mig->gi;
	return OK;
}

EXPORT int nvmlDeviceGetComputeInstanceId(void *h, unsigned *id);
EXPORT int nvmlDeviceGetComputeInstanceId(void *h, unsigned *id)
{
	DEVICE(h);
	if (!mig)
		return ERR_NOT_SUPPORTED;
	*id = mig->ci;
	return OK;
}

EXPORT int nvmlDeviceGetAttributes_v2(void *h, struct nvml_attributes *a);
EXPORT int nvmlDeviceGetAttributes_v2(void *h, struct nvml_attributes *a)
{
	DEVICE(h);
	if (!mig)
		return ERR_NOT_SUPPORTED;	/* like NVML: MIG device handles only */
	*a = (struct nvml_attributes){ mig->mp, mig->ce, mig->dec, mig->enc, mig->jpeg, mig->ofa,
				       mig->gi_slices, mig->ci_slices, mig->memory >> 20 };
	return OK;
}

EXPORT int nvmlDeviceGetGpuInstanceById(void *h, unsigned id, void **gi);
EXPORT int nvmlDeviceGetGpuInstanceById(void *h, unsigned id, void **gi)
{
	DEVICE(h);
	if (mig)
		return ERR_INVALID_ARGUMENT;
	for (size_t m = 0; m < g->n_migs; m++)
		if (g->migs[m].live && g->migs[m].gi == id) {
			*gi = &g->migs[m].gi_handle;
			return OK;
		}
	return ERR_NOT_FOUND;
}

EXPORT int nvmlGpuInstanceGetInfo(void *gi, struct nvml_gi_info *info);
EXPORT int nvmlGpuInstanceGetInfo(void *gi, struct nvml_gi_info *info)
{
	struct fake_gi *h = gi;

	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!h || h->tag != TAG_GI)
		return ERR_INVALID_ARGUMENT;
	*info = (struct nvml_gi_info){ h->mig->parent, h->mig->gi, h->mig->gi_profile_id,
				       h->mig->start, h->mig->size };
	return OK;
}

static const struct fake_profile *table_profile(const struct fake_gpu *g, unsigned id)
{
	for (size_t i = 0; i < g->n_profiles; i++)
		if (g->profiles[i].id == id)
			return &g->profiles[i];
	return NULL;
}

/* The profile of index @p as the GPU's MIG devices show it. */
static const struct fake_mig *profile(struct fake_gpu *g, unsigned p)
{
	for (size_t m = 0; m < g->n_migs; m++)
		if (g->migs[m].gi_profile_id == p)
			return &g->migs[m];
	return NULL;
}

EXPORT int nvmlDeviceGetGpuInstanceProfileInfo(void *h, unsigned p, struct nvml_gi_profile_v1 *i);
EXPORT int nvmlDeviceGetGpuInstanceProfileInfo(void *h, unsigned p, struct nvml_gi_profile_v1 *i)
{
	const struct fake_mig *m;

	DEVICE(h);
	if (mig || g->mig_current < 0)
		return ERR_NOT_SUPPORTED;
	const struct fake_profile *t = table_profile(g, p);
	if (t) {
		*i = (struct nvml_gi_profile_v1){ p, 0, t->slices, t->instances, t->mp, t->ce, t->dec,
						  t->enc, t->jpeg, t->ofa, t->memory >> 20 };
		return OK;
	}
	if (g->n_profiles || !(m = profile(g, p)))
		return ERR_NOT_SUPPORTED;
	*i = (struct nvml_gi_profile_v1){ p, 0, m->gi_slices, 7 / (m->gi_slices ? m->gi_slices : 1),
					  m->mp, m->ce, m->dec, m->enc, m->jpeg, m->ofa,
					  m->memory >> 20 };
	return OK;
}

EXPORT int nvmlDeviceGetGpuInstanceProfileInfoV(void *h, unsigned p, struct nvml_gi_profile_v2 *i);
EXPORT int nvmlDeviceGetGpuInstanceProfileInfoV(void *h, unsigned p, struct nvml_gi_profile_v2 *i)
{
	const unsigned want = (unsigned)sizeof(struct nvml_gi_profile_v2) | (2u << 24);
	const struct fake_mig *m;

	DEVICE(h);
	if (i->version != want)
		return ERR_ARGUMENT_VERSION_MISMATCH;
	if (mig || g->mig_current < 0)
		return ERR_NOT_SUPPORTED;
	const struct fake_profile *t = table_profile(g, p);
	if (t) {
		*i = (struct nvml_gi_profile_v2){ i->version, p, 0, t->slices, t->instances, t->mp,
						  t->ce, t->dec, t->enc, t->jpeg, t->ofa,
						  t->memory >> 20, "" };
		snprintf(i->name, sizeof(i->name), "MIG %s", t->name);
		return OK;
	}
	if (g->n_profiles || !(m = profile(g, p)))
		return ERR_NOT_SUPPORTED;
	i->id = p;
	i->p2p = 0;
	i->slices = m->gi_slices;
	i->instances = 7 / (m->gi_slices ? m->gi_slices : 1);
	i->mp = m->mp;
	i->ce = m->ce;
	i->dec = m->dec;
	i->enc = m->enc;
	i->jpeg = m->jpeg;
	i->ofa = m->ofa;
	i->memory_mib = m->memory >> 20;
	snprintf(i->name, sizeof(i->name), "MIG %s", m->gi_name);
	return OK;
}

EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(void *h, unsigned *pending);
EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(void *h, unsigned *pending)
{
	DEVICE(h);
	*pending = (unsigned)g->retired_pending;
	return OK;
}

EXPORT int nvmlDeviceGetRemappedRows(void *h, unsigned *corr, unsigned *unc, unsigned *pending,
				     unsigned *failure);
EXPORT int nvmlDeviceGetRemappedRows(void *h, unsigned *corr, unsigned *unc, unsigned *pending,
				     unsigned *failure)
{
	DEVICE(h);
	*corr = *unc = *pending = 0;
	*failure = (unsigned)g->remap_failure;
	return OK;
}

#ifndef FAKE_NVML_NO_EVENTS

#define EVENT_SBE 0x1ull
#define EVENT_DBE 0x2ull
#define EVENT_XID 0x8ull
#define NO_INSTANCE 0xffffffffu

struct event_data {
	void *device;
	unsigned long long type, data;
	unsigned gi, ci;
};

struct fake_set {
	enum tag tag;
	long offset;			/* of the next line to deliver; -1: nothing registered */
	struct fake_gpu *gpus[16];
	unsigned long long types[16];
	size_t n;
};

union field_value {
	double d;
	unsigned ui;
	unsigned long ul;
	unsigned long long ull;
	long long sll;
	int si;
	unsigned short us;
};

struct field {
	unsigned field_id, scope_id;
	long long timestamp, latency_usec;
	int value_type, ret;
	union field_value value;
};

/* One line of the events file: its GPU, its kind ("xid", "dbe", "sbe",
 * "recovery") and numbers. 0 when the line is garbage. */
static int parse_line(const char *line, struct fake_gpu **ret_gpu, char *kind,
		      unsigned long long *num1, unsigned *gi, unsigned *ci)
{
	unsigned d, b, s, f;
	int n;

	*num1 = 0;
	*gi = *ci = NO_INSTANCE;
	n = sscanf(line, "%x:%x:%x.%x %15s %llu %u %u", &d, &b, &s, &f, kind, num1, gi, ci);
	if (n < 5)
		return 0;
	for (size_t k = 0; k < n_gpus; k++)
		if (gpus[k].domain == d && gpus[k].bus == b && gpus[k].dev == s && gpus[k].fn == f) {
			*ret_gpu = &gpus[k];
			return 1;
		}
	return 0;
}

static long file_size(void)
{
	FILE *f = fopen(events_path, "r");
	long size = 0;

	if (f && fseek(f, 0, SEEK_END) == 0)
		size = ftell(f);
	if (f)
		fclose(f);
	return size < 0 ? 0 : size;
}

EXPORT int nvmlEventSetCreate(void **set);
EXPORT int nvmlEventSetCreate(void **set)
{
	struct fake_set *s;

	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!set || !(s = calloc(1, sizeof(*s))))
		return ERR_INVALID_ARGUMENT;
	s->tag = TAG_SET;
	s->offset = -1;
	*set = s;
	return OK;
}

EXPORT int nvmlEventSetFree(void *set);
EXPORT int nvmlEventSetFree(void *set)
{
	struct fake_set *s = set;

	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!s || s->tag != TAG_SET)
		return ERR_INVALID_ARGUMENT;
	s->tag = 0;
	free(s);
	return OK;
}

EXPORT int nvmlDeviceGetSupportedEventTypes(void *h, unsigned long long *types);
EXPORT int nvmlDeviceGetSupportedEventTypes(void *h, unsigned long long *types)
{
	DEVICE(h);
	if (mig)
		return ERR_NOT_SUPPORTED;	/* events are registered on the GPU */
	*types = g->event_types;
	return OK;
}

EXPORT int nvmlDeviceRegisterEvents(void *h, unsigned long long types, void *set);
EXPORT int nvmlDeviceRegisterEvents(void *h, unsigned long long types, void *set)
{
	struct fake_set *s = set;

	DEVICE(h);
	if (!s || s->tag != TAG_SET || s->n == sizeof(s->gpus) / sizeof(*s->gpus))
		return ERR_INVALID_ARGUMENT;
	if (mig || !types || (types & ~g->event_types))
		return ERR_NOT_SUPPORTED;
	if (s->offset < 0)
		s->offset = file_size();
	s->gpus[s->n] = g;
	s->types[s->n++] = types;
	return OK;
}

/* The kind of an event line as an event type bit, or 0. */
static unsigned long long event_type(const char *kind)
{
	if (!strcmp(kind, "xid"))
		return EVENT_XID;
	if (!strcmp(kind, "dbe"))
		return EVENT_DBE;
	if (!strcmp(kind, "sbe"))
		return EVENT_SBE;
	return 0;
}

EXPORT int nvmlEventSetWait_v2(void *set, struct event_data *out, unsigned timeout_ms);
EXPORT int nvmlEventSetWait_v2(void *set, struct event_data *out, unsigned timeout_ms)
{
	struct fake_set *s = set;
	char line[256];
	FILE *f;
	int r = ERR_TIMEOUT;

	(void)timeout_ms;	/* never sleeps: tests write the events first */
	if (!initialized)
		return ERR_UNINITIALIZED;
	if (!s || s->tag != TAG_SET || !out)
		return ERR_INVALID_ARGUMENT;
	for (size_t i = 0; i < s->n; i++)
		if (s->gpus[i]->lost)
			return ERR_GPU_IS_LOST;
	if (s->offset < 0 || !(f = fopen(events_path, "r")))
		return ERR_TIMEOUT;
	if (fseek(f, s->offset, SEEK_SET) != 0) {
		fclose(f);
		return ERR_TIMEOUT;
	}
	while (r == ERR_TIMEOUT && fgets(line, sizeof(line), f) && strchr(line, '\n')) {
		struct fake_gpu *g;
		char kind[16];
		unsigned long long n, type;
		unsigned gi, ci;

		s->offset = ftell(f);
		if (!parse_line(line, &g, kind, &n, &gi, &ci) || !(type = event_type(kind)))
			continue;
		for (size_t i = 0; i < s->n; i++)
			if (s->gpus[i] == g && (s->types[i] & type)) {
				*out = (struct event_data){ g, type, type == EVENT_XID ? n : 0, gi, ci };
				r = OK;
				break;
			}
	}
	fclose(f);
	return r;
}

/* The recovery action of @g: the last "recovery" line of the events file,
 * else the data file's. */
static int recovery_action(const struct fake_gpu *g)
{
	int action = g->recovery_action;
	char line[256];
	FILE *f = fopen(events_path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		struct fake_gpu *at;
		char kind[16];
		unsigned long long n;
		unsigned gi, ci;

		if (parse_line(line, &at, kind, &n, &gi, &ci) && at == g && !strcmp(kind, "recovery"))
			action = (int)n;
	}
	if (f)
		fclose(f);
	return action;
}

EXPORT int nvmlDeviceGetFieldValues(void *h, int count, struct field *values);
EXPORT int nvmlDeviceGetFieldValues(void *h, int count, struct field *values)
{
	DEVICE(h);
	if (count < 0 || (count && !values))
		return ERR_INVALID_ARGUMENT;
	for (int i = 0; i < count; i++) {
		struct field *v = &values[i];
		int action = v->field_id == 230 ? recovery_action(g) : -1;

		v->ret = action < 0 ? ERR_NOT_SUPPORTED : OK;
		v->value_type = 1;	/* NVML_VALUE_TYPE_UNSIGNED_INT */
		v->value.ui = action < 0 ? 0 : (unsigned)action;
	}
	return OK;
}

#endif /* FAKE_NVML_NO_EVENTS */

/* ---- dynamic MIG: profiles, placements, instances made and destroyed ---- */

static void load_profiles(struct fake_gpu *g, struct json_object *o)
{
	struct json_object *ps = get(o, "migProfiles");
	size_t n = ps && json_object_is_type(ps, json_type_array) ? json_object_array_length(ps) : 0;

	if (!n || !(g->profiles = calloc(n, sizeof(*g->profiles))))
		return;
	g->n_profiles = n;
	for (size_t i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(ps, i), *pl = get(p, "placements");
		struct fake_profile *t = &g->profiles[i];

		t->id = (unsigned)num(p, "id", (long long)i);
		t->name = str(p, "name", "1g.10gb");
		t->slices = (unsigned)num(p, "slices", 1);
		t->instances = (unsigned)num(p, "instances", 1);
		t->mp = (unsigned)num(p, "multiprocessors", 0);
		t->ce = (unsigned)num(p, "copyEngines", 0);
		t->dec = (unsigned)num(p, "decoders", 0);
		t->enc = (unsigned)num(p, "encoders", 0);
		t->jpeg = (unsigned)num(p, "jpegEngines", 0);
		t->ofa = (unsigned)num(p, "ofaEngines", 0);
		t->memory = (unsigned long long)num(p, "memoryBytes", 0);
		for (size_t k = 0; pl && k < json_object_array_length(pl) && k < FAKE_PLACEMENTS_MAX;
		     k++) {
			struct json_object *e = json_object_array_get_idx(pl, k);
			t->pl_start[t->n_pl] = (unsigned)json_object_get_int(json_object_array_get_idx(e, 0));
			t->pl_size[t->n_pl++] = (unsigned)json_object_get_int(json_object_array_get_idx(e, 1));
		}
	}
}

static void state_path(char *buf, size_t size)
{
	const char *path = getenv("FAKE_NVML_DATA"), *slash = path ? strrchr(path, '/') : NULL;

	if (getenv("FAKE_NVML_STATE"))
		snprintf(buf, size, "%s", getenv("FAKE_NVML_STATE"));
	else
		snprintf(buf, size, "%.*snvml-mig-state.json", slash ? (int)(slash - path + 1) : 0,
			 path ? path : "");
}

static pthread_mutex_t mig_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every dynamic instance, written as a whole (rename over the old file);
 * called under mig_lock. */
static void save_state(void)
{
	struct json_object *arr = json_object_new_array();
	char path[4096], tmp[4200];

	for (size_t i = 0; i < n_gpus; i++)
		for (size_t m = 0; m < gpus[i].n_migs; m++) {
			const struct fake_mig *x = &gpus[i].migs[m];
			char bus[32];
			if (!x->live || !x->dynamic)
				continue;
			struct json_object *e = json_object_new_object();
			snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%x", gpus[i].domain, gpus[i].bus,
				 gpus[i].dev, gpus[i].fn);
			json_object_object_add(e, "pciBusId", json_object_new_string(bus));
			json_object_object_add(e, "profileId", json_object_new_int((int)x->gi_profile_id));
			json_object_object_add(e, "start", json_object_new_int((int)x->start));
			json_object_object_add(e, "gi", json_object_new_int((int)x->gi));
			json_object_object_add(e, "ci", json_object_new_int(x->has_ci ? (int)x->ci : -1));
			json_object_array_add(arr, e);
		}
	state_path(path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_object_to_file(tmp, arr) == 0)
		rename(tmp, path);
	json_object_put(arr);
}

static int overlaps(const struct fake_gpu *g, unsigned start, unsigned size)
{
	for (size_t m = 0; m < g->n_migs; m++) {
		const struct fake_mig *x = &g->migs[m];
		if (x->live && start < x->start + x->size && x->start < start + size)
			return 1;
	}
	return 0;
}

/* Makes a GPU instance of @t at @start with id @gi (0: the smallest free). */
static struct fake_mig *make_gi(struct fake_gpu *g, const struct fake_profile *t, unsigned start,
				unsigned size, unsigned gi)
{
	struct fake_mig *m = NULL;

	for (size_t k = 0; k < g->n_migs && !m; k++)
		if (!g->migs[k].live)
			m = &g->migs[k];
	if (!m && g->n_migs < g->cap_migs)
		m = &g->migs[g->n_migs++];
	if (!m)
		return NULL;
	if (!gi)
		for (gi = 1;; gi++) {
			int used = 0;
			for (size_t k = 0; k < g->n_migs; k++)
				used |= g->migs[k].live && g->migs[k].gi == gi;
			if (!used)
				break;
		}
	memset(m, 0, sizeof(*m));
	m->tag = TAG_MIG;
	m->parent = g;
	m->gi_handle = (struct fake_gi){ TAG_GI, m };
	m->ci_handle = (struct fake_gi){ TAG_CI, m };
	m->live = m->dynamic = 1;
	m->gi = gi;
	m->gi_profile_id = t->id;
	m->start = start;
	m->size = size;
	m->memory = t->memory;
	m->mp = t->mp;
	m->ce = t->ce;
	m->dec = t->dec;
	m->enc = t->enc;
	m->jpeg = t->jpeg;
	m->ofa = t->ofa;
	m->gi_slices = m->ci_slices = t->slices;
	snprintf(m->profile_buf, sizeof(m->profile_buf), "%s", t->name);
	snprintf(m->gi_name, sizeof(m->gi_name), "%s", t->name);
	m->profile = m->profile_buf;
	snprintf(m->uuid_buf, sizeof(m->uuid_buf), "MIG-%08x-%04x-0000-0000-%012x",
		 (g->domain << 16) | (g->bus << 8) | (g->dev << 3) | g->fn, g->minor, gi);
	m->uuid = m->uuid_buf;
	return m;
}

static const struct fake_profile *placement_of(const struct fake_gpu *g, unsigned profile_id,
					       unsigned start, unsigned *ret_size)
{
	const struct fake_profile *t = table_profile(g, profile_id);

	for (unsigned k = 0; t && k < t->n_pl; k++)
		if (t->pl_start[k] == start) {
			*ret_size = t->pl_size[k];
			return t;
		}
	return NULL;
}

static void load_state(void)
{
	char path[4096];
	struct json_object *arr;

	state_path(path, sizeof(path));
	if (!(arr = json_object_from_file(path)))
		return;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		unsigned d, b, s, f, size = 0;
		if (sscanf(str(e, "pciBusId", ""), "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
			continue;
		for (size_t k = 0; k < n_gpus; k++) {
			struct fake_gpu *g = &gpus[k];
			const struct fake_profile *t;
			if (g->domain != d || g->bus != b || g->dev != s || g->fn != f)
				continue;
			t = placement_of(g, (unsigned)num(e, "profileId", 0), (unsigned)num(e, "start", 0),
					 &size);
			struct fake_mig *m = t ? make_gi(g, t, (unsigned)num(e, "start", 0), size,
							 (unsigned)num(e, "gi", 0)) : NULL;
			if (m && num(e, "ci", -1) >= 0) {
				m->has_ci = 1;
				m->ci = (unsigned)num(e, "ci", 0);
			}
		}
	}
	json_object_put(arr);
}

static struct fake_mig *gi_of(void *gi)
{
	struct fake_gi *h = gi;
	return initialized && h && h->tag == TAG_GI && h->mig->live ? h->mig : NULL;
}

static struct fake_mig *ci_of(void *ci)
{
	struct fake_gi *h = ci;
	return initialized && h && h->tag == TAG_CI && h->mig->live && h->mig->has_ci ? h->mig
										      : NULL;
}

EXPORT int nvmlDeviceGetGpuInstances(void *h, unsigned profile_id, void **gis, unsigned *count);
EXPORT int nvmlDeviceGetGpuInstances(void *h, unsigned profile_id, void **gis, unsigned *count)
{
	unsigned n = 0;

	DEVICE(h);
	if (mig || g->mig_current != 1)
		return ERR_NOT_SUPPORTED;
	for (size_t m = 0; m < g->n_migs; m++) {
		struct fake_mig *x = &g->migs[m];
		int seen = 0;
		if (!x->live || x->gi_profile_id != profile_id)
			continue;
		for (size_t k = 0; k < m; k++)	/* one GPU instance, several compute instances */
			seen |= g->migs[k].live && g->migs[k].gi == x->gi;
		if (!seen && gis)
			gis[n] = &x->gi_handle;
		n += !seen;
	}
	*count = n;
	return OK;
}

EXPORT int nvmlDeviceGetGpuInstancePossiblePlacements_v2(void *h, unsigned profile_id,
							 struct nvml_placement *pl, unsigned *count);
EXPORT int nvmlDeviceGetGpuInstancePossiblePlacements_v2(void *h, unsigned profile_id,
							 struct nvml_placement *pl, unsigned *count)
{
	const struct fake_profile *t;

	DEVICE(h);
	if (mig || g->mig_current != 1)
		return ERR_NOT_SUPPORTED;
	if (!(t = table_profile(g, profile_id)))
		return ERR_INVALID_ARGUMENT;
	if (pl && *count < t->n_pl)
		return ERR_INSUFFICIENT_SIZE;
	for (unsigned k = 0; pl && k < t->n_pl; k++)
		pl[k] = (struct nvml_placement){ t->pl_start[k], t->pl_size[k] };
	*count = t->n_pl;
	return OK;
}

EXPORT int nvmlDeviceCreateGpuInstanceWithPlacement(void *h, unsigned profile_id,
						    const struct nvml_placement *pl, void **gi);
static int nvmlDeviceCreateGpuInstanceWithPlacement_locked(void *h, unsigned profile_id,
						    const struct nvml_placement *pl, void **gi)
{
	const struct fake_profile *t;
	struct fake_mig *m;
	unsigned size = 0;

	DEVICE(h);
	if (mig || g->mig_current != 1)
		return ERR_NOT_SUPPORTED;
	if (!pl || !gi || !(t = placement_of(g, profile_id, pl->start, &size)) || size != pl->size)
		return ERR_INVALID_ARGUMENT;
	if (overlaps(g, pl->start, size) || !(m = make_gi(g, t, pl->start, size, 0)))
		return ERR_INSUFFICIENT_RESOURCES;
	save_state();
	*gi = &m->gi_handle;
	return OK;
}

EXPORT int nvmlDeviceCreateGpuInstanceWithPlacement(void *h, unsigned profile_id,
						    const struct nvml_placement *pl, void **gi)
{
	pthread_mutex_lock(&mig_lock);
	int err = nvmlDeviceCreateGpuInstanceWithPlacement_locked(h, profile_id, pl, gi);
	pthread_mutex_unlock(&mig_lock);
	return err;
}

EXPORT int nvmlGpuInstanceDestroy(void *gi);
static int nvmlGpuInstanceDestroy_locked(void *gi)
{
	struct fake_mig *m = gi_of(gi);

	if (!m)
		return initialized ? ERR_INVALID_ARGUMENT : ERR_UNINITIALIZED;
	if (m->has_ci)
		return ERR_IN_USE;
	m->live = 0;
	save_state();
	return OK;
}

EXPORT int nvmlGpuInstanceDestroy(void *gi)
{
	pthread_mutex_lock(&mig_lock);
	int err = nvmlGpuInstanceDestroy_locked(gi);
	pthread_mutex_unlock(&mig_lock);
	return err;
}

/* NVML_COMPUTE_INSTANCE_PROFILE_<N>_SLICE indexes 0..6 -> slices */
static const unsigned ci_profile_slices[] = { 1, 2, 3, 4, 7, 8, 6 };

EXPORT int nvmlGpuInstanceGetComputeInstanceProfileInfo(void *gi, unsigned profile, unsigned eng,
							struct nvml_ci_profile_v1 *info);
EXPORT int nvmlGpuInstanceGetComputeInstanceProfileInfo(void *gi, unsigned profile, unsigned eng,
							struct nvml_ci_profile_v1 *info)
{
	struct fake_mig *m = gi_of(gi);

	if (!m || !info || eng != 0)
		return initialized ? ERR_INVALID_ARGUMENT : ERR_UNINITIALIZED;
	if (profile >= sizeof(ci_profile_slices) / sizeof(*ci_profile_slices) ||
	    ci_profile_slices[profile] > m->gi_slices)
		return ERR_NOT_SUPPORTED;
	*info = (struct nvml_ci_profile_v1){ profile, ci_profile_slices[profile],
					     m->gi_slices / ci_profile_slices[profile],
					     m->mp * ci_profile_slices[profile] / m->gi_slices,
					     m->ce, m->dec, m->enc, m->jpeg, m->ofa };
	return OK;
}

EXPORT int nvmlGpuInstanceCreateComputeInstance(void *gi, unsigned profile_id, void **ci);
static int nvmlGpuInstanceCreateComputeInstance_locked(void *gi, unsigned profile_id, void **ci)
{
	struct fake_mig *m = gi_of(gi);
	const char *fail = getenv("FAKE_NVML_FAIL");

	if (!m || !ci)
		return initialized ? ERR_INVALID_ARGUMENT : ERR_UNINITIALIZED;
	if (profile_id >= sizeof(ci_profile_slices) / sizeof(*ci_profile_slices) ||
	    ci_profile_slices[profile_id] != m->gi_slices)
		return ERR_NOT_SUPPORTED;	/* only instances spanning their GPU instance */
	if ((fail && strstr(fail, "create-ci")) || m->has_ci)
		return ERR_INSUFFICIENT_RESOURCES;
	m->has_ci = 1;
	m->ci = 0;
	save_state();
	*ci = &m->ci_handle;
	return OK;
}

EXPORT int nvmlGpuInstanceCreateComputeInstance(void *gi, unsigned profile_id, void **ci)
{
	pthread_mutex_lock(&mig_lock);
	int err = nvmlGpuInstanceCreateComputeInstance_locked(gi, profile_id, ci);
	pthread_mutex_unlock(&mig_lock);
	return err;
}

EXPORT int nvmlGpuInstanceGetComputeInstanceById(void *gi, unsigned id, void **ci);
EXPORT int nvmlGpuInstanceGetComputeInstanceById(void *gi, unsigned id, void **ci)
{
	struct fake_mig *m = gi_of(gi);

	if (!m || !ci)
		return initialized ? ERR_INVALID_ARGUMENT : ERR_UNINITIALIZED;
	if (!m->has_ci || m->ci != id)
		return ERR_NOT_FOUND;
	*ci = &m->ci_handle;
	return OK;
}

struct nvml_ci_info {
	void *device, *gpu_instance;
	unsigned id, profile_id;
	struct nvml_placement placement;
};

EXPORT int nvmlComputeInstanceGetInfo_v2(void *ci, struct nvml_ci_info *info);
EXPORT int nvmlComputeInstanceGetInfo_v2(void *ci, struct nvml_ci_info *info)
{
	struct fake_mig *m = ci_of(ci);

	if (!m || !info)
		return initialized ? ERR_INVALID_ARGUMENT : ERR_UNINITIALIZED;
	*info = (struct nvml_ci_info){ m->parent, &m->gi_handle, m->ci, 0, { 0, m->ci_slices } };
	return OK;
}

EXPORT int nvmlComputeInstanceDestroy(void *ci);
static int nvmlComputeInstanceDestroy_locked(void *ci)
{
	struct fake_mig *m = ci_of(ci);

	if (!m)
		return initialized ? ERR_INVALID_ARGUMENT : ERR_UNINITIALIZED;
	m->has_ci = 0;
	save_state();
	return OK;
}

EXPORT int nvmlComputeInstanceDestroy(void *ci)
{
	pthread_mutex_lock(&mig_lock);
	int err = nvmlComputeInstanceDestroy_locked(ci);
	pthread_mutex_unlock(&mig_lock);
	return err;
}
