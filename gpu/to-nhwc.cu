/* Planar CHW floats to padded NHWC, one thread per pixel: three coalesced reads, the
 * pixel's 16 channels written 16 bytes at a time. */
#include "to-nhwc.cuh"

namespace {

template <typename T>
__global__ void
to_nhwc_kernel (const float *chw, const bd_gpu_view out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x, n = (size_t) out.height * out.width;
	if (i >= n)
		return;
	__align__ (16) T v[16];
	for (int c = 0; c < 16; c++)
		v[c] = (T) (c < 3 ? chw[c * n + i] : 0.0f);
	uint4 *px = (uint4 *) ((T *) out.data + i * out.pixel_stride);
	for (uint32_t c = 0; c < out.channels; c += 16 / sizeof (T))
		px[c * sizeof (T) / 16] = c < 16 ? ((const uint4 *) v)[c * sizeof (T) / 16] : make_uint4 (0, 0, 0, 0);
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
		to_nhwc_kernel<__half><<<bd_div_up (n, 256), 256, 0, stream>>> (chw, *out);
	else
		to_nhwc_kernel<float><<<bd_div_up (n, 256), 256, 0, stream>>> (chw, *out);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
