/* SPDX-License-Identifier: Apache-2.0 */
/* A pass's second view averaged into it on the device, one thread per pixel of the photo:
 * the mirror pass (mirror-average.cu) or the run turned's quick looks (look-average.cu). */
#pragma once

#include "cuda-common.cuh"

/* Pixel (x, y) of the photo on @prob (canvas @lb) becomes the mean of itself and of
 * @sample (x, y, itself). @sample reads only what no thread writes. */
template <typename Sample>
__global__ void
average_views_kernel (float *prob, const bd_letterbox lb, Sample sample)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= lb.sw)
		return;
	float *p = prob + (size_t) (y + lb.oy) * lb.pw + lb.ox + x;
	*p = 0.5f * (*p + sample (x, y, *p));
}

template <typename Sample>
static bd_status
bd_gpu_average_views (float *prob, const bd_letterbox &lb, Sample sample, cudaStream_t stream, bd_error *error)
{
	if (lb.sw == 0 || lb.sh == 0)
		return BD_OK;
	average_views_kernel<<<dim3 (bd_div_up (lb.sw, 128), lb.sh), 128, 0, stream>>> (prob, lb, sample);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
