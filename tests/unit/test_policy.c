/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SR-IOV policies: the strict "sriov" configuration section (through
 * config_load, as the agent reads it; the rest of the file's keys too, and
 * the backends' options through config_check_options) and the pure engine
 * (PF selection, count plans and their refusals, VF steps, settings diff).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sys/stat.h>

#include <dralet/backend.h>

#include "agent/core/config.h"
#include "agent/sriov/policy.h"

static struct config *load(const char *yaml, int want, const char *msg)
{
	char path[] = "/tmp/dralet-policy-XXXXXX";
	int fd = mkstemp(path);
	struct config *cfg = NULL;
	char err[1024] = "";
	int r;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	r = config_load(path, &cfg, err, sizeof(err));
	unlink(path);
	if (r != want || (msg && !strstr(err, msg)))
		fail_msg("config:\n%s\ngot %d \"%s\", want %d \"%s\"", yaml, r, err, want,
			 msg ? msg : "");
	return cfg;
}

static void test_full_policy(void **state)
{
	struct config *cfg = load(
		"sriov:\n"
		"  policies:\n"
		"  - name: e810-vfs\n"
		"    pfSelector:\n"
		"      vendor: \"0x8086\"\n"
		"      device: \"1593\"\n"
		"      pciAddresses: [\"0000:3b:00.0\", \"0000:3b:00.1\"]\n"
		"      pfNames: [ens1f0]\n"
		"      drivers: [ice]\n"
		"    numVfs: 8\n"
		"    vfDriver: vfio-pci\n"
		"    vfSettings:\n"
		"      macBase: \"02:00:00:00:10:fe\"\n"
		"      vlan: 100\n"
		"      qos: 2\n"
		"      trust: false\n"
		"      spoofChk: true\n"
		"      linkState: enable\n"
		"      minTxRate: 10\n"
		"      maxTxRate: 10000\n"
		"  - name: nvme\n"
		"    pfSelector: {drivers: [nvme]}\n"
		"    numVfs: 0\n", 0, NULL);
	const struct sriov_policy *p;
	uint8_t mac[6];

	(void)state;
	assert_int_equal(cfg->sriov->n, 2);
	p = &cfg->sriov->items[0];
	assert_string_equal(p->name, "e810-vfs");
	assert_true(p->pf.has_vendor && p->pf.has_device);
	assert_int_equal(p->pf.vendor, 0x8086);
	assert_int_equal(p->pf.device, 0x1593);
	assert_int_equal(p->pf.n_pci_addresses, 2);
	assert_string_equal(p->pf.pf_names[0], "ens1f0");
	assert_string_equal(p->pf.drivers[0], "ice");
	assert_int_equal(p->num_vfs, 8);
	assert_int_equal(p->vf_driver, SRIOV_VF_DRIVER_VFIO);
	assert_true(p->has_settings);
	assert_int_equal(p->settings.vlan, 100);
	assert_int_equal(p->settings.qos, 2);
	assert_int_equal(p->settings.trust, 0);
	assert_int_equal(p->settings.spoof_check, 1);
	assert_int_equal(p->settings.link_state, DRALET_VF_LINK_ENABLE);
	assert_int_equal(p->settings.max_tx_mbps, 10000);
	/* VF N's MAC: the base plus N, carried across octets */
	sriov_policy_vf_mac(p, 0, mac);
	assert_memory_equal(mac, "\x02\x00\x00\x00\x10\xfe", 6);
	sriov_policy_vf_mac(p, 3, mac);
	assert_memory_equal(mac, "\x02\x00\x00\x00\x11\x01", 6);
	p = &cfg->sriov->items[1];
	assert_int_equal(p->num_vfs, 0);
	assert_int_equal(p->vf_driver, SRIOV_VF_DRIVER_DEFAULT);
	assert_false(p->has_settings);
	config_free(cfg);

	/* no file, no section, an empty section: no policies */
	assert_int_equal(config_load(NULL, &cfg, (char[64]){ 0 }, 64), 0);
	assert_int_equal(cfg->sriov->n, 0);
	config_free(cfg);
	cfg = load("sriov: {}\n", 0, NULL);
	assert_int_equal(cfg->sriov->n, 0);
	config_free(cfg);
	cfg = load("sriov:\n  policies: []\n", 0, NULL);
	assert_int_equal(cfg->sriov->n, 0);
	config_free(cfg);
}

static void test_bad_policies(void **state)
{
	static const struct {
		const char *yaml;
		const char *msg;
	} cases[] = {
		{ "sriov: 3\n", "sriov: must be an object" },
		{ "sriov: {policy: []}\n", "sriov: unknown field \"policy\" (known: policies)" },
		{ "sriov: {policies: {}}\n", "policies: must be a list" },
		{ "sriov: {policies: [{numVfs: 1}]}\n", "sriov.policies[0].name: is required" },
		{ "sriov: {policies: [{name: Bad_Name, numVfs: 1}]}\n", "DNS label" },
		{ "sriov: {policies: [{name: a, numVfs: 1}]}\n", "sriov.policies[0].pfSelector: is required" },
		{ "sriov: {policies: [{name: a, pfSelector: {}, numVfs: 1}]}\n", "selects every PF" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}}]}\n",
		  "numVfs: is required" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: -1}]}\n",
		  "between 0 and 65535" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: \"4\"}]}\n",
		  "sriov.policies[0].numVfs: must be an integer" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfDriver: igb_uio}]}\n", "vfDriver: \"igb_uio\" is not one of default, vfio-pci, none" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "numvfs: 2}]}\n", "sriov.policies[0]: unknown field \"numvfs\" (known: name, "
		  "pfSelector, numVfs, vfDriver, vfSettings, onDemand)" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 0, "
		  "onDemand: true}]}\n", "sriov.policies[0].numVfs: with onDemand, the most VFs "
		  "claims may have created: at least 1" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 2, "
		  "onDemand: \"yes\"}]}\n", "sriov.policies[0].onDemand: must be true or false" },
		{ "sriov: {policies: [{name: a, pfSelector: {device: \"1593\"}, numVfs: 1}]}\n",
		  "device needs vendor" },
		{ "sriov: {policies: [{name: a, pfSelector: {vendor: \"80861\"}, numVfs: 1}]}\n",
		  "not a 16-bit hex id" },
		{ "sriov: {policies: [{name: a, pfSelector: {vendor: 8086}, numVfs: 1}]}\n",
		  "quoted hex id" },
		{ "sriov: {policies: [{name: a, pfSelector: {pciAddresses: [\"3b:00.0\"]}, "
		  "numVfs: 1}]}\n", "pciAddresses[0]: must be PCI addresses" },
		{ "sriov: {policies: [{name: a, pfSelector: {pciAddresses: [\"0000:3B:00.0\"]}, "
		  "numVfs: 1}]}\n", "lower case" },
		{ "sriov: {policies: [{name: a, pfSelector: {pfNames: []}, numVfs: 1}]}\n",
		  "must not be empty" },
		{ "sriov: {policies: [{name: a, pfSelector: {pfNames: [\"a/b\"]}, numVfs: 1}]}\n",
		  "network interface names" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice], driver: x}, "
		  "numVfs: 1}]}\n", "pfSelector: unknown field \"driver\"" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {}}]}\n", "vfSettings: is empty" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {mac: \"02:00:00:00:00:01\"}}]}\n", "vfSettings: unknown field \"mac\" (known: macBase," },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {macBase: \"01:00:00:00:00:01\"}}]}\n", "not a unicast MAC" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 4, "
		  "vfSettings: {macBase: \"02:00:00:ff:ff:fe\"}}]}\n", "runs past the last" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {vlan: 4095}}]}\n", "sriov.policies[0].vfSettings.vlan: must be between 0 and 4094" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {qos: 3}}]}\n", "qos: needs a vlan" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {trust: yes please}}]}\n", "trust: must be true or false" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {linkState: up}}]}\n", "linkState: \"up\" is not one of auto, enable, disable" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1, "
		  "vfSettings: {minTxRate: 100, maxTxRate: 10}}]}\n", "above maxTxRate" },
		{ "sriov: {policies: [{name: a, pfSelector: {drivers: [ice]}, numVfs: 1}, "
		  "{name: a, pfSelector: {drivers: [nvme]}, numVfs: 1}]}\n", "used twice" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		config_free(load(cases[i].yaml, -EINVAL, cases[i].msg));
}

