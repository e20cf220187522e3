/* SPDX-License-Identifier: Apache-2.0 */
/* Copies of blocked activations (floats, or an integer session's halves) in integers for the
 * integer convolutions: the same planes, borders included, each value rounded to a multiple
 * of one scale for the whole buffer.
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
/* Bytes a copy asks for ahead of those it reads: a page. The hardware's prefetcher starts
 * again at each 4 KB page, and the copies, which wait on memory (a buffer read once, far
 * larger than the caches), waited there: asked for a page ahead, a full-resolution copy
 * from floats (57 MB) took 3.0-3.3 ms instead of 3.9-4.1 on the 2-core Xeon
 * (docs/PERFORMANCE.md). */
#define AHEAD 4096

/* The 16 values at element @at of @v: floats, or halves (@HALVES) widened exactly. */
static inline __attribute__ ((always_inline)) __m512
load_values (const bd_cpu_view *v, size_t at, const bool HALVES)
{
	if (HALVES)
		return _mm512_cvtph_ps (_mm256_loadu_si256 ((const __m256i *) (v->halves + at)));
	return _mm512_loadu_ps (v->data + at);
}

/* Asks for the page after element @at of @v. */
static inline __attribute__ ((always_inline)) void
prefetch_ahead (const bd_cpu_view *v, size_t at, const bool HALVES)
{
	const char *p = HALVES ? (const char *) (v->halves + at) : (const char *) (v->data + at);
	_mm_prefetch (p + AHEAD, _MM_HINT_T0);
}

typedef struct {
	const bd_cpu_view *in;
	uint32_t           planes;
	float              least[BANDS], largest[BANDS];
} range_ctx;

static inline __attribute__ ((always_inline)) void
find_range (range_ctx *c, size_t band, const bool HALVES)
{
	const bd_cpu_view *in = c->in;
	uint32_t y0 = (uint32_t) ((uint64_t) in->height * band / BANDS);
	uint32_t y1 = (uint32_t) ((uint64_t) in->height * (band + 1) / BANDS);
	__m512 lo = _mm512_setzero_ps (), hi = _mm512_setzero_ps ();
	for (uint32_t p = 0; p < c->planes; p++)
		for (uint32_t y = y0; y < y1; y++) {
			size_t row = p * in->plane_stride + (size_t) y * in->row_stride;
			for (uint32_t x = 0; x < in->width; x++) {
				__m512 v = load_values (in, row + (size_t) x * VL, HALVES);
				lo = _mm512_min_ps (lo, v);
				hi = _mm512_max_ps (hi, v);
			}
		}
	c->least[band] = _mm512_reduce_min_ps (lo);
	c->largest[band] = _mm512_reduce_max_ps (hi);
}

static void
range_task (void *data, size_t band)
{
	range_ctx *c = data;
	if (c->in->halves)
		find_range (c, band, true);
	else
		find_range (c, band, false);
}

/* The least and largest of the values inside @planes planes of @in, zero included: @known,
 * or measured. */
static void
value_range (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, const bd_range *known, float *least,
             float *largest)
{
	if (known) {
		*least = known->least;
		*largest = known->largest;
		return;
	}
	range_ctx c = { .in = in, .planes = planes };
	bd_thread_pool_run (pool, BANDS, range_task, &c);
	*least = *largest = 0;
	for (int b = 0; b < BANDS; b++) {
		*least = *least < c.least[b] ? *least : c.least[b];
		*largest = *largest > c.largest[b] ? *largest : c.largest[b];
	}
}

/* Each value inside @in times @inverse, rounded, plus @offset, held to [@low, @high], stored
 * in 16 or 8 bits; the border pixels around them @offset. A task a row of a plane, the
 * border rows too: only the rows a kernel reads are written, and the source's borders are
 * never read, so the copy may lie over memory another buffer's copy has written
 * (cpu-plan.c). */
typedef struct {
	const bd_cpu_view *in;
	const bd_cpu_view *pooled_from;   /* bd_to_int8_pooled: @in is its shape, the values its 2x2 maxima */
	void              *dst;   /* the copy's plane 0, pixel (-1, -1) */
	float              inverse;
	int32_t            offset, low, high;
	bool               bytes;
} convert_ctx;

static inline void
store_values (const convert_ctx *c, size_t at, __m512i q)
{
	if (c->bytes)
		_mm_storeu_si128 ((__m128i *) ((uint8_t *) c->dst + at), _mm512_cvtepi32_epi8 (q));
	else
		_mm256_storeu_si256 ((__m256i *) ((int16_t *) c->dst + at), _mm512_cvtepi32_epi16 (q));
}

/* @v times @inverse, held to [@low, @high], rounded, plus @offset. */
static inline __m512i
to_level (__m512 v, __m512 inverse, __m512 low, __m512 high, __m512i offset)
{
	__m512 s = _mm512_min_ps (_mm512_max_ps (_mm512_mul_ps (v, inverse), low), high);
	return _mm512_add_epi32 (_mm512_cvtps_epi32 (s), offset);
}

