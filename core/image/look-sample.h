/* SPDX-License-Identifier: Apache-2.0 */
/* The quick looks' sampling for the run turned (bd_look_average in image.h), in one place for
 * the CPU (look-average.c) and the CUDA backend (gpu/look-average.cu), so both compute the
 * same numbers. */
#pragma once

#include "mirror-sample.h"

#include <math.h>

/* @look (@width x @height 8-bit alpha) sampled bilinearly at the corners (x0, y0), (x1, y1)
 * with the second ones' weights @fx, @fy, as a probability. */
static inline BD_HOST_DEVICE float
bd_look_bilinear (const uint8_t *look, uint32_t width, uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1, float fx,
                  float fy)
{
	size_t a = (size_t) y0 * width, b = (size_t) y1 * width;
	float top = (1.0f - fx) * look[a + x0] + fx * look[a + x1];
	float bottom = (1.0f - fx) * look[b + x0] + fx * look[b + x1];
	return ((1.0f - fy) * top + fy * bottom) / 255.0f;
}

/* What pixel (x, y) of the scaled photo @lb, where its pass says @pass, is averaged with: of
 * the two looks there, the standing one as it is and the one on her head turned half a turn
 * (its pixel (width - 1 - x, height - 1 - y)), each sampled bilinearly, the one nearer to
 * @pass (the standing one where they are as near); where that one says more than @pass, the
 * pass itself. The looks only take away: a pass of the photo turned upright is seldom short
 * of its person, and where it errs, it is mostly by calling a passer-by or a wall person. */
static inline BD_HOST_DEVICE float
bd_look_sample (const uint8_t *standing, const uint8_t *on_head, uint32_t width, uint32_t height,
                const bd_letterbox *lb, uint32_t x, uint32_t y, float pass)
{
	float fx, fy;
	uint32_t x0 = bd_mirror_sample_axis (x, width, lb->sw, &fx), x1 = width > 1 ? x0 + 1 : x0;
	uint32_t y0 = bd_mirror_sample_axis (y, height, lb->sh, &fy), y1 = height > 1 ? y0 + 1 : y0;
	float up = bd_look_bilinear (standing, width, x0, x1, y0, y1, fx, fy);
	/* Half a turn: pixel (x, y) of the standing look is (width - 1 - x, height - 1 - y) here. */
	float down = bd_look_bilinear (on_head, width, width - 1 - x0, width - 1 - x1, height - 1 - y0,
	                               height - 1 - y1, fx, fy);
	float nearer = fabsf (up - pass) <= fabsf (down - pass) ? up : down;
	return nearer < pass ? nearer : pass;
}
