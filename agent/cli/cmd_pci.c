/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dralet pci: every PCI function as the HAL sees it — topology, SR-IOV,
 * class devices — and what discovery did with it (which backend owns it, or
 * why nothing is published). For operators asking "why is my card missing?".
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "agent/cli/commands.h"
#include "agent/core/inventory.h"
#include "agent/cli/setup.h"
#include "agent/lib/yaml_emit.h"
#include "hal/hal.h"

enum { OPT_OUTPUT = OPT_FIRST_COMMAND_OPTION, OPT_HELP };

static const char *port_type(const struct dralet_pci_func *f)
{
	if ((f->class_code >> 8) == 0x0600)
		return "host-bridge";
	switch (f->port_type) {
	case DRALET_PCI_ROOT_PORT: return "root-port";
	case DRALET_PCI_SWITCH_UPSTREAM: return "switch-upstream";
	case DRALET_PCI_SWITCH_DOWNSTREAM: return "switch-downstream";
	case DRALET_PCI_OTHER_BRIDGE: return "bridge";
	default: return "endpoint";
	}
}

static void add_string(struct json_object *o, const char *key, const char *v)
{
	if (v)
		json_object_object_add(o, key, json_object_new_string(v));
}

static void add_int(struct json_object *o, const char *key, long long v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static struct json_object *node_json(const struct dralet_devnode *n)
{
	char buf[32];
	struct json_object *o = json_object_new_object();

	add_string(o, "path", n->path);
	snprintf(buf, sizeof(buf), "%u:%u", n->major, n->minor);
	add_string(o, "device", buf);
	return o;
}

static struct json_object *function_json(const struct inventory *inv, size_t i)
{
	const struct dralet_pci_func *f = inventory_scan(inv)->funcs[i];
	struct json_object *o = json_object_new_object(), *list;
	const char *note, *owner = inventory_function_owner(inv, i, &note);
	char buf[64];

	add_string(o, "address", f->address);
	snprintf(buf, sizeof(buf), "%04x:%04x", f->vendor_id, f->device_id);
	add_string(o, "id", buf);
	snprintf(buf, sizeof(buf), "%04x:%04x", f->subsystem_vendor_id, f->subsystem_device_id);
	add_string(o, "subsystem", buf);
	snprintf(buf, sizeof(buf), "0x%06x", f->class_code);
	add_string(o, "class", buf);
	add_int(o, "revision", f->revision);
	add_string(o, "vendorName", f->vendor_name);
	add_string(o, "deviceName", f->device_name);
	add_string(o, "driver", f->driver);
	add_int(o, "numaNode", f->numa_node);
	add_string(o, "localCPUs", f->local_cpulist);
	add_int(o, "iommuGroup", f->iommu_group);
	add_string(o, "pcieRoot", f->pcie_root);
	add_string(o, "portType", port_type(f));
	add_string(o, "parent", f->parent ? f->parent->address : NULL);
	add_string(o, "pcieSwitch", f->pcie_switch ? f->pcie_switch->address : NULL);
	add_string(o, "sysfsPath", f->sysfs_path);
	if (f->link.current_mts) {
		snprintf(buf, sizeof(buf), "%u.%u GT/s x%u", f->link.current_mts / 1000,
			 f->link.current_mts % 1000 / 100, f->link.current_width);
		add_string(o, "link", buf);
	}
	if (f->sriov) {
		struct json_object *s = json_object_new_object();
		add_int(s, "totalVFs", f->sriov->total_vfs);
		add_int(s, "numVFs", f->sriov->num_vfs);
		add_int(s, "offset", f->sriov->offset);
		add_int(s, "stride", f->sriov->stride);
		snprintf(buf, sizeof(buf), "%04x", f->sriov->vf_device_id);
		add_string(s, "vfDevice", buf);
		json_object_object_add(o, "sriov", s);
	}
	if (f->physfn) {
		add_string(o, "physfn", f->physfn->address);
		add_int(o, "vfIndex", f->vf_index);
	}
	if (f->n_net) {
		list = json_object_new_array();
		for (size_t j = 0; j < f->n_net; j++)
			json_object_array_add(list, json_object_new_string(f->net[j].ifname));
		json_object_object_add(o, "net", list);
	}
	if (f->n_ib) {
		list = json_object_new_array();
		for (size_t j = 0; j < f->n_ib; j++)
			json_object_array_add(list, json_object_new_string(f->ib[j].name));
		json_object_object_add(o, "infiniband", list);
	}
	if (f->n_drm || f->n_accel) {
		list = json_object_new_array();
		for (size_t j = 0; j < f->n_drm; j++)
			json_object_array_add(list, node_json(&f->drm[j].node));
		for (size_t j = 0; j < f->n_accel; j++)
			json_object_array_add(list, node_json(&f->accel[j].node));
		json_object_object_add(o, "nodes", list);
	}
	add_string(o, "unsafe", f->unsafe_reason);
	add_string(o, "backend", owner);
	add_string(o, "note", note);
	return o;
}

static void print_table(const struct inventory *inv)
{
	const struct hal_scan *scan = inventory_scan(inv);

	printf("%-13s %-9s %-8s %-12s %-4s %-5s %-11s %-13s %-17s %-10s %s\n", "ADDRESS", "ID",
	       "CLASS", "DRIVER", "NUMA", "IOMMU", "PCIEROOT", "SWITCH", "TYPE", "BACKEND", "NOTE");
	for (size_t i = 0; i < scan->n_funcs; i++) {
		const struct dralet_pci_func *f = scan->funcs[i];
		const char *note, *owner = inventory_function_owner(inv, i, &note);
		printf("%-13s %04x:%04x %06x   %-12.12s %-4d %-5d %-11s %-13s %-17s %-10s %s\n",
		       f->address, f->vendor_id, f->device_id, f->class_code,
		       f->driver ? f->driver : "-", f->numa_node, f->iommu_group, f->pcie_root,
		       f->pcie_switch ? f->pcie_switch->address : "-", port_type(f),
		       owner ? owner : "-", note ? note : "published");
	}
}

int cmd_pci(int argc, char **argv)
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
		if ((r = setup_option(&so, opt, optarg)) < 0)
			return 2;
		if (r > 0)
			continue;
		if (opt == 'o' || opt == OPT_OUTPUT) {
			output = optarg;
		} else if (opt == 'h' || opt == OPT_HELP) {
			printf("usage: dralet pci [--board FILE | roots] [--config FILE] "
			       "[-o table|json|yaml]\n\nEvery PCI function with its topology and "
			       "what discovery did with it.\n\n" SETUP_OPTIONS_HELP);
			return 0;
		} else {
			return 2;
		}
	}
	if (optind < argc || (strcmp(output, "table") && strcmp(output, "json") &&
			      strcmp(output, "yaml"))) {
		fprintf(stderr, "usage: dralet pci [options] [-o table|json|yaml]\n");
		return 2;
	}
	if (setup_init(&so, &s) < 0)
		return 1;
	if (inventory_discover(&s.roots, s.cfg, s.reg, &inv) < 0) {
		setup_teardown(&s);
		return 1;
	}
	if (!strcmp(output, "table")) {
		print_table(inv);
	} else {
		struct json_object *root = json_object_new_object(), *list = json_object_new_array();
		for (size_t i = 0; i < inventory_scan(inv)->n_funcs; i++)
			json_object_array_add(list, function_json(inv, i));
		json_object_object_add(root, "functions", list);
		if (!strcmp(output, "json"))
			printf("%s\n", json_object_to_json_string_ext(
					       root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
		else
			yaml_emit(root, stdout);
		json_object_put(root);
	}
	inventory_free(inv);
	setup_teardown(&s);
	return 0;
}
