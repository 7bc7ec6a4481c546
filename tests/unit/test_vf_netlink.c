/* SPDX-License-Identifier: Apache-2.0 */
/* The rtnetlink messages that set VF settings, checked attribute by attribute. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>

#include "hal/vf_netlink.h"

/* The IFLA_VF_INFO nest of the request. */
static struct nlattr *vf_info(struct nl_msg *msg, struct ifinfomsg **ret_ifi)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *list, *info;

	assert_true(h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_SETLINK);
	*ret_ifi = nlmsg_data(h);
	list = nlmsg_find_attr(h, sizeof(struct ifinfomsg), IFLA_VFINFO_LIST);
	assert_non_null(list);
	info = nla_find(nla_data(list), nla_len(list), IFLA_VF_INFO);
	assert_non_null(info);
	return info;
}

static void test_full_settings(void **state)
{
	struct dralet_vf_settings s = DRALET_VF_SETTINGS_INIT;
	struct ifinfomsg *ifi;
	struct nl_msg *msg;
	struct nlattr *info, *a;

	(void)state;
	assert_int_equal(hal_vf_parse_mac("02:00:00:aa:bb:cc", s.mac), 0);
	s.has_mac = true;
	s.has_vlan = true;
	s.vlan = 100;
	s.qos = 3;
	s.trust = 1;
	s.spoof_check = 0;
	s.link_state = DRALET_VF_LINK_ENABLE;
	s.has_rate = true;
	s.min_tx_mbps = 1000;
	s.max_tx_mbps = 25000;
	assert_int_equal(hal_vf_build_request(7, 5, &s, &msg), 0);
	info = vf_info(msg, &ifi);
	assert_int_equal(ifi->ifi_index, 7);

	a = nla_find(nla_data(info), nla_len(info), IFLA_VF_MAC);
	assert_non_null(a);
	struct ifla_vf_mac *mac = nla_data(a);
	assert_int_equal(mac->vf, 5);
	assert_memory_equal(mac->mac, "\x02\x00\x00\xaa\xbb\xcc", 6);

	a = nla_find(nla_data(info), nla_len(info), IFLA_VF_VLAN_LIST);
	if (a) {
		struct nlattr *vi = nla_find(nla_data(a), nla_len(a), IFLA_VF_VLAN_INFO);
		assert_non_null(vi);
		struct ifla_vf_vlan_info *v = nla_data(vi);
		assert_int_equal(v->vf, 5);
		assert_int_equal(v->vlan, 100);
		assert_int_equal(v->qos, 3);
		assert_int_equal(ntohs(v->vlan_proto), 0x8100);
	} else {
		a = nla_find(nla_data(info), nla_len(info), IFLA_VF_VLAN);
		assert_non_null(a);
		struct ifla_vf_vlan *v = nla_data(a);
		assert_int_equal(v->vf, 5);
		assert_int_equal(v->vlan, 100);
		assert_int_equal(v->qos, 3);
	}

	a = nla_find(nla_data(info), nla_len(info), IFLA_VF_TRUST);
	assert_non_null(a);
	assert_int_equal(((struct ifla_vf_trust *)nla_data(a))->vf, 5);
	assert_int_equal(((struct ifla_vf_trust *)nla_data(a))->setting, 1);
	a = nla_find(nla_data(info), nla_len(info), IFLA_VF_SPOOFCHK);
	assert_non_null(a);
	assert_int_equal(((struct ifla_vf_spoofchk *)nla_data(a))->setting, 0);
	a = nla_find(nla_data(info), nla_len(info), IFLA_VF_LINK_STATE);
	assert_non_null(a);
	assert_int_equal(((struct ifla_vf_link_state *)nla_data(a))->link_state,
			 IFLA_VF_LINK_STATE_ENABLE);
	a = nla_find(nla_data(info), nla_len(info), IFLA_VF_RATE);
	assert_non_null(a);
	assert_int_equal(((struct ifla_vf_rate *)nla_data(a))->vf, 5);
	assert_int_equal(((struct ifla_vf_rate *)nla_data(a))->min_tx_rate, 1000);
	assert_int_equal(((struct ifla_vf_rate *)nla_data(a))->max_tx_rate, 25000);
	nlmsg_free(msg);
}

static void test_only_what_is_set(void **state)
{
	struct dralet_vf_settings s = DRALET_VF_SETTINGS_INIT;
	struct ifinfomsg *ifi;
	struct nl_msg *msg;
	struct nlattr *info;

	(void)state;
	s.trust = 0;
	assert_int_equal(hal_vf_build_request(3, 0, &s, &msg), 0);
	info = vf_info(msg, &ifi);
	assert_non_null(nla_find(nla_data(info), nla_len(info), IFLA_VF_TRUST));
	assert_null(nla_find(nla_data(info), nla_len(info), IFLA_VF_MAC));
	assert_null(nla_find(nla_data(info), nla_len(info), IFLA_VF_SPOOFCHK));
	assert_null(nla_find(nla_data(info), nla_len(info), IFLA_VF_RATE));
	assert_null(nla_find(nla_data(info), nla_len(info), IFLA_VF_LINK_STATE));
	nlmsg_free(msg);
}

