/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* The local mean colours of the person and of the background (core/image/colour-means.c), on
 * the device: @photo (8-bit, @channels 3 or 4, rows @pitch bytes apart) and @alpha (packed) already there,
 * a grid of @factor pixels a cell, @iterations window passes of radii[i] cells. The grid's
 * floats live in *@cells (grown as needed); @grid gets its size and its F and B means (3
 * floats a cell each). Ordered on @stream; the host's floats exactly. */
typedef struct {
	uint32_t     w, h;
	const float *fg, *bg;
} bd_gpu_means_grid;

bd_status bd_gpu_colour_means (const uint8_t *photo, uint32_t channels, size_t pitch, const uint8_t *alpha,
                               uint32_t width, uint32_t height, uint32_t factor, const uint32_t *radii, int iterations,
                               float **cells, size_t *cells_bytes, bd_gpu_means_grid *grid, cudaStream_t stream,
                               bd_error *error);
