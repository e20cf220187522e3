/* SPDX-License-Identifier: Apache-2.0 */
/* Mirror averaging's sampling (bd_mirror_average in image.h), in one place for the CPU
 * (mirror-average.c) and the CUDA backend (gpu/mirror-average.cu), so both compute the same
 * numbers. */
#pragma once

#include "../backdrop-private.h"

#ifdef __CUDACC__
#define BD_HOST_DEVICE __host__ __device__
#else
#define BD_HOST_DEVICE
#endif

/* Column x, row y of the scaled photo in the mirror pass's output: the canvas is the mirror
 * image, so the photo's column x is canvas column pw - 1 - (x + ox). */
static inline BD_HOST_DEVICE float
bd_mirrored_at (const float *mirrored, const bd_letterbox *lb2, uint32_t x, uint32_t y)
{
	return mirrored[(size_t) (y + lb2->oy) * lb2->pw + lb2->pw - 1 - (x + lb2->ox)];
}

/* Bilinear sample position along an axis of @src samples for output index @i of @dst,
 * pixel centres aligned, clamped to the samples; *f is the second sample's weight. */
static inline BD_HOST_DEVICE uint32_t
bd_mirror_sample_axis (uint32_t i, uint32_t src, uint32_t dst, float *f)
{
	float c = ((float) i + 0.5f) * ((float) src / (float) dst) - 0.5f;
	c = c < 0.0f ? 0.0f : c > (float) (src - 1) ? (float) (src - 1) : c;
	uint32_t s0 = (uint32_t) c;
	s0 = s0 >= src - 1 ? (src > 1 ? src - 2 : 0) : s0;
	*f = src > 1 ? c - (float) s0 : 0.0f;
	return s0;
}

/* The mirror pass at pixel (x, y) of the photo's pass (scaled photo @lb), sampled bilinearly
 * from the mirror pass's scaled photo @lb2. */
static inline BD_HOST_DEVICE float
bd_mirror_sample (const float *mirrored, const bd_letterbox *lb, const bd_letterbox *lb2, uint32_t x, uint32_t y)
{
	float fx, fy;
	uint32_t x0 = bd_mirror_sample_axis (x, lb2->sw, lb->sw, &fx), x1 = lb2->sw > 1 ? x0 + 1 : x0;
	uint32_t y0 = bd_mirror_sample_axis (y, lb2->sh, lb->sh, &fy), y1 = lb2->sh > 1 ? y0 + 1 : y0;
	float top = (1.0f - fx) * bd_mirrored_at (mirrored, lb2, x0, y0) + fx * bd_mirrored_at (mirrored, lb2, x1, y0);
	float bottom = (1.0f - fx) * bd_mirrored_at (mirrored, lb2, x0, y1) + fx * bd_mirrored_at (mirrored, lb2, x1, y1);
	return (1.0f - fy) * top + fy * bottom;
}
