/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* bd_resample_rgb (core/image/resample.c) enlarging on the device: @rgb (packed 8-bit RGB,
 * @sw x @sh, on the device) to @width x @height RGBA in @out (packed, opaque), with the host's
 * taps (bd_resample_taps_bilinear) and float order, so the host's bytes. The taps and the
 * horizontal pass's rows live in *@scratch (grown as needed). Ordered on @stream. */
bd_status bd_gpu_enlarge_rgb (const uint8_t *rgb, uint32_t sw, uint32_t sh, uint32_t width, uint32_t height,
                              uint8_t *out, uint8_t **scratch, size_t *scratch_bytes, cudaStream_t stream,
                              bd_error *error);
