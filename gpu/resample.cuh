/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* bd_resample_rgb (core/image/resample.c) on the device: @src (8-bit, RGB first in each of
 * its @pixel_bytes, @sw x @sh, rows @src_pitch bytes apart, on the device) to @width x @height
 * pixels of @out_channels in @out (packed: RGB, or RGBA made opaque), with the host's taps
 * (bd_resample_taps_bilinear: area when shrinking) and float order, so the host's bytes. The
 * taps and the horizontal pass's rows live in *@scratch (grown as needed). Ordered on @stream. */
bd_status bd_gpu_resample_rgb (const uint8_t *src, uint32_t sw, uint32_t sh, size_t src_pitch, uint32_t pixel_bytes,
                               uint32_t width, uint32_t height, uint8_t *out, uint32_t out_channels,
                               uint8_t **scratch, size_t *scratch_bytes, cudaStream_t stream, bd_error *error);
