/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* The 8-bit photo onto the network's canvas, on the device: resampled as the CPU does
 * (core/image/resample.c: area coverage when shrinking, bilinear when enlarging), normalised,
 * zero outside the photo; and the resampled photo in [0, 1] for the guided filter. */
struct bd_gpu_letterbox_params {
	const uint8_t *photo;          /* width x height, rows `stride` bytes apart */
	uint32_t       width, height, channels;
	size_t         stride;
	bd_letterbox   lb;
	float          mean[3], std[3];
	bd_gpu_view    canvas;         /* pw x ph; channels 0..2 are written */
	float         *rgb_low;        /* sw x sh x 3; not written when mirrored */
	bool           mirror;         /* the canvas's mirror image (column x from pw - 1 - x) */
};

bd_status bd_gpu_letterbox (const bd_gpu_letterbox_params *p, bd_precision precision,
                            cudaStream_t stream, bd_error *error);
