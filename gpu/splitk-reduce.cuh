#pragma once

#include "cuda-common.cuh"

/* The end of a convolution whose K was split over blocks: out = act(sum of the @splits partial
 * sums + bias), ReLU if @relu. @partial holds @splits slabs of pixels x channels floats (one
 * per part of K, pixels in out's order), channels = out->channels, a multiple of 8; out is
 * half (fast precision) and may be a channel slice of a wider buffer. */
bd_status bd_gpu_splitk_reduce (const float *partial, uint32_t splits, const float *bias, bool relu,
                                const bd_gpu_view *out, cudaStream_t stream, bd_error *error);

/* How many parts to split the K of a fast convolution with `tiles` tiles of 128 x 128 into
 * (conv2d-hopper.cu and conv2d-tma.cu ask), or 0 for none. Too few tiles to fill the GPU
 * (the deep levels of one image: 64 tiles at 32 x 32 x 1024, 24 for the shipped model's 32 x
 * 22 x 512) leave multiprocessors idle through a long K: at most 66 tiles
 * (BACKDROP_GPU_SPLITK=N moves the limit, 0 turns it off) split into parts of at least 8
 * steps of 64 channels, as many as two blocks a multiprocessor hold (splits x tiles <= 264,
 * which keeps the partial sums within the plan's scratch, BD_GPU_SPLITK_FLOATS). */
unsigned bd_gpu_splitk_parts (size_t tiles, size_t k_steps);
