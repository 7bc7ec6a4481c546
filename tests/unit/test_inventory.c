/* SPDX-License-Identifier: Apache-2.0 */
/* Discovery: the ownership rule, configuration, unsafe functions, grouping. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <cmocka.h>

#include "agent/core/config.h"
#include "agent/core/inventory.h"
#include "agent/core/registry.h"
#include "board_snippet.h"
#include "harness.h"

static int probe_named(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		       const struct dralet_pci_id *id)
{
	struct dralet_device *d;
	int r = dralet_device_new(ctx, f, "dev", NULL, &d);

	(void)id;
	if (r == 0)
		dralet_device_set_string(d, "probedBy", ctx->backend->name);
	return r;
}

static int probe_fails(struct dralet_backend_ctx *ctx, const struct dralet_pci_func *f,
		       const struct dralet_pci_id *id)
{
	(void)ctx;
	(void)f;
	(void)id;
	return -EIO;
}

static int init_fails(struct dralet_backend_ctx *ctx, void **state)
{
	(void)state;
	dralet_ctx_error(ctx, "no vendor library");
	return -ENOENT;
}

static const struct dralet_pci_id class_12[] = { DRALET_PCI_CLASS(0x120000, 0xff0000), { 0 } };
static const struct dralet_pci_id vendor_1234[] = {
	DRALET_PCI_VENDOR_CLASS(0x1234, 0x120000, 0xff0000), { 0 } };
static const struct dralet_pci_id device_5678[] = { DRALET_PCI_DEVICE(0x1234, 0x5678), { 0 } };
static const struct dralet_pci_id nic[] = { DRALET_PCI_CLASS(0x020000, 0xff0000), { 0 } };

static const struct dralet_backend generic = {
	DRALET_BACKEND_ABI, "generic", "accel", "accel.dralet.dev", class_12,
	.probe = probe_named };
static const struct dralet_backend generic_twin = {
	DRALET_BACKEND_ABI, "generic-twin", "accel", "accel.dralet.dev", class_12,
	.probe = probe_named };
static const struct dralet_backend vendor = {
	DRALET_BACKEND_ABI, "vendor", "accel", "vendor.example.com", vendor_1234,
	.probe = probe_named };
static const struct dralet_backend exact = {
	DRALET_BACKEND_ABI, "exact", "accel", "vendor.example.com", device_5678,
	.probe = probe_named };
static const struct dralet_backend nics = {
	DRALET_BACKEND_ABI, "nics", "net", "net.dralet.dev", nic, .probe = probe_named };
static const struct dralet_backend broken_probe = {
	DRALET_BACKEND_ABI, "broken-probe", "accel", "broken.example.com", device_5678,
	.probe = probe_fails };
static const struct dralet_backend broken_init = {
	DRALET_BACKEND_ABI, "broken-init", "accel", "broken.example.com", class_12,
	.init = init_fails, .probe = probe_named };

struct fixture {
	char *dir;
	char sys[4096], dev[4096], proc[4096];
	struct hal_roots roots;
};

static struct fixture *make_tree(void)
{
	static struct fixture fx;

	fx.dir = board_tree("board: inventory-test\n"
			    "default_route: {dev: eno1, via: 192.168.0.1}\n"
			    "pci:\n"
			    "  - root: \"0000:00\"\n"
			    "    devices:\n"
			    "      - {bdf: 00:04.0, id: \"1234:5678\", class: 0x120000}\n"
			    "      - {bdf: 00:05.0, id: \"1234:9999\", class: 0x120000}\n"
			    "      - {bdf: 00:06.0, id: \"4321:0001\", class: 0x120000}\n"
			    "      - {bdf: 00:07.0, id: \"8086:1572\", class: 0x020000, net: {name: eno1}}\n"
			    "      - {bdf: 00:08.0, id: \"8086:1572\", class: 0x020000}\n");
	snprintf(fx.sys, sizeof(fx.sys), "%s/sys", fx.dir);
	snprintf(fx.dev, sizeof(fx.dev), "%s/dev", fx.dir);
	snprintf(fx.proc, sizeof(fx.proc), "%s/proc", fx.dir);
	fx.roots = (struct hal_roots){ fx.sys, fx.dev, fx.proc };
	return &fx;
}

static const char *owner(struct inventory *inv, const char *driver, const char *name)
{
	struct dralet_device *d = inventory_find(inv, driver, name);
	return d ? attr_string(d, "probedBy") : NULL;
}

static struct config *config_text(const char *yaml)
{
	char path[] = "/tmp/dralet-config-XXXXXX", err[256];
	struct config *cfg = NULL;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	int r = config_load(path, &cfg, err, sizeof(err));
	unlink(path);
	if (r < 0)
		print_error("%s\n", err);
	assert_int_equal(r, 0);
	return cfg;
}

static void test_ownership_rule(void **state)
{
	const struct dralet_backend *const list[] = { &generic, &generic_twin, &vendor, &exact,
						     &nics, NULL };
	struct fixture *fx = make_tree();
	struct registry *reg;
	struct config *cfg = config_text("{}");
	struct inventory *inv;

	(void)state;
	assert_int_equal(registry_new_with(list, NULL, NULL, NULL, &reg), 0);
	assert_int_equal(inventory_discover(&fx->roots, cfg, reg, &inv), 0);
	/* device id (30) beats vendor+class (20) beats class (10); ties: first listed */
	assert_string_equal(owner(inv, "vendor.example.com", "dev-0000-00-04-0"), "exact");
	assert_string_equal(owner(inv, "vendor.example.com", "dev-0000-00-05-0"), "vendor");
	assert_string_equal(owner(inv, "accel.dralet.dev", "dev-0000-00-06-0"), "generic");
	/* the default-route NIC is not published; the other NIC is */
	assert_null(inventory_find(inv, "net.dralet.dev", "dev-0000-00-07-0"));
	assert_string_equal(owner(inv, "net.dralet.dev", "dev-0000-00-08-0"), "nics");
	/* drivers: every enabled backend's, sorted and unique */
	assert_int_equal(inventory_n_drivers(inv), 3);
	assert_string_equal(inventory_driver(inv, 0), "accel.dralet.dev");
	assert_string_equal(inventory_driver(inv, 2), "vendor.example.com");
	assert_int_equal(inventory_n_devices(inv, "vendor.example.com"), 2);
	assert_int_equal(inventory_n_all(inv), 4);
	assert_string_equal(dralet_device_name(inventory_device(inv, "vendor.example.com", 1)),
			    "dev-0000-00-05-0");
	inventory_free(inv);
	config_free(cfg);

	/* configuration: disable a backend, rename a driver, publish unsafe devices */
	cfg = config_text("backends:\n  exact: {enabled: false}\n"
			  "  generic: {driver: renamed.example.com}\n"
			  "publishUnsafeDevices: true\n");
	assert_int_equal(inventory_discover(&fx->roots, cfg, reg, &inv), 0);
	assert_string_equal(owner(inv, "vendor.example.com", "dev-0000-00-04-0"), "vendor");
	assert_string_equal(owner(inv, "renamed.example.com", "dev-0000-00-06-0"), "generic");
	assert_string_equal(owner(inv, "net.dralet.dev", "dev-0000-00-07-0"), "nics");
	inventory_free(inv);
	config_free(cfg);
	registry_free(reg);
	tree_remove(fx->dir);
}

