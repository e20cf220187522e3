/* SPDX-License-Identifier: Apache-2.0 */
/* Decisive masks: a pixel farther than @radius from the mask's own edge (where alpha crosses
 * one half) is set to 0 or 255, whichever side of one half it is on. The session's radius is
 * 0.15% of the diagonal, at least one pixel (bd_decide_radius): 8 pixels at 12 MP, about the
 * guided upsampler's soft transition, so hair keeps its softness; on the validation splits
 * 1% left four times the undecided pixels of 0.15% (docs/MODEL.md, "Decisive masks"). Soft alpha stays only
 * along edges, where it belongs (hair, motion blur at a contour). Away from them it is the
 * network's doubt: a passer-by at 25%, haze around an arm, a tree trunk at 60% — regions
 * that are hard to see on a checkerboard and hard to fix with a brush. Half-opaque pixels
 * go with the side they lean to, so the mask's hard shape (what IoU counts) is unchanged.
 *
 * "Near the edge" is a square window of side 2 radius + 1 that holds both sides. Its
 * counts come from column sums kept over the window's rows and their prefix sums along each
 * row: O(1) a pixel whatever the radius. Strips of rows run on the pool, each with its own
 * column sums, reading a copy of the mask (a strip's window reaches into its neighbours'). */
#include "image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STRIP_ROWS 64

typedef struct {
	const uint8_t *src;  /* the mask before the pass (a copy when the pass is in place) */
	size_t         src_stride;
	uint8_t       *alpha;
	uint32_t       width, height, radius;
	size_t         stride;
	bool           failed;
} decide_job;

static inline uint32_t
is_person (uint8_t a)
{
	return a >= 128;
}

/* Sets the pixels of row @out (read from @in) in [x0, x1) that are not near an edge, given the
 * window sums pre[x + r + 1] - pre[x - r] over the clipped window of @rows rows. Branch-free
 * so that the compiler vectorises it. */
static void
decide_span (uint8_t *out, const uint8_t *in, const uint32_t *pre, uint32_t x0, uint32_t x1, uint32_t r,
             uint32_t w, uint32_t rows)
{
	for (uint32_t x = x0; x < x1; x++) {
		uint32_t lo = x > r ? x - r : 0, hi = x + r + 1 < w ? x + r + 1 : w;
		uint32_t sum = pre[hi] - pre[lo], area = rows * (hi - lo);
		uint8_t hard = (uint8_t) (0u - is_person (in[x]));   /* 0 or 255 */
		out[x] = sum != 0 && sum != area ? in[x] : hard;
	}
}

static void
decide_strip (void *data, size_t strip)
{
	decide_job *job = data;
	const uint32_t w = job->width, h = job->height, r = job->radius;
	/* Column counts over the window's rows, then their prefix sums along the row: a window's
	 * count is one subtraction. No sum exceeds the photo's pixels (BD_MAX_PIXELS < 2^32). */
	uint32_t *cols = calloc (w, sizeof *cols), *pre = malloc (((size_t) w + 1) * sizeof *pre);
	if (!cols || !pre) {
		free (cols);
		free (pre);
		__atomic_store_n (&job->failed, true, __ATOMIC_RELAXED);
		return;
	}
	uint32_t y0 = (uint32_t) strip * STRIP_ROWS, y1 = y0 + STRIP_ROWS < h ? y0 + STRIP_ROWS : h;
	uint32_t top = y0 > r ? y0 - r : 0, bottom = y0 + r + 1 < h ? y0 + r + 1 : h;
	for (uint32_t y = top; y < bottom; y++) {
		const uint8_t *row = job->src + (size_t) y * job->src_stride;
		for (uint32_t x = 0; x < w; x++)
			cols[x] += is_person (row[x]);
	}
	for (uint32_t y = y0; y < y1; y++) {
		if (y > y0) {  /* slide the window down one row: in comes y + r, out goes y - r - 1 */
			const uint8_t *in = y + r < h ? job->src + (size_t) (y + r) * job->src_stride : NULL;
			const uint8_t *out = y >= r + 1 ? job->src + (size_t) (y - r - 1) * job->src_stride : NULL;
			if (in && out)
				for (uint32_t x = 0; x < w; x++)
					cols[x] += is_person (in[x]) - is_person (out[x]);
			else if (in)
				for (uint32_t x = 0; x < w; x++)
					cols[x] += is_person (in[x]);
			else if (out)
				for (uint32_t x = 0; x < w; x++)
					cols[x] -= is_person (out[x]);
		}
		pre[0] = 0;
		for (uint32_t x = 0; x < w; x++)
			pre[x + 1] = pre[x] + cols[x];
		uint32_t rows = (y + r + 1 < h ? y + r + 1 : h) - (y > r ? y - r : 0);
		uint8_t *row = job->alpha + (size_t) y * job->stride;
		const uint8_t *in = job->src + (size_t) y * job->src_stride;
		if (w > 2 * r + 1) {  /* the borders clip the window; the middle, a fixed one */
			decide_span (row, in, pre, 0, r, r, w, rows);
			const uint32_t area = rows * (2 * r + 1);
			for (uint32_t x = r; x < w - r - 1; x++) {
				uint32_t sum = pre[x + r + 1] - pre[x - r];
				uint8_t hard = (uint8_t) (0u - is_person (in[x]));
				row[x] = sum != 0 && sum != area ? in[x] : hard;
			}
			decide_span (row, in, pre, w - r - 1, w, r, w, rows);
		} else {
			decide_span (row, in, pre, 0, w, r, w, rows);
		}
	}
	free (cols);
	free (pre);
}

