/* SPDX-License-Identifier: Apache-2.0 */
/* The image functions on a session's own worker threads: a program that made a session with
 * N threads gets N here too, and no pool is started and stopped for each call. A GPU session
 * composes on its device where its backend can (gpu/composite.cu). */
#include "backdrop-private.h"
#include "image/image.h"

bd_status
bd_session_mask_adjust (bd_session *session, uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                        float threshold, float feather, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_mask_adjust: no session");
	return bd_mask_adjust_on_pool (session->pool, alpha, width, height, stride, threshold, feather, error);
}

bd_status
bd_session_composite (bd_session *session, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                      const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_composite: no session");
	/* A GPU session composes a cut-out, a colour or a blurred background on its device: the
	 * same bytes, without the host's colour means (most of a cut-out's time on the host). */
	if (session->backend->composite && background && background->kind != BD_BACKGROUND_IMAGE) {
		bd_status st = bd_composite_check (photo, alpha, alpha_stride, background, out, out_stride, error);
		if (st == BD_OK)
			st = session->backend->composite (session, photo, alpha, alpha_stride, background, out, out_stride,
			                                  error);
		/* A GPU without room for this photo's buffers (a small blur radius on a large photo
		 * wants a grid the photo's size): the host's memory may still hold it. */
		if (st != BD_ERR_NO_MEMORY)
			return st;
	}
	return bd_composite_on_pool (session->pool, photo, alpha, alpha_stride, background, out, out_stride, error);
}

bd_status
bd_session_temporal_blend (bd_session *session, const bd_image *photo, const bd_image *other_photo,
                           const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha, size_t alpha_stride,
                           float strength, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_temporal_blend: no session");
	return bd_temporal_blend_on_pool (session->pool, photo, other_photo, other_alpha, other_stride, alpha,
	                                  alpha_stride, strength, error);
}

bd_status
bd_session_luma (bd_session *session, const bd_image *photo, uint8_t *luma, size_t luma_stride, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_luma: no session");
	return bd_luma_on_pool (session->pool, photo, luma, luma_stride, error);
}

bd_status
bd_session_temporal_blend_luma (bd_session *session, const uint8_t *luma, const uint8_t *other_luma,
                                size_t luma_stride, uint32_t width, uint32_t height, const uint8_t *other_alpha,
                                size_t other_stride, uint8_t *alpha, size_t alpha_stride, float strength,
                                bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_temporal_blend_luma: no session");
	return bd_temporal_blend_luma_on_pool (session->pool, luma, other_luma, luma_stride, width, height, other_alpha,
	                                       other_stride, alpha, alpha_stride, strength, error);
}

bd_status
bd_session_temporal_change_luma (bd_session *session, const uint8_t *luma, const uint8_t *other_luma,
                                 size_t luma_stride, uint32_t width, uint32_t height, uint16_t *change,
                                 size_t change_stride, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_temporal_change_luma: no session");
	return bd_temporal_change_luma_on_pool (session->pool, luma, other_luma, luma_stride, width, height, change,
	                                        change_stride, error);
}

bd_status
bd_session_temporal_blend_change (bd_session *session, const uint16_t *change, size_t change_stride,
                                  uint32_t width, uint32_t height, const uint8_t *other_alpha, size_t other_stride,
                                  uint8_t *alpha, size_t alpha_stride, float strength, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_temporal_blend_change: no session");
	return bd_temporal_blend_change_on_pool (session->pool, change, change_stride, width, height, other_alpha,
	                                         other_stride, alpha, alpha_stride, strength, error);
}

bd_status
bd_session_make_decisive_to (bd_session *session, const uint8_t *alpha, size_t alpha_stride, uint8_t *out,
                             size_t out_stride, uint32_t width, uint32_t height, bd_error *error)
{
	if (!session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_make_decisive: no session");
	uint32_t radius = bd_decide_radius (width, height);
	/* A GPU session decides on its device: the same bytes, where the host's pass was most of
	 * a video frame's time on the thread that puts frames in order (docs/PERFORMANCE.md). */
	if (session->backend->decide) {
		bd_status st = bd_mask_decide_to_check (alpha, alpha_stride, out, out_stride, width, height, error);
		if (st == BD_OK)
			st = session->backend->decide (session, alpha, alpha_stride, out, out_stride, width, height, radius,
			                               error);
		/* A GPU without room for the mask's buffers: the host's memory may still hold it. */
		if (st != BD_ERR_NO_MEMORY)
			return st;
	}
	return bd_mask_decide_to (session->pool, alpha, alpha_stride, out, out_stride, width, height, radius, error);
}

bd_status
bd_session_make_decisive (bd_session *session, uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                          bd_error *error)
{
	return bd_session_make_decisive_to (session, alpha, stride, alpha, stride, width, height, error);
}
