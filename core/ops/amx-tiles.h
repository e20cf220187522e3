/* SPDX-License-Identifier: Apache-2.0 */
/* What the AMX kernels (conv-amx.c, conv-transpose-amx.c) share: the pair layout's sizes and
 * the tile unit's configuration. Included only by files built with -mamx-tile. */
#pragma once

#include "ops.h"

#include <immintrin.h>
#include <string.h>

#define BD_AMX_PAIR    (2 * BD_LANES)              /* bf16 channels a pixel in the pair layout */
#define BD_AMX_WEIGHTS (BD_LANES * BD_AMX_PAIR)    /* bf16 values of one B tile: 16 rows of 32 */

/* Palette 1, eight tiles of 64-byte rows: the first @short_tiles of @rows rows (the pixels
 * a tile covers), the others of 16 (weights). Each thread configures its own unit. */
static inline void
bd_amx_configure (int rows, int short_tiles)
{
	struct {
		uint8_t  palette, start_row, reserved[14];
		uint16_t colsb[16];
		uint8_t  rows[16];
	} __attribute__ ((packed, aligned (64))) cfg;
	memset (&cfg, 0, sizeof cfg);
	cfg.palette = 1;
	for (int t = 0; t < 8; t++) {
		cfg.rows[t] = (uint8_t) (t < short_tiles ? rows : BD_LANES);
		cfg.colsb[t] = 64;
	}
	_tile_loadconfig (&cfg);
}
