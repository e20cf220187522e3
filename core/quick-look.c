/* SPDX-License-Identifier: Apache-2.0 */
/* A quick look: a run of the photo's small copy at BD_LOOK_SIDE pixels on its long side
 * (one pass, no mirror, no guided filter), and what a mask says of how sure the network was,
 * for run-looking.c, upright.c and close-up.c. */
#include "quick-looks.h"
#include "image/image.h"

#include <math.h>
#include <stdlib.h>

/* @alpha's look, every pixel of it. */
static bd_mask_look
look_at (const uint8_t *alpha, uint32_t width, uint32_t height, size_t stride)
{
	uint64_t sum = 0, above = 0, above_sum = 0, unsure = 0, n = 0;
	for (uint32_t y = 0; y < height; y++) {
		const uint8_t *row = alpha + (size_t) y * stride;
		for (uint32_t x = 0; x < width; x++, n++) {
			uint32_t a = row[x];
			sum += a;
			above += a >= 128;
			above_sum += a >= 128 ? a : 0;
			unsure += a > 38 && a < 217;
		}
	}
	return (bd_mask_look) {
		.mass = (double) sum / (255.0 * (double) n),
		.sure = above ? (double) above_sum / (255.0 * (double) above) : 0.0,
		.unsure = (double) unsure / (double) n,
	};
}

bd_mask_look
bd_look_at_pass (const float *prob, uint32_t width, uint32_t height, size_t stride)
{
	double sum = 0, above_sum = 0;
	size_t above = 0, unsure = 0;
	for (uint32_t y = 0; y < height; y++) {
		const float *row = prob + y * stride;
		float row_sum = 0, row_above_sum = 0;
		uint32_t row_above = 0, row_unsure = 0;
		for (uint32_t x = 0; x < width; x++) {
			bool person = row[x] >= 0.5f;
			row_sum += row[x];
			row_above_sum += person ? row[x] : 0.0f;
			row_above += person;
			row_unsure += (row[x] > 0.15f) & (row[x] < 0.85f);   /* no branch: 0.15 ms, not 0.7 */
		}
		sum += row_sum;
		above_sum += row_above_sum;
		above += row_above;
		unsure += row_unsure;
	}
	double n = (double) width * height;
	return (bd_mask_look) {
		.mass = sum / n,
		.sure = above ? above_sum / (double) above : 0.0,
		.unsure = (double) unsure / n,
	};
}

bd_status
bd_small_photo_make (bd_session *session, const bd_image *photo, bd_small_photo *small, bd_error *error)
{
	if (small->pixels)
		return BD_OK;
	uint32_t longest = photo->width > photo->height ? photo->width : photo->height;
	double scale = longest > BD_LOOK_SIDE ? (double) BD_LOOK_SIDE / longest : 1.0;
	uint32_t w = (uint32_t) lround (photo->width * scale), h = (uint32_t) lround (photo->height * scale);
	w = w ? w : 1;
	h = h ? h : 1;
	uint8_t *pixels = malloc ((size_t) w * h * 3);
	if (!pixels)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_status st = session->backend->resample_rgb
	                       ? session->backend->resample_rgb (session, photo, w, h, pixels, error)
	                       : bd_resample_rgb (session->pool, photo, w, h, NULL, pixels, (size_t) w * 3, 3, error);
	if (st != BD_OK) {
		free (pixels);
		return st;
	}
	*small = (bd_small_photo) { pixels, w, h };
	return BD_OK;
}

void
bd_small_photo_clear (bd_small_photo *small)
{
	free (small->pixels);
	*small = (bd_small_photo) { NULL, 0, 0 };
}

bd_status
bd_look_quickly (bd_session *session, const bd_image *view, const bd_run_options *options, bd_run_fn run, int which,
                 uint8_t *alpha, bd_mask_look *look, bd_error *error)
{
	bd_run_options quick = *options;
	quick.mirror_average = 0;
	quick.refine_edges = 0;
	quick.progress = NULL;
	session->look_run = which;
	bd_status st = run (session, view, &quick, alpha, view->width, error);
	session->look_run = 0;
	if (st == BD_OK)
		*look = look_at (alpha, view->width, view->height, view->width);
	return st;
}
