/* SPDX-License-Identifier: Apache-2.0 */
#include "hal/vf_netlink.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>

int hal_vf_parse_mac(const char *text, uint8_t mac[6])
{
	unsigned b[6];
	char tail;

	if (!text || sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4],
			    &b[5], &tail) != 6 || strlen(text) != 17)
		return -EINVAL;
	if (b[0] & 1)
		return -EINVAL;	/* multicast/broadcast is not a station address */
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int hal_vf_settings_valid(const struct dralet_vf_settings *s)
{
	if (s->has_vlan && (s->vlan > 4095 || s->qos > 7))
		return -EINVAL;
	if (s->trust < -1 || s->trust > 1 || s->spoof_check < -1 || s->spoof_check > 1)
		return -EINVAL;
	if (s->link_state < -1 || s->link_state > DRALET_VF_LINK_DISABLE)
		return -EINVAL;
	if (s->has_rate && s->max_tx_mbps && s->min_tx_mbps > s->max_tx_mbps)
		return -EINVAL;
	if (s->has_mac && (s->mac[0] & 1))
		return -EINVAL;
	return 0;
}

/* A link carrying the VF changes; the caller puts both. */
static int vf_change(unsigned vf, const struct dralet_vf_settings *s, struct rtnl_link **ret_link)
{
	struct rtnl_link *link = rtnl_link_alloc();
	struct rtnl_link_vf *v = rtnl_link_vf_alloc();
	int r = -ENOMEM;

	if (!link || !v)
		goto out;
	rtnl_link_vf_set_index(v, vf);
	if (s->has_mac) {
		struct nl_addr *addr = nl_addr_build(AF_LLC, s->mac, 6);
		if (!addr)
			goto out;
		rtnl_link_vf_set_addr(v, addr);
		nl_addr_put(addr);
	}
	if (s->has_vlan) {
		nl_vf_vlans_t *vlans;
		if (rtnl_link_vf_vlan_alloc(&vlans, 1) < 0)
			goto out;
		vlans->vlans[0].vf_vlan = s->vlan;
		vlans->vlans[0].vf_vlan_qos = s->qos;
		vlans->vlans[0].vf_vlan_proto = 0x8100;	/* 802.1Q */
		rtnl_link_vf_set_vlans(v, vlans);
		rtnl_link_vf_vlan_put(vlans);
	}
	if (s->trust >= 0)
		rtnl_link_vf_set_trust(v, (uint32_t)s->trust);
	if (s->spoof_check >= 0)
		rtnl_link_vf_set_spoofchk(v, (uint32_t)s->spoof_check);
	if (s->link_state >= 0)
		rtnl_link_vf_set_linkstate(v, (uint32_t)s->link_state);
	if (s->has_rate) {
		struct nl_vf_rate rate = {
			.api = RTNL_LINK_VF_RATE_API_NEW,
			.min_tx_rate = s->min_tx_mbps,
			.max_tx_rate = s->max_tx_mbps,
		};
		rtnl_link_vf_set_rate(v, &rate);
	}
	r = rtnl_link_vf_add(link, v);
	if (r < 0) {
		r = -ENOMEM;
		goto out;
	}
	*ret_link = link;
	link = NULL;
	r = 0;
out:
	rtnl_link_vf_put(v);
	rtnl_link_put(link);
	return r;
}

int hal_vf_build_request(int pf_ifindex, unsigned vf, const struct dralet_vf_settings *s,
			 struct nl_msg **ret_msg)
{
	struct rtnl_link *orig, *change = NULL;
	int r;

	if (pf_ifindex <= 0 || (r = hal_vf_settings_valid(s)) < 0)
		return -EINVAL;
	orig = rtnl_link_alloc();
	if (!orig)
		return -ENOMEM;
	rtnl_link_set_ifindex(orig, pf_ifindex);
	r = vf_change(vf, s, &change);
	if (r == 0) {
		r = rtnl_link_build_change_request(orig, change, 0, ret_msg);
		r = r < 0 ? -EINVAL : 0;
	}
	rtnl_link_put(change);
	rtnl_link_put(orig);
	return r;
}

/* libnl error codes are positive NLE_*; the kernel's errno is lost in
 * translation for some, so map the common ones back. */
static int errno_of(int r)
{
	switch (r < 0 ? -r : 0) {
	case 0: return 0;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	case NLE_PERM: return -EPERM;
	case NLE_NODEV: case NLE_OBJ_NOTFOUND: return -ENODEV;
	case NLE_INVAL: case NLE_RANGE: return -EINVAL;
	case NLE_BUSY: return -EBUSY;
	case NLE_NOMEM: return -ENOMEM;
	default: return -EIO;
	}
}

int hal_vf_apply(int pf_ifindex, unsigned vf, const struct dralet_vf_settings *s)
{
	struct nl_sock *sock;
	struct nl_msg *msg;
	int r = hal_vf_build_request(pf_ifindex, vf, s, &msg);

	if (r < 0)
		return r;
	sock = nl_socket_alloc();
	if (!sock) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	r = nl_connect(sock, NETLINK_ROUTE);
	if (r == 0)
		r = nl_send_sync(sock, msg);	/* frees msg, waits for the ACK */
	else
		nlmsg_free(msg);
	nl_socket_free(sock);
	return errno_of(r);
}

