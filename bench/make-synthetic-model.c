/* SPDX-License-Identifier: Apache-2.0 */
/* Writes a U-Net with random weights in the model format, for benchmarks and tests:
 *   make-synthetic-model [--depth 5] [--width 16] [--size 512] [--f16] [--seed N] OUTPUT.bdm */
#include "synthetic-model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
	uint32_t depth = 5, width = 16, size = 512;
	uint64_t seed = 1;
	bool f16 = false;
	const char *out = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp (argv[i], "--depth") && v) { depth = (uint32_t) atoi (v); i++; }
		else if (!strcmp (argv[i], "--width") && v) { width = (uint32_t) atoi (v); i++; }
		else if (!strcmp (argv[i], "--size") && v) { size = (uint32_t) atoi (v); i++; }
		else if (!strcmp (argv[i], "--seed") && v) { seed = strtoull (v, NULL, 10); i++; }
		else if (!strcmp (argv[i], "--f16")) f16 = true;
		else if (argv[i][0] != '-' && !out) out = argv[i];
		else {
			fprintf (stderr, "usage: %s [--depth N] [--width N] [--size N] [--f16] [--seed N] OUTPUT\n", argv[0]);
			return 2;
		}
	}
	if (!out || depth < 1 || depth > 8 || width < 1 || (width << (depth - 1)) > 4096) {
		fprintf (stderr, "make-synthetic-model: need an output file, depth 1..8 and widths up to 4096\n");
		return 2;
	}
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, depth, width, size, seed);
	spec.f16 = f16;
	if (!bd_synthetic_model_write (&spec, out)) {
		perror (out);
		return 1;
	}
	return 0;
}