/* The rest of the file, through the same decoder: values land, every problem names its key. */
static void test_agent_config(void **state)
{
	static const struct {
		const char *yaml;
		const char *msg;
	} bad[] = {
		{ "colour: 1\n", "unknown field \"colour\" (known: apiVersion, kind, backends, "
		  "publishUnsafeDevices, pciIDs, featureGates, kubernetesVersion, "
		  "healthCheckIntervalSeconds, sriov, "
		  "simulatedBoard)" },
		{ "- a\n", "the configuration must be a mapping" },
		{ "publishUnsafeDevices: yes please\n", "publishUnsafeDevices: must be true or false" },
		{ "pciIDs: [a]\n", "pciIDs: must be a file path" },
		{ "simulatedBoard: \"\"\n", "simulatedBoard: must be a board file path" },
		{ "healthCheckIntervalSeconds: 0\n",
		  "healthCheckIntervalSeconds: must be between 1 and 20" },
		{ "healthCheckIntervalSeconds: 21\n",
		  "healthCheckIntervalSeconds: must be between 1 and 20" },
		{ "healthCheckIntervalSeconds: \"5\"\n",
		  "healthCheckIntervalSeconds: must be an integer" },
		{ "featureGates: [a]\n", "featureGates: must be an object" },
		{ "featureGates: {DRADeviceTaint: true}\n", "featureGates: unknown field "
		  "\"DRADeviceTaint\" (known: DRADeviceTaints, DRAPartitionableDevices)" },
		{ "featureGates: {DRADeviceTaints: 1}\n",
		  "featureGates.DRADeviceTaints: must be true or false" },
		{ "backends: [nvidia]\n", "backends: must be an object by backend name" },
		{ "backends: {nvidia: 1}\n", "backends.nvidia: must be an object" },
		{ "backends: {nvidia: {enable: false}}\n", "backends.nvidia: unknown field "
		  "\"enable\" (known: enabled, driver, options)" },
		{ "backends: {nvidia: {enabled: no way}}\n",
		  "backends.nvidia.enabled: must be true or false" },
		{ "backends: {nvidia: {driver: GPU.dralet.dev}}\n", "backends.nvidia.driver: must "
		  "be a lower-case DNS subdomain of at most 63 characters" },
		{ "backends: {nvidia: {driver: [a]}}\n", "backends.nvidia.driver: must be a "
		  "lower-case DNS subdomain of at most 63 characters" },
		{ "backends: {nvidia: {options: [a]}}\n", "backends.nvidia.options: must be an object" },
		{ "backends: {nvidia: {options: {x: 1}}}\n",
		  "backends.nvidia.options.x: must be a string (quote numbers)" },
	};
	struct config *cfg = load("apiVersion: dralet.dev/v1alpha1\nkind: Config\n"
				  "publishUnsafeDevices: true\npciIDs: /p/pci.ids\n"
				  "simulatedBoard: /b.yaml\nhealthCheckIntervalSeconds: 20\n"
				  "featureGates: {DRADeviceTaints: true}\nsriov:\n"
				  "backends:\n  nvidia: {driver: gpu.example.com, options: {x: \"1\"}}\n"
				  "  amdgpu: {enabled: false}\n  drm:\n", 0, NULL);

	(void)state;
	assert_true(cfg->publish_unsafe);
	assert_string_equal(cfg->pci_ids, "/p/pci.ids");
	assert_string_equal(cfg->simulated_board, "/b.yaml");
	assert_int_equal(cfg->health_interval_s, 20);
	assert_int_equal(cfg->sriov->n, 0);
	assert_int_equal(cfg->n_backends, 3);
	assert_string_equal(config_backend(cfg, "nvidia")->driver, "gpu.example.com");
	assert_true(config_backend(cfg, "nvidia")->enabled);
	assert_non_null(config_backend(cfg, "nvidia")->options);
	assert_false(config_backend(cfg, "amdgpu")->enabled);
	assert_true(config_backend(cfg, "drm")->enabled);
	assert_null(config_backend(cfg, "drm")->driver);
	config_free(cfg);
	cfg = load("", 0, NULL);
	assert_int_equal(cfg->health_interval_s, CONFIG_HEALTH_INTERVAL_DEFAULT_S);
	config_free(cfg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		config_free(load(bad[i].yaml, -EINVAL, bad[i].msg));
}

/* config_check_options of backends.nvidia.options (@yaml_options) against @known. */
static void check_options(const char *yaml_options, const struct dralet_option *known, int want,
			  const char *msg)
{
	char yaml[1024], err[1024] = "";
	struct config *cfg;
	int r;

	snprintf(yaml, sizeof(yaml), "backends:\n  nvidia: {options: %s}\n", yaml_options);
	cfg = load(yaml, 0, NULL);
	r = config_check_options(config_backend(cfg, "nvidia"), known, err, sizeof(err));
	if (r != want || strcmp(err, msg))
		fail_msg("options %s: got %d \"%s\", want %d \"%s\"", yaml_options, r, err, want,
			 msg);
	config_free(cfg);
}

/* A backend's options go through the strict decoder, as the rest of the file:
 * unknown keys by name with the declared ones, trusted files checked. */
static void test_backend_options(void **state)
{
	static const struct dralet_option known[] = {
		{ "nvmlLibrary", DRALET_OPTION_TRUSTED_FILE },
		{ "driverRoot", 0 },
		{ NULL, 0 },
	};
	char dir[] = "/tmp/dralet-options-XXXXXX", lib[64], yaml[128], msg[256];
	FILE *f;

	(void)state;
	check_options("{driverRoot: /run/nvidia/driver, nvmlLibrary: libnvidia-ml.so.1}", known,
		      0, "");
	check_options("{nvmlLibrary: /usr/bin/env}", known, 0, "");
	check_options("{nvmlLibary: /usr/lib/libnvidia-ml.so.1}", known, -EINVAL,
		      "backends.nvidia.options: unknown field \"nvmlLibary\" (known: nvmlLibrary, "
		      "driverRoot)");
	check_options("{x: \"1\"}", NULL, -EINVAL,
		      "backends.nvidia.options: unknown field \"x\" (no fields are known)");

	assert_non_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libnvidia-ml.so.1", dir);
	assert_non_null(f = fopen(lib, "w"));
	fclose(f);
	assert_int_equal(chmod(lib, 0666), 0);
	snprintf(yaml, sizeof(yaml), "{nvmlLibrary: %s}", lib);
	snprintf(msg, sizeof(msg), "backends.nvidia.options.nvmlLibrary: refusing %s: %s is "
		 "writable by every user (mode 0666)", lib, lib);
	check_options(yaml, known, -EPERM, msg);
	/* the same value is not a path for an option that is no file */
	snprintf(yaml, sizeof(yaml), "{driverRoot: %s}", lib);
	check_options(yaml, known, 0, "");
	unlink(lib);
	rmdir(dir);
}

/* A PF with @n VFs; VF i at 0000:3b:00.<i+1>. */
static struct dralet_pci_func pf_func(struct dralet_pci_sriov *sr, struct dralet_netdev *net)
{
	struct dralet_pci_func f = { .vendor_id = 0x8086, .device_id = 0x1593, .driver = "ice",
				  .sriov = sr, .vf_index = -1 };

	snprintf(f.address, sizeof(f.address), "0000:3b:00.0");
	if (net) {
		f.net = net;
		f.n_net = 1;
	}
	return f;
}

static void test_selection(void **state)
{
	struct config *cfg = load(
		"sriov:\n"
		"  policies:\n"
		"  - {name: by-name, pfSelector: {pfNames: [ens1f0, ens2f0]}, numVfs: 4}\n"
		"  - {name: by-id, pfSelector: {vendor: \"8086\", device: \"1593\", drivers: [ice]},"
		" numVfs: 2}\n"
		"  - {name: by-address, pfSelector: {pciAddresses: [\"0000:3b:00.0\"]}, numVfs: 1}\n",
		0, NULL);
	struct dralet_pci_sriov sr = { .total_vfs = 8 };
	struct dralet_netdev net = { .ifname = "ens1f0", .ifindex = 4 };
	struct dralet_pci_func pf = pf_func(&sr, &net), vf = pf;
	const struct sriov_policy *also, *p;

	(void)state;
	p = sriov_policy_for(cfg->sriov, &pf, &also);
	assert_string_equal(p->name, "by-name");
	assert_string_equal(also->name, "by-id");
	/* every field must match */
	net.ifname = "eth9";
	p = sriov_policy_for(cfg->sriov, &pf, &also);
	assert_string_equal(p->name, "by-id");
	assert_string_equal(also->name, "by-address");
	pf.driver = "i40e";
	p = sriov_policy_for(cfg->sriov, &pf, &also);
	assert_string_equal(p->name, "by-address");
	assert_null(also);
	pf.driver = NULL;	/* unbound: a drivers selector cannot match */
	snprintf(pf.address, sizeof(pf.address), "0000:3c:00.0");
	assert_null(sriov_policy_for(cfg->sriov, &pf, NULL));
	/* VFs and functions without SR-IOV are never PFs */
	vf.physfn = &pf;
	assert_null(sriov_policy_for(cfg->sriov, &vf, NULL));
	pf.sriov = NULL;
	net.ifname = "ens1f0";
	assert_null(sriov_policy_for(cfg->sriov, &pf, NULL));
	config_free(cfg);
}

static struct hal_pf_state pf_state(unsigned n, struct hal_vf_state *vfs)
{
	for (unsigned i = 0; i < n; i++) {
		vfs[i] = (struct hal_vf_state){ .index = (int)i };
		snprintf(vfs[i].address, sizeof(vfs[i].address), "0000:3b:00.%u", i + 1);
		snprintf(vfs[i].driver, sizeof(vfs[i].driver), "iavf");
	}
	return (struct hal_pf_state){ .driver = "ice", .total_vfs = 8, .num_vfs = n,
				      .autoprobe = 1, .n_vfs = n, .vfs = vfs };
}

static void test_count_plans(void **state)
{
	struct sriov_policy pol = { .name = "p", .num_vfs = 4 };
	struct hal_vf_state vfs[8];
	struct hal_pf_state st = pf_state(4, vfs);
	struct sriov_prepared prep = { 0 };
	struct sriov_prepared_vf claimed = { .address = "0000:3b:00.3", .claim = "ns/c1",
					     .driver = "sriov.dralet.dev" };
	struct sriov_count_plan plan;

	(void)state;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_KEEP);
	pol.num_vfs = 6;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_SET);
	assert_int_equal(plan.from, 4);
	assert_int_equal(plan.to, 6);
	assert_int_equal(plan.autoprobe, 1);
	pol.vf_driver = SRIOV_VF_DRIVER_VFIO;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.autoprobe, 0);
	pol.vf_driver = SRIOV_VF_DRIVER_NONE;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.autoprobe, 0);

	/* above sriov_totalvfs */
	pol.num_vfs = 9;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_REFUSED);
	assert_non_null(strstr(plan.reason, "supports 8"));

	/* VF 2 prepared: shrinking below it is refused, naming VF and claim */
	assert_int_equal(sriov_prepared_add(&prep, &claimed), 0);
	pol.num_vfs = 1;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_REFUSED);
	assert_non_null(strstr(plan.reason, "PF 0000:3b:00.0"));
	assert_non_null(strstr(plan.reason, "VF 2 (0000:3b:00.3) is prepared for claim ns/c1"));
	pol.num_vfs = 0;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_REFUSED);
	/* growing (or shrinking above it) re-creates it too: refused as well */
	pol.num_vfs = 6;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_REFUSED);
	assert_non_null(strstr(plan.reason, "only through 0"));
	pol.num_vfs = 3;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_REFUSED);
	/* the same count is fine */
	pol.num_vfs = 4;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_KEEP);
	sriov_prepared_clear(&prep);

	/* no PF driver: the kernel could not create VFs */
	st.driver[0] = '\0';
	pol.num_vfs = 2;
	sriov_plan_count(&pol, "0000:3b:00.0", &st, &prep, &plan);
	assert_int_equal(plan.action, SRIOV_COUNT_REFUSED);
	assert_non_null(strstr(plan.reason, "no driver"));
}

