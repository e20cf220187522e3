/* SPDX-License-Identifier: Apache-2.0 */
/* Copies of blocked activations in integers for the integer convolutions: the same planes,
 * borders included, each value rounded to a multiple of one scale for the whole buffer.
 * 16 bits (conv-int16.c): the largest |value| at the layer's levels, zero stays zero. 8 bits
 * (conv-int8.c): unsigned, 255 levels over the buffer's range with zero included, so zero is
 * an integer level (the copy's `offset`, which borders and spare lanes take); a ReLU's output
 * starts at zero and keeps all 255 levels, a decoder's input, whose up half is signed, shares
 * them. Only the pixels inside count towards the scale: a smaller pass laid out in a larger
 * one's planes leaves the larger one's values beyond its rows, which the kernels never read.
 * Built with -mavx512vnni (the integer kernels' library). */
#include "ops.h"

#include <immintrin.h>
#include <math.h>

#define VL    BD_LANES
#define BANDS 64                   /* tasks finding the range, each a band of rows */
#define PIECE ((size_t) 1 << 16)   /* values a task converts: 256 KiB in, cache-sized */

typedef struct {
	const bd_cpu_view *in;
	uint32_t           planes;
	float              least[BANDS], largest[BANDS];
} range_ctx;

static void
range_task (void *data, size_t band)
{
	range_ctx *c = data;
	const bd_cpu_view *in = c->in;
	uint32_t y0 = (uint32_t) ((uint64_t) in->height * band / BANDS);
	uint32_t y1 = (uint32_t) ((uint64_t) in->height * (band + 1) / BANDS);
	__m512 lo = _mm512_setzero_ps (), hi = _mm512_setzero_ps ();
	for (uint32_t p = 0; p < c->planes; p++)
		for (uint32_t y = y0; y < y1; y++) {
			const float *row = in->data + p * in->plane_stride + (size_t) y * in->row_stride;
			for (uint32_t x = 0; x < in->width; x++) {
				__m512 v = _mm512_loadu_ps (row + (size_t) x * VL);
				lo = _mm512_min_ps (lo, v);
				hi = _mm512_max_ps (hi, v);
			}
		}
	c->least[band] = _mm512_reduce_min_ps (lo);
	c->largest[band] = _mm512_reduce_max_ps (hi);
}

/* The least and largest of the values inside @planes planes of @in, zero included. */
static void
value_range (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, float *least, float *largest)
{
	range_ctx c = { .in = in, .planes = planes };
	bd_thread_pool_run (pool, BANDS, range_task, &c);
	*least = *largest = 0;
	for (int b = 0; b < BANDS; b++) {
		*least = *least < c.least[b] ? *least : c.least[b];
		*largest = *largest > c.largest[b] ? *largest : c.largest[b];
	}
}

/* Each value times @inverse, rounded, plus @offset, held to [@low, @high], stored in 16 or 8
 * bits. The buffers are whole pixels of 16 values. */
typedef struct {
	const float *src;
	void        *dst;
	size_t       n;
	float        inverse;
	int32_t      offset, low, high;
	bool         bytes;
} convert_ctx;

static void
convert_task (void *data, size_t index)
{
	const convert_ctx *c = data;
	size_t start = index * PIECE, end = start + PIECE < c->n ? start + PIECE : c->n;
	__m512 inv = _mm512_set1_ps (c->inverse);
	__m512i off = _mm512_set1_epi32 (c->offset), low = _mm512_set1_epi32 (c->low), high = _mm512_set1_epi32 (c->high);
	for (size_t i = start; i < end; i += VL) {
		__m512i q = _mm512_add_epi32 (_mm512_cvtps_epi32 (_mm512_mul_ps (_mm512_loadu_ps (c->src + i), inv)), off);
		q = _mm512_min_epi32 (_mm512_max_epi32 (q, low), high);
		if (c->bytes)
			_mm_storeu_si128 ((__m128i *) ((uint8_t *) c->dst + i), _mm512_cvtepi32_epi8 (q));
		else
			_mm256_storeu_si256 ((__m256i *) ((int16_t *) c->dst + i), _mm512_cvtepi32_epi16 (q));
	}
}

static void
convert (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, convert_ctx *c)
{
	c->src = in->data - (in->row_stride + VL);
	c->n = (size_t) planes * in->plane_stride;
	bd_thread_pool_run (pool, (c->n + PIECE - 1) / PIECE, convert_task, c);
}

bd_cpu_view_int16
bd_to_int16 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, float levels, int16_t *dst)
{
	float least, largest;
	value_range (pool, in, planes, &least, &largest);
	largest = largest > -least ? largest : -least;
	convert_ctx c = { .dst = dst, .inverse = levels / (largest > 0 ? largest : levels), .low = INT16_MIN,
	                  .high = INT16_MAX };
	convert (pool, in, planes, &c);
	size_t border = in->row_stride + VL;
	return (bd_cpu_view_int16) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
		.scale = largest > 0 ? largest / levels : 1,
	};
}

bd_cpu_view_int8
bd_to_int8 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, uint8_t *dst)
{
	float least, largest;
	value_range (pool, in, planes, &least, &largest);
	float scale = largest > least ? (largest - least) / 255.0f : 1.0f;
	int32_t offset = (int32_t) nearbyintf (-least / scale);
	convert_ctx c = { .dst = dst, .inverse = 1.0f / scale, .offset = offset, .low = 0, .high = 255, .bytes = true };
	convert (pool, in, planes, &c);
	size_t border = in->row_stride + VL;
	return (bd_cpu_view_int8) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
		.scale = scale, .offset = offset,
	};
}
