/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The board simulator's model of the kernel (boards/sim/board_node_ops.h):
 * VFs made by a sriov_numvfs write are the VFs the board simulator writes
 * for a board with that count, file for file and link for link, and
 * removing them leaves the tree of a board without them; a driver taking
 * or leaving a VF brings or takes its class devices.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hal/pci_binding.h"
#include "hal/pci_sriov.h"
#include "node_model.h"

#define PF "0000:3b:00.0"

static const char BOARD[] =
	"board: model\n"
	"pci:\n"
	"  - root: \"0000:3a\"\n"
	"    devices:\n"
	"      - bdf: 3a:00.0\n"
	"        id: \"8086:347a\"\n"
	"        devices:\n"
	"          - bdf: 3b:00.0\n"
	"            id: \"8086:1593\"\n"
	"            class: 0x020000\n"
	"            driver: ice\n"
	"            net: {name: ens2f0}\n"
	"            sriov: {total: 8, num: %u, vf_id: \"8086:1889\", vf_driver: iavf,"
	" vf_net: \"{pf}v{n}\"}\n"
	"      - {bdf: 3a:01.0, id: \"1b36:0010\", class: 0x010802, driver: nvme,\n"
	"         nvme: {controller: nvme0, namespaces: [{name: nvme0n1, size: 1TB}]}}\n";

static void model_with(struct node_model *m, unsigned num)
{
	char yaml[sizeof(BOARD) + 16];

	snprintf(yaml, sizeof(yaml), BOARD, num);
	node_model_init(m, yaml);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted entry names of directory @path; NULL-terminated, malloc'd. */
static char **entries(const char *path, const char *skip)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **v = calloc(1024, sizeof(*v));
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) && n < 1023)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    (!skip || strcmp(de->d_name, skip)))
			v[n++] = strdup(de->d_name);
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_names);
	return v;
}

static void free_entries(char **v)
{
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
}

/* Fails at the first path below @a and @b (relative @rel) that differs:
 * entries, file contents, link targets. @skip: one name left out. */
static void same_tree(const char *a, const char *b, const char *rel, const char *skip)
{
	char pa[4096], pb[4096];
	char **ea, **eb;

	snprintf(pa, sizeof(pa), "%s/%s", a, rel);
	snprintf(pb, sizeof(pb), "%s/%s", b, rel);
	ea = entries(pa, skip);
	eb = entries(pb, skip);
	for (size_t i = 0; ea[i] || eb[i]; i++) {
		char sub[2048], fa[4096], fb[4096], ca[8192], cb[8192];
		struct stat sa, sb;

		if (!ea[i] || !eb[i] || strcmp(ea[i], eb[i]))
			fail_msg("%s: %s here, %s there", rel, ea[i] ? ea[i] : "nothing",
				 eb[i] ? eb[i] : "nothing");
		snprintf(sub, sizeof(sub), "%s/%s", rel, ea[i]);
		snprintf(fa, sizeof(fa), "%s/%s", a, sub);
		snprintf(fb, sizeof(fb), "%s/%s", b, sub);
		assert_int_equal(lstat(fa, &sa), 0);
		assert_int_equal(lstat(fb, &sb), 0);
		if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
			fail_msg("%s: not the same kind of file", sub);
		if (S_ISDIR(sa.st_mode)) {
			same_tree(a, b, sub, NULL);
			continue;
		}
		if (S_ISLNK(sa.st_mode)) {
			ssize_t na = readlink(fa, ca, sizeof(ca) - 1), nb = readlink(fb, cb, sizeof(cb) - 1);

			ca[na > 0 ? na : 0] = cb[nb > 0 ? nb : 0] = '\0';
		} else {
			slurp(fa, ca, sizeof(ca));
			slurp(fb, cb, sizeof(cb));
		}
		if (strcmp(ca, cb) || sa.st_size != sb.st_size)
			fail_msg("%s differs: \"%.200s\" here, \"%.200s\" there", sub, ca, cb);
	}
	free_entries(ea);
	free_entries(eb);
}

