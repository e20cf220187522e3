/* SPDX-License-Identifier: Apache-2.0 */
/* A copy of blocked activations in 8-bit integers for the 8-bit convolution (conv-int8.c):
 * the same planes, borders included, each value rounded to 255 levels over the range of the
 * values inside the buffer (bd_value_range; zero included, so zero is an integer level: the
 * copy's `offset`, which borders and spare lanes take). A ReLU's output starts at zero and
 * keeps all 255 levels; a decoder's input, whose up half is signed, shares them. Built with
 * -mavx512vnni. */
#include "ops.h"

#include <immintrin.h>
#include <math.h>

#define VL     BD_LANES
#define PIECE  ((size_t) 1 << 16)  /* values a task converts: 256 KiB in, cache-sized */

typedef struct {
	const float *src;
	uint8_t     *dst;
	size_t       n;
	float        inverse;
	int32_t      offset;
} convert_ctx;

static void
convert_task (void *data, size_t index)
{
	const convert_ctx *c = data;
	size_t start = index * PIECE, end = start + PIECE < c->n ? start + PIECE : c->n;
	__m512 inv = _mm512_set1_ps (c->inverse);
	__m512i off = _mm512_set1_epi32 (c->offset), top = _mm512_set1_epi32 (255);
	/* The buffers are whole pixels of 16 values. */
	for (size_t i = start; i < end; i += VL) {
		__m512i q = _mm512_add_epi32 (_mm512_cvtps_epi32 (_mm512_mul_ps (_mm512_loadu_ps (c->src + i), inv)), off);
		q = _mm512_min_epi32 (_mm512_max_epi32 (q, _mm512_setzero_si512 ()), top);
		_mm_storeu_si128 ((__m128i *) (c->dst + i), _mm512_cvtepi32_epi8 (q));
	}
}

bd_cpu_view_int8
bd_to_int8 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, uint8_t *dst)
{
	float least, largest;
	bd_value_range (pool, in, planes, &least, &largest);
	float scale = largest > least ? (largest - least) / 255.0f : 1.0f;
	int32_t offset = (int32_t) nearbyintf (-least / scale);

	size_t border = in->row_stride + VL;
	convert_ctx c = { in->data - border, dst, (size_t) planes * in->plane_stride, 1.0f / scale, offset };
	bd_thread_pool_run (pool, (c.n + PIECE - 1) / PIECE, convert_task, &c);
	return (bd_cpu_view_int8) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
		.scale = scale, .offset = offset,
	};
}
