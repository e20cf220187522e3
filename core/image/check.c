/* SPDX-License-Identifier: Apache-2.0 */
#include "image.h"

bd_status
bd_image_check (const bd_image *image, const char *what, bd_error *error)
{
	if (!image || !image->pixels)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "no %s given", what);
	if (image->format != BD_PIXEL_RGB8 && image->format != BD_PIXEL_RGBA8)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "the %s has an unknown pixel format", what);
	if (image->width == 0 || image->height == 0)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "the %s is empty (%ux%u pixels)",
		                     what, image->width, image->height);
	if ((uint64_t) image->width * image->height > BD_MAX_PIXELS)
		return bd_error_set (error, BD_ERR_TOO_LARGE,
		                     "the %s is %ux%u pixels; Backdrop handles up to %llu megapixels",
		                     what, image->width, image->height,
		                     (unsigned long long) (BD_MAX_PIXELS / 1000000));
	if (!bd_stride_ok ((size_t) image->width * bd_image_channels (image), image->height, image->stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "the %s's row stride (%zu bytes) is smaller than a row or reaches past "
		                     "addressable memory", what, image->stride);
	return BD_OK;
}
