#pragma once

#include "cuda-common.cuh"

/* The network's input: planar CHW floats (3 channels) into an NHWC view with zeroed spare channels. */
bd_status bd_gpu_to_nhwc (const float *chw, const bd_gpu_view *out, bd_precision precision,
                          cudaStream_t stream, bd_error *error);
