/* SPDX-License-Identifier: Apache-2.0 */
/* Sums the partial products of a split-K convolution, adds the bias, applies ReLU and writes
 * half: one thread per pixel and 8 channels (two 16-byte reads a part, one 16-byte write). */
#include "splitk-reduce.cuh"
#include "gpu-switches.cuh"

#include <stdlib.h>

namespace {

__global__ void
splitk_reduce_kernel (const float *partial, uint32_t splits, const float *bias, bool relu,
                      const bd_gpu_view out)
{
	bd_allow_next_kernel ();
	bd_wait_for_earlier_kernels ();
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t groups = out.channels / 8;
	size_t pixels = (size_t) out.height * out.width;
	if (i >= pixels * groups)
		return;
	size_t pix = i / groups;
	uint32_t c = (uint32_t) (i % groups) * 8;
	float v[8];
	for (int k = 0; k < 8; k++)
		v[k] = bias[c + k];
	for (uint32_t z = 0; z < splits; z++) {
		const float4 *src = (const float4 *) (partial + (z * pixels + pix) * out.channels + c);
		float4 a = src[0], b = src[1];
		v[0] += a.x, v[1] += a.y, v[2] += a.z, v[3] += a.w;
		v[4] += b.x, v[5] += b.y, v[6] += b.z, v[7] += b.w;
	}
	__align__ (16) __half h[8];
	for (int k = 0; k < 8; k++)
		h[k] = __float2half_rn (relu ? fmaxf (v[k], 0.0f) : v[k]);
	*(uint4 *) ((__half *) out.data + pix * out.pixel_stride + c) = *(const uint4 *) h;
}

} // namespace

bd_status
bd_gpu_splitk_reduce (const float *partial, uint32_t splits, const float *bias, bool relu,
                      const bd_gpu_view *out, bool launch_early, cudaStream_t stream, bd_error *error)
{
	if (out->channels % 8 || out->pixel_stride % 8 || splits == 0)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_gpu_splitk_reduce: bad shape");
	size_t total = (size_t) out->height * out->width * (out->channels / 8);
	if (total == 0)
		return BD_OK;
	BD_CUDA_CHECK (bd_launch_early (launch_early, splitk_reduce_kernel, dim3 (bd_div_up (total, 256)), dim3 (256), 0,
	                                stream, partial, splits, bias, relu, *out));
	return BD_OK;
}

uint32_t
bd_gpu_splitk_parts (size_t tiles, size_t steps)
{
	if (tiles == 0 || (long) tiles > bd_gpu_switches_get ().splitk)
		return 1;
	size_t parts = 264 / tiles;
	parts = parts < steps / 8 ? parts : steps / 8;
	parts = parts < 8 ? parts : 8;
	return parts >= 2 ? (uint32_t) parts : 1;
}
