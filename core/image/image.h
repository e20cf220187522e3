/* SPDX-License-Identifier: Apache-2.0 */
/* Pre- and post-processing of photos and masks on the CPU, shared by every backend. */
#pragma once

#include "../backdrop-private.h"

/* Bytes per pixel of an 8-bit image view. */
static inline uint32_t
bd_image_channels (const bd_image *image)
{
	return image->format == BD_PIXEL_RGBA8 ? 4 : 3;
}

/* A float in 0..255 to a byte, truncating (callers add 0.5 to round). Out-of-range values
 * clamp and NaN gives 0: a plain cast of either is undefined behaviour in C. */
static inline uint8_t
bd_u8_from_float (float v)
{
	return v > 0 ? (v < 255 ? (uint8_t) v : 255) : 0;
}

/* bd_composite and bd_mask_adjust on a pool the caller keeps (they make one per call). */
bd_status bd_composite_on_pool   (bd_thread_pool *pool, const bd_image *photo, const uint8_t *alpha,
                                  size_t alpha_stride, const bd_background *background, uint8_t *out,
                                  size_t out_stride, bd_error *error);
bd_status bd_mask_adjust_on_pool (bd_thread_pool *pool, uint8_t *alpha, uint32_t width, uint32_t height,
                                  size_t stride, float threshold, float feather, bd_error *error);
/* bd_temporal_blend in bands of rows on @pool (NULL: in turn on the calling thread). */
bd_status bd_temporal_blend_on_pool (bd_thread_pool *pool, const bd_image *photo, const bd_image *other_photo,
                                     const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha,
                                     size_t alpha_stride, float strength, bd_error *error);

/* The same on luma planes (bd_luma_on_pool) made once a frame: the same bytes. */
bd_status bd_temporal_blend_luma_on_pool (bd_thread_pool *pool, const uint8_t *luma, const uint8_t *other_luma,
                                          size_t luma_stride, uint32_t width, uint32_t height,
                                          const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha,
                                          size_t alpha_stride, float strength, bd_error *error);
/* The blend in two steps: the map of each pixel's local change between two luma planes (its
 * window's sum of absolute differences; the same for either order of the frames), which does
 * not depend on the masks and can be made ahead, then the blend by it: the same bytes. */
bd_status bd_temporal_change_luma_on_pool (bd_thread_pool *pool, const uint8_t *luma, const uint8_t *other_luma,
                                           size_t luma_stride, uint32_t width, uint32_t height, uint16_t *change,
                                           size_t change_stride, bd_error *error);
bd_status bd_temporal_blend_change_on_pool (bd_thread_pool *pool, const uint16_t *change, size_t change_stride,
                                            uint32_t width, uint32_t height, const uint8_t *other_alpha,
                                            size_t other_stride, uint8_t *alpha, size_t alpha_stride, float strength,
                                            bd_error *error);
/* @photo's luma, one byte a pixel (bd_luma), in bands of rows on @pool. */
bd_status bd_luma_on_pool (bd_thread_pool *pool, const bd_image *photo, uint8_t *luma, size_t luma_stride,
                           bd_error *error);

/* A pixel's luma, BT.601 weights in 8-bit fixed point: fast, and the temporal filter only
 * takes differences of it. */
static inline uint8_t
bd_luma (const uint8_t *rgb)
{
	return (uint8_t) ((77 * rgb[0] + 150 * rgb[1] + 29 * rgb[2] + 128) >> 8);
}

/* Checks a view's pointer, size, stride and the pixel limit. */
bd_status bd_image_check (const bd_image *image, const char *what, bd_error *error);

/* 8-bit pixels to resample: rows @stride apart, @pixel_bytes from one pixel to the next, of
 * which the first @channels (1 to 4) are taken. */
typedef struct {
	const uint8_t *pixels;
	uint32_t       width, height;
	size_t         stride;
	uint32_t       pixel_bytes;
	uint32_t       channels;
} bd_plane;

/* What an enlarged picture shows between source pixels: a blend (photos) or the nearest
 * pixel (a view zoomed in, where the user wants to see pixels). */
typedef enum {
	BD_GROW_BILINEAR,
	BD_GROW_NEAREST,
} bd_grow;

