/* SPDX-License-Identifier: Apache-2.0 */
/* Local mean colours of the person and of the background around every pixel, on a grid
 * `factor` times coarser than the photo: averages weighted by alpha and by 1 - alpha over a
 * window (three box passes). With several iterations (Forte and Pitie's blur fusion), each
 * one averages the previous iteration's estimates of the person's and the background's own
 * colours instead of the photo's, the first with a wide window that reaches pure colours, the
 * next with a narrow one that follows them closely. The blurred background uses one
 * iteration's background means; the cut-out uses both means of two (composite.c). */
#include "image.h"

#include <stdlib.h>
#include <string.h>

/* Three box passes of radius r over a k-channel float image, along its rows (a task a row)
 * and then down its columns (a task a strip of columns). */
typedef struct {
	float   *img;
	uint32_t w, h, k, r;
	bool     failed;    /* a task's buffer could not be allocated */
} blur_ctx;

static void
blur_row_task (void *data, size_t y)
{
	const blur_ctx *c = data;
	float *scratch = malloc ((size_t) c->w * c->k * sizeof *scratch);
	if (!scratch || c->k > BD_BOX_MAX_CHANNELS) {
		free (scratch);
		__atomic_store_n ((bool *) &c->failed, true, __ATOMIC_RELAXED);
		return;
	}
	float *row = c->img + y * (size_t) c->w * c->k;
	for (int pass = 0; pass < 3; pass++)
		bd_box_line (row, c->w, c->k, c->r, BD_BOX_REPEAT, scratch);
	free (scratch);
}

/* The three passes down the columns, a strip of COLUMN_STRIP columns a task, a row of the
 * strip at a time (bd_box_columns): gathering one column at a time read a cache line per
 * sample, and was a third of a cut-out's compositing. */
enum { COLUMN_STRIP = 16 };

static void
blur_strip_task (void *data, size_t i)
{
	const blur_ctx *c = data;
	uint32_t x0 = (uint32_t) i * COLUMN_STRIP, x1 = x0 + COLUMN_STRIP < c->w ? x0 + COLUMN_STRIP : c->w;
	float *scratch = malloc ((size_t) (c->h + 1) * (x1 - x0) * c->k * sizeof *scratch);
	if (!scratch) {
		__atomic_store_n ((bool *) &c->failed, true, __ATOMIC_RELAXED);
		return;
	}
	bd_box_columns (c->img, c->w, c->h, c->k, x0, x1, c->r, 3, scratch);
	free (scratch);
}

static bool
box_blur_f32 (bd_thread_pool *pool, float *img, uint32_t w, uint32_t h, uint32_t k, uint32_t r)
{
	blur_ctx rows = { img, w, h, k, r, false };
	bd_thread_pool_run (pool, h, blur_row_task, &rows);
	if (rows.failed)
		return false;
	blur_ctx columns = { img, w, h, k, r, false };
	bd_thread_pool_run (pool, (w + COLUMN_STRIP - 1) / COLUMN_STRIP, blur_strip_task, &columns);
	return !columns.failed;
}

/* Sums of the photo and the mask over blocks of f x f pixels: one task per block row. */
typedef struct {
	const bd_image *photo;
	const uint8_t  *alpha;
	size_t          alpha_stride;
	uint32_t        f, w;
	float          *img;      /* 5 channels: RGB, alpha, count */
} block_ctx;

static void
block_row_task (void *data, size_t by)
{
	const block_ctx *c = data;
	uint32_t ch = bd_image_channels (c->photo);
	uint32_t y1 = (uint32_t) ((by + 1) * c->f < c->photo->height ? (by + 1) * c->f : c->photo->height);
	float *row = c->img + by * c->w * 5;
	for (uint32_t y = (uint32_t) (by * c->f); y < y1; y++) {
		const uint8_t *px = c->photo->pixels + (size_t) y * c->photo->stride;
		const uint8_t *a = c->alpha + (size_t) y * c->alpha_stride;
		for (uint32_t x = 0; x < c->photo->width; x++, px += ch) {
			float *p = row + (size_t) (x / c->f) * 5;
			p[0] += px[0];
			p[1] += px[1];
			p[2] += px[2];
			p[3] += a[x] / 255.0f;
			p[4] += 1;
		}
	}
}

/* The per-cell steps of an iteration, a grid row a task: each cell reads and writes its own
 * entries only, so the rows run side by side (on the GPU machine's 16 cores these loops,
 * run on one, were half a cut-out's compositing). */
enum { K = 11 };   /* F x alpha, alpha, B x (1 - alpha), 1 - alpha, plain RGB */

typedef struct {
	float            *img, *est, *sums;
	bd_colour_means  *m;
} cells_ctx;

