/* SPDX-License-Identifier: Apache-2.0 */
/* The least and largest values inside blocked activations, for the integer copies'
 * scales (to-int16.c, to-int8.c). Only the pixels inside count: a smaller pass laid out in a
 * larger one's planes leaves the larger one's values beyond its rows, which the kernels never
 * read. Zero is always inside the range. Built with -mavx512vnni (the integer kernels'
 * library). */
#include "ops.h"

#include <immintrin.h>

#define VL    BD_LANES
#define BANDS 64      /* tasks, each a band of rows */

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

void
bd_value_range (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, float *least, float *largest)
{
	range_ctx c = { .in = in, .planes = planes };
	bd_thread_pool_run (pool, BANDS, range_task, &c);
	*least = *largest = 0;
	for (int b = 0; b < BANDS; b++) {
		*least = *least < c.least[b] ? *least : c.least[b];
		*largest = *largest > c.largest[b] ? *largest : c.largest[b];
	}
}
