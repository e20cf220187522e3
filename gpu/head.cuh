/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* probabilities[y * width + x] = sigmoid(weight . in(y, x) + bias) over @channels channels. */
bd_status bd_gpu_head_sigmoid (const bd_gpu_view *in, uint32_t channels, const float *weight, float bias,
                               float *probabilities, bd_precision precision, cudaStream_t stream,
                               bd_error *error);
