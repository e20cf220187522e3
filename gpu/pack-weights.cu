/* SPDX-License-Identifier: Apache-2.0 */
/* A convolution's weights into the layouts the kernels read, on the device. Packing on the host
 * (a scatter, a half conversion and a K-major copy per element, in software) took about 100 ms
 * of every CUDA session's start for the shipped model on an H200's host; the model's weights
 * now go up as its file holds them (halves for the shipped one) and one thread an element
 * widens and writes every layout. */
#include "pack-weights.cuh"

namespace {

/* The file's value as a float: exact for a half. */
__device__ inline float widen (float v) { return v; }
__device__ inline float widen (__half v) { return __half2float (v); }

template <typename T, typename S>
__global__ void
pack_kernel (const bd_gpu_packed_conv p, const S *w, size_t s_co, size_t s_ci, size_t s_tap,
             const uint32_t *in_map)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) p.cout * p.cin * p.taps)
		return;
	uint32_t t = (uint32_t) (i % p.taps), ci = (uint32_t) (i / p.taps % p.cin), co = (uint32_t) (i / p.taps / p.cin);
	float v = widen (w[co * s_co + ci * s_ci + t * s_tap]);
	size_t cs = in_map ? in_map[ci] : ci;
	size_t K = (size_t) p.taps * p.cin_storage, k = (size_t) t * p.cin_storage + cs;
	size_t at = p.transposed ? ((size_t) t * p.cout_storage + co) * p.cin_storage + cs : co * K + k;
	((T *) p.weights)[k * p.cout_storage + co] = (T) v;
	((T *) p.weights_k)[at] = (T) v;
	if (p.weights_k_small) {
		/* tf32 keeps the top 10 bits of the mantissa: exact adds the rest as a second product. */
		float big = __uint_as_float (__float_as_uint (v) & 0xffffe000u);
		p.weights_k_small[at] = v - big;
	}
}

} // namespace

bd_status
bd_gpu_pack_weights (const bd_gpu_packed_conv *p, const void *w, bool half, size_t s_co, size_t s_ci, size_t s_tap,
                     const uint32_t *in_map, bd_precision precision, cudaStream_t stream, bd_error *error)
{
	size_t n = (size_t) p->taps * p->cin_storage * p->cout_storage, el = bd_precision_size (precision);
	BD_CUDA_CHECK (cudaMemsetAsync (p->weights, 0, n * el, stream));
	BD_CUDA_CHECK (cudaMemsetAsync (p->weights_k, 0, n * el, stream));
	if (p->weights_k_small)
		BD_CUDA_CHECK (cudaMemsetAsync (p->weights_k_small, 0, n * sizeof (float), stream));
	size_t count = (size_t) p->cout * p->cin * p->taps;
	if (count == 0)
		return BD_OK;
	unsigned blocks = bd_div_up (count, 256);
	const __half *h = (const __half *) w;
	const float *f = (const float *) w;
	if (precision == BD_PRECISION_FAST && half)
		pack_kernel<__half><<<blocks, 256, 0, stream>>> (*p, h, s_co, s_ci, s_tap, in_map);
	else if (precision == BD_PRECISION_FAST)
		pack_kernel<__half><<<blocks, 256, 0, stream>>> (*p, f, s_co, s_ci, s_tap, in_map);
	else if (half)
		pack_kernel<float><<<blocks, 256, 0, stream>>> (*p, h, s_co, s_ci, s_tap, in_map);
	else
		pack_kernel<float><<<blocks, 256, 0, stream>>> (*p, f, s_co, s_ci, s_tap, in_map);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
