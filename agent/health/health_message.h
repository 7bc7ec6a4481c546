/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NodeWatchResourcesResponse (v1alpha1.DRAResourceHealth, kubelet-contract.md
 * section 3; the same messages serve v1.DRAResourceHealth) from a health
 * table: the complete list of the driver's devices, each with the node's
 * pool name, its name, HEALTHY/UNHEALTHY/UNKNOWN, the Unix seconds its health
 * was determined, @timeout_s (after which the kubelet takes it for Unknown;
 * 0: its default) and the reason when not healthy. Pure: bytes out, no I/O.
 */
#ifndef DRALET_HEALTH_MESSAGE_H
#define DRALET_HEALTH_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

struct health_table;

/*
 * Packs the message for every entry of @t under @pool. On success
 * *ret_buf (caller frees; never NULL, even for an empty message) holds
 * *ret_len bytes. Returns 0 or -ENOMEM.
 */
int health_message_pack(const struct health_table *t, const char *pool, int64_t timeout_s,
			uint8_t **ret_buf, size_t *ret_len);

#endif