static void test_vf_steps(void **state)
{
	struct sriov_policy pol = { .name = "p", .num_vfs = 4,
				    .settings = DRALET_VF_SETTINGS_INIT };
	struct hal_vf_state vfs[8];
	struct hal_pf_state st = pf_state(4, vfs);
	struct sriov_prepared prep = { 0 };
	struct sriov_prepared_vf claimed = { .address = "0000:3b:00.2", .claim = "ns/c" };
	struct sriov_vf_step steps[8];

	(void)state;
	sriov_prepared_add(&prep, &claimed);
	snprintf(vfs[2].driver, sizeof(vfs[2].driver), "vfio-pci");
	snprintf(vfs[2].override, sizeof(vfs[2].override), "vfio-pci");
	vfs[3].driver[0] = '\0';
	/* default: iavf stays, vfio-pci goes back; an unbound VF is left to the kernel,
	 * which tried it with autoprobe on ... */
	sriov_plan_vfs(&pol, &st, &prep, true, steps);
	assert_int_equal(steps[0].bind, SRIOV_BIND_KEEP);
	assert_non_null(steps[1].prepared);	/* VF 1 (0000:3b:00.2) belongs to a claim */
	assert_int_equal(steps[1].bind, SRIOV_BIND_KEEP);
	assert_int_equal(steps[2].bind, SRIOV_BIND_DEFAULT);
	assert_int_equal(steps[3].bind, SRIOV_BIND_KEEP);
	/* ... and probed when it was made with autoprobe off (another vfDriver before) */
	st.autoprobe = 0;
	sriov_plan_vfs(&pol, &st, &prep, true, steps);
	assert_int_equal(steps[3].bind, SRIOV_BIND_DEFAULT);
	assert_false(steps[0].set);
	/* vfio-pci: everything not on vfio-pci with the override moves */
	pol.vf_driver = SRIOV_VF_DRIVER_VFIO;
	sriov_plan_vfs(&pol, &st, &prep, true, steps);
	assert_int_equal(steps[0].bind, SRIOV_BIND_VFIO);
	assert_int_equal(steps[2].bind, SRIOV_BIND_KEEP);
	assert_int_equal(steps[3].bind, SRIOV_BIND_VFIO);
	/* none */
	pol.vf_driver = SRIOV_VF_DRIVER_NONE;
	sriov_plan_vfs(&pol, &st, &prep, true, steps);
	assert_int_equal(steps[0].bind, SRIOV_BIND_UNBIND);
	assert_int_equal(steps[2].bind, SRIOV_BIND_UNBIND);
	assert_int_equal(steps[3].bind, SRIOV_BIND_KEEP);
	/* settings with a MAC base, only where the PF has an interface */
	pol.has_settings = true;
	pol.settings.has_mac = true;
	memcpy(pol.settings.mac, "\x02\x00\x00\x00\x00\x10", 6);
	pol.settings.trust = 1;
	sriov_plan_vfs(&pol, &st, &prep, true, steps);
	assert_true(steps[3].set);
	assert_memory_equal(steps[3].settings.mac, "\x02\x00\x00\x00\x00\x13", 6);
	assert_false(steps[1].set);
	sriov_plan_vfs(&pol, &st, &prep, false, steps);
	assert_false(steps[3].set);
	sriov_prepared_clear(&prep);
}

