/* SPDX-License-Identifier: Apache-2.0 */
/* The one resampler of 8-bit pixels, for the network's input, backgrounds, the app's views,
 * previews and thumbnails: separable, exact area coverage when shrinking (so a 12 MP photo
 * brought to the network's size does not alias), bilinear or nearest when enlarging. */
#include "image.h"

#include <math.h>
#include <stdlib.h>

typedef bd_resample_taps taps;

void
bd_resample_taps_clear (taps *t)
{
	free (t->start);
	free (t->count);
	free (t->weight);
	t->start = t->count = NULL;   /* cleared twice (a failed make, then its caller) is harmless */
	t->weight = NULL;
}

static bool
taps_make (taps *t, uint32_t src, uint32_t dst, bd_grow grow)
{
	double scale = (double) src / dst;   /* source pixels per output pixel */
	t->max_taps = scale > 1.0 ? (uint32_t) ceil (scale) + 1 : 2;
	t->start = calloc (dst, sizeof *t->start);
	t->count = calloc (dst, sizeof *t->count);
	t->weight = calloc ((size_t) dst * t->max_taps, sizeof *t->weight);
	if (!t->start || !t->count || !t->weight) {
		bd_resample_taps_clear (t);
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
		} else if (grow == BD_GROW_NEAREST) {
			uint32_t s0 = (uint32_t) ((i + 0.5) * scale);
			t->start[i] = s0 < src ? s0 : src - 1;
			t->count[i] = 1;
			w[0] = 1;
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

bool
bd_resample_taps_bilinear (taps *t, uint32_t src, uint32_t dst)
{
	return taps_make (t, src, dst, BD_GROW_BILINEAR);
}

/* The horizontal pass's rows are kept for a band of output rows at a time: a 24 MP photo
 * shown at 1280 pixels would need 80 MB for all of them. */
#define BAND_BYTES ((size_t) 8 << 20)

typedef struct {
	const bd_plane *src;
	uint32_t        width, height;
	taps            tx, ty;
	float          *rows;       /* the band's source rows after the horizontal pass */
	uint32_t        row0;       /* the source row that rows begins with */
	uint32_t        y0;         /* the band's first output row */
	float          *dst_f32;
	uint8_t        *dst_u8;
	size_t          dst_stride;
	uint32_t        dst_channels;
} resample_ctx;

/* Source row @y filtered horizontally. Inlined for each channel count, so that the loop over
 * channels unrolls. */
static inline __attribute__ ((always_inline)) void
filter_row (const resample_ctx *c, size_t y, const uint32_t ch)
{
	const bd_plane *s = c->src;
	const uint32_t pb = s->pixel_bytes;
	const uint8_t *row = s->pixels + (c->row0 + y) * s->stride;
	float *d = c->rows + y * c->width * ch;
	for (uint32_t x = 0; x < c->width; x++) {
		const float *w = c->tx.weight + (size_t) x * c->tx.max_taps;
		const uint8_t *p = row + (size_t) c->tx.start[x] * pb;
		const uint32_t count = c->tx.count[x];
		float v0 = 0, v1 = 0, v2 = 0, v3 = 0;
		for (uint32_t k = 0; k < count; k++, p += pb) {
			v0 += w[k] * p[0];
			if (ch > 1) v1 += w[k] * p[1];
			if (ch > 2) v2 += w[k] * p[2];
			if (ch > 3) v3 += w[k] * p[3];
		}
		d[x * ch] = v0;
		if (ch > 1) d[x * ch + 1] = v1;
		if (ch > 2) d[x * ch + 2] = v2;
		if (ch > 3) d[x * ch + 3] = v3;
	}
}

static void
horizontal_task (void *data, size_t y)
{
	const resample_ctx *c = data;
	switch (c->src->channels) {
	case 1: filter_row (c, y, 1); break;
	case 2: filter_row (c, y, 2); break;
	case 3: filter_row (c, y, 3); break;
	default: filter_row (c, y, 4); break;
	}
}

static void
vertical_task (void *data, size_t j)
{
	const resample_ctx *c = data;
	uint32_t ch = c->src->channels, y = c->y0 + (uint32_t) j;
	const float *w = c->ty.weight + (size_t) y * c->ty.max_taps;
	size_t n = (size_t) c->width * ch;
	const float *first = c->rows + (size_t) (c->ty.start[y] - c->row0) * n;
	/* A stretch of the row at a time, tap by tap over the stretch: the loop over the
	 * stretch vectorises, and each sample's sum is the same, in the same order. */
	enum { STRETCH = 256 };
	float sum[STRETCH];
	for (size_t i0 = 0; i0 < n; i0 += STRETCH) {
		size_t m = n - i0 < STRETCH ? n - i0 : STRETCH;
		for (size_t i = 0; i < m; i++)
			sum[i] = 0;
		for (uint32_t k = 0; k < c->ty.count[y]; k++) {
			const float wk = w[k], *r = first + k * n + i0;
			for (size_t i = 0; i < m; i++)
				sum[i] += wk * r[i];
		}
		for (size_t i = i0; i < i0 + m; i++) {
			float v = sum[i - i0];
			if (c->dst_f32) {
				c->dst_f32[y * n + i] = v * (1.0f / 255.0f);
			} else {
				uint8_t *o = c->dst_u8 + y * c->dst_stride + (i / ch) * c->dst_channels + i % ch;
				*o = bd_u8_from_float (v + 0.5f);
				if (i % ch == ch - 1)
					for (uint32_t k = ch; k < c->dst_channels; k++)
						o[k - ch + 1] = 255;
			}
		}
	}
}

bd_status
bd_resample_plane (bd_thread_pool *pool, const bd_plane *src, uint32_t width, uint32_t height, bd_grow grow,
                   float *dst_f32, uint8_t *dst_u8, size_t dst_stride, uint32_t dst_channels, bd_error *error)
{
	if (width == 0 || height == 0)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "cannot resample to an empty size");
	resample_ctx c = {
		.src = src, .width = width, .height = height,
		.dst_f32 = dst_f32, .dst_u8 = dst_u8, .dst_stride = dst_stride, .dst_channels = dst_channels,
	};
	size_t n = (size_t) width * src->channels;
	bool ok = taps_make (&c.tx, src->width, width, grow);
	if (ok && !taps_make (&c.ty, src->height, height, grow)) {
		bd_resample_taps_clear (&c.tx);
		ok = false;
	}
	/* A band holds at least one output row's source rows. */
	size_t band_rows = BAND_BYTES / (n * sizeof (float));
	if (band_rows < c.ty.max_taps)
		band_rows = c.ty.max_taps;
	if (band_rows > src->height)
		band_rows = src->height;
	c.rows = ok ? bd_alloc_zeroed (band_rows, n * sizeof (float)) : NULL;
	if (!c.rows) {
		if (ok) {
			bd_resample_taps_clear (&c.tx);
			bd_resample_taps_clear (&c.ty);
		}
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory resampling a %ux%u image",
		                     src->width, src->height);
	}
	/* Both passes per band, output rows in order; a source row shared by two bands is
	 * filtered twice. */
	for (uint32_t y1 = 0; y1 < height;) {
		c.y0 = y1;
		c.row0 = c.ty.start[c.y0];
		uint32_t end = c.row0;
		while (y1 < height && c.ty.start[y1] + c.ty.count[y1] - c.row0 <= band_rows) {
			if (c.ty.start[y1] + c.ty.count[y1] > end)
				end = c.ty.start[y1] + c.ty.count[y1];
			y1++;
		}
		bd_thread_pool_run (pool, end - c.row0, horizontal_task, &c);
		bd_thread_pool_run (pool, y1 - c.y0, vertical_task, &c);
	}
	bd_resample_taps_clear (&c.tx);
	bd_resample_taps_clear (&c.ty);
	bd_free_aligned (c.rows);
	return BD_OK;
}

