/* SPDX-License-Identifier: Apache-2.0 */
/* The main-subject pass on a mask the device has just made: the grid of blocks (each block's
 * most opaque pixel and its count of pixels from 128 up) is made where the mask lies and only
 * the grid comes down (0.6 MB at 1 MP instead of the mask's 1 MB, then its 1 MB up again for
 * the decisive pass); the regions and the growth of faint blocks, serial steps on a grid of
 * at most 512 x 512, stay the host's (core/image/keep-subject.c), and the blocks of dropped
 * regions are cleared on the device. */
#include "keep-subject.cuh"

extern "C" {
#include "image/image.h"
}

namespace {

/* A thread a cell of the grid, its border included (written empty). */
__global__ void
grid_fill_kernel (const uint8_t *alpha, uint32_t width, uint32_t height, uint32_t w, uint32_t h, uint32_t b,
                  uint8_t *max, uint32_t *core)
{
	uint32_t gx = blockIdx.x * blockDim.x + threadIdx.x, gy = blockIdx.y;
	if (gx >= w + 2)
		return;
	size_t cell = (size_t) gy * (w + 2) + gx;
	uint8_t top = 0;
	uint32_t count = 0;
	if (gx >= 1 && gx <= w && gy >= 1 && gy <= h) {
		uint32_t x0 = (gx - 1) * b, y0 = (gy - 1) * b;
		uint32_t x1 = min (x0 + b, width), y1 = min (y0 + b, height);
		for (uint32_t y = y0; y < y1; y++) {
			const uint8_t *row = alpha + (size_t) y * width;
			for (uint32_t x = x0; x < x1; x++) {
				uint8_t v = row[x];
				top = v > top ? v : top;
				count += v >> 7;
			}
		}
	}
	max[cell] = top;
	core[cell] = count;
}

/* A thread a pixel: cleared where its block goes. */
__global__ void
clear_kernel (uint8_t *alpha, uint32_t width, uint32_t height, uint32_t w, uint32_t b, const uint8_t *drop)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x < width && drop[(size_t) (y / b) * w + x / b])
		alpha[(size_t) y * width + x] = 0;
}

} // namespace

bd_status
bd_gpu_keep_main_subject (bd_gpu_subject_buffers *b, bd_scratch *scratch, cudaStream_t stream, uint8_t *alpha,
                          uint32_t width, uint32_t height, float min_fraction, float min_height, bd_error *error)
{
	uint32_t w, h, side;
	bd_subject_grid_size (width, height, &w, &h, &side);
	size_t cells = (size_t) (w + 2) * (h + 2), blocks = (size_t) w * h;
	bd_status st = bd_gpu_grow ((void **) &b->max, &b->max_bytes, cells, error);
	if (st == BD_OK)
		st = bd_gpu_grow ((void **) &b->core, &b->core_bytes, cells * sizeof (uint32_t), error);
	if (st == BD_OK)
		st = bd_gpu_grow ((void **) &b->drop, &b->drop_bytes, blocks, error);
	/* Page-locked: the counts, the maxima, the blocks to clear. */
	if (st == BD_OK)
		st = bd_gpu_grow_host ((void **) &b->host, &b->host_bytes, cells * (sizeof (uint32_t) + 1) + blocks, error);
	if (st != BD_OK)
		return st;
	uint32_t *core = (uint32_t *) b->host;
	uint8_t *max = b->host + cells * sizeof (uint32_t), *drop = max + cells;

	grid_fill_kernel<<<dim3 (bd_div_up (w + 2, 128), h + 2), 128, 0, stream>>> (alpha, width, height, w, h, side,
	                                                                           b->max, b->core);
	BD_CUDA_CHECK_LAUNCH ();
	BD_CUDA_CHECK (cudaMemcpyAsync (max, b->max, cells, cudaMemcpyDeviceToHost, stream));
	BD_CUDA_CHECK (cudaMemcpyAsync (core, b->core, cells * sizeof (uint32_t), cudaMemcpyDeviceToHost, stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (stream));
	bool any = false;
	st = bd_subject_blocks_to_drop (scratch, max, core, width, height, min_fraction, min_height, drop, &any, error);
	if (st != BD_OK || !any)
		return st;
	BD_CUDA_CHECK (cudaMemcpyAsync (b->drop, drop, blocks, cudaMemcpyHostToDevice, stream));
	clear_kernel<<<dim3 (bd_div_up (width, 128), height), 128, 0, stream>>> (alpha, width, height, w, side, b->drop);
	BD_CUDA_CHECK_LAUNCH ();
	/* The next call writes @drop's page-locked copy only after its own wait, so after this
	 * copy up has been made. */
	return BD_OK;
}

void
bd_gpu_subject_free (bd_gpu_subject_buffers *b)
{
	cudaFree (b->max);
	cudaFree (b->drop);
	cudaFree (b->core);
	cudaFreeHost (b->host);
	*b = {};
}
