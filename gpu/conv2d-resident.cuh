/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "conv2d.cuh"

/* The resident-weights kernels (conv2d-resident.cu), for the layers conv2d-tma.cu's rules give
 * them, fast precision on sm_90a: a 3x3 layer of 64 or 128 input channels and up to 64 output
 * channels, or of 64 inputs and up to 128 outputs; a transposed convolution (out_step 2) of
 * 64 or 128 inputs and up to 64 outputs. @pooled and @headed as bd_gpu_conv2d_tma's. */
bd_status bd_gpu_conv2d_resident (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed,
                                  bd_error *error);

/* Their shared memory on the current GPU, @device, and the switches they read. */
bd_status bd_gpu_conv2d_resident_grant (int device, bd_error *error);
