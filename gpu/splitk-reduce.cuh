/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* The end of a convolution whose K was split over blocks: out = act(sum of the @splits partial
 * sums + bias), ReLU if @relu. @partial holds @splits slabs of pixels x channels floats (one
 * per part of K, pixels in out's order), channels = out->channels, a multiple of 8; out is
 * half (fast precision) and may be a channel slice of a wider buffer. @launch_early as in
 * bd_launch_early. */
bd_status bd_gpu_splitk_reduce (const float *partial, uint32_t splits, const float *bias, bool relu,
                                const bd_gpu_view *out, bool launch_early, cudaStream_t stream, bd_error *error);

/* Into how many parts (2 to 8; 1: none) the Hopper kernels split the K of a layer of @tiles
 * tiles of 128 x 128 and @steps steps of 64: only layers of at most 66 tiles (half the
 * multiprocessors of an H100/H200; BACKDROP_GPU_SPLITK=N moves the limit, 0 never splits),
 * parts of at least 8 steps, and parts x tiles within two blocks on each of 132
 * multiprocessors, so the partial sums fit BD_GPU_SPLITK_FLOATS. */
uint32_t bd_gpu_splitk_parts (size_t tiles, size_t steps);
