/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi for simulated boards, next to the NVML simulator (fake-nvml):
 * answers the one command dralet's nvidia backend runs,
 *
 *   nvidia-smi compute-policy --set-timeslice=<0..3> -i <uuid>
 *
 * for the GPUs of the board's NVML data (FAKE_NVML_DATA, which dralet sets
 * for a simulated board), and records each setting as a line
 * "<uuid> <interval>" in <data>.timeslice so tests can read what was set.
 * Anything else fails as the real tool does for an unknown GPU or option.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

static int known_gpu(const char *data, const char *uuid)
{
	struct json_object *root = json_object_from_file(data), *devs, *uid;
	int found = 0;

	if (root && json_object_object_get_ex(root, "devices", &devs))
		for (size_t i = 0; i < json_object_array_length(devs); i++)
			if (json_object_object_get_ex(json_object_array_get_idx(devs, i), "uuid",
						      &uid) &&
			    !strcmp(json_object_get_string(uid), uuid))
				found = 1;
	json_object_put(root);
	return found;
}

int main(int argc, char **argv)
{
	const char *data = getenv("FAKE_NVML_DATA");
	char path[4096], *end;
	long interval;
	FILE *f;

	if (argc != 5 || strcmp(argv[1], "compute-policy") ||
	    strncmp(argv[2], "--set-timeslice=", 16) || strcmp(argv[3], "-i")) {
		fprintf(stderr, "usage: nvidia-smi compute-policy --set-timeslice=N -i UUID "
				"(board simulator)\n");
		return 2;
	}
	interval = strtol(argv[2] + 16, &end, 10);
	if (*end || interval < 0 || interval > 3) {
		fprintf(stderr, "Invalid timeslice value: %s\n", argv[2] + 16);
		return 2;
	}
	if (!data) {
		fprintf(stderr, "NVIDIA-SMI has failed because it couldn't communicate with the "
				"NVIDIA driver (no FAKE_NVML_DATA)\n");
		return 9;
	}
	if (!known_gpu(data, argv[4])) {
		fprintf(stderr, "No devices were found matching %s\n", argv[4]);
		return 6;
	}
	snprintf(path, sizeof(path), "%s.timeslice", data);
	if (!(f = fopen(path, "a")) || fprintf(f, "%s %ld\n", argv[4], interval) < 0 || fclose(f)) {
		perror(path);
		return 1;
	}
	printf("Set compute policy timeslice to %ld for GPU %s\n", interval, argv[4]);
	return 0;
}
