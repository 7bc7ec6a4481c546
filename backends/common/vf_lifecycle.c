/* SPDX-License-Identifier: Apache-2.0 */
#include "vf_lifecycle.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dralet/pci_ctl.h>

#include "pcidev.h"

#define VFIO "vfio-pci"
#define DRIVER_MAX 64

/* ---- the IOMMU group ---- */

int vf_iommu_check(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf)
{
	char rel[64], path[4096], driver[DRIVER_MAX], override[DRIVER_MAX], users[384] = "";
	struct dirent *de;
	size_t o = 0, n_users = 0;
	DIR *dir;

	if (vf->iommu_group < 0) {
		dralet_ctx_error(ctx, "VF %s has no IOMMU group, so vfio cannot hand it over; "
				 "turn the IOMMU on (intel_iommu=on or amd_iommu=on)", vf->address);
		return -EPERM;
	}
	/* alone in its group at discovery: the group's members change only when a
	 * PCI function comes or goes, and the daemon rediscovers then; a shared
	 * group's neighbours can change drivers at any time, so they are read */
	if (vf->iommu_group_size == 1)
		return 0;
	snprintf(rel, sizeof(rel), "kernel/iommu_groups/%d/devices", vf->iommu_group);
	if (dralet_root_path(ctx, DRALET_ROOT_SYS, rel, path, sizeof(path)) < 0 ||
	    !(dir = opendir(path))) {
		dralet_ctx_error(ctx, "VF %s: cannot list the devices of its IOMMU group %d: %s",
				 vf->address, vf->iommu_group, strerror(errno));
		return -EPERM;
	}
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, vf->address) ||
		    pcidev_is_bridge(ctx, de->d_name))
			continue;
		if (dralet_pci_binding(ctx, de->d_name, driver, sizeof(driver), override,
				       sizeof(override)) < 0 || !driver[0])
			continue;	/* gone, or no driver: nothing reaches it */
		if (n_users++ < 3 && o < sizeof(users)) {
			int w = snprintf(users + o, sizeof(users) - o, "%s%s (bound to %s)",
					 o ? ", " : "", de->d_name, driver);
			o += w > 0 ? (size_t)w : 0;
		}
	}
	closedir(dir);
	if (!n_users)
		return 0;
	dralet_ctx_error(ctx, "VF %s cannot be handed over through vfio: its IOMMU group %d "
			 "also holds %s%s; a container given /dev/vfio/%d would reach every device "
			 "of the group, and vfio refuses a group whose devices other drivers use. "
			 "Request a VF that has its group alone (attribute vfioCapable == true)",
			 vf->address, vf->iommu_group, users, n_users > 3 ? " and more" : "",
			 vf->iommu_group);
	return -EPERM;
}

/* ---- undo values ---- */

static void mac_text(const uint8_t mac[6], char *buf, size_t size)
{
	snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
}

static bool mac_parse(const char *s, uint8_t mac[6])
{
	unsigned b[6];
	int n = 0;

	if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4],
			 &b[5], &n) != 6 || n != 17 || s[n])
		return false;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return true;
}

