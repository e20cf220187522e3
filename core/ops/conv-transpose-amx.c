/* SPDX-License-Identifier: Apache-2.0 */
/* 2x2 stride-2 transposed convolution on the AMX tile unit (conv_transpose2x2.c does it in
 * fp32): four 1x1 convolutions, one per (dy, dx), of the same input pixels. The input is in
 * bf16 pairs (bd_to_bf16_pairs), so one A tile (16 pixels of a row, 32 channels) feeds all four
 * taps: C tiles 0-3 hold the four taps' sums for one output block at a time, B tiles 5 and 6
 * take turns holding a tap's weights. Built with -mamx-tile -mamx-bf16. */
#include "amx-tiles.h"

#define VL BD_LANES
#define PAIR BD_AMX_PAIR
#define TILE_WEIGHTS BD_AMX_WEIGHTS

typedef struct {
	const bd_cpu_conv      *taps;
	const bd_cpu_view_bf16 *in;
	const bd_cpu_view      *out;      /* fp32 outputs, or */
	const bd_cpu_view_bf16 *pairs;    /* bf16 pairs */
} transpose_ctx;

/* One tap's sums of output blocks ob and ob + 1 (@lo, @hi; @hi NULL where ob ends an odd
 * count) at output pixels 2(x + m) + dx of row 2y + dy: as fp32 planes, or as whole pairs of
 * bf16 planes, the second half zero where there is no block ob + 1. */
static void
write_tap (const transpose_ctx *c, float (*lo)[VL], float (*hi)[VL], uint32_t row, uint32_t col, uint32_t ob,
           int pixels)
{
	if (!c->pairs) {
		const bd_cpu_view *out = c->out;
		for (int j = 0; j < (hi ? 2 : 1); j++) {
			float (*sums)[VL] = j ? hi : lo;
			float *dst = out->data + (size_t) (ob + j) * out->plane_stride + (size_t) row * out->row_stride +
			             (size_t) col * VL;
			for (int m = 0; m < pixels; m++)
				_mm512_storeu_ps (dst + 2 * m * VL, _mm512_load_ps (sums[m]));
		}
		return;
	}
	const bd_cpu_view_bf16 *out = c->pairs;
	uint16_t *dst = out->data + (size_t) (ob / 2) * out->plane_stride + (size_t) row * out->row_stride +
	                (size_t) col * PAIR;
	for (int m = 0; m < pixels; m++) {
		__m512 h = hi ? _mm512_load_ps (hi[m]) : _mm512_setzero_ps ();
		_mm512_storeu_si512 (dst + 2 * m * PAIR, (__m512i) _mm512_cvtne2ps_pbh (h, _mm512_load_ps (lo[m])));
	}
}

/* One input row and two output blocks (ob, ob + 1: one pair of planes): their four output
 * pixels per input pixel. A task writes whole pairs: with one block a task, the two threads
 * wrote the two halves of the same cache lines. */
static void
transpose_task (void *data, size_t index)
{
	const transpose_ctx *c = data;
	const bd_cpu_view_bf16 *in = c->in;
	uint32_t blocks = c->taps[0].cout_blocks, groups = (blocks + 1) / 2;
	uint32_t y = (uint32_t) (index / groups), ob = 2 * (uint32_t) (index % groups), width = in->width;
	int count = ob + 1 < blocks ? 2 : 1;
	uint32_t pairs = (c->taps[0].in_channels + PAIR - 1) / PAIR;
	size_t per_block = (size_t) pairs * TILE_WEIGHTS;

	int pixels = width < VL ? (int) width : VL;
	bd_amx_configure (pixels, 5);
	float bias[2][VL][VL] __attribute__ ((aligned (64)));
	float sums[2][4][VL][VL] __attribute__ ((aligned (64)));
	for (int j = 0; j < count; j++)
		for (int m = 0; m < VL; m++)
			memcpy (bias[j][m], c->taps[0].bias + (size_t) (ob + j) * VL, sizeof bias[j][m]);

	for (uint32_t x0 = 0; x0 < width; x0 += VL) {
		/* As in conv-amx.c: a last tile that overlaps the one before, done twice. */
		uint32_t x = x0 + VL <= width || width < VL ? x0 : width - VL;
		for (int j = 0; j < count; j++) {
			const uint16_t *w[4];
			for (int t = 0; t < 4; t++)
				w[t] = c->taps[t].weights_amx + (size_t) (ob + j) * per_block;
			_tile_loadd (0, bias[j], 64);
			_tile_loadd (1, bias[j], 64);
			_tile_loadd (2, bias[j], 64);
			_tile_loadd (3, bias[j], 64);
			for (uint32_t p = 0; p < pairs; p++) {
				_tile_loadd (4, in->data + (size_t) p * in->plane_stride + (size_t) y * in->row_stride +
				                (size_t) x * PAIR, 64);
				const size_t at = (size_t) p * TILE_WEIGHTS;
				_tile_loadd (5, w[0] + at, 64);
				_tile_loadd (6, w[1] + at, 64);
				_tile_dpbf16ps (0, 4, 5);
				_tile_loadd (5, w[2] + at, 64);
				_tile_dpbf16ps (1, 4, 6);
				_tile_loadd (6, w[3] + at, 64);
				_tile_dpbf16ps (2, 4, 5);
				_tile_dpbf16ps (3, 4, 6);
			}
			_tile_stored (0, sums[j][0], 64);
			_tile_stored (1, sums[j][1], 64);
			_tile_stored (2, sums[j][2], 64);
			_tile_stored (3, sums[j][3], 64);
		}
		for (int t = 0; t < 4; t++)
			write_tap (c, sums[0][t], count == 2 ? sums[1][t] : NULL, 2 * y + t / 2, 2 * x + t % 2, ob, pixels);
	}
	_tile_release ();
}

void
bd_conv_transpose2x2_amx (bd_thread_pool *pool, const bd_cpu_conv taps[4], const bd_cpu_view_bf16 *in,
                          const bd_cpu_view *out, const bd_cpu_view_bf16 *pairs)
{
	if (in->height == 0 || in->width == 0 || taps[0].out_channels == 0)
		return;
	transpose_ctx c = { taps, in, out, out ? NULL : pairs };
	bd_thread_pool_run (pool, (size_t) in->height * ((taps[0].cout_blocks + 1) / 2), transpose_task, &c);
}