/* The one resampler (resample.c): @src to @width x @height, each output pixel the exact
 * average of the source area it covers when shrinking, as @grow says when enlarging; into
 * floats in [0, 1] (@dst_f32, interleaved, the source's channel count) or bytes (@dst_u8,
 * rows @dst_stride apart, @dst_channels a pixel; those past the source's are set to 255). */
bd_status bd_resample_plane (bd_thread_pool *pool, const bd_plane *src, uint32_t width, uint32_t height,
                             bd_grow grow, float *dst_f32, uint8_t *dst_u8, size_t dst_stride,
                             uint32_t dst_channels, bd_error *error);

/* The RGB of a photo view through bd_resample_plane, bilinear when enlarging. */
bd_status bd_resample_rgb (bd_thread_pool *pool, const bd_image *src, uint32_t width, uint32_t height,
                           float *dst_f32, uint8_t *dst_u8, size_t dst_stride, uint32_t dst_channels,
                           bd_error *error);

/* @src (@width x @height, @channels bytes a pixel) turned a quarter into @dst, which is
 * @height pixels wide and @width rows tall: to the left (counter-clockwise), or with
 * @clockwise to the right, which turns it back, on @pool (rotate-quarter.c). */
void bd_rotate_quarter (bd_thread_pool *pool, const uint8_t *src, uint32_t width, uint32_t height, size_t src_stride,
                        uint32_t channels, bool clockwise, uint8_t *dst, size_t dst_stride);

/* The low-resolution probabilities @prob (lw x lh, covering the whole photo) brought to the
 * photo's full size as 8-bit alpha. With @refine, a guided filter fitted at low resolution
 * against @rgb_low (the photo resampled to lw x lh, RGB floats in [0, 1]) is applied at full
 * resolution, so the mask follows the photo's own edges; else plain bilinear. */
bd_status bd_upsample_alpha (bd_thread_pool *pool, const float *prob, const float *rgb_low,
                             uint32_t lw, uint32_t lh, const bd_image *photo, bool refine,
                             uint8_t *alpha, size_t alpha_stride, bd_error *error);

/* Mirror averaging (session.c): each pixel of the photo on @prob (canvas @lb) becomes the mean
 * of itself and of @mirrored, the network's output for the photo's mirror image on canvas
 * @lb2 (the mirror pass's letterbox, another scale), sampled there bilinearly with pixel
 * centres aligned (clamped at the photo's edges). The CUDA backend does the same on the
 * device (gpu/mirror-average.cu). */
void bd_mirror_average (float *prob, const bd_letterbox *lb, const float *mirrored, const bd_letterbox *lb2);

/* The run turned's second view (session.c; upright.c says why): each pixel of the photo on
 * @prob (canvas @lb) becomes the mean of itself and of whichever of @looks is nearer to it
 * there, the standing look or the look on her head turned back half a turn, both sampled
 * bilinearly at their own scale, pixel centres aligned, where that look is the lower; else it
 * stays (look-sample.h). The CUDA backend does the same on the device (gpu/look-average.cu). */
void bd_look_average (float *prob, const bd_letterbox *lb, const bd_turned_looks *looks);

/* Local mean colours of the person (@fg) and of the background (@bg) around each pixel, at
 * the photo's size divided by @factor: averages weighted by alpha and by 1 - alpha over
 * windows of about 2 * radii[i] + 1 reduced pixels, @iterations times (colour-means.c).
 * RGB floats in 0..255. */
typedef struct {
	float   *fg, *bg;
	uint32_t w, h, factor;
} bd_colour_means;

bd_status bd_colour_means_make (bd_thread_pool *pool, const bd_image *photo, const uint8_t *alpha,
                                size_t alpha_stride, uint32_t factor, const uint32_t *radii, int iterations,
                                bd_colour_means *means, bd_error *error);
void      bd_colour_means_clear (bd_colour_means *means);

/* One box pass of radius @r along @line, @n samples of @k interleaved channels (at most
 * BD_BOX_MAX_CHANNELS), in place; @scratch holds n * k floats (box-filter.c). At the ends,
 * BD_BOX_REPEAT repeats the border sample (every window holds 2r + 1, so borders do not
 * darken); BD_BOX_CLIP stops the window there and averages what it holds. */