/* Appends " key=value" to @buf. */
static void add_field(char *buf, size_t size, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add_field(char *buf, size_t size, const char *key, const char *fmt, ...)
{
	size_t o = strlen(buf);
	va_list ap;

	if (o + 1 >= size)
		return;
	o += (size_t)snprintf(buf + o, size - o, "%s%s=", o ? " " : "", key);
	if (o >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + o, size - o, fmt, ap);
	va_end(ap);
}

/* ---- VF settings ---- */

/* What @c asks for, as settings. */
static void wanted_settings(const struct vf_config *c, struct dralet_vf_settings *s)
{
	*s = (struct dralet_vf_settings)DRALET_VF_SETTINGS_INIT;
	if (c->has_mac) {
		s->has_mac = true;
		mac_parse(c->mac, s->mac);
	}
	if (c->has_vlan) {
		s->has_vlan = true;
		s->vlan = (unsigned)c->vlan;
		s->qos = c->has_qos ? (unsigned)c->qos : 0;
	}
	if (c->has_trust)
		s->trust = c->trust;
	if (c->has_spoofchk)
		s->spoof_check = c->spoofchk;
	s->link_state = c->link_state;
	if (c->has_rate) {
		s->has_rate = true;
		s->min_tx_mbps = (unsigned)c->min_tx_rate;
		s->max_tx_mbps = (unsigned)c->max_tx_rate;
	}
}

/*
 * The vfSettings undo value: the PF's interface, the VF, and the values @want
 * will change as they are now (@now; what the PF does not report gets the
 * kernel's default back: no MAC, no VLAN, trust off, spoof check on, link
 * auto, no rate limit), in one value so it costs one checkpoint write:
 *   "pf=ens1f0 ifindex=7 vf=2 mac=02:11:22:33:44:55 vlan=5 qos=0 trust=0"
 */
static void settings_undo_text(const struct dralet_netdev *pf, int vf_index,
			       const struct dralet_vf_settings *want,
			       const struct dralet_vf_settings *now, char *buf, size_t size)
{
	static const uint8_t zero[6];
	char mac[18];

	buf[0] = '\0';
	add_field(buf, size, "pf", "%s", pf->ifname);
	add_field(buf, size, "ifindex", "%d", pf->ifindex);
	add_field(buf, size, "vf", "%d", vf_index);
	if (want->has_mac) {
		mac_text(now->has_mac ? now->mac : zero, mac, sizeof(mac));
		add_field(buf, size, "mac", "%s", mac);
	}
	if (want->has_vlan) {
		add_field(buf, size, "vlan", "%u", now->has_vlan ? now->vlan : 0);
		add_field(buf, size, "qos", "%u", now->has_vlan ? now->qos : 0);
	}
	if (want->trust >= 0)
		add_field(buf, size, "trust", "%d", now->trust >= 0 ? now->trust : 0);
	if (want->spoof_check >= 0)
		add_field(buf, size, "spoofChk", "%d", now->spoof_check >= 0 ? now->spoof_check : 1);
	if (want->link_state >= 0)
		add_field(buf, size, "linkState", "%d",
			  now->link_state >= 0 ? now->link_state : DRALET_VF_LINK_AUTO);
	if (want->has_rate) {
		add_field(buf, size, "minTxRate", "%u", now->has_rate ? now->min_tx_mbps : 0);
		add_field(buf, size, "maxTxRate", "%u", now->has_rate ? now->max_tx_mbps : 0);
	}
}

/* The settings to restore from the vfSettings undo value; false when there
 * is none (or it cannot be read). @ifname receives the PF's interface name. */
static bool previous_settings(const struct dralet_undo *undo, char *ifname, size_t ifsize,
			      struct dralet_netdev *pf, unsigned *vf, struct dralet_vf_settings *s)
{
	const char *text = dralet_undo_get(undo, "vfSettings");
	char copy[512], *save = NULL;
	long ifindex = -1, index = -1, min = -1, max = -1;

	*s = (struct dralet_vf_settings)DRALET_VF_SETTINGS_INIT;
	if (!text || strlen(text) >= sizeof(copy))
		return false;
	snprintf(copy, sizeof(copy), "%s", text);
	ifname[0] = '\0';
	for (char *f = strtok_r(copy, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
		char *v = strchr(f, '=');
		long n;
		if (!v)
			return false;
		*v++ = '\0';
		n = strtol(v, NULL, 10);
		if (!strcmp(f, "pf"))
			snprintf(ifname, ifsize, "%s", v);
		else if (!strcmp(f, "ifindex"))
			ifindex = n;
		else if (!strcmp(f, "vf"))
			index = n;
		else if (!strcmp(f, "mac"))
			s->has_mac = mac_parse(v, s->mac);
		else if (!strcmp(f, "vlan")) {
			s->has_vlan = true;
			s->vlan = (unsigned)n;
		} else if (!strcmp(f, "qos"))
			s->qos = (unsigned)n;
		else if (!strcmp(f, "trust"))
			s->trust = (int)n;
		else if (!strcmp(f, "spoofChk"))
			s->spoof_check = (int)n;
		else if (!strcmp(f, "linkState"))
			s->link_state = (int)n;
		else if (!strcmp(f, "minTxRate"))
			min = n;
		else if (!strcmp(f, "maxTxRate"))
			max = n;
	}
	if (!ifname[0] || ifindex <= 0 || index < 0)
		return false;
	if (min >= 0 && max >= 0) {
		s->has_rate = true;
		s->min_tx_mbps = (unsigned)min;
		s->max_tx_mbps = (unsigned)max;
	}
	*pf = (struct dralet_netdev){ .ifname = ifname, .ifindex = (int)ifindex };
	*vf = (unsigned)index;
	return true;
}

/* ---- binding ---- */

static bool is_vfio(const char *driver)
{
	return !strcmp(driver, VFIO);
}

int vf_lifecycle_restore(struct dralet_backend_ctx *ctx, const struct dralet_undo *undo)
{
	const char *address = dralet_undo_get(undo, "pciAddress");
	const char *rebound = dralet_undo_get(undo, "rebound");
	struct dralet_vf_settings s;
	struct dralet_netdev pf;
	char driver[DRIVER_MAX], override[DRIVER_MAX], ifname[64];
	unsigned vf;
	int r;

	if (!address)
		return 0;	/* prepare changed nothing */
	r = dralet_pci_binding(ctx, address, driver, sizeof(driver), override, sizeof(override));
	if (r == -ENODEV)
		return 0;	/* the VF is gone (PF removed, VFs recreated): nothing to put back */
	if (r < 0)
		return r;
	if (rebound) {
		const char *prev = dralet_undo_get(undo, "driver");
		const char *prev_override = dralet_undo_get(undo, "driverOverride");
		if (!prev || !strcmp(prev, "none"))
			prev = "";
		if (!prev_override || !strcmp(prev_override, "none"))
			prev_override = "";
		r = dralet_pci_restore(ctx, address, prev, prev_override);
		if (r == -ENODEV)
			return 0;
		if (r < 0)
			return r;
	}
	if (previous_settings(undo, ifname, sizeof(ifname), &pf, &vf, &s)) {
		r = dralet_vf_set(ctx, &pf, vf, &s);
		if (r == -ENODEV)
			return 0;	/* the PF's interface is gone, and its VFs with it */
		if (r < 0)
			return r;
	}
	return 0;
}

/* The PF's interface for VF settings, or -EOPNOTSUPP with the reason. */
static int pf_netdev_of(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
			const struct vf_config *c, const struct dralet_netdev **ret)
{
	const struct dralet_pci_func *pf = vf->physfn;

	if (!pf) {
		dralet_ctx_error(ctx, "VfConfig.%s applies to virtual functions; %s is not one",
				 vf_config_first_setting(c), vf->address);
		return -EINVAL;
	}
	if (!pf->n_net || !pf->net[0].ifname || pf->net[0].ifindex <= 0 || vf->vf_index < 0) {
		dralet_ctx_error(ctx, "VfConfig.%s is set through the PF's network interface, and "
				 "the PF %s of VF %s has none (only NIC VFs take MAC, VLAN, trust, "
				 "spoof check, link state and rate settings)",
				 vf_config_first_setting(c), pf->address, vf->address);
		return -EOPNOTSUPP;
	}
	*ret = &pf->net[0];
	return 0;
}

/* Fails with a message unless the VF's binding can go where @c asks. */
static int decide_binding(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
			  const struct vf_config *c, bool allow_rebind, const char *driver,
			  const char **ret_target)
{
	const char *target = NULL;	/* NULL: stay; VFIO; "": the kernel's */

	if (c->has_driver && c->driver[0] && !is_vfio(driver))
		target = VFIO;
	else if (c->has_driver && !c->driver[0] && (is_vfio(driver) || !driver[0]))
		target = "";
	if (!target && !driver[0]) {
		dralet_ctx_error(ctx, "VF %s has no driver bound; ask for one with VfConfig.driver "
				 "(\"vfio-pci\", or \"\" for the kernel's driver)", vf->address);
		return -ENODEV;
	}
	if (target && !allow_rebind) {
		dralet_ctx_error(ctx, "VfConfig.driver \"%s\": %s is an RDMA device, which is "
				 "handed over on its kernel driver (%s); request it through the "
				 "nic-vf or sriov driver for vfio-pci", c->driver, vf->address,
				 driver[0] ? driver : "none");
		return -EOPNOTSUPP;
	}
	*ret_target = target;
	return 0;
}

int vf_lifecycle_prepare(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *vf,
			 const struct vf_config *c, bool allow_rebind, struct dralet_undo *undo,
			 char *driver_now, size_t size)
{
	char driver[DRIVER_MAX], override[DRIVER_MAX], msg[512];
	struct dralet_vf_settings want, now = DRALET_VF_SETTINGS_INIT;
	const struct dralet_netdev *pf_net = NULL;
	const char *target = NULL;
	int r;

	r = dralet_pci_binding(ctx, vf->address, driver, sizeof(driver), override, sizeof(override));
	if (r == -ENODEV) {
		dralet_ctx_error(ctx, "VF %s is gone (removed, or its PF's VFs were recreated)",
				 vf->address);
		return r;
	}
	if (r < 0)
		return r;
	if (vf_config_has_settings(c) && (r = pf_netdev_of(ctx, vf, c, &pf_net)) < 0)
		return r;
	if ((r = decide_binding(ctx, vf, c, allow_rebind, driver, &target)) < 0)
		return r;
	if (((target && target[0]) || (!target && is_vfio(driver))) &&
	    (r = vf_iommu_check(ctx, vf)) < 0)
		return r;
	wanted_settings(c, &want);
	if (pf_net) {
		r = dralet_vf_get(ctx, pf_net, (unsigned)vf->vf_index, &now);
		if (r < 0) {
			dralet_ctx_error(ctx, "VF %s: cannot read its settings through PF %s to "
					 "restore them later: %s", vf->address, vf->physfn->address,
					 strerror(-r));
			return r;
		}
	}

	/* What unprepare (or the rollback after a crash) needs, on disk in one
	 * write before the first change: the address and driver, the settings
	 * to put back, and "rebound" (restore the binding) when it changes. */
	if (!target && !pf_net)
		goto done;	/* nothing changes */
	{
		char text[512];
		struct dralet_undo_value values[5];
		size_t n = 0;

		values[n++] = (struct dralet_undo_value){ "pciAddress", vf->address };
		values[n++] = (struct dralet_undo_value){ "driver", driver[0] ? driver : "none" };
		if (pf_net) {
			settings_undo_text(pf_net, vf->vf_index, &want, &now, text, sizeof(text));
			values[n++] = (struct dralet_undo_value){ "vfSettings", text };
		}
		if (target) {
			values[n++] = (struct dralet_undo_value){ "driverOverride",
								  override[0] ? override : "none" };
			values[n++] = (struct dralet_undo_value){ "rebound",
								  target[0] ? VFIO : "kernel" };
		}
		r = dralet_undo_set_all(undo, values, n);
	}
	if (r < 0) {
		dralet_ctx_error(ctx, "VF %s: cannot record its state before changing it: %s",
				 vf->address, strerror(-r));
		/* what was recorded describes the VF as it still is: restoring is harmless */
		return r;
	}

	/* settings first: a kernel driver probing the VF afterwards picks up its MAC */
	if (pf_net && (r = dralet_vf_set(ctx, pf_net, (unsigned)vf->vf_index, &want)) < 0)
		goto undo;
	if (target && (r = dralet_pci_bind(ctx, vf->address, target[0] ? VFIO : NULL)) < 0)
		goto undo;
done:
	/* read again only after a change: otherwise the first read is current */
	r = target || pf_net ? dralet_pci_binding(ctx, vf->address, driver, sizeof(driver),
						  override, sizeof(override)) : 0;
	if (r >= 0 && !driver[0]) {
		dralet_ctx_error(ctx, "VF %s: no kernel driver took it after driver_override was "
				 "cleared (is the VF driver's module loaded?)", vf->address);
		r = -ENODEV;
	}
	if (r < 0)
		goto undo;
	snprintf(driver_now, size, "%s", driver);
	return 0;
undo:
	/* keep the reason of the failure, not of the restore */
	snprintf(msg, sizeof(msg), "%s", dralet_ctx_error_message(ctx));
	if (vf_lifecycle_restore(ctx, undo) < 0)
		dralet_ctx_error(ctx, "%s; putting the VF back failed too: %s", msg,
				 dralet_ctx_error_message(ctx));
	else
		dralet_ctx_error(ctx, "%s", msg);
	return r;
}
