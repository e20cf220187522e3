/* SPDX-License-Identifier: Apache-2.0 */
/* 2x2 max-pool on NHWC: one thread per output pixel and group of 8 channels (16 bytes in fp16). */
#include "maxpool2x2.cuh"

namespace {

template <typename T>
__device__ inline T vmax (T a, T b) { return a > b ? a : b; }

template <typename T>
__global__ void
maxpool2x2_kernel (const bd_gpu_view in, const bd_gpu_view out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t groups = out.channels / 8;
	size_t total = (size_t) out.height * out.width * groups;
	if (i >= total)
		return;
	uint32_t g = (uint32_t) (i % groups);
	size_t pix = i / groups;
	uint32_t x = (uint32_t) (pix % out.width), y = (uint32_t) (pix / out.width);
	const T *src = (const T *) in.data + ((size_t) (2 * y) * in.width + 2 * x) * in.pixel_stride + g * 8;
	size_t right = in.pixel_stride, down = (size_t) in.width * in.pixel_stride;
	T *dst = (T *) out.data + pix * out.pixel_stride + g * 8;
	for (int k = 0; k < 8; k++)
		dst[k] = vmax (vmax (src[k], src[k + right]), vmax (src[k + down], src[k + down + right]));
}

} // namespace

bd_status
bd_gpu_maxpool2x2 (const bd_gpu_view *in, const bd_gpu_view *out, bd_precision precision,
                   cudaStream_t stream, bd_error *error)
{
	if (in->channels != out->channels || out->channels % 8 || in->height != 2 * out->height ||
	    in->width != 2 * out->width)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_gpu_maxpool2x2: bad shape");
	size_t total = (size_t) out->height * out->width * (out->channels / 8);
	if (total == 0)
		return BD_OK;
	if (precision == BD_PRECISION_FAST)
		maxpool2x2_kernel<__half><<<bd_div_up (total, 256), 256, 0, stream>>> (*in, *out);
	else
		maxpool2x2_kernel<float><<<bd_div_up (total, 256), 256, 0, stream>>> (*in, *out);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
