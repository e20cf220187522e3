/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* Where a convolution's weights go on the device, and how they are laid out there. */
typedef struct {
	void    *weights;        /* [tap][cin storage][cout storage] */
	void    *weights_k;      /* K-major: [cout storage][tap][cin storage], transposed [tap][cout storage][cin storage] */
	float   *weights_k_small;   /* exact only: what tf32 drops of each weights_k value, else NULL */
	uint32_t cout, cin, taps;   /* the model's counts */
	uint32_t cout_storage, cin_storage;
	bool     transposed;
} bd_gpu_packed_conv;

/* Packs the model's weights @w as its file holds them, halves (@half) or floats, already on the
 * device (element (co, ci, tap) at co * s_co + ci * s_ci + tap * s_tap), into @p's buffers in
 * @precision (half for fast, float for exact), input channel ci stored at @in_map[ci] (a
 * device array; NULL: at ci), every padding element zero. Ordered on @stream. */
bd_status bd_gpu_pack_weights (const bd_gpu_packed_conv *p, const void *w, bool half, size_t s_co, size_t s_ci,
                               size_t s_tap, const uint32_t *in_map, bd_precision precision,
                               cudaStream_t stream, bd_error *error);
