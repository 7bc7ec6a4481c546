/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the checkpoint decoder (a file on disk that may be truncated or
 * garbled) and, for what decodes, the encoder: encode(decode(x)) must decode
 * again and encode to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/claims/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct checkpoint *ck = NULL, *again = NULL;
	char err[512], *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;

	if (checkpoint_decode((const char *)data, size, &ck, err, sizeof(err)) < 0)
		return 0;
	if (checkpoint_encode(ck, &text, &len) < 0)
		abort();
	if (checkpoint_decode(text, len, &again, err, sizeof(err)) < 0)
		abort();
	if (checkpoint_encode(again, &text2, &len2) < 0 || len != len2 || memcmp(text, text2, len))
		abort();
	free(text);
	free(text2);
	checkpoint_free(ck);
	checkpoint_free(again);
	return 0;
}
