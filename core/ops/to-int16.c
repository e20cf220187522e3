/* SPDX-License-Identifier: Apache-2.0 */
/* A copy of blocked activations in 16-bit integers for the 16-bit convolution
 * (conv-int16.c): the same planes, borders included (zero stays zero), each value rounded to
 * a multiple of one scale for the whole buffer, the largest |value| inside it
 * (bd_value_range) at @levels. Built with -mavx512vnni. */
#include "ops.h"

#include <immintrin.h>

#define VL     BD_LANES
#define PIECE  ((size_t) 1 << 16)  /* values a task converts: 256 KiB in, cache-sized */

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
	float least, largest;
	bd_value_range (pool, in, planes, &least, &largest);
	largest = largest > -least ? largest : -least;
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
