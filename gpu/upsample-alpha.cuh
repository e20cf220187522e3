/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* The network's probabilities (on the canvas) brought to the photo's full size as 8-bit
 * alpha, on the device: the fast guided filter of core/image/upsample-alpha.c, or bilinear. */
struct bd_gpu_upsample_params {
	const float  *prob;        /* canvas, pw x ph */
	bd_letterbox  lb;
	const float  *rgb_low;     /* sw x sh x 3, in [0, 1] */
	const uint8_t *photo;      /* the full-size photo on the device */
	uint32_t      width, height, channels;
	size_t        stride;
	bool          refine;
	float        *scratch;     /* sw x sh x (13 + 13 + 4 + 4) floats */
	uint8_t      *alpha;       /* width x height, dense */
};

bd_status bd_gpu_upsample_alpha (const bd_gpu_upsample_params *p, cudaStream_t stream, bd_error *error);