static void test_made_vfs_are_the_boards(void **state)
{
	struct node_model made, booted;
	char err[256];

	(void)state;
	model_with(&made, 0);
	model_with(&booted, 3);
	assert_int_equal(hal_sriov_set_numvfs(&made.node, PF, 3, -1, err, sizeof(err)), 3);
	same_tree(made.dir, booted.dir, "sys", NULL);
	same_tree(made.dir, booted.dir, "dev", NULL);
	node_model_fini(&made);
	node_model_fini(&booted);
}

static void test_removed_vfs_leave_no_trace(void **state)
{
	struct node_model removed, none;
	char err[256];

	(void)state;
	model_with(&removed, 3);
	model_with(&none, 0);
	assert_true(node_model_has(&removed, "0000:3b:00.3"));
	assert_int_equal(hal_sriov_set_numvfs(&removed.node, PF, 0, -1, err, sizeof(err)), 0);
	/* the iavf module stays loaded: its driver directory stays */
	same_tree(removed.dir, none.dir, "sys/bus/pci/drivers", "iavf");
	same_tree(removed.dir, none.dir, "sys/devices", NULL);
	same_tree(removed.dir, none.dir, "sys/class", NULL);
	same_tree(removed.dir, none.dir, "sys/kernel", NULL);
	same_tree(removed.dir, none.dir, "sys/bus/pci/devices", NULL);
	same_tree(removed.dir, none.dir, "dev", NULL);
	node_model_fini(&removed);
	node_model_fini(&none);
}

/* vfio-pci brings the group's /dev/vfio node and takes the netdev; back on
 * iavf the netdev is back and the group node gone. */
static void test_drivers_bring_class_devices(void **state)
{
	struct node_model m;
	char err[256], buf[64];
	struct stat st;
	char path[4096];

	(void)state;
	model_with(&m, 2);
	assert_true(m.real.read(m.real.userdata, "class/net/ens2f0v1/ifindex", buf, sizeof(buf)) > 0);
	assert_int_equal(hal_pci_set_driver(&m.node, "0000:3b:00.2", "vfio-pci", err, sizeof(err)), 0);
	assert_int_equal(m.real.read(m.real.userdata, "class/net/ens2f0v1/ifindex", buf, sizeof(buf)),
			 -ENOENT);
	assert_true(m.real.read(m.real.userdata, "class/net/ens2f0v0/ifindex", buf, sizeof(buf)) > 0);
	assert_int_equal(m.real.readlink(m.real.userdata, "bus/pci/devices/0000:3b:00.2/iommu_group",
					 buf, sizeof(buf)) > 0, 1);
	const char *group = strrchr(buf, '/') + 1;
	snprintf(path, sizeof(path), "%s/dev/vfio/%s", m.dir, group);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(hal_pci_set_driver(&m.node, "0000:3b:00.2", NULL, err, sizeof(err)), 0);
	assert_int_equal(hal_pci_driver(&m.real, "0000:3b:00.2", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "iavf");
	assert_true(m.real.read(m.real.userdata, "class/net/ens2f0v1/ifindex", buf, sizeof(buf)) > 0);
	assert_int_equal(stat(path, &st), -1);
	/* unbound, the NVMe's class devices go with its driver; probed, they are back */
	assert_true(m.real.read(m.real.userdata, "class/nvme/nvme0/dev", buf, sizeof(buf)) > 0);
	assert_true(m.real.read(m.real.userdata, "class/block/nvme0n1/dev", buf, sizeof(buf)) > 0);
	assert_int_equal(hal_pci_unbind(&m.node, "0000:3a:01.0", err, sizeof(err)), 0);
	assert_int_equal(hal_pci_driver(&m.real, "0000:3a:01.0", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(m.real.read(m.real.userdata, "class/nvme/nvme0/dev", buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(m.real.read(m.real.userdata, "class/block/nvme0n1/dev", buf, sizeof(buf)),
			 -ENOENT);
	snprintf(path, sizeof(path), "%s/dev/nvme0", m.dir);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(m.node.write(m.node.userdata, "bus/pci/drivers_probe", "0000:3a:01.0"), 0);
	assert_true(m.real.read(m.real.userdata, "class/nvme/nvme0/dev", buf, sizeof(buf)) > 0);
	assert_int_equal(stat(path, &st), 0);
	node_model_fini(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_made_vfs_are_the_boards),
		cmocka_unit_test(test_removed_vfs_leave_no_trace),
		cmocka_unit_test(test_drivers_bring_class_devices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