bd_status
bd_resample_rgb (bd_thread_pool *pool, const bd_image *src, uint32_t width, uint32_t height,
                 float *dst_f32, uint8_t *dst_u8, size_t dst_stride, uint32_t dst_channels,
                 bd_error *error)
{
	bd_plane plane = {
		.pixels = src->pixels, .width = src->width, .height = src->height, .stride = src->stride,
		.pixel_bytes = bd_image_channels (src), .channels = 3,
	};
	return bd_resample_plane (pool, &plane, width, height, BD_GROW_BILINEAR, dst_f32, dst_u8, dst_stride,
	                          dst_channels, error);
}

bd_status
bd_resample (const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, uint32_t channels,
             uint8_t *out, uint32_t out_width, uint32_t out_height, size_t out_stride, bd_error *error)
{
	if (!pixels || !out)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "no pixels given to resample");
	if (channels < 1 || channels > 4)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "cannot resample %u channels (1 to 4)", channels);
	if (width == 0 || height == 0 || out_width == 0 || out_height == 0)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "cannot resample %ux%u pixels to %ux%u",
		                     width, height, out_width, out_height);
	if ((uint64_t) width * height > BD_MAX_PIXELS || (uint64_t) out_width * out_height > BD_MAX_PIXELS)
		return bd_error_set (error, BD_ERR_TOO_LARGE, "cannot resample %ux%u pixels to %ux%u: Backdrop "
		                     "handles up to %llu megapixels", width, height, out_width, out_height,
		                     (unsigned long long) (BD_MAX_PIXELS / 1000000));
	if (!bd_stride_ok ((size_t) width * channels, height, stride) ||
	    !bd_stride_ok ((size_t) out_width * channels, out_height, out_stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "a row stride is smaller than a row or reaches past addressable memory");
	bd_plane plane = {
		.pixels = pixels, .width = width, .height = height, .stride = stride,
		.pixel_bytes = channels, .channels = channels,
	};
	return bd_resample_plane (NULL, &plane, out_width, out_height, BD_GROW_NEAREST, NULL, out, out_stride,
	                          channels, error);
}
