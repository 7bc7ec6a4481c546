/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for XRT's C device API (xrtDeviceOpenByBDF, xrtDeviceLoadXclbin,
 * xrtDeviceClose) for the tests: the device is the user PF below
 * $FAKE_XRT_SYSFS/bus/pci/devices/<bdf>; loading writes the axlf's uuid
 * (offset 416, docs/fpga.md 1.3) to its xclbinuuid, as xocl shows it.
 * $FAKE_XRT_FAIL=<errno> makes every load fail with it; every load appends a
 * line "<bdf> <uuid>" to $FAKE_XRT_LOG when set.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct fake_device {
	char dir[4096];
	char bdf[64];
};

void *xrtDeviceOpenByBDF(const char *bdf);
int xrtDeviceLoadXclbin(void *device, const void *axlf);
int xrtDeviceClose(void *device);

void *xrtDeviceOpenByBDF(const char *bdf)
{
	const char *root = getenv("FAKE_XRT_SYSFS");
	struct fake_device *d;
	struct stat st;

	if (!root || !bdf) {
		errno = ENODEV;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	snprintf(d->dir, sizeof(d->dir), "%s/bus/pci/devices/%s", root, bdf);
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	if (stat(d->dir, &st) < 0) {
		free(d);
		errno = ENODEV;
		return NULL;
	}
	return d;
}

int xrtDeviceLoadXclbin(void *device, const void *axlf)
{
	struct fake_device *d = device;
	const uint8_t *uuid = (const uint8_t *)axlf + 416;
	const char *fail = getenv("FAKE_XRT_FAIL"), *log = getenv("FAKE_XRT_LOG");
	char path[4200], hex[40];
	FILE *f;

	if (memcmp(axlf, "xclbin2", 8))
		return -EINVAL;
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
	if (log && (f = fopen(log, "a"))) {
		fprintf(f, "%s %s\n", d->bdf, hex);
		fclose(f);
	}
	if (fail)
		return -atoi(fail);
	snprintf(path, sizeof(path), "%s/xclbinuuid", d->dir);
	if (!(f = fopen(path, "w")))
		return -errno;
	fprintf(f, "%s\n", hex);
	fclose(f);
	return 0;
}

int xrtDeviceClose(void *device)
{
	free(device);
	return 0;
}
