/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* The run turned's second view: the photo's part of @prob (canvas @lb) averaged with the
 * quick looks @standing and @on_head (@width x @height 8-bit alpha each, on the device);
 * bd_look_average in core/image/image.h says exactly how. */
bd_status bd_gpu_look_average (float *prob, const bd_letterbox &lb, const uint8_t *standing, const uint8_t *on_head,
                               uint32_t width, uint32_t height, cudaStream_t stream, bd_error *error);
