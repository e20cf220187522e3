/* SPDX-License-Identifier: Apache-2.0 */
/* The network's first convolution in fast precision: the photo's layer, whose input has 16
 * stored channels of which at most 4 hold data (3 colours). The general kernels would
 * multiply all 16 at each of the 9 taps, 13 of them zeros, in 9 steps through shared memory.
 * Here a block gathers, for each of its 128 pixels, the 4 channels of the 9 neighbours into
 * one row of K = 36 (padded to 48) and multiplies that by the weights (the same 36 rows of
 * them, loaded once per block) in three tensor-core steps. (24 us for 512x512 x 64 outputs
 * on an H200 by ncu, against 63 for the general kernel; writing the 33.5 MB output takes
 * about 9.)
 *
 * Blocks loop over the tiles (as many blocks as fit at once), 8 warps of 16 pixels x CO
 * output channels each, the next tile's gather in flight during this one's multiply. The
 * multiplies are mma.sync's (m16n8k16; two k8 halves on Turing), whose accumulators lie in
 * known registers: the epilogue adds the bias and applies ReLU there, puts the halves into
 * the warp's staging tile (by stmatrix on Hopper) and stores 16 bytes a lane. WMMA's opaque
 * fragments had gone out through fp32 shared memory, a load a value: 32 us. */
#include "conv2d.cuh"
#include "gpu-switches.cuh"
#include "wgmma.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

constexpr int THREADS = 256, PIX = 128, USED = 4, TAPS = 9;
constexpr int KP = 48;                  /* 9 taps x 4 channels = 36, padded to 3 steps of 16 */

/* Shared-memory address of a generic pointer, for ldmatrix and stmatrix. */
__device__ __forceinline__ uint32_t
shared_address (const void *p)
{
	return (uint32_t) __cvta_generic_to_shared (p);
}

/* d (16 x 8, f32) += a (16 x 16, f16) * b (16 x 8, f16), in mma.sync's fragments: lane l's
 * a is rows l / 4 and + 8 at columns (l % 4) * 2 + {0, 1} and + 8; its b, column l / 4 at
 * rows (l % 4) * 2 + {0, 1} and + 8; its d, rows l / 4 and + 8 at columns (l % 4) * 2 + {0, 1}. */
__device__ __forceinline__ void
mma_16x8x16 (float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
#if __CUDA_ARCH__ >= 800
	asm volatile ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
	              "{%0, %1, %2, %3};\n"
	              : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	              : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else   /* Turing: two k8 halves */
	asm volatile ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
	              : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	              : "r"(a[0]), "r"(a[1]), "r"(b0));
	asm volatile ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
	              : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
	              : "r"(a[2]), "r"(a[3]), "r"(b1));
#endif
}

/* Four 8 x 8 blocks of halves (h: the lane's pair of each, rows lane / 4) into the staging
 * tile: by stmatrix, each lane naming row lane % 8 of block lane / 8 (at), or before Hopper
 * a store a pair (pair: block q's pair at pair + q * block_step, in halves). */
__device__ __forceinline__ void
store_blocks (const uint32_t (&h)[4], uint32_t at, __half *pair, const int (&block_step)[4])
{
#if __CUDA_ARCH__ >= 900
	(void) pair;
	(void) block_step;
	stmatrix_x4<false> (at, h[0], h[1], h[2], h[3]);
#else
	(void) at;
#pragma unroll
	for (int q = 0; q < 4; q++)
		*(uint32_t *) (pair + block_step[q]) = h[q];
#endif
}

