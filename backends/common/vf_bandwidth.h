/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A NIC VF shared by bandwidth (consumable capacity, include/dralet/sharing.h;
 * docs/sharing.md, "NIC VFs by bandwidth"). Opt-in with the backend option
 * sharing: "true" (sharing_option.h).
 *
 * Published: allowMultipleAllocations and a capacity "bandwidth" in bits per
 * second, the PF's link speed (class/net/<pf>/speed, Mb/s), with
 * requestPolicy validRange {min one step, max the link speed, step 100M (1M
 * when the speed is no multiple of 100 Mb/s)} and default the whole link: a
 * claim that asks for no bandwidth holds the VF alone, as before.
 *
 * A share of the whole link holds the VF alone and is prepared like an
 * exclusive claim (VfConfig allowed, no cap).
 *
 * Applied: the VF's transmit cap (IFLA_VF_RATE max_tx_rate, Mb/s, through
 * the PF with rtnetlink; dralet_vf_set) is the sum of the bandwidth of the
 * shares prepared on it: each share's prepare adds its amount (rounded up to
 * whole Mb/s), unprepare takes it away again, so with the last share gone
 * the cap is back where it was. Prepare and unprepare of one device run
 * under its lock, so the read-modify-write of the cap is not raced.
 *
 * Undo keys (struct dralet_undo), both written before or right after the
 * change:
 *   bandwidth         "pf=<ifname> ifindex=<n> vf=<n> mbps=<share> before=<cap>"
 *                     written before the cap changes;
 *   bandwidthApplied  "1", written once the cap was raised.
 * A rollback after a crash between the two finds the cap still at "before"
 * (nothing to take back) or raised (taken back).
 *
 * Only a VF of a PF with a network interface and a known link speed is
 * shared: the cap is set through the PF. A PF's own bandwidth cannot be
 * capped per pod through the kernel (no per-function TX rate on a PF), so
 * PFs are not shared by bandwidth.
 */
#ifndef DRALET_BACKENDS_VF_BANDWIDTH_H
#define DRALET_BACKENDS_VF_BANDWIDTH_H

#include <stdbool.h>
#include <stdint.h>

#include <dralet/backend.h>
#include <dralet/prepare.h>

/* Makes @dev (VF @vf) shareable by bandwidth when the backend's sharing
 * option is on and the PF's link speed is known. */
void vf_bandwidth_publish(struct dralet_backend_ctx *ctx, struct dralet_device *dev,
			  const struct dralet_pci_func *vf);

/* The step of the bandwidth policy for a link of @speed_mbps, in Mb/s. */
int64_t vf_bandwidth_step_mbps(int64_t speed_mbps);

/* True when share @req consumes all of @dev's bandwidth: it holds the VF
 * alone (no other share fits beside it). */
bool vf_bandwidth_whole(const struct dralet_device *dev, const struct dralet_prepare_req *req);

/* Adds share @req's bandwidth to VF @vf's transmit cap (nothing for an
 * exclusive allocation). The undo state is recorded first. -EINVAL when
 * the share names no bandwidth, -EOPNOTSUPP when the PF's driver cannot cap
 * a VF's rate (the reason is in the context). */
int vf_bandwidth_prepare(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
			 const struct dralet_prepare_req *req);

/* Takes the share's bandwidth back out of the cap, as @undo says
 * (idempotent for a VF or PF that is gone; nothing without the keys). */
int vf_bandwidth_restore(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo);

#endif
