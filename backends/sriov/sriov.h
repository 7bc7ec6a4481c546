/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SR-IOV family (DRA driver sriov.dralet.dev): backend "sriov" publishes
 * the virtual functions of the PFs its "pfs" option selects (selector.h),
 * whatever the PF is (NIC, NVMe, QAT, FPGA ...), as kind "vf". Option
 * "resourceName" is published as k8s.cni.cncf.io/resourceName for Multus.
 */
#ifndef DRALET_BACKENDS_SRIOV_H
#define DRALET_BACKENDS_SRIOV_H

#include <dralet/backend.h>

#define SRIOV_DRIVER "sriov.dralet.dev"
#define SRIOV_API_VERSION "sriov.dralet.dev/v1alpha1"

/* An operator's explicit selection beats every table match, so the VFs of a
 * selected NIC (nic-vf 20, rdma 30) or accelerator PF move here. */
#define SRIOV_SCORE (DRALET_SCORE_DEVICE + 5)

extern const struct dralet_backend backend_sriov;

#endif
