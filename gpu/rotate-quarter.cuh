/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* bd_rotate_quarter on the device (core/image/rotate-quarter.c, the same bytes): @src,
 * @width x @height pixels of @channels bytes, rows @src_pitch bytes apart, turned a quarter
 * to the right (@clockwise) or to the left into @dst, @height x @width, rows @dst_pitch
 * apart. */
bd_status bd_gpu_rotate_quarter (const uint8_t *src, uint32_t width, uint32_t height, size_t src_pitch,
                                 uint32_t channels, bool clockwise, uint8_t *dst, size_t dst_pitch,
                                 cudaStream_t stream, bd_error *error);
