/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a CUDA program does first, and nothing else: load libcuda.so.1 the way
 * the CUDA runtime does (dlopen by soname, the loader's search), cuInit, and
 * count the devices. tests/realnode/realnode.py runs it in a root that holds
 * only the C library, /dev, /proc, /sys and a CDI spec's mounts: it passes
 * when the spec gives a container a working driver. Exit 0: at least one
 * device; 2: libcuda not loadable; 3: cuInit failed; 4: no device.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
	int (*init)(unsigned), (*count)(int *), (*version)(int *);
	int n = -1, v = 0, r;

	if (!cuda) {
		printf("dlopen libcuda.so.1: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(cuda, "cuInit");
	*(void **)&count = dlsym(cuda, "cuDeviceGetCount");
	*(void **)&version = dlsym(cuda, "cuDriverGetVersion");
	if (!init || !count || !version) {
		printf("libcuda.so.1 lacks cuInit, cuDeviceGetCount or cuDriverGetVersion\n");
		return 2;
	}
	r = init(0);
	printf("cuInit: %d\n", r);
	if (r)
		return 3;
	count(&n);
	version(&v);
	printf("devices: %d, driver API: %d\n", n, v);
	return n > 0 ? 0 : 4;
}
