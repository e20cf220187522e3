/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* Device buffers of bd_gpu_decide, grown as larger masks come. */
typedef struct {
	uint8_t *mask;     /* the mask, rows @width apart */
	uint8_t *rows;     /* each pixel's row window: bit 0 any person, bit 1 only person */
	size_t   mask_bytes, rows_bytes;
} bd_gpu_decide_buffers;

/* bd_mask_decide_to (core/image/decide-alpha.c) on the device: @alpha (host memory, rows
 * @alpha_stride apart) copied up, decided and copied back into @out (rows @out_stride apart;
 * it may be @alpha); the host's bytes exactly. The arguments are checked already. Synchronous. */
bd_status bd_gpu_decide (bd_gpu_decide_buffers *b, cudaStream_t stream, const uint8_t *alpha, size_t alpha_stride,
                         uint8_t *out, size_t out_stride, uint32_t width, uint32_t height, uint32_t radius,
                         bd_error *error);
/* The same on @mask, already on the device (dense rows), in place; queued on @stream. */
bd_status bd_gpu_decide_on_device (bd_gpu_decide_buffers *b, cudaStream_t stream, uint8_t *mask, uint32_t width,
                                   uint32_t height, uint32_t radius, bd_error *error);
void      bd_gpu_decide_free (bd_gpu_decide_buffers *b);
