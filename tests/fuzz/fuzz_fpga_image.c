/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzzes the FPGA image parsers (backends/fpga/bitstream.h): every input goes
 * through the GBS/xclbin header parser, the manifest parser and the index
 * parser; what parses must describe a payload inside the input and IDs of
 * 32 hex digits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/fpga/bitstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_id(const char *id)
{
	if (id[0] && (strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fpga_image img;
	struct fpga_index idx;
	char err[256];

	if (fpga_image_parse(data, size, &img, err, sizeof(err)) == 0) {
		if (img.payload_offset > size || img.payload_size > size - img.payload_offset ||
		    img.kind == FPGA_IMAGE_UNKNOWN || !img.accelerator_id[0])
			abort();
		check_id(img.interface_id);
		check_id(img.accelerator_id);
	}
	if (fpga_manifest_parse((const char *)data, size, size, &img, err, sizeof(err)) == 0) {
		check_id(img.interface_id);
		check_id(img.accelerator_id);
		if (!img.interface_id[0])
			abort();
	}
	if (fpga_index_parse((const char *)data, size, &idx, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < idx.n; i++)
			if (!fpga_store_name_valid(idx.entries[i].name) ||
			    !fpga_sha256_valid(fpga_index_find(&idx, idx.entries[i].name)))
				abort();
		fpga_index_free(&idx);
	}
	return 0;
}
