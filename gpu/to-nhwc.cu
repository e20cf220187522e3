/* SPDX-License-Identifier: Apache-2.0 */
/* Planar CHW floats to padded NHWC, one thread per pixel: three coalesced reads, and one
 * write of the pixel's first 4 channels (8 bytes in half, 16 in float). The padding channels
 * are not written: the canvas buffer is zeroed once when it is made, and nothing else writes
 * there (the letterbox kernel, its other writer, keeps to channels 0..2 as well). Writing all
 * 16 took 9 us of a 512x512 pass on an H200. */
#include "to-nhwc.cuh"

namespace {

template <typename T, typename V>   /* V: 4 T's (uint2 for half, uint4 for float) */
__global__ void
to_nhwc_kernel (const float *chw, const bd_gpu_view out)
{
	bd_allow_next_kernel ();   /* the first layer may set up its weights meanwhile */
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x, n = (size_t) out.height * out.width;
	if (i >= n)
		return;
	__align__ (16) T v[4] = { (T) chw[i], (T) chw[n + i], (T) chw[2 * n + i], (T) 0.0f };
	*(V *) ((T *) out.data + i * out.pixel_stride) = *(const V *) v;
}

} // namespace

bd_status
bd_gpu_to_nhwc (const float *chw, const bd_gpu_view *out, bd_precision precision, cudaStream_t stream,
                bd_error *error)
{
	size_t n = (size_t) out->height * out->width;
	if (n == 0)
		return BD_OK;
	if (out->channels < 16 || out->channels % 16 || out->pixel_stride % 16)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_gpu_to_nhwc: bad shape");
	if (precision == BD_PRECISION_FAST)
		to_nhwc_kernel<__half, uint2><<<bd_div_up (n, 256), 256, 0, stream>>> (chw, *out);
	else
		to_nhwc_kernel<float, uint4><<<bd_div_up (n, 256), 256, 0, stream>>> (chw, *out);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