uint32_t
bd_decide_radius (uint32_t width, uint32_t height)
{
	double diagonal = sqrt ((double) width * width + (double) height * height);
	uint32_t r = (uint32_t) (0.0015 * diagonal + 0.5);
	return r < 1 ? 1 : r;
}

/* Strip @strip's rows of the mask into @data, a copy every strip's window reads. */
typedef struct {
	uint8_t       *copy;
	const uint8_t *alpha;
	uint32_t       width, height;
	size_t         stride;
} copy_job;

static void
copy_strip (void *data, size_t strip)
{
	copy_job *job = data;
	uint32_t y0 = (uint32_t) strip * STRIP_ROWS, y1 = y0 + STRIP_ROWS < job->height ? y0 + STRIP_ROWS : job->height;
	for (uint32_t y = y0; y < y1; y++)
		memcpy (job->copy + (size_t) y * job->width, job->alpha + (size_t) y * job->stride, job->width);
}

bd_status
bd_mask_decide_check (const uint8_t *alpha, uint32_t width, uint32_t height, size_t stride, bd_error *error)
{
	if (!alpha || width == 0 || height == 0 || !bd_stride_ok (width, height, stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_mask_decide: no mask, or a bad size");
	if ((uint64_t) width * height > BD_MAX_PIXELS)
		return bd_error_set (error, BD_ERR_TOO_LARGE, "mask too large");
	return BD_OK;
}

/* The pass from @src into @alpha, which do not overlap; the arguments checked. */
static bd_status
decide_to (bd_thread_pool *pool, const uint8_t *src, size_t src_stride, uint8_t *alpha, size_t stride,
           uint32_t width, uint32_t height, uint32_t radius, bd_error *error)
{
	decide_job job = { .src = src, .src_stride = src_stride, .alpha = alpha, .width = width, .height = height,
	                   .radius = radius, .stride = stride };
	bd_thread_pool_run (pool, (height + STRIP_ROWS - 1) / STRIP_ROWS, decide_strip, &job);
	if (job.failed)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	return BD_OK;
}

bd_status
bd_mask_decide (bd_thread_pool *pool, uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                uint32_t radius, bd_error *error)
{
	bd_status st = bd_mask_decide_check (alpha, width, height, stride, error);
	if (st != BD_OK)
		return st;
	uint8_t *copy = malloc ((size_t) width * height);
	if (!copy)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	/* The copy too on the pool: 2 MB at 1080p was a video stream's thread's own (perf). */
	copy_job c = { copy, alpha, width, height, stride };
	bd_thread_pool_run (pool, (height + STRIP_ROWS - 1) / STRIP_ROWS, copy_strip, &c);
	st = decide_to (pool, copy, width, alpha, stride, width, height, radius, error);
	free (copy);
	return st;
}

bd_status
bd_mask_decide_to_check (const uint8_t *alpha, size_t alpha_stride, const uint8_t *out, size_t out_stride,
                         uint32_t width, uint32_t height, bd_error *error)
{
	bd_status st = bd_mask_decide_check (alpha, width, height, alpha_stride, error);
	if (st == BD_OK)
		st = bd_mask_decide_check (out, width, height, out_stride, error);
	if (st == BD_OK && alpha == out && alpha_stride != out_stride)
		st = bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_mask_decide: one buffer with two strides");
	return st;
}

bd_status
bd_mask_decide_to (bd_thread_pool *pool, const uint8_t *alpha, size_t alpha_stride, uint8_t *out,
                   size_t out_stride, uint32_t width, uint32_t height, uint32_t radius, bd_error *error)
{
	bd_status st = bd_mask_decide_to_check (alpha, alpha_stride, out, out_stride, width, height, error);
	if (st != BD_OK)
		return st;
	if (alpha == out)
		return bd_mask_decide (pool, out, width, height, out_stride, radius, error);
	return decide_to (pool, alpha, alpha_stride, out, out_stride, width, height, radius, error);
}

bd_status
bd_mask_make_decisive (uint8_t *alpha, uint32_t width, uint32_t height, size_t stride, bd_error *error)
{
	/* One thread: the editor calls this on its own workers, a pool per call would cost more. */
	return bd_mask_decide (NULL, alpha, width, height, stride, bd_decide_radius (width, height), error);
}