/* Block sums to means; the first estimates are the block's own colour. */
static void
start_task (void *data, size_t y)
{
	const cells_ctx *c = data;
	for (size_t i = y * c->m->w; i < (y + 1) * c->m->w; i++) {
		float *p = c->img + 5 * i;
		for (int k = 0; k < 4; k++)
			p[k] /= p[4];
		for (int k = 0; k < 3; k++)
			c->est[6 * i + k] = c->est[6 * i + 3 + k] = p[k];
	}
}

/* The sums the window averages: each side's estimate weighted by its share, and the photo. */
static void
weigh_task (void *data, size_t y)
{
	const cells_ctx *c = data;
	for (size_t i = y * c->m->w; i < (y + 1) * c->m->w; i++) {
		const float *p = c->img + 5 * i, *e = c->est + 6 * i;
		float *sm = c->sums + K * i, a = p[3];
		for (int k = 0; k < 3; k++) {
			sm[k] = e[k] * a;
			sm[4 + k] = e[3 + k] * (1 - a);
			sm[8 + k] = p[k];
		}
		sm[3] = a;
		sm[7] = 1 - a;
	}
}

/* The window's means of each side, and the next iteration's estimates from them. */
static void
means_task (void *data, size_t y)
{
	const cells_ctx *c = data;
	for (size_t i = y * c->m->w; i < (y + 1) * c->m->w; i++) {
		const float *sm = c->sums + K * i, *p = c->img + 5 * i;
		float *fm = c->m->fg + 3 * i, *bm = c->m->bg + 3 * i, *e = c->est + 6 * i, a = p[3];
		/* A little of the plain mean keeps each ratio defined where a window holds none
		 * of that side (deep inside the person, or far from anyone). */
		const float eps = 0.02f;
		for (int k = 0; k < 3; k++) {
			fm[k] = (sm[k] + eps * sm[8 + k]) / (sm[3] + eps);
			bm[k] = (sm[4 + k] + eps * sm[8 + k]) / (sm[7] + eps);
			/* The next iteration's estimates: each side's mean, corrected so that
			 * a F + (1 - a) B reproduces the photo. */
			float r = p[k] - a * fm[k] - (1 - a) * bm[k];
			float fv = fm[k] + a * r, bv = bm[k] + (1 - a) * r;
			e[k] = fv < 0 ? 0 : fv > 255 ? 255 : fv;
			e[3 + k] = bv < 0 ? 0 : bv > 255 ? 255 : bv;
		}
	}
}

void
bd_colour_means_clear (bd_colour_means *m)
{
	bd_free_aligned (m->fg);
	bd_free_aligned (m->bg);
	m->fg = m->bg = NULL;
}

bd_status
bd_colour_means_make (bd_thread_pool *pool, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                      uint32_t factor, const uint32_t *radii, int iterations, bd_colour_means *m, bd_error *error)
{
	uint32_t f = factor ? factor : 1;
	m->factor = f;
	m->w = (photo->width + f - 1) / f;
	m->h = (photo->height + f - 1) / f;
	size_t n = (size_t) m->w * m->h;
	float *img = bd_alloc_zeroed (n, 5 * sizeof (float));      /* reduced photo RGB, alpha, count */
	float *est = bd_alloc_zeroed (n, 6 * sizeof (float));      /* current estimates F, B */
	float *sums = bd_alloc_zeroed (n, K * sizeof (float));
	m->fg = bd_alloc_zeroed (n, 3 * sizeof (float));
	m->bg = bd_alloc_zeroed (n, 3 * sizeof (float));
	if (!img || !est || !sums || !m->fg || !m->bg) {
		bd_free_aligned (img);
		bd_free_aligned (est);
		bd_free_aligned (sums);
		bd_colour_means_clear (m);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory estimating colours");
	}

	/* The photo and mask averaged over blocks of f x f pixels. */
	block_ctx bc = { photo, alpha, alpha_stride, f, m->w, img };
	bd_thread_pool_run (pool, m->h, block_row_task, &bc);
	cells_ctx cc = { img, est, sums, m };
	bd_thread_pool_run (pool, m->h, start_task, &cc);

	for (int it = 0; it < iterations; it++) {
		bd_thread_pool_run (pool, m->h, weigh_task, &cc);
		if (!box_blur_f32 (pool, sums, m->w, m->h, K, radii[it] ? radii[it] : 1)) {
			bd_free_aligned (img);
			bd_free_aligned (est);
			bd_free_aligned (sums);
			bd_colour_means_clear (m);
			return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory estimating colours");
		}
		bd_thread_pool_run (pool, m->h, means_task, &cc);
	}
	bd_free_aligned (img);
	bd_free_aligned (est);
	bd_free_aligned (sums);
	return BD_OK;
}
