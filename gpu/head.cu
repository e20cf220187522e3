/* The 1x1 head + sigmoid: one thread per pixel, the weights in registers' reach (constant-size loop). */
#include "head.cuh"

namespace {

template <typename T>
__global__ void
head_kernel (const bd_gpu_view in, uint32_t channels, const float *weight, float bias, float *out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) in.height * in.width)
		return;
	const T *px = (const T *) in.data + i * in.pixel_stride;
	float s = bias;
	for (uint32_t c = 0; c < channels; c++)
		s += (float) px[c] * weight[c];
	out[i] = 1.0f / (1.0f + __expf (-s));
}

} // namespace

bd_status
bd_gpu_head_sigmoid (const bd_gpu_view *in, uint32_t channels, const float *weight, float bias,
                     float *probabilities, bd_precision precision, cudaStream_t stream, bd_error *error)
{
	size_t n = (size_t) in->height * in->width;
	if (n == 0)
		return BD_OK;
	if (precision == BD_PRECISION_FAST)
		head_kernel<__half><<<bd_div_up (n, 256), 256, 0, stream>>> (*in, channels, weight, bias, probabilities);
	else
		head_kernel<float><<<bd_div_up (n, 256), 256, 0, stream>>> (*in, channels, weight, bias, probabilities);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
