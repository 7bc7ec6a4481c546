/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fake NVML without the event calls and nvmlDeviceGetFieldValues, as an
 * NVML older than them: the nvidia backend must then have no event source and
 * keep its other health checks (tests/unit/test_gpu_nvidia_events.c).
 */
#define FAKE_NVML_NO_EVENTS 1
#include "../fake-nvml/fake_nvml.c"
