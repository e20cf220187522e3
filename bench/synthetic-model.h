/* SPDX-License-Identifier: Apache-2.0 */
/* U-Nets with random weights, written in the model format (docs/model-format.md), for the
 * tests and the benchmarks: any depth and widths, f32 or f16 tensors. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t depth;
	uint32_t widths[8];
	uint32_t input_size;
	bool     f16;
	uint64_t seed;
	uint32_t version;   /* of the format; 0: the newest (2) */
} bd_synthetic_spec;

/* Fills widths[l] = base << l for a depth-@depth U-Net, the newest format version. */
void     bd_synthetic_spec_init (bd_synthetic_spec *spec, uint32_t depth, uint32_t base,
                                 uint32_t input_size, uint64_t seed);

/* The whole file in memory (malloc'd, *size bytes), or NULL when out of memory. */
uint8_t *bd_synthetic_model_bytes (const bd_synthetic_spec *spec, size_t *size);

/* Writes the file; false on failure (errno tells why). */
bool     bd_synthetic_model_write (const bd_synthetic_spec *spec, const char *path);

/* A deterministic generator for test data: uniform in [lo, hi). */
typedef struct { uint64_t state; } bd_rng;
float    bd_rng_uniform (bd_rng *rng, float lo, float hi);

/* Offsets of fields inside the file, for tests that corrupt it on purpose. */
enum {
	BD_SYN_OFFSET_VERSION = 8,
	BD_SYN_OFFSET_FILE_SIZE = 16,
	BD_SYN_OFFSET_DEPTH = 24,
	BD_SYN_OFFSET_WIDTHS = 64,
	BD_SYN_OFFSET_COUNT = 96,
	BD_SYN_OFFSET_TABLE = 104,
	BD_SYN_OFFSET_DATA = 112,
	BD_SYN_OFFSET_CHECKSUM = 128,
	BD_SYN_HEADER_SIZE = 256,
	BD_SYN_ENTRY_SIZE = 96,
};

/* Recomputes the checksum after a deliberate edit, so other checks can be reached. */
void     bd_synthetic_model_fix_checksum (uint8_t *bytes, size_t size);
/* zlib's CRC-32 of @n more bytes after @crc (0 to start), a bit at a time: the writer's own,
 * independent of the library's, which test-model checks against it. */
uint32_t bd_synthetic_crc32 (uint32_t crc, const uint8_t *p, size_t n);
