/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* Mirror averaging: the photo's part of @prob (canvas @lb) averaged with @mirrored, the
 * network's output for the mirror image on the mirror pass's canvas @lb2 (another scale),
 * sampled bilinearly; bd_mirror_average in core/image/image.h says exactly how. */
bd_status bd_gpu_mirror_average (float *prob, const bd_letterbox &lb, const float *mirrored, const bd_letterbox &lb2,
                                 cudaStream_t stream, bd_error *error);
