/* SPDX-License-Identifier: Apache-2.0 */
/* A copy of blocked activations in bfloat16, borders included (zero stays zero): the same
 * planes for the bf16 convolution (conv-bf16.c), or planes interleaved in pairs for the AMX
 * one (conv-amx.c). Built with -mavx512bf16. */
#include "ops.h"

#include <immintrin.h>

typedef struct {
	const float *src;
	uint16_t    *dst;
	size_t       n;
} convert_ctx;

#define PIECE ((size_t) 1 << 16)   /* floats a task converts: 256 KiB in, cache-sized */

static void
convert_task (void *data, size_t index)
{
	const convert_ctx *c = data;
	size_t start = index * PIECE, end = start + PIECE < c->n ? start + PIECE : c->n, i = start;
	for (; i + 32 <= end; i += 32) {
		__m512bh h = _mm512_cvtne2ps_pbh (_mm512_loadu_ps (c->src + i + 16), _mm512_loadu_ps (c->src + i));
		_mm512_storeu_si512 (c->dst + i, (__m512i) h);
	}
	if (i < end) {
		__mmask16 lo = (__mmask16) ((1u << (end - i < 16 ? end - i : 16)) - 1);
		__mmask16 hi = (__mmask16) (end - i > 16 ? (1u << (end - i - 16)) - 1 : 0);
		__m512 a = _mm512_maskz_loadu_ps (lo, c->src + i), b = _mm512_maskz_loadu_ps (hi, c->src + i + 16);
		__m512i h = (__m512i) _mm512_cvtne2ps_pbh (b, a);
		_mm512_mask_storeu_epi16 (c->dst + i, (__mmask32) ((uint64_t) lo | (uint64_t) hi << 16), h);
	}
}

bd_cpu_view_bf16
bd_to_bf16 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, uint16_t *dst)
{
	size_t border = in->row_stride + BD_LANES;
	convert_ctx c = { in->data - border, dst, (size_t) planes * in->plane_stride };
	bd_thread_pool_run (pool, (c.n + PIECE - 1) / PIECE, convert_task, &c);
	return (bd_cpu_view_bf16) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
	};
}

typedef struct {
	const float *src;
	uint16_t    *dst;
	size_t       plane_stride;   /* floats of one source plane */
	uint32_t     planes;
	size_t       pieces;         /* tasks a pair of planes */
} pairs_ctx;

#define PIXELS_A_PIECE ((size_t) 4096)   /* 2 x 256 KiB in */

static void
pairs_task (void *data, size_t index)
{
	const pairs_ctx *c = data;
	uint32_t p = (uint32_t) (index / c->pieces);
	size_t pixels = c->plane_stride / BD_LANES;
	size_t start = index % c->pieces * PIXELS_A_PIECE;
	size_t end = start + PIXELS_A_PIECE < pixels ? start + PIXELS_A_PIECE : pixels;
	const float *lo = c->src + (size_t) 2 * p * c->plane_stride;
	const float *hi = 2 * p + 1 < c->planes ? lo + c->plane_stride : NULL;
	uint16_t *dst = c->dst + (size_t) 2 * p * c->plane_stride;
	for (size_t i = start; i < end; i++) {
		__m512 a = _mm512_loadu_ps (lo + i * BD_LANES);
		__m512 b = hi ? _mm512_loadu_ps (hi + i * BD_LANES) : _mm512_setzero_ps ();
		_mm512_storeu_si512 (dst + i * 2 * BD_LANES, (__m512i) _mm512_cvtne2ps_pbh (b, a));
	}
}

bd_cpu_view_bf16
bd_to_bf16_pairs (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, uint16_t *dst)
{
	size_t border = in->row_stride + BD_LANES;
	pairs_ctx c = {
		.src = in->data - border, .dst = dst, .plane_stride = in->plane_stride, .planes = planes,
		.pieces = (in->plane_stride / BD_LANES + PIXELS_A_PIECE - 1) / PIXELS_A_PIECE,
	};
	bd_thread_pool_run (pool, (size_t) (planes + 1) / 2 * c.pieces, pairs_task, &c);
	return (bd_cpu_view_bf16) {
		.data = dst + 2 * border,
		.height = in->height, .width = in->width,
		.row_stride = 2 * in->row_stride, .plane_stride = 2 * in->plane_stride,
	};
}
