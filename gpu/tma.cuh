/* SPDX-License-Identifier: Apache-2.0 */
/* What the warp-specialised TMA kernels share (conv2d-tma.cu, conv2d-resident.cu): a block
 * of two consumer warpgroups and a producer warp, the rectangle of pixels a tile covers, the
 * tensor maps that the copy engine reads by, the mbarriers the warps meet on, and the
 * epilogues' max-pool and 1x1 head. Device code only inside `#if BD_HAVE_WGMMA` (sm_90a). */
#pragma once

#include "conv2d.cuh"
#include "wgmma.cuh"

#include <cuda.h>

constexpr int CONSUMERS = 256;                /* two warpgroups */
constexpr int THREADS = CONSUMERS + 32;       /* + the producer warp */

/* Where a block's pixels lie: image b, rows y0.., columns x0.. of a TW-wide rectangle. */
struct ws_geometry {
	int tw_shift;   /* log2 TW */
	int tiles_x, tiles_y;
	bool pool, head;   /* the epilogue also pools / runs the head (bd_gpu_conv2d_params) */
};

/* The geometry and the two tensor maps of a launch with PIX-pixel tiles (HALO: rows of 8,
 * boxes two rows taller; wide: and two pixels wider) and CO output channels a block, and
 * whether its epilogue pools and runs the head (conv2d-tma.cu). */
bd_status bd_gpu_tma_prepare (const bd_gpu_conv2d_params *p, int PIX, int CO, bool HALO, ws_geometry *g,
                              CUtensorMap *pixels, CUtensorMap *weights, unsigned *tiles, bool *pooled, bool *headed,
                              bd_error *error, bool wide = false);

#if BD_HAVE_WGMMA
__device__ __forceinline__ void
mbar_init (uint32_t bar, int count)
{
	asm volatile ("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void
mbar_expect_bytes (uint32_t bar, int bytes)
{
	asm volatile ("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void
mbar_arrive (uint32_t bar)
{
	asm volatile ("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Until the phase of parity `parity` has completed (on a fresh barrier, parity 1 has). */
__device__ __forceinline__ void
mbar_wait (uint32_t bar, uint32_t parity)
{
	uint32_t done;
	do {
		asm volatile ("{\n.reg .pred p;\n"
		              "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
		              "selp.u32 %0, 1, 0, p;\n}\n"
		              : "=r"(done) : "r"(bar), "r"(parity) : "memory");
	} while (!done);
}

/* The box of `map` at the coordinates, into shared memory at dst; counted on bar. */
__device__ __forceinline__ void
tma_load_4d (uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2, int c3)
{
	asm volatile ("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
	              " [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
	              ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar) : "memory");
}

__device__ __forceinline__ void
tma_load_3d (uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1, int c2)
{
	asm volatile ("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
	              " [%0], [%1, {%2, %3, %4}], [%5];\n"
	              ::"r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar) : "memory");
}

/* Fetches both tensor maps' descriptors early (they are kernel parameters). */
__device__ __forceinline__ void
prefetch_tensor_maps (const CUtensorMap *pixels, const CUtensorMap *weights)
{
	asm volatile ("prefetch.tensormap [%0];\n" ::"l"(pixels) : "memory");
	asm volatile ("prefetch.tensormap [%0];\n" ::"l"(weights) : "memory");
}

/* The two consumer warpgroups only (the producer warp may have left). */
__device__ __forceinline__ void
consumers_sync ()
{
	asm volatile ("bar.sync 1, %0;\n" ::"n"(CONSUMERS) : "memory");
}

/* The network's 1x1 head and sigmoid for one staged pixel (`row`: its channels as halves,
 * 16-byte aligned), 8 channels a read, summed in the channels' order. */
__device__ __forceinline__ float
head_probability (const __half *row, const bd_gpu_conv2d_params &p)
{
	const int n = (int) p.head_channels, whole = n & ~7;
	float s = p.head_bias;
	for (int c = 0; c < whole; c += 8) {
		uint4 v = *(const uint4 *) (row + c);
		const __half2 *h = (const __half2 *) &v;
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const float2 f = __half22float2 (h[k]);
			s += f.x * p.head_weight[c + 2 * k];
			s += f.y * p.head_weight[c + 2 * k + 1];
		}
	}
	for (int c = whole; c < n; c++)
		s += __half2float (row[c]) * p.head_weight[c];
	return 1.0f / (1.0f + __expf (-s));
}

/* The fused max-pool of the epilogues: the 2x2 maximum of eight channels of the staged tile,
 * from its row @r (the window's top left; rows @width apart, @pitch halves each) and channel
 * @col, stored to @dst. */
__device__ __forceinline__ void
pool_2x2_store (const __half *tile, int r, int width, int pitch, int col, __half *dst)
{
	uint4 a = *(const uint4 *) (tile + r * pitch + col), b = *(const uint4 *) (tile + (r + 1) * pitch + col);
	uint4 c = *(const uint4 *) (tile + (r + width) * pitch + col);
	uint4 e = *(const uint4 *) (tile + (r + width + 1) * pitch + col);
	__half2 *ha = (__half2 *) &a, *hb = (__half2 *) &b, *hc = (__half2 *) &c, *he = (__half2 *) &e;
#pragma unroll
	for (int k = 0; k < 4; k++)
		ha[k] = __hmax2 (__hmax2 (ha[k], hb[k]), __hmax2 (hc[k], he[k]));
	*(uint4 *) dst = a;
}
#endif
