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

/* One pass over a line of n samples, @step apart, of one channel. */
static void
blur_line (uint8_t *p, uint32_t n, size_t step, uint32_t r, uint32_t *tmp)
{
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = p[i * step];
	uint32_t sum = 0, span = 2 * r + 1;
	/* Edges repeat the border pixel, so the image does not darken there. */
	for (int64_t i = -(int64_t) r; i <= (int64_t) r; i++)
		sum += tmp[i < 0 ? 0 : i >= n ? n - 1 : i];
	for (uint32_t i = 0; i < n; i++) {
		p[i * step] = (uint8_t) ((sum + span / 2) / span);
		int64_t out = (int64_t) i - r, in = (int64_t) i + r + 1;
		sum += tmp[in >= n ? n - 1 : in];
		sum -= tmp[out < 0 ? 0 : out];
	}
}

static void
rows_task (void *data, size_t y)
{
	const blur_ctx *c = data;
	uint32_t *tmp = malloc ((size_t) c->width * sizeof *tmp);
	if (!tmp) {
		__atomic_store_n ((bool *) &c->failed, true, __ATOMIC_RELAXED);
		return;
	}
	for (int pass = 0; pass < 3; pass++)
		for (uint32_t ch = 0; ch < c->channels; ch++)
			blur_line (c->pixels + y * c->stride + ch, c->width, c->channels, c->radius, tmp);
	free (tmp);
}

static void
columns_task (void *data, size_t x)
{
	const blur_ctx *c = data;
	uint32_t *tmp = malloc ((size_t) c->height * sizeof *tmp);
	if (!tmp) {
		__atomic_store_n ((bool *) &c->failed, true, __ATOMIC_RELAXED);
		return;
	}
	for (int pass = 0; pass < 3; pass++)
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