static void test_invalid_settings(void **state)
{
	struct dralet_vf_settings s = DRALET_VF_SETTINGS_INIT;
	uint8_t mac[6];
	struct nl_msg *msg;

	(void)state;
	assert_int_equal(hal_vf_parse_mac("01:00:5e:00:00:01", mac), -EINVAL);	/* multicast */
	assert_int_equal(hal_vf_parse_mac("02:00:00:aa:bb", mac), -EINVAL);
	assert_int_equal(hal_vf_parse_mac("02:00:00:aa:bb:cc:dd", mac), -EINVAL);
	assert_int_equal(hal_vf_parse_mac("zz:00:00:aa:bb:cc", mac), -EINVAL);
	s.has_vlan = true;
	s.vlan = 4096;
	assert_int_equal(hal_vf_build_request(3, 0, &s, &msg), -EINVAL);
	s.vlan = 10;
	s.qos = 8;
	assert_int_equal(hal_vf_build_request(3, 0, &s, &msg), -EINVAL);
	s.qos = 0;
	s.has_rate = true;
	s.min_tx_mbps = 10;
	s.max_tx_mbps = 5;
	assert_int_equal(hal_vf_build_request(3, 0, &s, &msg), -EINVAL);
	s.has_rate = false;
	assert_int_equal(hal_vf_build_request(0, 0, &s, &msg), -EINVAL);
	s.link_state = 3;
	assert_int_equal(hal_vf_build_request(3, 0, &s, &msg), -EINVAL);
}

/* The reply the kernel sends for RTM_GETLINK with RTEXT_FILTER_VF: two VFs. */
static struct nl_msg *link_reply(void)
{
	struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = 7 };
	struct nlattr *list, *info;

	assert_non_null(msg);
	assert_int_equal(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
	nla_put_u32(msg, IFLA_NUM_VF, 2);
	list = nla_nest_start(msg, IFLA_VFINFO_LIST);
	for (unsigned vf = 0; vf < 2; vf++) {
		struct ifla_vf_mac mac = { .vf = vf, .mac = { 0x02, 0, 0, 0, 0, (uint8_t)(0x10 + vf) } };
		struct ifla_vf_vlan vlan = { .vf = vf, .vlan = 100 + vf, .qos = vf };
		struct ifla_vf_trust trust = { .vf = vf, .setting = vf };
		struct ifla_vf_spoofchk spoof = { .vf = vf, .setting = 1 - vf };
		struct ifla_vf_link_state link = { .vf = vf, .link_state = vf ? 2 : 0 };
		struct ifla_vf_rate rate = { .vf = vf, .min_tx_rate = 10 * vf, .max_tx_rate = 100 * vf };

		info = nla_nest_start(msg, IFLA_VF_INFO);
		nla_put(msg, IFLA_VF_MAC, sizeof(mac), &mac);
		nla_put(msg, IFLA_VF_VLAN, sizeof(vlan), &vlan);
		nla_put(msg, IFLA_VF_RATE, sizeof(rate), &rate);
		nla_put(msg, IFLA_VF_SPOOFCHK, sizeof(spoof), &spoof);
		nla_put(msg, IFLA_VF_LINK_STATE, sizeof(link), &link);
		if (vf)	/* older drivers report no trust */
			nla_put(msg, IFLA_VF_TRUST, sizeof(trust), &trust);
		nla_nest_end(msg, info);
	}
	nla_nest_end(msg, list);
	return msg;
}

static void test_get_request_and_reply(void **state)
{
	struct dralet_vf_settings s;
	struct nl_msg *msg;
	struct nlattr *a;

	(void)state;
	/* the request asks for the VF list */
	assert_int_equal(hal_vf_build_get_request(7, &msg), 0);
	assert_int_equal(nlmsg_hdr(msg)->nlmsg_type, RTM_GETLINK);
	assert_int_equal(((struct ifinfomsg *)nlmsg_data(nlmsg_hdr(msg)))->ifi_index, 7);
	a = nlmsg_find_attr(nlmsg_hdr(msg), sizeof(struct ifinfomsg), IFLA_EXT_MASK);
	assert_non_null(a);
	assert_int_equal(nla_get_u32(a), RTEXT_FILTER_VF);
	nlmsg_free(msg);
	assert_int_equal(hal_vf_build_get_request(0, &msg), -EINVAL);

	msg = link_reply();
	assert_int_equal(hal_vf_parse_link(msg, 1, &s), 0);
	assert_true(s.has_mac);
	assert_memory_equal(s.mac, "\x02\x00\x00\x00\x00\x11", 6);
	assert_true(s.has_vlan);
	assert_int_equal(s.vlan, 101);
	assert_int_equal(s.qos, 1);
	assert_int_equal(s.trust, 1);
	assert_int_equal(s.spoof_check, 0);
	assert_int_equal(s.link_state, DRALET_VF_LINK_DISABLE);
	assert_true(s.has_rate);
	assert_int_equal(s.min_tx_mbps, 10);
	assert_int_equal(s.max_tx_mbps, 100);
	assert_int_equal(hal_vf_parse_link(msg, 0, &s), 0);
	assert_int_equal(s.vlan, 100);
	assert_int_equal(s.trust, -1);	/* not reported: unset */
	assert_int_equal(s.spoof_check, 1);
	assert_int_equal(s.link_state, DRALET_VF_LINK_AUTO);
	assert_int_equal(hal_vf_parse_link(msg, 2, &s), -ENOENT);
	nlmsg_free(msg);

	/* a link without VFs, and a message of another kind */
	msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
	struct ifinfomsg ifi = { .ifi_index = 3 };
	nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
	assert_int_equal(hal_vf_parse_link(msg, 0, &s), -ENOENT);
	nlmsg_free(msg);
	msg = nlmsg_alloc_simple(RTM_DELLINK, 0);
	nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO);
	assert_int_equal(hal_vf_parse_link(msg, 0, &s), -EBADMSG);
	nlmsg_free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_settings),
		cmocka_unit_test(test_only_what_is_set),
		cmocka_unit_test(test_invalid_settings),
		cmocka_unit_test(test_get_request_and_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
