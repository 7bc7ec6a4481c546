/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The network family (DRA driver net.dralet.dev):
 *   rdma    RDMA-capable functions (an ibdev, soft-RoCE included), kind "rdma"
 *   nic-vf  virtual functions of NIC PFs (class 0x02), kind "vf"
 * Plain NIC PFs are not published: they carry the host's networking.
 */
#ifndef DRALET_BACKENDS_NET_H
#define DRALET_BACKENDS_NET_H

#include <dralet/backend.h>

#define NET_DRIVER "net.dralet.dev"
#define NET_API_VERSION "net.dralet.dev/v1alpha1"

/* Scores on the scale of backend.h: an ibdev is as specific as a device id;
 * a NIC's VF is a vendor+class kind of match. The sriov backend's explicit
 * selection (35) beats both. */
#define RDMA_SCORE DRALET_SCORE_DEVICE
#define NIC_VF_SCORE DRALET_SCORE_VENDOR_CLASS

extern const struct dralet_backend backend_rdma;
extern const struct dralet_backend backend_nic_vf;

#endif
