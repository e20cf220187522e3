/* SPDX-License-Identifier: Apache-2.0 */
/* The photo's 16-bit copy for an integer session's first convolution, made from the photo as
 * the session hands it over (three planes of floats): the bytes bd_to_int16 makes of the
 * blocked fp32 photo, without that photo. Writing the blocked photo (a plane of 16 floats a
 * pixel, 13 of them zero), measuring it and reading it again moved about 35 MB a 576x384
 * pass more than this does (docs/PERFORMANCE.md). Built with -mavx512vnni (the integer
 * kernels' library). */
#include "ops.h"

#include <immintrin.h>

#define VL    BD_LANES
#define BANDS 32   /* tasks finding the largest |value| */

typedef struct {
	const float *photo;
	size_t       count;   /* values: 3 planes */
	float        largest[BANDS];
} largest_ctx;

static void
largest_task (void *data, size_t band)
{
	largest_ctx *c = data;
	size_t from = c->count * band / BANDS, to = c->count * (band + 1) / BANDS, k = from;
	__m512 top = _mm512_setzero_ps ();
	for (; k + VL <= to; k += VL)
		top = _mm512_max_ps (top, _mm512_abs_ps (_mm512_loadu_ps (c->photo + k)));
	float most = _mm512_reduce_max_ps (top);
	for (; k < to; k++) {
		float a = c->photo[k] < 0 ? -c->photo[k] : c->photo[k];
		most = a > most ? a : most;
	}
	c->largest[band] = most;
}

typedef struct {
	const float *photo;
	uint32_t     height, width;
	size_t       row_stride;   /* the copy's, in elements */
	int16_t     *dst;          /* the copy's pixel (-1, -1) */
	float        inverse, levels;
} rows_ctx;

/* Row @index of the copy, its border rows too: each pixel's three values rounded as
 * bd_to_int16 rounds them (held to the levels, to nearest even), its other lanes zero. */
static void
rows_task (void *data, size_t index)
{
	const rows_ctx *c = data;
	int16_t *row = c->dst + index * c->row_stride;
	if (index == 0 || index == (size_t) c->height + 1) {
		for (uint32_t x = 0; x < c->width + 2; x++)
			_mm256_storeu_si256 ((__m256i *) (row + (size_t) x * VL), _mm256_setzero_si256 ());
		return;
	}
	size_t plane = (size_t) c->height * c->width, y = index - 1;
	const float *src = c->photo + y * c->width;
	__m512 inv = _mm512_set1_ps (c->inverse), high = _mm512_set1_ps (c->levels), low = _mm512_set1_ps (-c->levels);
	_mm256_storeu_si256 ((__m256i *) row, _mm256_setzero_si256 ());
	/* Pixel i's three values are words i, 16 + i and 32 + i of (red | green, blue): one
	 * two-source permute a pixel places them in lanes 0..2, the others zero. In registers
	 * only: a vector store to an array on the stack was made an aligned one, which the
	 * address sanitizer's stack frames do not align for. */
	__m512i first = _mm512_setr_epi32 (16 << 16 | 0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);   /* words 0, 16, 32 */
	for (uint32_t x0 = 0; x0 < c->width; x0 += VL) {
		uint32_t n = c->width - x0 < VL ? c->width - x0 : VL;
		__mmask16 live = (__mmask16) ((1u << n) - 1);
		__m256i q[3];
		for (int ch = 0; ch < 3; ch++) {
			__m512 v = _mm512_maskz_loadu_ps (live, src + ch * plane + x0);
			v = _mm512_min_ps (_mm512_max_ps (_mm512_mul_ps (v, inv), low), high);
			q[ch] = _mm512_cvtepi32_epi16 (_mm512_cvtps_epi32 (v));
		}
		__m512i red_green = _mm512_inserti64x4 (_mm512_castsi256_si512 (q[0]), q[1], 1);
		__m512i blue = _mm512_castsi256_si512 (q[2]);
		for (uint32_t i = 0; i < n; i++) {
			__m512i at = _mm512_add_epi16 (first, _mm512_set1_epi16 ((short) i));
			__m512i px = _mm512_maskz_permutex2var_epi16 (0x7, red_green, at, blue);
			_mm256_storeu_si256 ((__m256i *) (row + (size_t) (x0 + i + 1) * VL), _mm512_castsi512_si256 (px));
		}
	}
	_mm256_storeu_si256 ((__m256i *) (row + (size_t) (c->width + 1) * VL), _mm256_setzero_si256 ());
}

bd_cpu_view_int16
bd_photo_to_int16 (bd_thread_pool *pool, const float *photo, const bd_cpu_view *shape, float levels, int16_t *dst)
{
	largest_ctx lc = { .photo = photo, .count = 3 * (size_t) shape->height * shape->width };
	bd_thread_pool_run (pool, BANDS, largest_task, &lc);
	float largest = 0;
	for (int b = 0; b < BANDS; b++)
		largest = lc.largest[b] > largest ? lc.largest[b] : largest;
	rows_ctx rc = { photo, shape->height, shape->width, shape->row_stride, dst,
	                levels / (largest > 0 ? largest : levels), levels };
	bd_thread_pool_run (pool, (size_t) shape->height + 2, rows_task, &rc);
	return (bd_cpu_view_int16) {
		.data = dst + shape->row_stride + VL,
		.height = shape->height, .width = shape->width,
		.row_stride = shape->row_stride, .plane_stride = shape->plane_stride,
		.scale = largest > 0 ? largest / levels : 1,
	};
}
