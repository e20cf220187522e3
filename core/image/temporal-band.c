/* SPDX-License-Identifier: Apache-2.0 */
/* The temporal filter's rows (temporal-band.h): the luma differences, their window sums and
 * the blend. Built once per x86-64 level without fused multiply-adds (-ffp-contract=off), so
 * that wider vectors give the same bytes as the portable build, 2.5-5x faster on AVX-512. */
#include "temporal-band.h"

#include <math.h>
#include <stdlib.h>

/* @k clamped to 0..n-1 (n > 0): the window's edges repeat the border pixel. */
static inline uint32_t
clamp_index (int64_t k, uint32_t n)
{
	return k <= 0 || n == 0 ? 0 : (k >= (int64_t) n ? n - 1 : (uint32_t) k);
}

/* Row @y's absolute luma differences between the two frames into @d. */
static void
diff_row (const bd_temporal_job *j, uint32_t y, uint8_t *d)
{
	uint32_t w = j->width;
	if (j->luma) {
		const uint8_t *la = j->luma + (size_t) y * j->luma_stride, *lb = j->other_luma + (size_t) y * j->luma_stride;
		for (uint32_t x = 0; x < w; x++)
			d[x] = (uint8_t) abs ((int) la[x] - (int) lb[x]);
		return;
	}
	const bd_image *photo = j->photo, *other_photo = j->other_photo;
	uint32_t c1 = bd_image_channels (photo), c2 = bd_image_channels (other_photo);
	const uint8_t *a = photo->pixels + (size_t) y * photo->stride;
	const uint8_t *b = other_photo->pixels + (size_t) y * other_photo->stride;
	if (c1 == 4 && c2 == 4) {
		/* Video's frames: the loop the compiler turns into vector code. */
		for (uint32_t x = 0; x < w; x++) {
			int dl = (int) bd_luma (a + 4 * (size_t) x) - (int) bd_luma (b + 4 * (size_t) x);
			d[x] = (uint8_t) (dl < 0 ? -dl : dl);
		}
		return;
	}
	for (uint32_t x = 0; x < w; x++) {
		int dl = (int) bd_luma (a + (size_t) x * c1) - (int) bd_luma (b + (size_t) x * c2);
		d[x] = (uint8_t) (dl < 0 ? -dl : dl);
	}
}

/* A pixel of @out blended with @prev by the gate of its window's sum @box (at most
 * 25 * 255). */
static inline uint8_t
blend_pixel (uint32_t box, uint8_t out, uint8_t prev, float strength)
{
	const float scale = 1.0f / (float) BD_TEMPORAL_WINDOW;
	float change = (float) box * scale;
	float g = (BD_TEMPORAL_HIGH - change) / (BD_TEMPORAL_HIGH - BD_TEMPORAL_LOW);
	g = g < 0 ? 0 : (g > 1 ? 1 : g);
	/* From the other frame's value, (1 - weight) of the way to this one's, rounded towards
	 * the other: a change of a level or two on a still pixel (noise) then stops there
	 * instead of passing through the rounding. */
	float jump = fabsf ((float) out - (float) prev);
	float gj = (BD_TEMPORAL_JUMP_HIGH - jump) / (BD_TEMPORAL_JUMP_HIGH - BD_TEMPORAL_JUMP_LOW);
	gj = gj < 0 ? 0 : (gj > 1 ? 1 : gj);
	float wgt = strength * g * gj;
	float step = (1.0f - wgt) * ((float) out - (float) prev);
	return (uint8_t) ((int) prev + (int) step);
}

/* Row @y of the job's output from the row's window sums @box: the blend, or the map. */
static void
use_row (const bd_temporal_job *j, uint32_t y, const uint32_t *restrict box)
{
	uint32_t w = j->width;
	if (j->change) {
		uint16_t *restrict c = j->change + (size_t) y * j->change_stride;
		for (uint32_t x = 0; x < w; x++)
			c[x] = (uint16_t) box[x];
		return;
	}
	uint8_t *restrict out = j->alpha + (size_t) y * j->alpha_stride;
	const uint8_t *restrict prev = j->other_alpha + (size_t) y * j->other_stride;
	const float strength = j->strength;
	for (uint32_t x = 0; x < w; x++)
		out[x] = blend_pixel (box[x], out[x], prev[x], strength);
}

void
BD_TEMPORAL_BAND_NAME (void *data, size_t band)
{
	bd_temporal_job *j = data;
	uint32_t w = j->width, h = j->height;
	int64_t y0 = (int64_t) band * BAND_ROWS, y1 = y0 + BAND_ROWS < h ? y0 + BAND_ROWS : h;
	if (j->given_change) {
		/* The window sums were made before: only the blend is left. */
		const float strength = j->strength;
		for (int64_t y = y0; y < y1; y++) {
			const uint16_t *restrict c = j->given_change + (size_t) y * j->change_stride;
			uint8_t *restrict out = j->alpha + (size_t) y * j->alpha_stride;
			const uint8_t *restrict prev = j->other_alpha + (size_t) y * j->other_stride;
			for (uint32_t x = 0; x < w; x++)
				out[x] = blend_pixel (c[x], out[x], prev[x], strength);
		}
		return;
	}
	/* Column sums of the luma difference over 2r + 1 rows, r columns of the edges' sums
	 * repeated on either side (so that the row's window needs no clamping), the window sums
	 * along the row, and 2r + 1 rows of differences as scratch. */
	const uint32_t r = BD_TEMPORAL_RADIUS;
	uint32_t *padded = calloc ((size_t) w + 2 * r, sizeof *padded);
	uint32_t *box = malloc ((size_t) w * sizeof *box);
	uint8_t *diff = malloc ((size_t) w * (2 * r + 1));
	if (!padded || !box || !diff) {
		free (padded);
		free (box);
		free (diff);
		__atomic_store_n (&j->failed, true, __ATOMIC_RELAXED);
		return;
	}
	uint32_t *col = padded + r;
	/* Row y's luma differences into ring slot y % (2r + 1); rows past the edges repeat it. */
#define DIFF_ROW(y) (diff + (size_t) ((y) % (2 * r + 1)) * w)
	/* From y0 - 2r, so that the ring holds rows y0 - r .. y0 + r when row y0 is made. */
	for (int64_t y = y0 - 2 * (int64_t) r; y < y1; y++) {
		/* Bring row y + r in (rows past either edge are the edge's, read from its slot). */
		int64_t yin = y + r;
		if (yin >= 0 && yin < (int64_t) h)
			diff_row (j, (uint32_t) yin, DIFF_ROW ((uint32_t) yin));
		if (y < y0)
			continue;
		/* The window of row y: rows max(0, y-r) .. min(h-1, y+r), edges repeated. */
		for (uint32_t x = 0; x < w; x++)
			col[x] = 0;
		for (int64_t k = y - r; k <= y + (int64_t) r; k++) {
			const uint8_t *d = DIFF_ROW (clamp_index (k, h));
			for (uint32_t x = 0; x < w; x++)
				col[x] += d[x];
		}
		for (uint32_t k = 1; k <= r; k++) {
			col[-(int64_t) k] = col[0];
			col[w - 1 + k] = col[w - 1];
		}
		/* Then along the row. */
		const uint32_t *restrict cols = padded;
		uint32_t *restrict sums = box;
		for (size_t x = 0; x < w; x++) {
			uint32_t sum = 0;
			for (size_t k = 0; k <= 2 * r; k++)
				sum += cols[x + k];
			sums[x] = sum;
		}
		use_row (j, (uint32_t) y, box);
	}
#undef DIFF_ROW
	free (padded);
	free (box);
	free (diff);
}

