/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV VF settings (MAC, VLAN, trust, spoof check, link state, rate) through
 * rtnetlink on the PF (libnl-route): RTM_SETLINK with IFLA_VFINFO_LIST /
 * IFLA_VF_INFO (linux-devices.md 2.3). Building the message is separate
 * from sending it so the messages are unit-tested without a NIC.
 */
#ifndef DRALET_HAL_VF_NETLINK_H
#define DRALET_HAL_VF_NETLINK_H

#include <stdbool.h>
#include <stdint.h>

#include <dralet/pci.h>

struct nl_msg;

/* Parses "aa:bb:cc:dd:ee:ff" into @mac; -EINVAL unless it is a unicast MAC. */
int hal_vf_parse_mac(const char *text, uint8_t mac[6]);
/* Checks ranges (VLAN, QoS, rate order); -EINVAL with nothing changed. */
int hal_vf_settings_valid(const struct dralet_vf_settings *s);

/* Builds the RTM_SETLINK request for VF @vf of the PF with @pf_ifindex.
 * *ret_msg is freed with nlmsg_free(). */
int hal_vf_build_request(int pf_ifindex, unsigned vf, const struct dralet_vf_settings *s,
			 struct nl_msg **ret_msg);

/* Builds the RTM_GETLINK request for the PF with @pf_ifindex that asks for
 * its VF list (IFLA_EXT_MASK = RTEXT_FILTER_VF). Freed with nlmsg_free(). */
int hal_vf_build_get_request(int pf_ifindex, struct nl_msg **ret_msg);

/*
 * Reads the settings of VF @vf from the PF's RTM_NEWLINK reply @reply: MAC,
 * VLAN and QoS, trust, spoof check, link state and rate, each only when the
 * PF reports it (the others stay unset, as DRALET_VF_SETTINGS_INIT has them).
 * -ENOENT when the reply lists no VF @vf, -EBADMSG when it is malformed.
 */
int hal_vf_parse_link(struct nl_msg *reply, unsigned vf, struct dralet_vf_settings *ret);

/* Asks the kernel for VF @vf's settings now (the two above over a socket). */
int hal_vf_get(int pf_ifindex, unsigned vf, struct dralet_vf_settings *ret);

/* Sends it in the current network namespace and waits for the kernel's ACK.
 * Returns 0 or the kernel's -errno (-EOPNOTSUPP when the PF driver does not
 * support a setting). */
int hal_vf_apply(int pf_ifindex, unsigned vf, const struct dralet_vf_settings *s);

#endif