int hal_vf_build_get_request(int pf_ifindex, struct nl_msg **ret_msg)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = pf_ifindex };
	struct nl_msg *msg;

	if (pf_ifindex <= 0)
		return -EINVAL;
	msg = nlmsg_alloc_simple(RTM_GETLINK, 0);
	if (!msg)
		return -ENOMEM;
	if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
	    nla_put_u32(msg, IFLA_EXT_MASK, RTEXT_FILTER_VF) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	*ret_msg = msg;
	return 0;
}

/* The payload of attribute @a when it holds at least @size bytes. */
static const void *payload(const struct nlattr *a, size_t size)
{
	return a && nla_len(a) >= (int)size ? nla_data(a) : NULL;
}

/* Fills @s from one IFLA_VF_INFO nest; false when it is another VF's. */
static bool parse_vf_info(const struct nlattr *info, unsigned vf, struct dralet_vf_settings *s)
{
	struct nlattr *tb[IFLA_VF_MAX + 1];
	const struct ifla_vf_mac *mac;
	const struct ifla_vf_vlan *vlan;
	const struct ifla_vf_trust *trust;
	const struct ifla_vf_spoofchk *spoof;
	const struct ifla_vf_link_state *link;
	const struct ifla_vf_rate *rate;
	const struct ifla_vf_tx_rate *tx_rate;

	if (nla_parse_nested(tb, IFLA_VF_MAX, (struct nlattr *)info, NULL) < 0)
		return false;
	/* every VF reports its MAC (the kernel always puts IFLA_VF_MAC first) */
	mac = payload(tb[IFLA_VF_MAC], sizeof(*mac));
	if (!mac || mac->vf != vf)
		return false;
	s->has_mac = true;
	memcpy(s->mac, mac->mac, 6);
	if ((vlan = payload(tb[IFLA_VF_VLAN], sizeof(*vlan)))) {
		s->has_vlan = true;
		s->vlan = vlan->vlan;
		s->qos = vlan->qos;
	}
	if ((trust = payload(tb[IFLA_VF_TRUST], sizeof(*trust))) && trust->setting <= 1)
		s->trust = (int)trust->setting;
	if ((spoof = payload(tb[IFLA_VF_SPOOFCHK], sizeof(*spoof))) && spoof->setting <= 1)
		s->spoof_check = (int)spoof->setting;
	if ((link = payload(tb[IFLA_VF_LINK_STATE], sizeof(*link))) &&
	    link->link_state <= DRALET_VF_LINK_DISABLE)
		s->link_state = (int)link->link_state;
	if ((rate = payload(tb[IFLA_VF_RATE], sizeof(*rate)))) {
		s->has_rate = true;
		s->min_tx_mbps = rate->min_tx_rate;
		s->max_tx_mbps = rate->max_tx_rate;
	} else if ((tx_rate = payload(tb[IFLA_VF_TX_RATE], sizeof(*tx_rate)))) {
		s->has_rate = true;
		s->max_tx_mbps = tx_rate->rate;
	}
	return true;
}

int hal_vf_parse_link(struct nl_msg *reply, unsigned vf, struct dralet_vf_settings *ret)
{
	struct nlmsghdr *h = nlmsg_hdr(reply);
	struct nlattr *list, *info;
	int rem;

	if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(struct ifinfomsg)))
		return -EBADMSG;
	list = nlmsg_find_attr(h, sizeof(struct ifinfomsg), IFLA_VFINFO_LIST);
	if (!list)
		return -ENOENT;
	nla_for_each_nested(info, list, rem) {
		struct dralet_vf_settings s = DRALET_VF_SETTINGS_INIT;
		if (nla_type(info) == IFLA_VF_INFO && parse_vf_info(info, vf, &s)) {
			*ret = s;
			return 0;
		}
	}
	return -ENOENT;
}

struct get_reply {
	unsigned vf;
	int r;
	struct dralet_vf_settings s;
};

static int on_reply(struct nl_msg *msg, void *arg)
{
	struct get_reply *g = arg;

	g->r = hal_vf_parse_link(msg, g->vf, &g->s);
	return NL_OK;
}

int hal_vf_get(int pf_ifindex, unsigned vf, struct dralet_vf_settings *ret)
{
	struct get_reply g = { .vf = vf, .r = -ENOENT };
	struct nl_sock *sock;
	struct nl_msg *msg;
	int r = hal_vf_build_get_request(pf_ifindex, &msg);

	if (r < 0)
		return r;
	sock = nl_socket_alloc();
	if (!sock) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	/* one reply and no ACK: nl_recvmsgs returns after it (or the kernel's error) */
	nl_socket_disable_auto_ack(sock);
	r = nl_connect(sock, NETLINK_ROUTE);
	if (r == 0)
		r = nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, on_reply, &g);
	if (r == 0)
		r = nl_send_auto(sock, msg);
	if (r >= 0)
		r = nl_recvmsgs_default(sock);
	nlmsg_free(msg);
	nl_socket_free(sock);
	if (r < 0)
		return errno_of(r);
	if (g.r < 0)
		return g.r;
	*ret = g.s;
	return 0;
}
