/* SPDX-License-Identifier: Apache-2.0 */
/* Video masks that hold still: a frame's mask is blended with a neighbouring frame's where the
 * photo did not change between them and the two masks nearly agree, and left alone elsewhere. Per-frame networks flicker
 * by a few levels on a still wall or a standing person from one frame to the next; an
 * average over frames removes that, and gating it by the photo's own change keeps a moving
 * arm's mask on the arm (a plain average would drag it a frame or more behind). */
#include "temporal-band.h"

#include <stdlib.h>
#include <string.h>

/* The build of the band worker for this CPU's level (bd_cpu_level_get), which the tests
 * force in turn to hold every build to the same bytes. */
static void (*pick_band (void)) (void *, size_t)
{
	switch (bd_cpu_level_get ()) {
#if defined(BD_HAVE_X86_KERNELS)
	case BD_CPU_X86_64_V4:
		return bd_temporal_band_x86_64_v4;
	case BD_CPU_X86_64_V3:
		return bd_temporal_band_x86_64_v3;
#endif
	default:
		return bd_temporal_band_generic;
	}
}

/* The masks' checks, then the bands of @job (its frames and size set) on @pool. */
static bd_status
run_blend (bd_thread_pool *pool, bd_temporal_job *job, const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha,
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
	bd_thread_pool_run (pool, (h + BAND_ROWS - 1) / BAND_ROWS, pick_band (), job);
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
	bd_temporal_job job = { .photo = photo, .other_photo = other_photo, .width = w, .height = h };
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
	bd_temporal_job job = { .luma = luma, .other_luma = other_luma, .luma_stride = luma_stride, .width = width,
	                  .height = height };
	return run_blend (pool, &job, other_alpha, other_stride, alpha, alpha_stride, strength, error);
}

bd_status
bd_temporal_change_luma_on_pool (bd_thread_pool *pool, const uint8_t *luma, const uint8_t *other_luma,
                                 size_t luma_stride, uint32_t width, uint32_t height, uint16_t *change,
                                 size_t change_stride, bd_error *error)
{
	if (!luma || !other_luma || !change || width == 0 || height == 0 ||
	    (uint64_t) width * height > BD_MAX_PIXELS || !bd_stride_ok (width, height, luma_stride) ||
	    change_stride < width)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "bd_temporal_change: no luma or map, a bad size or stride");
	bd_temporal_job job = { .luma = luma, .other_luma = other_luma, .luma_stride = luma_stride, .width = width,
	                  .height = height, .change = change, .change_stride = change_stride };
	bd_thread_pool_run (pool, (height + BAND_ROWS - 1) / BAND_ROWS, pick_band (), &job);
	if (job.failed)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	return BD_OK;
}

bd_status
bd_temporal_blend_change_on_pool (bd_thread_pool *pool, const uint16_t *change, size_t change_stride,
                                  uint32_t width, uint32_t height, const uint8_t *other_alpha, size_t other_stride,
                                  uint8_t *alpha, size_t alpha_stride, float strength, bd_error *error)
{
	if (!change || width == 0 || height == 0 || (uint64_t) width * height > BD_MAX_PIXELS || change_stride < width)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_temporal_blend: no map of changes, a bad size or stride");
	bd_temporal_job job = { .width = width, .height = height, .given_change = change, .change_stride = change_stride };
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
