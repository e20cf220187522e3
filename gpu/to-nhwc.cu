/* Planar CHW floats to padded NHWC, one thread per pixel. */
#include "to-nhwc.cuh"

namespace {

template <typename T>
__global__ void
to_nhwc_kernel (const float *chw, const bd_gpu_view out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x, n = (size_t) out.height * out.width;
	if (i >= n)
		return;
	T *px = (T *) out.data + i * out.pixel_stride;
	for (uint32_t c = 0; c < out.channels; c++)
		px[c] = (T) (c < 3 ? chw[c * n + i] : 0.0f);
}

} // namespace

bd_status
bd_gpu_to_nhwc (const float *chw, const bd_gpu_view *out, bd_precision precision, cudaStream_t stream,
                bd_error *error)
{
	size_t n = (size_t) out->height * out->width;
	if (n == 0)
		return BD_OK;
	if (precision == BD_PRECISION_FAST)
		to_nhwc_kernel<__half><<<bd_div_up (n, 256), 256, 0, stream>>> (chw, *out);
	else
		to_nhwc_kernel<float><<<bd_div_up (n, 256), 256, 0, stream>>> (chw, *out);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
