/* SPDX-License-Identifier: Apache-2.0 */
/* Video masks that hold still: a frame's mask is blended with a neighbouring frame's where the
 * photo did not change between them and the two masks nearly agree, and left alone elsewhere. Per-frame networks flicker
 * by a few levels on a still wall or a standing person from one frame to the next; an
 * average over frames removes that, and gating it by the photo's own change keeps a moving
 * arm's mask on the arm (a plain average would drag it a frame or more behind). */
#include "image.h"

#include <math.h>
#include <stdlib.h>

/* Local photo change, as the mean absolute luma difference over a window of 2r + 1 pixels
 * square: one pixel's change is mostly sensor or compression noise, a window's is motion. */
#define BD_TEMPORAL_RADIUS 2
/* Window means below LOW count as unchanged (full blend), above HIGH as motion (no blend);
 * in 8-bit luma levels. JPEG/H.264 noise on a still scene stays under about 3. */
#define BD_TEMPORAL_LOW  3.0f
#define BD_TEMPORAL_HIGH 10.0f
/* Masks that differ by more than JUMP_LOW levels blend less, not at all past JUMP_HIGH: noise
 * moves a still pixel's mask by a little; a jump from background to person where the photo
 * hardly changed is mostly a person moving over a background of their own colour. On the
 * DAVIS clips this guard takes the filter from 25 frames of 232 with a lower IoU than the
 * per-frame masks (by over 0.005) to none, and flickers less too (docs/PERFORMANCE.md). */
#define BD_TEMPORAL_JUMP_LOW  64.0f
#define BD_TEMPORAL_JUMP_HIGH 160.0f

/* @k clamped to 0..n-1 (n > 0): the window's edges repeat the border pixel. */
static inline uint32_t
clamp_index (int64_t k, uint32_t n)
{
	return k <= 0 || n == 0 ? 0 : (k >= (int64_t) n ? n - 1 : (uint32_t) k);
}

/* Rows a task: each band primes its own ring of differences (2r rows above it), so the bands
 * run side by side and every row comes out as it would alone. */
#define BAND_ROWS 32

/* The photos, or their luma planes (bd_luma_on_pool) when @luma is set. */
typedef struct {
	const bd_image *photo, *other_photo;
	const uint8_t  *luma, *other_luma;
	size_t          luma_stride;
	uint32_t        width, height;
	const uint8_t  *other_alpha;
	size_t          other_stride;
	uint8_t        *alpha;
	size_t          alpha_stride;
	float           strength;
	bool            failed;
} blend_job;

/* Row @y's absolute luma differences between the two frames into @d. */
static void
diff_row (const blend_job *j, uint32_t y, uint8_t *d)
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

static void
blend_band (void *data, size_t band)
{
	blend_job *j = data;
	uint32_t w = j->width, h = j->height;
	int64_t y0 = (int64_t) band * BAND_ROWS, y1 = y0 + BAND_ROWS < h ? y0 + BAND_ROWS : h;
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
		/* Then along the row; the gate's weight from the window's mean. */
		const uint32_t *restrict cols = padded;
		uint32_t *restrict sums = box;
		for (size_t x = 0; x < w; x++) {
			uint32_t sum = 0;
			for (size_t k = 0; k <= 2 * r; k++)
				sum += cols[x + k];
			sums[x] = sum;
		}
		const float scale = 1.0f / (float) ((2 * r + 1) * (2 * r + 1));
		uint8_t *out = j->alpha + (size_t) y * j->alpha_stride;
		const uint8_t *prev = j->other_alpha + (size_t) y * j->other_stride;
		const float strength = j->strength;
		for (uint32_t x = 0; x < w; x++) {
			float change = (float) box[x] * scale;
			float g = (BD_TEMPORAL_HIGH - change) / (BD_TEMPORAL_HIGH - BD_TEMPORAL_LOW);
			g = g < 0 ? 0 : (g > 1 ? 1 : g);
			/* From the other frame's value, (1 - weight) of the way to this one's, rounded
			 * towards the other: a change of a level or two on a still pixel (noise) then
			 * stops there instead of passing through the rounding. */
			float jump = fabsf ((float) out[x] - (float) prev[x]);
			float gj = (BD_TEMPORAL_JUMP_HIGH - jump) / (BD_TEMPORAL_JUMP_HIGH - BD_TEMPORAL_JUMP_LOW);
			gj = gj < 0 ? 0 : (gj > 1 ? 1 : gj);
			float wgt = strength * g * gj;
			float step = (1.0f - wgt) * ((float) out[x] - (float) prev[x]);
			out[x] = (uint8_t) ((int) prev[x] + (int) step);
		}
	}
