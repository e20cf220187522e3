/* SPDX-License-Identifier: Apache-2.0 */
/* Separable resampling of 8-bit RGB(A): exact area coverage when shrinking (so a 12 MP photo
 * brought to the network's size does not alias), bilinear when enlarging. */
#include "image.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
	uint32_t *start;    /* first source index of each output index */
	uint32_t *count;
	float    *weight;   /* max_taps per output index, summing to 1 */
	uint32_t  max_taps;
} taps;

static void
taps_clear (taps *t)
{
	free (t->start);
	free (t->count);
	free (t->weight);
}

static bool
taps_make (taps *t, uint32_t src, uint32_t dst)
{
	double scale = (double) src / dst;   /* source pixels per output pixel */
	t->max_taps = scale > 1.0 ? (uint32_t) ceil (scale) + 1 : 2;
	t->start = calloc (dst, sizeof *t->start);
	t->count = calloc (dst, sizeof *t->count);
	t->weight = calloc ((size_t) dst * t->max_taps, sizeof *t->weight);
	if (!t->start || !t->count || !t->weight) {
		taps_clear (t);
		return false;
	}
	for (uint32_t i = 0; i < dst; i++) {
		float *w = t->weight + (size_t) i * t->max_taps;
		if (scale > 1.0) {
			double a = i * scale, b = a + scale;
			uint32_t s0 = (uint32_t) a, s1 = (uint32_t) ceil (b);
			if (s1 > src)
				s1 = src;
			double sum = 0;
			for (uint32_t s = s0; s < s1; s++) {
				double lo = s > a ? s : a, hi = s + 1 < b ? s + 1 : b;
				w[s - s0] = (float) (hi - lo);
				sum += hi - lo;
			}
			for (uint32_t s = s0; s < s1; s++)
				w[s - s0] /= (float) sum;
			t->start[i] = s0;
			t->count[i] = s1 - s0;
		} else {
			double c = (i + 0.5) * scale - 0.5;
			if (c < 0)
				c = 0;
			uint32_t s0 = (uint32_t) c;
			if (s0 >= src - 1) {
				t->start[i] = src - 1;
				t->count[i] = 1;
				w[0] = 1;
			} else {
				float f = (float) (c - s0);
				t->start[i] = s0;
				t->count[i] = 2;
				w[0] = 1 - f;
				w[1] = f;
			}
		}
	}
	return true;
}

typedef struct {
	const bd_image *src;
	uint32_t        width, height;
	taps            tx, ty;
	float          *rows;       /* src->height x width x 3, after the horizontal pass */
	float          *dst_f32;
	uint8_t        *dst_u8;
	size_t          dst_stride;
	uint32_t        dst_channels;
} resample_ctx;

static void
horizontal_task (void *data, size_t y)
{
	const resample_ctx *c = data;
	uint32_t ch = bd_image_channels (c->src);
	const uint8_t *s = c->src->pixels + y * c->src->stride;
	float *d = c->rows + y * c->width * 3;
	for (uint32_t x = 0; x < c->width; x++) {
		const float *w = c->tx.weight + (size_t) x * c->tx.max_taps;
		const uint8_t *p = s + (size_t) c->tx.start[x] * ch;
		float r = 0, g = 0, b = 0;
		for (uint32_t k = 0; k < c->tx.count[x]; k++, p += ch) {
			r += w[k] * p[0];
			g += w[k] * p[1];
			b += w[k] * p[2];
		}
		d[3 * x] = r;
		d[3 * x + 1] = g;
		d[3 * x + 2] = b;
	}
}

static void
vertical_task (void *data, size_t y)
{
	const resample_ctx *c = data;
	const float *w = c->ty.weight + y * c->ty.max_taps;
	size_t n = (size_t) c->width * 3;
	const float *first = c->rows + (size_t) c->ty.start[y] * n;
	for (size_t i = 0; i < n; i++) {
		float v = 0;
		for (uint32_t k = 0; k < c->ty.count[y]; k++)
			v += w[k] * first[k * n + i];
		if (c->dst_f32) {
			c->dst_f32[y * n + i] = v * (1.0f / 255.0f);
		} else {
			uint8_t *o = c->dst_u8 + y * c->dst_stride + (i / 3) * c->dst_channels + i % 3;
			*o = bd_u8_from_float (v + 0.5f);
			if (c->dst_channels == 4 && i % 3 == 2)
				o[1] = 255;
		}
	}
}

bd_status
bd_resample_rgb (bd_thread_pool *pool, const bd_image *src, uint32_t width, uint32_t height,
                 float *dst_f32, uint8_t *dst_u8, size_t dst_stride, uint32_t dst_channels,
                 bd_error *error)
{
	if (width == 0 || height == 0)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "cannot resample to an empty size");
	resample_ctx c = {
		.src = src, .width = width, .height = height,
		.dst_f32 = dst_f32, .dst_u8 = dst_u8, .dst_stride = dst_stride, .dst_channels = dst_channels,
	};
	c.rows = bd_alloc_zeroed ((size_t) src->height * width, 3 * sizeof (float));
	bool ok = c.rows && taps_make (&c.tx, src->width, width);
	if (ok && !taps_make (&c.ty, src->height, height)) {
		taps_clear (&c.tx);
		ok = false;
	}
	if (!ok) {
		bd_free_aligned (c.rows);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory resampling a %ux%u image",
		                     src->width, src->height);
	}
	bd_thread_pool_run (pool, src->height, horizontal_task, &c);
	bd_thread_pool_run (pool, height, vertical_task, &c);
	taps_clear (&c.tx);
	taps_clear (&c.ty);
	bd_free_aligned (c.rows);
	return BD_OK;
}
