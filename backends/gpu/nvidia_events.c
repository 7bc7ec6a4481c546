/* SPDX-License-Identifier: Apache-2.0 */
/* NVML events as a health source: the pure verdict (nvidia_events.h). */
#include "nvidia_events.h"

#include <inttypes.h>
#include <stdio.h>

#include <dralet/device.h>

bool nvidia_xid_is_application_error(unsigned long long xid)
{
	/* k8s-device-plugin internal/rm/health.go, getDisabledHealthCheckXids
	 * (docs/health.md cites the version): graphics engine exception, GPU
	 * memory page fault, GPU stopped processing, preemptive cleanup, video
	 * processor exception, context switch timeout */
	static const unsigned long long application[] = { 13, 31, 43, 45, 68, 109 };

	for (size_t i = 0; i < sizeof(application) / sizeof(*application); i++)
		if (xid == application[i])
			return true;
	return false;
}

const char *nvidia_xid_name(unsigned long long xid)
{
	/* NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) */
	static const struct {
		unsigned long long xid;
		const char *name;
	} names[] = {
		{ 48, "double-bit ECC error" },
		{ 63, "ECC page retirement or row remapping event" },
		{ 64, "ECC page retirement or row remapping failure" },
		{ 74, "NVLink error" },
		{ 79, "GPU has fallen off the bus" },
		{ 92, "high single-bit ECC error rate" },
		{ 94, "contained ECC error" },
		{ 95, "uncontained ECC error" },
		{ 119, "GSP RPC timeout" },
		{ 120, "GSP error" },
		{ 154, "GPU recovery action changed" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (names[i].xid == xid)
			return names[i].name;
	return NULL;
}

bool nvidia_event_concerns(const struct nvml_event_data *e, const struct nvidia_place *place)
{
	if (!place->mig || e->gpu_instance == NVML_NO_INSTANCE)
		return true;
	return e->gpu_instance == place->gi &&
	       (e->compute_instance == NVML_NO_INSTANCE || e->compute_instance == place->ci);
}

bool nvidia_event_note(struct nvidia_event_state *st, const struct nvml_event_data *e,
		       int64_t now_s)
{
	bool xid = e->type == NVML_EVENT_XID;

	if (xid ? nvidia_xid_is_application_error(e->data) : e->type != NVML_EVENT_DOUBLE_BIT_ECC)
		return false;
	st->last_fault = now_s;
	st->last_was_xid = xid;
	st->xid = xid ? e->data : 0;
	st->faults++;
	return true;
}

static const char *recovery_words(int action)
{
	switch (action) {
	case NVIDIA_RECOVERY_GPU_RESET: return "GPU reset required";
	case NVIDIA_RECOVERY_NODE_REBOOT: return "node reboot required";
	case NVIDIA_RECOVERY_DRAIN_P2P: return "peer-to-peer traffic must be drained";
	case NVIDIA_RECOVERY_DRAIN_AND_RESET:
		return "drain and reset required (the GPU runs at reduced capacity)";
	default: return NULL;
	}
}

static void fault_words(const struct nvidia_event_state *st, char *buf, size_t size)
{
	const char *name = st->last_was_xid ? nvidia_xid_name(st->xid) : NULL;

	if (!st->last_was_xid)
		snprintf(buf, size, "double-bit ECC error");
	else if (name)
		snprintf(buf, size, "XID %llu (%s)", st->xid, name);
	else
		snprintf(buf, size, "XID %llu", st->xid);
}

int nvidia_health_verdict(const struct nvidia_event_state *st,
			  const struct nvidia_nvml_facts *facts, int64_t now_s, char *why,
			  size_t why_size, const char **ret_taint)
{
	const char *words;
	char fault[96];

	*ret_taint = NULL;
	if (facts->lost) {
		snprintf(why, why_size, "NVML: the GPU is lost (fallen off the bus or otherwise "
					"inaccessible)");
		*ret_taint = NVIDIA_LOST_TAINT_KEY;
		return DRALET_HEALTH_UNHEALTHY;
	}
	if (facts->recovery_action > NVIDIA_RECOVERY_NONE) {
		words = recovery_words(facts->recovery_action);
		if (words)
			snprintf(why, why_size, "NVML: %s (GPU recovery action %d)", words,
				 facts->recovery_action);
		else
			snprintf(why, why_size, "NVML: GPU recovery action %d (unknown to dralet)",
				 facts->recovery_action);
		*ret_taint = NVIDIA_RECOVERY_TAINT_KEY;
		return DRALET_HEALTH_UNHEALTHY;
	}
	if (st && st->last_fault && now_s - st->last_fault < NVIDIA_EVENT_HOLD_S) {
		fault_words(st, fault, sizeof(fault));
		snprintf(why, why_size, "NVML: %s %" PRId64 " s ago, %u fault event(s) since the "
					"agent watched (Unhealthy until %d s pass without one)",
			 fault, now_s - st->last_fault, st->faults, NVIDIA_EVENT_HOLD_S);
		*ret_taint = st->last_was_xid ? NVIDIA_XID_TAINT_KEY : NVIDIA_ECC_TAINT_KEY;
		return DRALET_HEALTH_UNHEALTHY;
	}
	if (facts->retired_pages_pending) {
		snprintf(why, why_size, "NVML: retired memory pages are pending (a GPU reset "
					"retires them)");
		return DRALET_HEALTH_UNHEALTHY;
	}
	if (facts->remap_failure || facts->remap_pending) {
		snprintf(why, why_size, "NVML: %s", facts->remap_failure
					     ? "row remapping failed"
					     : "a row remapping is pending (a GPU reset applies it)");
		return DRALET_HEALTH_UNHEALTHY;
	}
	return DRALET_HEALTH_HEALTHY;
}
