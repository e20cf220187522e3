/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* 2x2 max-pool, stride 2, of @in (height x width) into @out (half the size); same channels. */
bd_status bd_gpu_maxpool2x2 (const bd_gpu_view *in, const bd_gpu_view *out, bd_precision precision,
                             cudaStream_t stream, bd_error *error);