template <int CO>   /* output channels a block: 16, 32 or 64 */
__global__ void __launch_bounds__ (THREADS)
conv2d_photo_kernel (const bd_gpu_conv2d_params p, int tiles)
{
	constexpr int APITCH = KP + 8, BPITCH = CO + 8, OPITCH = CO + 8, NT = CO / 8;
	__shared__ __align__ (128) __half As[PIX][APITCH];
	__shared__ __align__ (128) __half Bs[KP][BPITCH];
	__shared__ __align__ (128) __half out_tile[THREADS / 32][16][OPITCH];   /* each warp's 16 pixels */

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
	for (int i = t; i < PIX * (KP - TAPS * USED); i += THREADS)   /* K's padding stays zero */
		As[i / (KP - TAPS * USED)][TAPS * USED + i % (KP - TAPS * USED)] = __float2half (0.0f);
	/* The bias of the lane's accumulator columns: n-tile j's columns j * 8 + (lane % 4) * 2
	 * and + 1. */
	float bias[NT][2];
#pragma unroll
	for (int j = 0; j < NT; j++)
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const int n = n0 + j * 8 + (lane % 4) * 2 + e;
			bias[j][e] = n < cout ? p.bias[n] : 0.0f;
		}
	const float relu_floor = p.relu ? 0.0f : -INFINITY;   /* ReLU as a max */
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
	/* ldmatrix addresses: the A fragment's rows lane % 16, columns (lane / 16) * 8 (x4 gives
	 * a's four registers); B's rows k = lane % 16 (x4 .trans gives b0, b1 of n-tiles j and j + 1
	 * from lanes 0-15 and 16-31). The stmatrix address: row (lane / 8 % 2) * 8 + lane % 8 of the
	 * staging tile, n-tile (lane / 16) past the store's first. */
	const uint32_t a_at = shared_address (&As[warp * 16 + lane % 16][(lane / 16) * 8]);
	const uint32_t b_at = shared_address (&Bs[lane % 16][(lane / 16) * 8]);
	const uint32_t o_at = shared_address (&out_tile[warp][(lane / 8 % 2) * 8 + lane % 8][(lane / 16) * 8]);
	__half *const o_pair = &out_tile[warp][lane / 4][(lane % 4) * 2];   /* the lane's own pair of block 0 */
	const int o_step[4] = { 0, 8 * OPITCH, 8, 8 * OPITCH + 8 };       /* blocks: rows 0-7, 8-15; n-tile + 1 */
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

		/* Warp w: pixels w * 16 .. + 15, all CO channels, NT n-tiles of 8. */
		float acc[NT][4] = {};
#pragma unroll
		for (int k = 0; k < KP; k += 16) {
			uint32_t a[4];
			asm volatile ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
			              : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(a_at + k * 2));
#pragma unroll
			for (int j = 0; j < NT; j += 2) {
				uint32_t b[4];
				asm volatile ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
				              : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
				              : "r"(b_at + (k * BPITCH + j * 8) * 2));
				mma_16x8x16 (acc[j], a, b[0], b[1]);
				mma_16x8x16 (acc[j + 1], a, b[2], b[3]);
			}
		}
		__syncthreads ();   /* As is filled again for the next tile */

		/* Bias, ReLU, halves; n-tiles j and j + 1 (rows 0-7 and 8-15 of each) by one stmatrix. */
#pragma unroll
		for (int j = 0; j < NT; j += 2) {
			uint32_t h[4];
#pragma unroll
			for (int q = 0; q < 4; q++) {
				const float(&c)[4] = acc[j + q / 2];
				const float(&b)[2] = bias[j + q / 2];
				const int e = (q % 2) * 2;   /* c0, c1: row lane / 4; c2, c3: row + 8 */
				h[q] = pack_half2 (fmaxf (c[e] + b[0], relu_floor), fmaxf (c[e + 1] + b[1], relu_floor));
			}
			store_blocks (h, o_at + j * 8 * 2, o_pair + j * 8, o_step);
		}
		__syncwarp ();
		/* The warp's 16 pixels x CO channels, 16 bytes a lane a store. */
#pragma unroll
		for (int c = lane; c < 16 * CO / 8; c += 32) {
			const int px = c / (CO / 8), col = (c % (CO / 8)) * 8, m = m0 + warp * 16 + px;
			if (m < M && n0 + col < cout)
				*(uint4 *) ((__half *) p.out.data + (size_t) m * p.out.pixel_stride + n0 + col) =
					*(const uint4 *) &out_tile[warp][px][col];
		}
		__syncwarp ();   /* the staging tile is read before the next tile's stores */
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
