/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* The network's input: planar CHW floats (3 channels) into channels 0..3 of an NHWC view (the
 * fourth written 0); its channels from 4 up must be zero already (the canvas is zeroed when made). */
bd_status bd_gpu_to_nhwc (const float *chw, const bd_gpu_view *out, bd_precision precision,
                          cudaStream_t stream, bd_error *error);
