#pragma once

#include "cuda-common.cuh"

/* sum[y][x] = (sum[y][x] + mirrored[y][width - 1 - x]) / 2: the network's output on the
 * canvas averaged with its output on the mirrored canvas. */
bd_status bd_gpu_mirror_average (float *sum, const float *mirrored, uint32_t width, uint32_t height,
                                 cudaStream_t stream, bd_error *error);
