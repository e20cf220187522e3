/* SPDX-License-Identifier: Apache-2.0 */
/* The network's first convolution in fast precision: the photo's layer, whose input has 16
 * stored channels of which at most 4 hold data (3 colours). The general kernels would
 * multiply all 16 at each of the 9 taps, 13 of them zeros, in 9 steps through shared memory.
 * Here a block gathers, for each of its 128 pixels, the 4 channels of the 9 neighbours into
 * one row of K = 36 (padded to 48) and multiplies that by the weights (the same 36 rows of
 * them, loaded once per block) in three tensor-core steps. (31 us for 512x512 x 64 outputs
 * on an H200, against 63 for the general kernel; writing the 33.5 MB output takes about 9.)
 *
 * Blocks loop over the tiles (as many blocks as fit at once), 8 warps of 16 pixels x CO
 * output channels each, the next tile's gather in flight during this one's multiply; the
 * epilogue adds the bias, applies ReLU and stores 16 bytes a lane. */
#include "conv2d.cuh"
#include "gpu-switches.cuh"

#include <mma.h>
#include <stdlib.h>
#include <string.h>

using namespace nvcuda;

namespace {

constexpr int THREADS = 256, PIX = 128, USED = 4, TAPS = 9;
constexpr int KP = 48;                  /* 9 taps x 4 channels = 36, padded to 3 steps of 16 */

template <int CO>   /* output channels a block: 16, 32 or 64 */
__global__ void __launch_bounds__ (THREADS)
conv2d_photo_kernel (const bd_gpu_conv2d_params p, int tiles)
{
	constexpr int APITCH = KP + 8, BPITCH = CO + 8, SPITCH = 16 + 4;
	__shared__ __align__ (32) __half As[PIX][APITCH];
	__shared__ __align__ (32) __half Bs[KP][BPITCH];
	__shared__ __align__ (32) float stage[THREADS / 32][16][SPITCH];
	__shared__ float bias[CO];

	const int t = threadIdx.x, warp = t / 32, lane = t % 32;
	const int n0 = blockIdx.y * CO, cout = (int) p.out.channels, cin = (int) p.in.channels;
	const int used = p.in_used ? (int) p.in_used : USED;

	/* Weights and bias do not depend on earlier kernels: set up before waiting for them.
	 * Row k of B is tap k / 4, channel k % 4 (zero beyond the channels that hold data). */
	bd_allow_next_kernel ();
	for (int i = t; i < KP * CO; i += THREADS) {
		int k = i / CO, j = i % CO, tap = k / USED, c = k % USED, n = n0 + j;
		Bs[k][j] = tap < TAPS && c < used && n < cout
			? ((const __half *) p.weights)[((size_t) tap * cin + c) * cout + n] : __float2half (0.0f);
	}
	for (int i = t; i < CO; i += THREADS)
		bias[i] = n0 + i < cout ? p.bias[n0 + i] : 0.0f;
	for (int i = t; i < PIX * (KP - TAPS * USED); i += THREADS)   /* K's padding stays zero */
		As[i / (KP - TAPS * USED)][TAPS * USED + i % (KP - TAPS * USED)] = __float2half (0.0f);
	bd_wait_for_earlier_kernels ();

	const int M = (int) (p.in.height * p.in.width), W = (int) p.in.width, H = bd_conv2d_image_rows (p);
	const __half *in = (const __half *) p.in.data;
	/* Thread t gathers pixel t % 128 of a tile at taps t / 128, + 2, + 4 ...: 8 bytes each
	 * (the 4 channels), consecutive threads on consecutive pixels; the neighbouring taps of a
	 * pixel come from L1. A tile's loads are issued before the previous tile's multiply and
	 * stores, so they are in flight meanwhile. */
	constexpr int GATHERS = (TAPS + 1) / 2;
	const int r = t % PIX, first_tap = t / PIX;
	auto gather = [&] (int tile, uint2 (&v)[GATHERS]) {
		const int m = tile * PIX + r;
		const bool live = tile < tiles && m < M;
		const int y = live ? m / W % H : -2, x = live ? m % W : -2;   /* -2: every tap outside */
#pragma unroll
		for (int i = 0; i < GATHERS; i++) {
			const int tap = first_tap + 2 * i, dy = tap / 3 - 1, dx = tap % 3 - 1;
			v[i] = make_uint2 (0, 0);
			if (tap < TAPS && y + dy >= 0 && y + dy < H && x + dx >= 0 && x + dx < W)
				v[i] = __ldg ((const uint2 *) (in + (size_t) (m + dy * W + dx) * p.in.pixel_stride));
		}
	};
	uint2 next[GATHERS];
	gather (blockIdx.x, next);
	for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
		const int m0 = tile * PIX;
#pragma unroll
		for (int i = 0; i < GATHERS; i++)
			if (first_tap + 2 * i < TAPS)
				*(uint2 *) &As[r][(first_tap + 2 * i) * USED] = next[i];
		__syncthreads ();
		gather (tile + gridDim.x, next);

		/* Warp w: pixels w * 16 .. + 15, all CO channels. */
		wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[CO / 16];
#pragma unroll
		for (int j = 0; j < CO / 16; j++)
			wmma::fill_fragment (acc[j], 0.0f);
#pragma unroll
		for (int k = 0; k < KP; k += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
			wmma::load_matrix_sync (fa, &As[warp * 16][k], APITCH);
#pragma unroll
			for (int j = 0; j < CO / 16; j++) {
				wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
				wmma::load_matrix_sync (fb, &Bs[k][j * 16], BPITCH);
				wmma::mma_sync (acc[j], fa, fb, acc[j]);
			}
		}

		/* One 16 x 16 fragment at a time through the warp's staging tile: lane l writes 8
		 * channels of pixel l / 2. */
		const int row = lane / 2, cc = (lane % 2) * 8, m = m0 + warp * 16 + row;
#pragma unroll
		for (int j = 0; j < CO / 16; j++) {
			wmma::store_matrix_sync (&stage[warp][0][0], acc[j], SPITCH, wmma::mem_row_major);
			__syncwarp ();
			const int n = n0 + j * 16 + cc;
			if (m < M && n < cout) {
				__align__ (16) __half h[8];
#pragma unroll
				for (int k = 0; k < 8; k++) {
					float v = stage[warp][row][cc + k] + bias[j * 16 + cc + k];
					h[k] = __float2half_rn (p.relu ? fmaxf (v, 0.0f) : v);
				}
				*(uint4 *) ((__half *) p.out.data + (size_t) m * p.out.pixel_stride + n) = *(const uint4 *) h;
			}
			__syncwarp ();
		}
		__syncthreads ();   /* As is filled again for the next tile */
	}
}

