/* SPDX-License-Identifier: Apache-2.0 */
/* Mirror averaging on the device, one thread per pixel of the photo, with the CPU's
 * arithmetic (core/image/mirror-sample.h). It writes only @prob and reads only @mirrored, so
 * no pixel's read races another's write. */
#include "mirror-average.cuh"

#include "image/mirror-sample.h"

namespace {

__global__ void
mirror_average_kernel (float *prob, const bd_letterbox lb, const float *mirrored, const bd_letterbox lb2)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= lb.sw)
		return;
	float *p = prob + (size_t) (y + lb.oy) * lb.pw + lb.ox + x;
	*p = 0.5f * (*p + bd_mirror_sample (mirrored, &lb, &lb2, x, y));
}

} // namespace

bd_status
bd_gpu_mirror_average (float *prob, const bd_letterbox &lb, const float *mirrored, const bd_letterbox &lb2,
                       cudaStream_t stream, bd_error *error)
{
	if (lb.sw == 0 || lb.sh == 0)
		return BD_OK;
	mirror_average_kernel<<<dim3 (bd_div_up (lb.sw, 128), lb.sh), 128, 0, stream>>> (prob, lb, mirrored, lb2);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
