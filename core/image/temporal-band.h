/* SPDX-License-Identifier: Apache-2.0 */
/* The temporal filter's worker (temporal-band.c), shared with its entry points
 * (temporal-blend.c): the job, its constants, and the band function built once per x86-64
 * level and picked at run time, as the convolution's rows are. */
#pragma once

#include "image.h"

#include <stdbool.h>

/* Local photo change, as the mean absolute luma difference over a window of 2r + 1 pixels
 * square: one pixel's change is mostly sensor or compression noise, a window's is motion. */
#define BD_TEMPORAL_RADIUS 2
#define BD_TEMPORAL_WINDOW ((2 * BD_TEMPORAL_RADIUS + 1) * (2 * BD_TEMPORAL_RADIUS + 1))
/* Window means below LOW count as unchanged (full blend), above HIGH as motion (no blend);
 * in 8-bit luma levels. JPEG/H.264 noise on a still scene stays under about 3. */
#define BD_TEMPORAL_LOW  3.0f
#define BD_TEMPORAL_HIGH 10.0f
/* Masks that differ by more than JUMP_LOW levels blend less, not at all past JUMP_HIGH: noise
 * moves a still pixel's mask by a little; a jump from background to person where the photo
 * hardly changed is mostly a person moving over a background of their own colour. On the
 * DAVIS clips this guard takes the filter from 25 frames of 232 with a lower IoU than the
 * per-frame masks (by over 0.005) to none, and flickers less too (docs/PERFORMANCE.md). */
#define BD_TEMPORAL_JUMP_LOW  64.0f
#define BD_TEMPORAL_JUMP_HIGH 160.0f

/* Rows a task: each band primes its own ring of differences (2r rows above it), so the bands
 * run side by side and every row comes out as it would alone. */
#define BAND_ROWS 32

/* The photos, or their luma planes (bd_luma_on_pool) when @luma is set; then either the masks
 * to blend (@alpha set) or the map of changes to fill (@change set). */
typedef struct {
	const bd_image *photo, *other_photo;
	const uint8_t  *luma, *other_luma;
	size_t          luma_stride;
	uint32_t        width, height;
	const uint8_t  *other_alpha;
	size_t          other_stride;
	uint8_t        *alpha;
	size_t          alpha_stride;
	float           strength;
	uint16_t       *change;        /* window sums, BD_TEMPORAL_WINDOW pixels each */
	const uint16_t *given_change;  /* the same, made before (bd_temporal_change_luma_on_pool) */
	size_t          change_stride; /* elements */
	bool            failed;
} bd_temporal_job;

/* Rows BAND_ROWS * @band .. of @data (a bd_temporal_job): the blend, or the map of change,
 * the same bytes from every build. */
void bd_temporal_band_generic (void *data, size_t band);
void bd_temporal_band_x86_64_v3 (void *data, size_t band);
void bd_temporal_band_x86_64_v4 (void *data, size_t band);