#define BD_BOX_MAX_CHANNELS 16
typedef enum { BD_BOX_REPEAT, BD_BOX_CLIP } bd_box_edge;
void bd_box_line (float *line, uint32_t n, uint32_t k, uint32_t r, bd_box_edge edge, float *scratch);
/* BD_BOX_REPEAT passes down the columns @x0..@x1 of a @w x @h image of @k interleaved
 * channels, in place: the same arithmetic as bd_box_line on each column, with the same
 * results, but a row of the strip at a time, so memory is read in order (box-filter.c).
 * @scratch holds (h + 1) * (x1 - x0) * k floats. */
void bd_box_columns (float *img, uint32_t w, uint32_t h, uint32_t k, uint32_t x0, uint32_t x1, uint32_t r,
                     uint32_t passes, float *scratch);

/* In-place blur of 8-bit pixels: three box passes of @radius, about a Gaussian. */
bd_status bd_box_blur_u8 (bd_thread_pool *pool, uint8_t *pixels, uint32_t width, uint32_t height,
                          size_t stride, uint32_t channels, uint32_t radius, bd_error *error);

/* Clears every separate region of @alpha whose person area (pixels at least half opaque) is
 * under @min_fraction of the largest region's: passers-by behind the subject (keep-subject.c),
 * if the largest region spans at least @min_height of the photo's height; else it clears
 * nothing. A fifth: someone half the subject's height covers about a quarter of its area and
 * stays; larger fractions score a little higher on CCP but drop more of a group's members who
 * stand further back. A third of the height: street scenes and groups seen from afar, whose
 * labels mark everyone, lost people to the pass (CamVid 0.334 against 0.351 without it) while
 * every portrait set's subject spans more than half (the scores: docs/MODEL.md, "The
 * main-subject pass"). */
#define BD_MAIN_SUBJECT_FRACTION 0.2f
#define BD_MAIN_SUBJECT_MIN_HEIGHT (1.0f / 3.0f)
/* With @scratch (a session's; NULL: memory of its own) its grid lives there between calls. */
bd_status bd_mask_keep_main_subject (bd_thread_pool *pool, bd_scratch *scratch, uint8_t *alpha, uint32_t width,
                                     uint32_t height, size_t stride, float min_fraction, float min_height,
                                     bd_error *error);
/* The pass's grid for a @width x @height mask: @w x @h blocks of @b x @b pixels. */
void      bd_subject_grid_size (uint32_t width, uint32_t height, uint32_t *w, uint32_t *h, uint32_t *b);
/* The pass's verdict on a grid made elsewhere (gpu/keep-subject.cu): @max and @core hold
 * (w + 2) x (h + 2) cells, a border of empty ones around the blocks (bd_subject_grid_size),
 * each block's most opaque pixel and its count of pixels from 128 up; @max is written. Where
 * a region goes, *@any is set and @drop gets a byte a block (rows of w): 1 where its pixels
 * go, as bd_mask_keep_main_subject would clear them; else @drop is left alone. */
bd_status bd_subject_blocks_to_drop (bd_scratch *scratch, uint8_t *max, const uint32_t *core, uint32_t width,
                                     uint32_t height, float min_fraction, float min_height, uint8_t *drop,
                                     bool *any, bd_error *error);

/* Sets every pixel farther than @radius from the mask's own edge (alpha crossing one half)
 * to 0 or 255, by its side of one half: soft alpha only along edges (decide-alpha.c). */
bd_status bd_mask_decide (bd_thread_pool *pool, uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                          uint32_t radius, bd_error *error);
/* The same from @alpha into @out, @alpha left as it was (no copy of it is made); the two are
 * one buffer (the pass in place) or do not overlap. */
bd_status bd_mask_decide_to (bd_thread_pool *pool, const uint8_t *alpha, size_t alpha_stride, uint8_t *out,
                             size_t out_stride, uint32_t width, uint32_t height, uint32_t radius,
                             bd_error *error);
/* bd_mask_decide's argument checks, and bd_mask_decide_to's (both buffers, and one buffer
 * only with one stride), for a device that does the pass (a GPU session). */
bd_status bd_mask_decide_check (const uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                                bd_error *error);
bd_status bd_mask_decide_to_check (const uint8_t *alpha, size_t alpha_stride, const uint8_t *out,
                                   size_t out_stride, uint32_t width, uint32_t height, bd_error *error);
/* 0.15% of the photo's diagonal (at least 1 pixel): the width of a soft edge. */
uint32_t  bd_decide_radius (uint32_t width, uint32_t height);
