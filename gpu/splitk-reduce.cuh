#pragma once

#include "cuda-common.cuh"

/* The end of a convolution whose K was split over blocks: out = act(sum of the @splits partial
 * sums + bias), ReLU if @relu. @partial holds @splits slabs of pixels x channels floats (one
 * per part of K, pixels in out's order), channels = out->channels, a multiple of 8; out is
 * half (fast precision) and may be a channel slice of a wider buffer. */
bd_status bd_gpu_splitk_reduce (const float *partial, uint32_t splits, const float *bias, bool relu,
                                const bd_gpu_view *out, cudaStream_t stream, bd_error *error);
