/* SPDX-License-Identifier: Apache-2.0 */
/* bd_conv2d with its outputs rounded to bf16 pairs of planes, for the AMX pass's first
 * convolution: bd_conv2d's row reduction (bd_conv_row_run) writes a stretch of a row into
 * a buffer on the stack, stored at once as pairs, so the fp32 output never takes memory of
 * its own (two full-size planes a photo, faulted in and then copied). The rounding is
 * bd_to_bf16_pairs'. Built with -mavx512bf16. */
#include "conv-kernel.h"

#include <immintrin.h>

#define VL      BD_LANES
#define STRETCH 56     /* pixels per call: two of the row kernel's widest tiles */

typedef struct {
	const bd_cpu_conv      *conv;
	const bd_cpu_view      *in;
	const bd_cpu_view_bf16 *out;
	bool                    relu;
	uint32_t                groups;
} pairs_ctx;

/* One row of one pair of output blocks (pair g is blocks 2g and 2g + 1). */
static void
pairs_task (void *data, size_t index)
{
	const pairs_ctx *c = data;
	uint32_t y = (uint32_t) (index / c->groups), g = (uint32_t) (index % c->groups), width = c->in->width;
	bool two = 2 * g + 1 < c->conv->cout_blocks;
	float sums[2][STRETCH * VL] __attribute__ ((aligned (64)));
	uint16_t *dst = c->out->data + (size_t) g * c->out->plane_stride + (size_t) y * c->out->row_stride;

	for (uint32_t x0 = 0; x0 < width; x0 += STRETCH) {
		uint32_t n = width - x0 < STRETCH ? width - x0 : STRETCH;
		/* Every CPU with AVX-512 BF16 runs the x86-64-v4 build. */
		bd_conv_row_run (bd_conv_row_x86_64_v4, c->conv, c->in, y, x0, n, 2 * g, sums[0], STRETCH * VL, 1, c->relu);
		for (uint32_t p = 0; p < n; p++) {
			__m512 lo = _mm512_load_ps (sums[0] + (size_t) p * VL);
			__m512 hi = two ? _mm512_load_ps (sums[1] + (size_t) p * VL) : _mm512_setzero_ps ();
			_mm512_storeu_si512 (dst + (size_t) (x0 + p) * 2 * VL, (__m512i) _mm512_cvtne2ps_pbh (hi, lo));
		}
	}
}

void
bd_conv2d_pairs (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view *in,
                 const bd_cpu_view_bf16 *out, bool relu)
{
	if (in->height == 0 || in->width == 0 || conv->out_channels == 0)
		return;
	pairs_ctx c = { conv, in, out, relu, (conv->cout_blocks + 1) / 2 };
	bd_thread_pool_run (pool, (size_t) in->height * c.groups, pairs_task, &c);
}
