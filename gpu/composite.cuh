/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* Device buffers of bd_gpu_composite, grown as larger photos come. */
typedef struct {
	uint8_t *photo, *alpha, *out;
	float   *cells;        /* the colour means' grid (colour-means.cu) */
	uint8_t *grid_rgb;     /* a blurred background's grid in 8 bits */
	uint8_t *scratch;      /* its enlargement's taps and rows (resample.cu) */
	size_t   photo_bytes, alpha_bytes, out_bytes, cells_bytes, grid_rgb_bytes, scratch_bytes;
} bd_gpu_composite_buffers;

/* bd_composite (core/image/composite.c) for a transparent, plain colour or blurred background
 * on the device: the photo and the mask up, RGBA down, the same float steps in the same order, so
 * the host's bytes. The arguments are checked already (bd_composite_check). Synchronous. */
bd_status bd_gpu_composite (bd_gpu_composite_buffers *b, cudaStream_t stream, const bd_image *photo,
                            const uint8_t *alpha, size_t alpha_stride, const bd_background *background,
                            uint8_t *out, size_t out_stride, bd_error *error);
void      bd_gpu_composite_free (bd_gpu_composite_buffers *b);