#undef DIFF_ROW
	free (padded);
	free (box);
	free (diff);
}

/* The masks' checks, then the bands of @job (its frames and size set) on @pool. */
static bd_status
run_blend (bd_thread_pool *pool, blend_job *job, const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha,
           size_t alpha_stride, float strength, bd_error *error)
{
	uint32_t w = job->width, h = job->height;
	if (!alpha || !other_alpha || !bd_stride_ok (w, h, alpha_stride) || !bd_stride_ok (w, h, other_stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_temporal_blend: no mask, or a bad stride");
	if (!(strength >= 0 && strength <= 1))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_temporal_blend: strength must be within 0..1");
	if (strength == 0)
		return BD_OK;
	job->other_alpha = other_alpha;
	job->other_stride = other_stride;
	job->alpha = alpha;
	job->alpha_stride = alpha_stride;
	job->strength = strength;
	job->failed = false;
	bd_thread_pool_run (pool, (h + BAND_ROWS - 1) / BAND_ROWS, blend_band, job);
	if (job->failed)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	return BD_OK;
}

bd_status
bd_temporal_blend_on_pool (bd_thread_pool *pool, const bd_image *photo, const bd_image *other_photo,
                           const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha, size_t alpha_stride,
                           float strength, bd_error *error)
{
	bd_status st = bd_image_check (photo, "photo", error);
	if (st == BD_OK)
		st = bd_image_check (other_photo, "other frame", error);
	if (st != BD_OK)
		return st;
	uint32_t w = photo->width, h = photo->height;
	if (other_photo->width != w || other_photo->height != h)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "bd_temporal_blend: the frames differ in size (%ux%u and %ux%u)",
		                     w, h, other_photo->width, other_photo->height);
	blend_job job = { .photo = photo, .other_photo = other_photo, .width = w, .height = h };
	return run_blend (pool, &job, other_alpha, other_stride, alpha, alpha_stride, strength, error);
}

bd_status
bd_temporal_blend_luma_on_pool (bd_thread_pool *pool, const uint8_t *luma, const uint8_t *other_luma,
                                size_t luma_stride, uint32_t width, uint32_t height, const uint8_t *other_alpha,
                                size_t other_stride, uint8_t *alpha, size_t alpha_stride, float strength,
                                bd_error *error)
{
	if (!luma || !other_luma || width == 0 || height == 0 || (uint64_t) width * height > BD_MAX_PIXELS ||
	    !bd_stride_ok (width, height, luma_stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_temporal_blend: no luma, a bad size or stride");
	blend_job job = { .luma = luma, .other_luma = other_luma, .luma_stride = luma_stride, .width = width,
	                  .height = height };
	return run_blend (pool, &job, other_alpha, other_stride, alpha, alpha_stride, strength, error);
}

bd_status
bd_temporal_blend (const bd_image *photo, const bd_image *other_photo, const uint8_t *other_alpha,
                   size_t other_stride, uint8_t *alpha, size_t alpha_stride, float strength, bd_error *error)
{
	/* Without a pool the bands run in turn on this thread (thread-pool.c). */
	return bd_temporal_blend_on_pool (NULL, photo, other_photo, other_alpha, other_stride, alpha, alpha_stride,
	                                  strength, error);
}
