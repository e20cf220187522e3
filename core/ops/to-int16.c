/* SPDX-License-Identifier: Apache-2.0 */
/* A copy of blocked activations in 16-bit integers for the integer convolution
 * (conv-int16.c): the same planes, borders included (zero stays zero), each value rounded to
 * a multiple of one scale for the whole buffer, the largest |value| inside it at @levels. Only
 * the pixels inside count towards the largest: a smaller pass laid out in a larger one's
 * planes leaves the larger one's values beyond its rows, which the kernel never reads. Built
 * with -mavx512vnni. */
#include "ops.h"

#include <immintrin.h>

#define VL     BD_LANES
#define BANDS  64                  /* tasks finding the largest value, each a band of rows */
#define PIECE  ((size_t) 1 << 16)  /* values a task converts: 256 KiB in, cache-sized */

typedef struct {
	const bd_cpu_view *in;
	uint32_t           planes;
	float              largest[BANDS];
} largest_ctx;

static void
largest_task (void *data, size_t band)
{
	largest_ctx *c = data;
	const bd_cpu_view *in = c->in;
	uint32_t y0 = (uint32_t) ((uint64_t) in->height * band / BANDS);
	uint32_t y1 = (uint32_t) ((uint64_t) in->height * (band + 1) / BANDS);
	__m512 m = _mm512_setzero_ps ();
	for (uint32_t p = 0; p < c->planes; p++)
		for (uint32_t y = y0; y < y1; y++) {
			const float *row = in->data + p * in->plane_stride + (size_t) y * in->row_stride;
			for (uint32_t x = 0; x < in->width; x++)
				m = _mm512_max_ps (m, _mm512_abs_ps (_mm512_loadu_ps (row + (size_t) x * VL)));
		}
	c->largest[band] = _mm512_reduce_max_ps (m);
}

typedef struct {
	const float *src;
	int16_t     *dst;
	size_t       n;
	float        inverse;
} convert_ctx;

static void
convert_task (void *data, size_t index)
{
	const convert_ctx *c = data;
	size_t start = index * PIECE, end = start + PIECE < c->n ? start + PIECE : c->n;
	__m512 inv = _mm512_set1_ps (c->inverse);
	/* The buffers are whole pixels of 16 values. */
	for (size_t i = start; i < end; i += VL) {
		__m512i q = _mm512_cvtps_epi32 (_mm512_mul_ps (_mm512_loadu_ps (c->src + i), inv));
		_mm256_storeu_si256 ((__m256i *) (c->dst + i), _mm512_cvtsepi32_epi16 (q));
	}
}

bd_cpu_view_int16
bd_to_int16 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, float levels, int16_t *dst)
{
	largest_ctx l = { .in = in, .planes = planes };
	bd_thread_pool_run (pool, BANDS, largest_task, &l);
	float largest = 0;
	for (int b = 0; b < BANDS; b++)
		largest = largest > l.largest[b] ? largest : l.largest[b];
	float scale = largest > 0 ? largest / levels : 1;

	size_t border = in->row_stride + VL;
	convert_ctx c = { in->data - border, dst, (size_t) planes * in->plane_stride, levels / (largest > 0 ? largest : levels) };
	bd_thread_pool_run (pool, (c.n + PIECE - 1) / PIECE, convert_task, &c);
	return (bd_cpu_view_int16) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
		.scale = scale,
	};
}