int multiprocessors;

template <int CO>
bd_status
launch (const bd_gpu_conv2d_params *p, cudaStream_t stream, bd_error *error)
{
	const int tiles = (int) bd_div_up ((size_t) p->in.height * p->in.width, PIX);
	static int per_sm;   /* as many blocks as fit at once, no more: each loops over its tiles */
	if (!per_sm)
		BD_CUDA_CHECK (cudaOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, conv2d_photo_kernel<CO>, THREADS, 0));
	const int per_wave = multiprocessors * (per_sm > 0 ? per_sm : 1);
	dim3 grid ((unsigned) (tiles < per_wave ? tiles : per_wave), bd_div_up (p->out.channels, CO));
	BD_CUDA_CHECK (bd_launch_early (p->launch_early, conv2d_photo_kernel<CO>, grid, dim3 (THREADS), 0, stream, *p,
	                                tiles));
	return BD_OK;
}

} // namespace

bool
bd_gpu_conv2d_photo_fits (const bd_gpu_conv2d_params *p, bd_precision precision)
{
	/* BACKDROP_GPU_NO_PHOTO_CONV=1 leaves the layer to the general kernels, to compare. */
	return !bd_gpu_switches_get ().no_photo_conv && precision == BD_PRECISION_FAST && p->in_used && p->in_used <= USED && p->taps == 9 &&
	       p->out_step == 1 && p->splits <= 1 && p->in.channels >= USED && p->in.pixel_stride % 4 == 0 &&
	       p->out.pixel_stride % 8 == 0;
}

bd_status
bd_gpu_conv2d_photo (const bd_gpu_conv2d_params *p, cudaStream_t stream, bd_error *error)
{
	if (!multiprocessors) {
		int device = 0;
		BD_CUDA_CHECK (cudaGetDevice (&device));
		BD_CUDA_CHECK (cudaDeviceGetAttribute (&multiprocessors, cudaDevAttrMultiProcessorCount, device));
	}
	/* The widest block that divides the layer wastes no multiply on padding. */
	if (p->out.channels % 64 == 0)
		return launch<64> (p, stream, error);
	if (p->out.channels % 32 == 0)
		return launch<32> (p, stream, error);
	return launch<16> (p, stream, error);
}
