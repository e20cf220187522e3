/* SPDX-License-Identifier: Apache-2.0 */
/* The editor's mask controls: a hard threshold, then a feathered (softened) edge. */
#include "image.h"

bd_status
bd_mask_adjust_on_pool (bd_thread_pool *pool, uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                        float threshold, float feather, bd_error *error)
{
	if (!alpha || width == 0 || height == 0 || !bd_stride_ok (width, height, stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_mask_adjust: no mask, or a bad size");
	if ((uint64_t) width * height > BD_MAX_PIXELS)
		return bd_error_set (error, BD_ERR_TOO_LARGE, "mask too large");
	if (!(threshold <= 1) || !(feather >= 0 && feather <= 500))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "threshold must be at most 1 and feather within 0..500 pixels");
	if (threshold >= 0) {
		uint32_t cut = (uint32_t) (threshold * 255.0f + 0.5f);
		for (uint32_t y = 0; y < height; y++)
			for (uint32_t x = 0; x < width; x++) {
				uint8_t *a = alpha + (size_t) y * stride + x;
				*a = *a >= cut && *a > 0 ? 255 : 0;
			}
	}
	uint32_t r = (uint32_t) (feather / 2.0f + 0.5f);
	if (r == 0)
		return BD_OK;
	return bd_box_blur_u8 (pool, alpha, width, height, stride, 1, r, error);
}

bd_status
bd_mask_adjust (uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                float threshold, float feather, bd_error *error)
{
	bd_thread_pool *pool = bd_thread_pool_new (0);
	if (!pool)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_status st = bd_mask_adjust_on_pool (pool, alpha, width, height, stride, threshold, feather, error);
	bd_thread_pool_free (pool);
	return st;
}