static inline __attribute__ ((always_inline)) void
convert_row (const convert_ctx *c, size_t index, const bool HALVES)
{
	const bd_cpu_view *in = c->in;
	size_t rows = (size_t) in->height + 2, plane = index / rows, row = index % rows;
	/* Elements from the copy's start to this row's pixel -1, as in the buffer read. */
	size_t at = plane * in->plane_stride + row * in->row_stride;
	__m512i off = _mm512_set1_epi32 (c->offset);
	if (row == 0 || row == rows - 1) {
		for (uint32_t x = 0; x < in->width + 2; x++)
			store_values (c, at + (size_t) x * VL, off);
		return;
	}
	/* Held to the levels before rounding (the same integers as after, the bounds being
	 * integers): a half that overflowed to infinity, which no shipped model's activations
	 * come near, still becomes the top level. */
	__m512 inv = _mm512_set1_ps (c->inverse);
	__m512 low = _mm512_set1_ps ((float) (c->low - c->offset)), high = _mm512_set1_ps ((float) (c->high - c->offset));
	store_values (c, at, off);
	if (c->pooled_from) {
		const bd_cpu_view *from = c->pooled_from;
		size_t r0 = plane * from->plane_stride + 2 * (row - 1) * from->row_stride, r1 = r0 + from->row_stride;
		for (uint32_t x = 0; x < in->width; x++) {
			size_t a = (size_t) 2 * x * VL;
			prefetch_ahead (from, r0 + a, HALVES);
			prefetch_ahead (from, r1 + a, HALVES);
			__m512 v = _mm512_max_ps (_mm512_max_ps (load_values (from, r0 + a, HALVES),
			                                         load_values (from, r0 + a + VL, HALVES)),
			                          _mm512_max_ps (load_values (from, r1 + a, HALVES),
			                                         load_values (from, r1 + a + VL, HALVES)));
			store_values (c, at + (size_t) (x + 1) * VL, to_level (v, inv, low, high, off));
		}
	} else {
		size_t src = plane * in->plane_stride + (row - 1) * in->row_stride;
		for (uint32_t x = 0; x < in->width; x++) {
			prefetch_ahead (in, src + (size_t) x * VL, HALVES);
			__m512 v = load_values (in, src + (size_t) x * VL, HALVES);
			store_values (c, at + (size_t) (x + 1) * VL, to_level (v, inv, low, high, off));
		}
	}
	store_values (c, at + (size_t) (in->width + 1) * VL, off);
}

static void
convert_task (void *data, size_t index)
{
	const convert_ctx *c = data;
	if ((c->pooled_from ? c->pooled_from : c->in)->halves)
		convert_row (c, index, true);
	else
		convert_row (c, index, false);
}

static void
convert (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, convert_ctx *c)
{
	c->in = in;
	bd_thread_pool_run (pool, (size_t) planes * (in->height + 2), convert_task, c);
}

bd_cpu_view_int16
bd_to_int16 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, float levels, const bd_range *known,
             int16_t *dst)
{
	float least, largest;
	value_range (pool, in, planes, known, &least, &largest);
	largest = largest > -least ? largest : -least;
	convert_ctx c = { .dst = dst, .inverse = levels / (largest > 0 ? largest : levels), .low = (int32_t) -levels,
	                  .high = (int32_t) levels };
	convert (pool, in, planes, &c);
	size_t border = in->row_stride + VL;
	return (bd_cpu_view_int16) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
		.scale = largest > 0 ? largest / levels : 1,
	};
}

/* bd_to_int8, or bd_to_int8_pooled where @from: @in then gives the copy's shape only. */
static bd_cpu_view_int8
to_int8 (bd_thread_pool *pool, const bd_cpu_view *in, const bd_cpu_view *from, uint32_t planes, const bd_range *known,
         uint8_t *dst)
{
	float least, largest;
	value_range (pool, from ? from : in, planes, known, &least, &largest);
	float scale = largest > least ? (largest - least) / 255.0f : 1.0f;
	int32_t offset = (int32_t) nearbyintf (-least / scale);
	convert_ctx c = { .pooled_from = from, .dst = dst, .inverse = 1.0f / scale, .offset = offset, .low = 0,
	                  .high = 255, .bytes = true };
	convert (pool, in, planes, &c);
	size_t border = in->row_stride + VL;
	return (bd_cpu_view_int8) {
		.data = dst + border,
		.height = in->height, .width = in->width,
		.row_stride = in->row_stride, .plane_stride = in->plane_stride,
		.scale = scale, .offset = offset,
	};
}

bd_cpu_view_int8
bd_to_int8 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, const bd_range *known, uint8_t *dst)
{
	return to_int8 (pool, in, NULL, planes, known, dst);
}

bd_cpu_view_int8
bd_to_int8_pooled (bd_thread_pool *pool, const bd_cpu_view *in, const bd_cpu_view *shape, uint32_t planes,
                   const bd_range *known, uint8_t *dst)
{
	return to_int8 (pool, shape, in, planes, known, dst);
}
