/* SPDX-License-Identifier: Apache-2.0 */
/* The decisive pass on the device: a pixel whose window of side 2 radius + 1 (clipped to the
 * mask) holds only person or only background is set to 255 or 0; one near an edge keeps its
 * alpha (core/image/decide-alpha.c says why). The window splits into its rows: a first kernel
 * gives each pixel its row window's verdict (any person pixel, only person pixels), a second
 * joins those down the column window. Whole numbers throughout, so the bytes are the host's.
 * On the host this pass was most of a video frame's time on the thread that orders frames. */
#include "decide-alpha.cuh"

namespace {

__global__ void
row_windows_kernel (const uint8_t *mask, uint8_t *rows, uint32_t width, uint32_t height, uint32_t radius)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= width)
		return;
	const uint8_t *row = mask + (size_t) y * width;
	uint32_t lo = x > radius ? x - radius : 0, hi = x + radius < width - 1 ? x + radius : width - 1;
	bool any = false, all = true;
	for (uint32_t u = lo; u <= hi; u++) {
		bool person = row[u] >= 128;
		any |= person;
		all &= person;
	}
	rows[(size_t) y * width + x] = (uint8_t) (any | (all << 1));
}

__global__ void
decide_kernel (uint8_t *mask, const uint8_t *rows, uint32_t width, uint32_t height, uint32_t radius)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= width)
		return;
	uint32_t lo = y > radius ? y - radius : 0, hi = y + radius < height - 1 ? y + radius : height - 1;
	uint8_t any = 0, all = 2;
	for (uint32_t v = lo; v <= hi; v++) {
		uint8_t r = rows[(size_t) v * width + x];
		any |= r & 1;
		all &= r;
	}
	uint8_t *p = mask + (size_t) y * width + x;
	if (!(any && all == 0))   /* not near an edge: one side only */
		*p = *p >= 128 ? 255 : 0;
}

} // namespace

bd_status
bd_gpu_decide_on_device (bd_gpu_decide_buffers *b, cudaStream_t stream, uint8_t *mask, uint32_t width, uint32_t height,
                         uint32_t radius, bd_error *error)
{
	bd_status st = bd_gpu_grow ((void **) &b->rows, &b->rows_bytes, (size_t) width * height, error);
	if (st != BD_OK)
		return st;
	dim3 grid (bd_div_up (width, 128), height);
	row_windows_kernel<<<grid, 128, 0, stream>>> (mask, b->rows, width, height, radius);
	BD_CUDA_CHECK_LAUNCH ();
	decide_kernel<<<grid, 128, 0, stream>>> (mask, b->rows, width, height, radius);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}

bd_status
bd_gpu_decide (bd_gpu_decide_buffers *b, cudaStream_t stream, const uint8_t *alpha, size_t alpha_stride, uint8_t *out,
               size_t out_stride, uint32_t width, uint32_t height, uint32_t radius, bd_error *error)
{
	bd_status st = bd_gpu_grow ((void **) &b->mask, &b->mask_bytes, (size_t) width * height, error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (bd_gpu_copy_rows (b->mask, width, alpha, alpha_stride, width, height, cudaMemcpyHostToDevice,
	                                 stream));
	if ((st = bd_gpu_decide_on_device (b, stream, b->mask, width, height, radius, error)) != BD_OK)
		return st;
	BD_CUDA_CHECK (bd_gpu_copy_rows (out, out_stride, b->mask, width, width, height, cudaMemcpyDeviceToHost, stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (stream));
	return BD_OK;
}

void
bd_gpu_decide_free (bd_gpu_decide_buffers *b)
{
	cudaFree (b->mask);
	cudaFree (b->rows);
	*b = {};
}
