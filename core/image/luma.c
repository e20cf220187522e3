/* SPDX-License-Identifier: Apache-2.0 */
/* A photo's luma plane, for the temporal filter: a video frame's is made once and compared with
 * its neighbours' several times (bd_temporal_blend_luma_on_pool), a quarter of the bytes of
 * the RGBA frames it stands for. */
#include "image.h"

#define BAND_ROWS 64

typedef struct {
	const bd_image *photo;
	uint8_t        *luma;
	size_t          stride;
} luma_job;

static void
luma_band (void *data, size_t band)
{
	const luma_job *j = data;
	const bd_image *p = j->photo;
	uint32_t w = p->width, c = bd_image_channels (p);
	size_t y1 = (band + 1) * BAND_ROWS < p->height ? (band + 1) * BAND_ROWS : p->height;
	for (size_t y = band * BAND_ROWS; y < y1; y++) {
		const uint8_t *in = p->pixels + y * p->stride;
		uint8_t *out = j->luma + y * j->stride;
		if (c == 4)   /* video's frames: the loop the compiler turns into vector code */
			for (uint32_t x = 0; x < w; x++)
				out[x] = bd_luma (in + 4 * (size_t) x);
		else
			for (uint32_t x = 0; x < w; x++)
				out[x] = bd_luma (in + 3 * (size_t) x);
	}
}

bd_status
bd_luma_on_pool (bd_thread_pool *pool, const bd_image *photo, uint8_t *luma, size_t luma_stride, bd_error *error)
{
	bd_status st = bd_image_check (photo, "photo", error);
	if (st != BD_OK)
		return st;
	if (!luma || !bd_stride_ok (photo->width, photo->height, luma_stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_luma: no plane, or a bad stride");
	luma_job job = { photo, luma, luma_stride };
	bd_thread_pool_run (pool, (photo->height + BAND_ROWS - 1) / BAND_ROWS, luma_band, &job);
	return BD_OK;
}