static void test_settings_diff(void **state)
{
	struct dralet_vf_settings want = DRALET_VF_SETTINGS_INIT, now = DRALET_VF_SETTINGS_INIT, d;

	(void)state;
	now.has_mac = now.has_vlan = now.has_rate = true;
	now.trust = 0;
	now.spoof_check = 1;
	now.link_state = DRALET_VF_LINK_AUTO;
	assert_false(sriov_settings_diff(&want, &now, &d));
	want.spoof_check = 1;
	want.has_vlan = true;
	want.vlan = 0;
	assert_false(sriov_settings_diff(&want, &now, &d));
	want.vlan = 10;
	want.trust = 1;
	assert_true(sriov_settings_diff(&want, &now, &d));
	assert_true(d.has_vlan);
	assert_int_equal(d.vlan, 10);
	assert_int_equal(d.trust, 1);
	assert_int_equal(d.spoof_check, -1);	/* already so: not sent */
	assert_false(d.has_mac);
	want.has_mac = true;
	memcpy(want.mac, "\x02\x00\x00\x00\x00\x01", 6);
	assert_true(sriov_settings_diff(&want, &now, &d));
	assert_true(d.has_mac);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_policy),
		cmocka_unit_test(test_bad_policies),
		cmocka_unit_test(test_agent_config),
		cmocka_unit_test(test_backend_options),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_count_plans),
		cmocka_unit_test(test_vf_steps),
		cmocka_unit_test(test_settings_diff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
