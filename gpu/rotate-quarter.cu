/* SPDX-License-Identifier: Apache-2.0 */
/* A quarter turn on the device, for a photo lying down run turned (core/upright.c) and its
 * mask turned back: one thread an output pixel, consecutive threads along an output row, so
 * that the writes coalesce; the reads walk a column of the source, which a 1 MP photo's
 * three megabytes leave in L2. */
#include "rotate-quarter.cuh"

namespace {

__global__ void
rotate_quarter_kernel (const uint8_t *src, uint32_t width, uint32_t height, size_t src_pitch, uint32_t channels,
                       bool clockwise, uint8_t *dst, size_t dst_pitch)
{
	/* Output row i (of width), column j (of height): turned to the left, source column
	 * width - 1 - i read downwards; to the right, source column i read upwards. */
	uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= height)
		return;
	for (uint32_t i = blockIdx.y; i < width; i += gridDim.y) {   /* the grid is at most 65,535 rows */
		uint32_t x = clockwise ? i : width - 1 - i, y = clockwise ? height - 1 - j : j;
		const uint8_t *from = src + (size_t) y * src_pitch + (size_t) x * channels;
		uint8_t *to = dst + (size_t) i * dst_pitch + (size_t) j * channels;
		for (uint32_t k = 0; k < channels; k++)
			to[k] = from[k];
	}
}

} // namespace

bd_status
bd_gpu_rotate_quarter (const uint8_t *src, uint32_t width, uint32_t height, size_t src_pitch, uint32_t channels,
                       bool clockwise, uint8_t *dst, size_t dst_pitch, cudaStream_t stream, bd_error *error)
{
	if (width == 0 || height == 0)
		return BD_OK;
	dim3 grid (bd_div_up (height, 128), width < 65535 ? width : 65535);
	rotate_quarter_kernel<<<grid, 128, 0, stream>>> (src, width, height, src_pitch, channels, clockwise, dst, dst_pitch);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
