/* SPDX-License-Identifier: Apache-2.0 */
/* Box blur of 8-bit pixels by running sums, three passes each way (close to a Gaussian),
 * rows split over threads; columns run across the whole width at once to stay in cache. */
#include "image.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	uint8_t *pixels;
	uint32_t width, height, channels, radius;
	size_t   stride;
	bool     failed;   /* a line's buffer could not be allocated */
} blur_ctx;

/* Three passes over a line of n samples, @step apart, of one channel. Between passes the
 * values are rounded to whole levels as 8-bit storage would, so the result is the integer
 * blur's: the sums are exact in float and their means round alike for radii below 16 000. */
static void
blur_line (uint8_t *p, uint32_t n, size_t step, uint32_t r, float *tmp)
{
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = p[i * step];
	for (int pass = 0; pass < 3; pass++) {
		bd_box_line (tmp, n, 1, r, BD_BOX_REPEAT, tmp + n);
		for (uint32_t i = 0; i < n; i++)
			tmp[i] = (float) (uint32_t) (tmp[i] + 0.5f);
	}
	for (uint32_t i = 0; i < n; i++)
		p[i * step] = (uint8_t) tmp[i];
}

static void
rows_task (void *data, size_t y)
{
	const blur_ctx *c = data;
	float *tmp = malloc (2 * (size_t) c->width * sizeof *tmp);
	if (!tmp) {
		__atomic_store_n ((bool *) &c->failed, true, __ATOMIC_RELAXED);
		return;
	}
	for (uint32_t ch = 0; ch < c->channels; ch++)
		blur_line (c->pixels + y * c->stride + ch, c->width, c->channels, c->radius, tmp);
	free (tmp);
}

static void
columns_task (void *data, size_t x)
{
	const blur_ctx *c = data;
	float *tmp = malloc (2 * (size_t) c->height * sizeof *tmp);
	if (!tmp) {
		__atomic_store_n ((bool *) &c->failed, true, __ATOMIC_RELAXED);
		return;
	}
	for (uint32_t ch = 0; ch < c->channels; ch++)
		blur_line (c->pixels + x * c->channels + ch, c->height, c->stride, c->radius, tmp);
	free (tmp);
}

bd_status
bd_box_blur_u8 (bd_thread_pool *pool, uint8_t *pixels, uint32_t width, uint32_t height,
                size_t stride, uint32_t channels, uint32_t radius, bd_error *error)
{
	if (radius == 0 || width == 0 || height == 0)
		return BD_OK;
	blur_ctx c = { pixels, width, height, channels, radius, stride, false };
	bd_thread_pool_run (pool, height, rows_task, &c);
	bd_thread_pool_run (pool, width, columns_task, &c);
	return c.failed ? bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory blurring") : BD_OK;
}
