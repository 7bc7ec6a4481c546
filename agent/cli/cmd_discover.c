/* SPDX-License-Identifier: Apache-2.0 */
/* dralet discover: the node's accelerators in the uniform device model. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "agent/cli/commands.h"
#include "agent/slices/device_json.h"
#include "agent/core/inventory.h"
#include "agent/cli/setup.h"
#include "agent/lib/yaml_emit.h"
#include "hal/hal.h"

enum { OPT_OUTPUT = OPT_FIRST_COMMAND_OPTION, OPT_HELP };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dralet discover [--board FILE | --sysfs-root DIR --dev-root DIR "
		"--proc-root DIR]\n"
		"                       [--config FILE] [-o table|json|yaml]\n\n"
		"Lists every device the enabled backends find on the node.\n\n"
		"  -o, --output FORMAT   table (default), json or yaml; json/yaml give\n"
		"                        {\"devices\": [...]} with attributes and capacity in\n"
		"                        the resource.k8s.io/v1 Device form, and\n"
		"                        \"sriovPhysicalFunctions\" with the node's SR-IOV PFs\n"
		SETUP_OPTIONS_HELP);
}

static const char *attr_text(const struct dralet_device *dev, const char *name, char *buf,
			     size_t size)
{
	const struct dralet_attr *a = dralet_device_find_attr(dev, name);

	if (!a)
		return "-";
	if (a->type == DRALET_ATTR_INT)
		snprintf(buf, size, "%lld", (long long)a->int_value);
	else if (a->type == DRALET_ATTR_BOOL)
		snprintf(buf, size, "%s", a->bool_value ? "true" : "false");
	else
		snprintf(buf, size, "%s", a->string_value);
	return buf;
}

static void print_table(const struct inventory *inv)
{
	static const char *const health[] = { "Unknown", "Healthy", "Unhealthy" };
	char model[80], numa[24], root[32];

	printf("%-40s %-18s %-8s %-34s %-4s %-12s %s\n", "NAME", "DRIVER", "KIND", "MODEL",
	       "NUMA", "PCIEROOT", "HEALTH");
	for (size_t i = 0; i < inventory_n_all(inv); i++) {
		const struct dralet_device *d = inventory_all(inv, i);
		printf("%-40s %-18s %-8s %-34.34s %-4s %-12s %s\n", dralet_device_name(d),
		       dralet_device_driver(d), dralet_device_kind(d),
		       attr_text(d, "productName", model, sizeof(model)),
		       attr_text(d, "numaNode", numa, sizeof(numa)),
		       attr_text(d, DRALET_ATTR_PCIE_ROOT, root, sizeof(root)),
		       health[dralet_device_health(d)]);
	}
}

/*
 * The SR-IOV physical functions of the node: not devices anyone allocates,
 * but what VFs come from and what SR-IOV policies provision, so operators
 * see their topology and VF counts next to the devices.
 */
static struct json_object *sriov_pfs_json(const struct inventory *inv)
{
	const struct hal_scan *scan = inventory_scan(inv);
	struct json_object *list = json_object_new_array();
	char id[8];

	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *f = scan->funcs[i];
		struct json_object *o;

		if (!f->sriov)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "pciAddress", json_object_new_string(f->address));
		if (f->device_name)
			json_object_object_add(o, "productName", json_object_new_string(f->device_name));
		if (f->driver)
			json_object_object_add(o, "driver", json_object_new_string(f->driver));
		json_object_object_add(o, "numaNode", json_object_new_int(f->numa_node));
		json_object_object_add(o, "pcieRoot", json_object_new_string(f->pcie_root));
		if (f->pcie_switch)
			json_object_object_add(o, "pcieSwitch",
					       json_object_new_string(f->pcie_switch->address));
		json_object_object_add(o, "totalVFs", json_object_new_int((int)f->sriov->total_vfs));
		json_object_object_add(o, "numVFs", json_object_new_int((int)f->sriov->num_vfs));
		snprintf(id, sizeof(id), "0x%04x", f->sriov->vf_device_id);
		json_object_object_add(o, "vfDeviceID", json_object_new_string(id));
		if (f->unsafe_reason)
			json_object_object_add(o, "unsafe", json_object_new_string(f->unsafe_reason));
		json_object_array_add(list, o);
	}
	return list;
}

/*
 * {"devices": [...], "sriovPhysicalFunctions": [...]} written one device at
 * a time, so a node with thousands of devices never holds the whole document
 * in memory.
 */
static void print_devices_json(const struct inventory *inv)
{
	static struct json_writer w;	/* 64 KiB buffer: not on the stack */
	struct json_object *pfs = sriov_pfs_json(inv);
	const char *pfs_text = json_object_to_json_string_ext(pfs, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_SPACED |
							      JSON_C_TO_STRING_NOSLASHESCAPE);

	fputs("{\n  \"devices\": [", stdout);
	jw_init(&w, stdout, 2);
	w.depth = 1;	/* inside the "devices" array */
	for (size_t i = 0; i < inventory_n_all(inv); i++)
		device_write_json(&w, inventory_all(inv, i), true);
	jw_flush(&w);
	fputs(inventory_n_all(inv) ? "\n  ],\n  \"sriovPhysicalFunctions\": "
				   : "],\n  \"sriovPhysicalFunctions\": ", stdout);
	for (const char *p = pfs_text; *p; p++) {
		putchar(*p);
		if (*p == '\n')
			fputs("  ", stdout);
	}
	fputs("\n}\n", stdout);
	json_object_put(pfs);
}

static void print_devices_yaml(const struct inventory *inv)
{
	size_t n = inventory_n_all(inv);
	struct json_object *pfs = json_object_new_object();

	fputs(n ? "devices:\n" : "devices: []\n", stdout);
	for (size_t i = 0; i < n; i++) {
		struct json_object *item = json_object_new_array();
		json_object_array_add(item, device_to_json(inventory_all(inv, i), true));
		yaml_emit(item, stdout);
		json_object_put(item);
	}
	json_object_object_add(pfs, "sriovPhysicalFunctions", sriov_pfs_json(inv));
	yaml_emit(pfs, stdout);
	json_object_put(pfs);
}

int cmd_discover(int argc, char **argv)
{
	static const struct option options[] = {
		SETUP_LONG_OPTIONS,
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct setup_options so = { 0 };
	const char *output = "table";
	struct inventory *inv;
	struct setup s;
	int opt, r;

	while ((opt = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
		r = setup_option(&so, opt, optarg);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		switch (opt) {
		case 'o':
		case OPT_OUTPUT:
			output = optarg;
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || (strcmp(output, "table") && strcmp(output, "json") &&
			      strcmp(output, "yaml"))) {
		usage(stderr);
		return 2;
	}
	if (setup_init(&so, &s) < 0)
		return 1;
	r = inventory_discover(&s.roots, s.cfg, s.reg, &inv);
	if (r < 0) {
		setup_teardown(&s);
		return 1;
	}
	if (!strcmp(output, "table"))
		print_table(inv);
	else if (!strcmp(output, "json"))
		print_devices_json(inv);
	else
		print_devices_yaml(inv);
	r = fflush(stdout) == 0 ? 0 : 1;
	inventory_free(inv);
	setup_teardown(&s);
	return r;
}
