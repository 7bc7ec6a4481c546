/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NVML events and the GPU recovery action as a health source of the nvidia
 * backend (docs/health.md, "NVIDIA GPUs: NVML events"): the pure verdict.
 * The NVML calls (event set per device, draining it without blocking, the
 * recovery action field) are the thin shell in nvidia_health.c.
 *
 * What counts (the rule NVIDIA's k8s-device-plugin and DRA driver follow,
 * docs/health.md cites them): an XID critical error whose XID is not an
 * application error (nvidia_xid_is_application_error), and a double-bit ECC
 * error. Either makes the device Unhealthy until NVIDIA_EVENT_HOLD_S seconds
 * pass without another, like PCIe AER (agent/health/pcie_aer.h). A
 * single-bit ECC error was corrected and never counts. A recovery action
 * other than none (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) and a lost GPU
 * count while NVML says so, without a hold.
 *
 * MIG: an event carries the GPU and compute instance it happened in, or
 * NVML_NO_INSTANCE for the whole GPU. A MIG device takes the events of its
 * own instance and the whole GPU's; a full GPU takes every event of its GPU.
 */
#ifndef DRALET_BACKENDS_GPU_NVIDIA_EVENTS_H
#define DRALET_BACKENDS_GPU_NVIDIA_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvml.h"

#define NVIDIA_EVENT_HOLD_S 600

/* The cause of an Unhealthy verdict, as a taint key (the XID itself is in
 * the message). */
#define NVIDIA_XID_TAINT_KEY "dralet.dev/xid"
#define NVIDIA_ECC_TAINT_KEY "dralet.dev/ecc-double-bit"
#define NVIDIA_RECOVERY_TAINT_KEY "dralet.dev/gpu-recovery"
#define NVIDIA_LOST_TAINT_KEY "dralet.dev/gpu-lost"

/* NVML_GPU_RECOVERY_ACTION_* (nvmlDeviceGpuRecoveryAction_t) */
#define NVIDIA_RECOVERY_UNKNOWN (-1)	/* NVML does not say (old driver, no field) */
#define NVIDIA_RECOVERY_NONE 0
#define NVIDIA_RECOVERY_GPU_RESET 1
#define NVIDIA_RECOVERY_NODE_REBOOT 2
#define NVIDIA_RECOVERY_DRAIN_P2P 3
#define NVIDIA_RECOVERY_DRAIN_AND_RESET 4

/* Where a device sits on its GPU. */
struct nvidia_place {
	bool mig;		/* a MIG device: gi and ci say which */
	unsigned gi, ci;
};

/* What the verdict remembers of one device between rounds (zeroed: no fault
 * seen). */
struct nvidia_event_state {
	int64_t last_fault;		/* Unix seconds of the last fault event; 0 none */
	bool last_was_xid;		/* else it was a double-bit ECC error */
	unsigned long long xid;		/* the last fault's XID */
	unsigned faults;		/* fault events since the agent watched */
};

/* What NVML says of the device this round. */
struct nvidia_nvml_facts {
	bool lost;			/* NVML_ERROR_GPU_IS_LOST from any call */
	int recovery_action;		/* NVIDIA_RECOVERY_*, NVIDIA_RECOVERY_UNKNOWN */
	bool retired_pages_pending;	/* nvmlDeviceGetRetiredPagesPendingStatus */
	bool remap_failure, remap_pending;	/* nvmlDeviceGetRemappedRows */
};

/* XIDs of application errors (NVIDIA's skip list): the GPU stays healthy. */
bool nvidia_xid_is_application_error(unsigned long long xid);

/* A short name of a well-known XID ("GPU has fallen off the bus"), or NULL. */
const char *nvidia_xid_name(unsigned long long xid);

/* Whether event @e belongs to the device at @place (see above). */
bool nvidia_event_concerns(const struct nvml_event_data *e, const struct nvidia_place *place);

/* Notes event @e, seen at @now_s, for a device it concerns. Returns true
 * when it is a fault (and updates @st), false when it does not count. */
bool nvidia_event_note(struct nvidia_event_state *st, const struct nvml_event_data *e,
		       int64_t now_s);

/*
 * The verdict at @now_s: DRALET_HEALTH_HEALTHY, or DRALET_HEALTH_UNHEALTHY
 * with the reason in @why and the cause's taint key (a static string) in
 * *ret_taint. The first that holds wins: a lost GPU, a recovery action, a
 * fault event within the hold time, pending retired pages or a row remapping
 * failure or pending remapping (these last ones keep the generic taint,
 * *ret_taint NULL). @st may be NULL (the device has no event source).
 */
int nvidia_health_verdict(const struct nvidia_event_state *st,
			  const struct nvidia_nvml_facts *facts, int64_t now_s, char *why,
			  size_t why_size, const char **ret_taint);

#endif
