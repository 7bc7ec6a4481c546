/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fpga.h: loading an xclbin on an Alveo through XRT's C API, dlopen'ed like
 * NVML (Xilinx/XRT src/runtime_src/core/include/experimental/xrt_device.h:
 * xrtDeviceOpenByBDF, xrtDeviceLoadXclbin with the whole axlf in memory,
 * xrtDeviceClose; docs/fpga.md section 4).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bitstream.h"
#include "fpga.h"

#define XRT_DEFAULT_LIBRARY "/opt/xilinx/xrt/lib/libxrt_coreutil.so"

struct xrt_api {
	void *(*open_by_bdf)(const char *bdf);
	int (*load_xclbin)(void *device, const void *axlf);
	int (*close)(void *device);
};

/* dlsym's object pointer into a function pointer (POSIX allows it). */
#define XRT_SYM(lib, field, name, api)                                  \
	do {                                                            \
		void *p_ = dlsym(lib, name);                            \
		_Static_assert(sizeof(p_) == sizeof((api)->field), name); \
		memcpy(&(api)->field, &p_, sizeof(p_));                 \
	} while (0)

int fpga_xrt_load(struct dralet_backend_ctx *ctx, const char *user_bdf,
		  const struct fpga_loaded *img)
{
	const char *path = dralet_ctx_option(ctx, "xrtLibrary");
	struct xrt_api api = { 0 };
	void *lib, *device;
	int r;

	if (!path || !*path)
		path = XRT_DEFAULT_LIBRARY;
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		dralet_ctx_error(ctx, "XRT is needed: %s (option xrtLibrary)", dlerror());
		return -ENOENT;
	}
	XRT_SYM(lib, open_by_bdf, "xrtDeviceOpenByBDF", &api);
	XRT_SYM(lib, load_xclbin, "xrtDeviceLoadXclbin", &api);
	XRT_SYM(lib, close, "xrtDeviceClose", &api);
	if (!api.open_by_bdf || !api.load_xclbin || !api.close) {
		dralet_ctx_error(ctx, "%s lacks xrtDeviceOpenByBDF/xrtDeviceLoadXclbin/"
				 "xrtDeviceClose (XRT 2.x's C API)", path);
		dlclose(lib);
		return -ENOSYS;
	}
	errno = 0;
	device = api.open_by_bdf(user_bdf);
	if (!device) {
		r = errno ? -errno : -ENODEV;
		dralet_ctx_error(ctx, "XRT cannot open %s: %s", user_bdf, strerror(-r));
		dlclose(lib);
		return r;
	}
	r = api.load_xclbin(device, img->data);
	if (r != 0) {
		r = r < 0 ? r : -EIO;
		dralet_ctx_error(ctx, "XRT did not load it: %s", strerror(-r));
	}
	api.close(device);
	dlclose(lib);
	return r;
}
