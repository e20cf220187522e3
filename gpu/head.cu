/* SPDX-License-Identifier: Apache-2.0 */
/* The 1x1 head + sigmoid: one thread per pixel, reading its channels 16 bytes at a time (the
 * storage channels are a multiple of 16, the padding zeros), the weights from shared memory. */
#include "head.cuh"

namespace {

constexpr int THREADS = 256, MAX_CHANNELS = 4096;

template <typename T>
__global__ void __launch_bounds__ (THREADS)
head_kernel (const bd_gpu_view in, uint32_t channels, const float *weight, float bias, float *out)
{
	__shared__ float w[MAX_CHANNELS];
	for (uint32_t c = threadIdx.x; c < in.channels; c += THREADS)
		w[c] = c < channels ? weight[c] : 0.0f;
	__syncthreads ();
	size_t i = (size_t) blockIdx.x * THREADS + threadIdx.x;
	if (i >= (size_t) in.height * in.width)
		return;
	constexpr int VEC = 16 / sizeof (T);
	const uint4 *px = (const uint4 *) ((const T *) in.data + i * in.pixel_stride);
	float s = bias;
	for (uint32_t c = 0; c < in.channels; c += VEC) {
		uint4 v = px[c / VEC];
		const T *e = (const T *) &v;
#pragma unroll
		for (int k = 0; k < VEC; k++)
			s += (float) e[k] * w[c + k];
	}
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
	if (in->channels > MAX_CHANNELS || in->channels % 16 || in->pixel_stride % 16 || channels > in->channels)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_gpu_head_sigmoid: bad shape");
	if (precision == BD_PRECISION_FAST)
		head_kernel<__half><<<bd_div_up (n, 256), 256, 0, stream>>> (*in, channels, weight, bias, probabilities);
	else
		head_kernel<float><<<bd_div_up (n, 256), 256, 0, stream>>> (*in, channels, weight, bias, probabilities);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