static void test_failing_backends_do_not_stop_discovery(void **state)
{
	const struct dralet_backend *const list[] = { &broken_init, &broken_probe, &generic, NULL };
	struct fixture *fx = make_tree();
	struct registry *reg;
	struct config *cfg = config_text("{}");
	struct inventory *inv;

	(void)state;
	assert_int_equal(registry_new_with(list, NULL, NULL, NULL, &reg), 0);
	assert_int_equal(inventory_discover(&fx->roots, cfg, reg, &inv), 0);
	/* broken-probe owns 04.0 and fails; broken-init never matches */
	assert_null(inventory_find(inv, "broken.example.com", "dev-0000-00-04-0"));
	assert_string_equal(owner(inv, "accel.dralet.dev", "dev-0000-00-05-0"), "generic");
	inventory_free(inv);
	config_free(cfg);
	registry_free(reg);
	tree_remove(fx->dir);
}

static void test_health_interval(void **state)
{
	struct config *cfg;
	char err[256];

	(void)state;
	assert_int_equal(config_load(NULL, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg->health_interval_s, CONFIG_HEALTH_INTERVAL_DEFAULT_S);
	config_free(cfg);
	cfg = config_text("healthCheckIntervalSeconds: 3\n");
	assert_int_equal(cfg->health_interval_s, 3);
	config_free(cfg);
}

static void test_config_errors(void **state)
{
	static const char *const bad[] = {
		"backendz: {}\n",
		"backends: {nvidia: {enabled: yes please}}\n",
		"backends: {nvidia: {driver: Not_A_Driver}}\n",
		"backends: {nvidia: {options: {x: 1}}}\n",
		"backends: {nvidia: {colour: blue}}\n",
		"publishUnsafeDevices: 1\n",
		"- a list\n",
		"healthCheckIntervalSeconds: 0\n",
		"healthCheckIntervalSeconds: 21\n",
		"healthCheckIntervalSeconds: \"5\"\n",
		"healthCheckIntervalSeconds: 2.5\n",
	};
	char path[] = "/tmp/dralet-config-XXXXXX", err[256];
	struct config *cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = mkstemp(path);
		assert_int_equal(write(fd, bad[i], strlen(bad[i])), (ssize_t)strlen(bad[i]));
		close(fd);
		assert_int_equal(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, path));
		unlink(path);
		strcpy(path, "/tmp/dralet-config-XXXXXX");
	}
	assert_int_equal(config_load("/nonexistent.yaml", &cfg, err, sizeof(err)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ownership_rule),
		cmocka_unit_test(test_failing_backends_do_not_stop_discovery),
		cmocka_unit_test(test_health_interval),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
