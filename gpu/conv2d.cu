/* SPDX-License-Identifier: Apache-2.0 */
/* Convolution as implicit GEMM on NHWC activations (conv2d.cuh).
 *
 * fast: fp16 operands on the tensor cores (WMMA 16x16x16), fp32 accumulation; a block
 * computes 128 pixels x 64 output channels with 8 warps of 32x32, staging 16-channel slices
 * of one tap through shared memory, the next slice's global loads issued before the current
 * one's multiply-adds. exact: the same tiling in fp32 on the CUDA cores, 4x4 outputs a thread
 * (8x8 for wide layers), and a direct kernel for the photo's 3-channel layer.
 * Epilogue: bias, ReLU, and the store into the output's channel slice. */
#include "conv2d.cuh"
#include "head.cuh"
#include "maxpool2x2.cuh"
#include "gpu-switches.cuh"

#include <mma.h>
#include <stdlib.h>

using namespace nvcuda;

namespace {

constexpr int BM = 128, BN = 64, BK = 16, THREADS = 256;

struct tap_offset {
	int dy, dx;
};

__device__ inline tap_offset
tap_of (int tap, int taps)
{
	return taps == 9 ? tap_offset{ tap / 3 - 1, tap % 3 - 1 } : tap_offset{ 0, 0 };
}

/* Eight input halves (one 16-byte load) of pixel m at tap `tap`, channels c..c+7, or zeros
 * outside the image. */
__device__ inline uint4
load_a8 (const bd_gpu_conv2d_params &p, int m, int tap, int c)
{
	int M = (int) (p.in.height * p.in.width);
	if (m >= M)
		return make_uint4 (0, 0, 0, 0);
	tap_offset o = tap_of (tap, (int) p.taps);
	int W = (int) p.in.width;
	int y = m / W % bd_conv2d_image_rows (p) + o.dy, x = m % W + o.dx;
	if (y < 0 || x < 0 || y >= bd_conv2d_image_rows (p) || x >= W)
		return make_uint4 (0, 0, 0, 0);
	const __half *src = (const __half *) p.in.data + (size_t) (m + o.dy * W + o.dx) * p.in.pixel_stride + c;
	return *(const uint4 *) src;
}

__device__ inline uint4
load_b8 (const bd_gpu_conv2d_params &p, int k, int n)
{
	if (n >= (int) p.out.channels)
		return make_uint4 (0, 0, 0, 0);
	return *(const uint4 *) ((const __half *) p.weights + bd_conv2d_weight_offset (p) + (size_t) k * p.out.channels + n);
}

__global__ void __launch_bounds__ (THREADS)
conv2d_wmma_kernel (const bd_gpu_conv2d_params p)
{
	__shared__ __align__ (32) __half As[BM][BK + 8];
	__shared__ __align__ (32) __half Bs[BK][BN + 8];
	__shared__ __align__ (32) float Cs[BM][BN + 4];

	const int t = threadIdx.x, warp = t / 32;
	const int wm = warp % 4, wn = warp / 4;
	const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
	const int cin = (int) p.in.channels, steps = (int) p.taps * (cin / BK);

	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			wmma::fill_fragment (acc[i][j], 0.0f);

	/* Each thread moves one 8-half vector of A (row t/2, half t%2) and, for t < 128, one of B. */
	const int a_row = t / 2, a_col = (t % 2) * 8;
	const int b_row = (t % 128) / 8, b_col = (t % 8) * 8;
	uint4 a_next = load_a8 (p, m0 + a_row, 0, a_col);
	uint4 b_next = t < 128 ? load_b8 (p, b_row, n0 + b_col) : make_uint4 (0, 0, 0, 0);

	for (int s = 0; s < steps; s++) {
		*(uint4 *) &As[a_row][a_col] = a_next;
		if (t < 128)
			*(uint4 *) &Bs[b_row][b_col] = b_next;
		__syncthreads ();
		if (s + 1 < steps) {
			int tap = (s + 1) / (cin / BK), c0 = ((s + 1) % (cin / BK)) * BK;
			a_next = load_a8 (p, m0 + a_row, tap, c0 + a_col);
			if (t < 128)
				b_next = load_b8 (p, tap * cin + c0 + b_row, n0 + b_col);
		}
		wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
		wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
		for (int i = 0; i < 2; i++)
			wmma::load_matrix_sync (fa[i], &As[wm * 32 + i * 16][0], BK + 8);
		for (int j = 0; j < 2; j++)
			wmma::load_matrix_sync (fb[j], &Bs[0][wn * 32 + j * 16], BN + 8);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				wmma::mma_sync (acc[i][j], fa[i], fb[j], acc[i][j]);
		__syncthreads ();
	}

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			wmma::store_matrix_sync (&Cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], BN + 4,
			                         wmma::mem_row_major);
	__syncthreads ();

	/* Eight channels a thread: one 16-byte store per output vector. */
	const int M = (int) (p.in.height * p.in.width);
	for (int v = t; v < BM * BN / 8; v += THREADS) {
		int row = v / (BN / 8), col = (v % (BN / 8)) * 8;
		int m = m0 + row, n = n0 + col;
		if (m >= M || n >= (int) p.out.channels)
			continue;
		__align__ (16) __half h[8];
		for (int k = 0; k < 8; k++) {
			float r = Cs[row][col + k] + p.bias[n + k];
			h[k] = __float2half (p.relu && r < 0.0f ? 0.0f : r);
		}
		*(uint4 *) ((__half *) p.out.data + bd_conv2d_out_index (p, m) + n) = *(const uint4 *) h;
	}
}

/* The pipelined tensor-core kernel: 128 pixels x BN channels a block, BK input channels a
 * step, the next step's tiles copied by cp.async while the current one is multiplied. Each
 * of the 8 warps owns 32 pixels x BN/2 channels. */
#if __CUDA_ARCH__ >= 800
__device__ inline void
cp_async16 (void *smem, const void *gmem, bool valid)
{
	unsigned dst = (unsigned) __cvta_generic_to_shared (smem);
	int bytes = valid ? 16 : 0;   /* 0: fill the 16 bytes with zeros, read nothing */
	asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(bytes));
}

__device__ inline void cp_async_commit () { asm volatile ("cp.async.commit_group;\n" ::); }
__device__ inline void cp_async_wait_one () { asm volatile ("cp.async.wait_group 1;\n" ::); }
__device__ inline void cp_async_wait_all () { asm volatile ("cp.async.wait_group 0;\n" ::); }
#else
/* Turing has no cp.async: plain copies, so the pipeline degrades to load-then-compute. */
__device__ inline void
cp_async16 (void *smem, const void *gmem, bool valid)
{
	*(uint4 *) smem = valid ? *(const uint4 *) gmem : make_uint4 (0, 0, 0, 0);
}

__device__ inline void cp_async_commit () {}
__device__ inline void cp_async_wait_one () {}
__device__ inline void cp_async_wait_all () {}
#endif

template <int TBN, int TBK>
__global__ void __launch_bounds__ (THREADS)
conv2d_tc_kernel (const bd_gpu_conv2d_params p)
{
	/* 16-byte chunks per tile; a 64 x 16 B tile has fewer chunks than threads. */
	constexpr int A_CHUNKS = BM * TBK / 8 / THREADS, B_VECTORS = TBK * TBN / 8;
	static_assert (A_CHUNKS >= 1 && BM * TBK / 8 % THREADS == 0, "A tile must split evenly");
	constexpr int FN = TBN / 2 / 16;
	__shared__ __align__ (128) __half As[2][BM][TBK + 8];
	__shared__ __align__ (128) __half Bs[2][TBK][TBN + 8];
	__shared__ __align__ (32) float stage[8][16][16 + 4];

	const int t = threadIdx.x, warp = t / 32, lane = t % 32;
	const int wm = warp % 4, wn = warp / 4;
	const int m0 = blockIdx.x * BM, n0 = blockIdx.y * TBN;
	const int cin = (int) p.in.channels, slices = cin / TBK, steps = (int) p.taps * slices;
	const int M = (int) (p.in.height * p.in.width), W = (int) p.in.width, H = bd_conv2d_image_rows (p);

	/* The pixels this thread copies never change across steps: locate them once. */
	int a_row[A_CHUNKS], a_col[A_CHUNKS], a_y[A_CHUNKS], a_x[A_CHUNKS];
	for (int i = 0; i < A_CHUNKS; i++) {
		int c = t + i * THREADS;
		a_row[i] = c / (TBK / 8);
		a_col[i] = (c % (TBK / 8)) * 8;
		int m = m0 + a_row[i];
		a_y[i] = m < M ? m / W % H : -100000;
		a_x[i] = m < M ? m % W : 0;
	}

	auto load = [&] (int s, int buf) {
		int tap = s / slices, c0 = (s % slices) * TBK;
		tap_offset o = tap_of (tap, (int) p.taps);
		for (int i = 0; i < A_CHUNKS; i++) {
			int y = a_y[i] + o.dy, x = a_x[i] + o.dx;
			bool ok = y >= 0 && x >= 0 && y < H && x < W;
			size_t m = (size_t) (m0 + a_row[i] + o.dy * W + o.dx);   /* in the pixel's own image */
			const __half *src = (const __half *) p.in.data + (ok ? m * p.in.pixel_stride + c0 + a_col[i] : 0);
			cp_async16 (&As[buf][a_row[i]][a_col[i]], src, ok);
		}
		for (int c = t; c < B_VECTORS; c += THREADS) {
			int row = c / (TBN / 8), col = (c % (TBN / 8)) * 8;
			bool ok = n0 + col < (int) p.out.channels;
			const __half *src = (const __half *) p.weights + bd_conv2d_weight_offset (p) +
			                    (ok ? (size_t) (tap * cin + c0 + row) * p.out.channels + n0 + col : 0);
			cp_async16 (&Bs[buf][row][col], src, ok);
		}
		cp_async_commit ();
	};

	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][FN];
#pragma unroll
	for (int i = 0; i < 2; i++)
#pragma unroll
		for (int j = 0; j < FN; j++)
			wmma::fill_fragment (acc[i][j], 0.0f);

	load (0, 0);
	for (int s = 0; s < steps; s++) {
		if (s + 1 < steps) {
			load (s + 1, (s + 1) % 2);
			cp_async_wait_one ();
		} else {
			cp_async_wait_all ();
		}
		__syncthreads ();
		const int buf = s % 2;
#pragma unroll
		for (int kk = 0; kk < TBK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[FN];
#pragma unroll
			for (int i = 0; i < 2; i++)
				wmma::load_matrix_sync (fa[i], &As[buf][wm * 32 + i * 16][kk], TBK + 8);
#pragma unroll
			for (int j = 0; j < FN; j++)
				wmma::load_matrix_sync (fb[j], &Bs[buf][kk][wn * (TBN / 2) + j * 16], TBN + 8);
#pragma unroll
			for (int i = 0; i < 2; i++)
#pragma unroll
				for (int j = 0; j < FN; j++)
					wmma::mma_sync (acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads ();   /* the buffer is refilled by the next step's copies */
	}

	/* Epilogue, one 16x16 fragment at a time through the warp's staging tile: each lane
	 * writes 8 channels of one pixel (a 16-byte store), with bias and ReLU. */
#pragma unroll
	for (int i = 0; i < 2; i++)
#pragma unroll
		for (int j = 0; j < FN; j++) {
			wmma::store_matrix_sync (&stage[warp][0][0], acc[i][j], 16 + 4, wmma::mem_row_major);
			__syncwarp ();
			int r = lane / 2, cc = (lane % 2) * 8;
			int m = m0 + wm * 32 + i * 16 + r, n = n0 + wn * (TBN / 2) + j * 16 + cc;
			if (m < M && n < (int) p.out.channels) {
				__align__ (16) __half h[8];
				for (int k = 0; k < 8; k++) {
					float v = stage[warp][r][cc + k] + p.bias[n + k];
					h[k] = __float2half (p.relu && v < 0.0f ? 0.0f : v);
				}
				*(uint4 *) ((__half *) p.out.data + bd_conv2d_out_index (p, m) + n) = *(const uint4 *) h;
			}
			__syncwarp ();
		}
}

/* fp32: 64 x 64 outputs a block, 4 x 4 a thread. */
constexpr int FM = 64, FN = 64, FK = 16;

__global__ void __launch_bounds__ (THREADS)
conv2d_fp32_kernel (const bd_gpu_conv2d_params p)
{
	__shared__ float As[FK][FM + 4];
	__shared__ float Bs[FK][FN + 4];
	const int t = threadIdx.x, tx = t % 16, ty = t / 16;
	const int m0 = blockIdx.x * FM, n0 = blockIdx.y * FN;
	const int cin = (int) p.in.channels, M = (int) (p.in.height * p.in.width);
	float acc[4][4] = {};

	for (int tap = 0; tap < (int) p.taps; tap++) {
		tap_offset o = tap_of (tap, (int) p.taps);
		for (int c0 = 0; c0 < cin; c0 += FK) {
			/* A: 64 pixels x 16 channels, 4 consecutive channels a thread. */
			{
				int row = t / 4, c = (t % 4) * 4, m = m0 + row;
				float4 v = make_float4 (0, 0, 0, 0);
				if (m < M) {
					int W = (int) p.in.width, y = m / W % bd_conv2d_image_rows (p) + o.dy, x = m % W + o.dx;
					if (y >= 0 && x >= 0 && y < bd_conv2d_image_rows (p) && x < W)
						v = *(const float4 *) ((const float *) p.in.data +
						                       (size_t) (m + o.dy * W + o.dx) * p.in.pixel_stride + c0 + c);
				}
				As[c][row] = v.x; As[c + 1][row] = v.y; As[c + 2][row] = v.z; As[c + 3][row] = v.w;
			}
			/* B: 16 channels x 64 outputs. */
			{
				int k = t / 16, n = (t % 16) * 4;
				float4 v = make_float4 (0, 0, 0, 0);
				if (n0 + n < (int) p.out.channels)
					v = *(const float4 *) ((const float *) p.weights + bd_conv2d_weight_offset (p) +
					                       ((size_t) tap * cin + c0 + k) * p.out.channels + n0 + n);
				*(float4 *) &Bs[k][n] = v;
			}
			__syncthreads ();
			for (int k = 0; k < FK; k++) {
				float a[4], b[4];
				for (int i = 0; i < 4; i++)
					a[i] = As[k][ty * 4 + i];
				for (int j = 0; j < 4; j++)
					b[j] = Bs[k][tx * 4 + j];
				for (int i = 0; i < 4; i++)
					for (int j = 0; j < 4; j++)
						acc[i][j] = fmaf (a[i], b[j], acc[i][j]);
			}
			__syncthreads ();
		}
	}
	for (int i = 0; i < 4; i++) {
		int m = m0 + ty * 4 + i, n = n0 + tx * 4;
		if (m >= M || n >= (int) p.out.channels)
			continue;
		float4 r;
		float *rv = &r.x;
		for (int j = 0; j < 4; j++) {
			float v = acc[i][j] + p.bias[n + j];
			rv[j] = p.relu && v < 0.0f ? 0.0f : v;
		}
		*(float4 *) ((float *) p.out.data + bd_conv2d_out_index (p, m) + n) = r;
	}
}

/* fp32 for wide layers: 128 pixels x 128 channels a block, 8 x 8 outputs a thread (two 4 x 4
 * quadrants 64 apart, so shared-memory reads are consecutive across a warp), 8 input channels
 * a step, the next step's tile fetched into registers while this one is multiplied. */
constexpr int WM = 128, WN = 128, WK = 8;

__global__ void __launch_bounds__ (THREADS, 2)
conv2d_fp32_wide_kernel (const bd_gpu_conv2d_params p)
{
	__shared__ __align__ (16) float As[WK][WM];
	__shared__ __align__ (16) float Bs[WK][WN];
	const int t = threadIdx.x, tx = t % 16, ty = t / 16;
	const int m0 = blockIdx.x * WM, n0 = blockIdx.y * WN;
	const int cin = (int) p.in.channels, slices = cin / WK, steps = (int) p.taps * slices;
	const int M = (int) (p.in.height * p.in.width), W = (int) p.in.width, H = bd_conv2d_image_rows (p);
	/* This thread copies 4 channels of one pixel of A and 4 of one row of B each step. */
	const int a_row = t / 2, a_c = (t % 2) * 4, b_row = t / 32, b_col = (t % 32) * 4;
	const int am = m0 + a_row, ay = am < M ? am / W % H : -100000, ax = am < M ? am % W : 0;

	auto load_a = [&] (int s) -> float4 {
		tap_offset o = tap_of (s / slices, (int) p.taps);
		int y = ay + o.dy, x = ax + o.dx;
		if (y < 0 || x < 0 || y >= H || x >= W)
			return make_float4 (0, 0, 0, 0);
		return *(const float4 *) ((const float *) p.in.data + (size_t) (am + o.dy * W + o.dx) * p.in.pixel_stride +
		                          (s % slices) * WK + a_c);
	};
	auto load_b = [&] (int s) -> float4 {
		int n = n0 + b_col;
		if (n >= (int) p.out.channels)
			return make_float4 (0, 0, 0, 0);
		int k = (s / slices) * cin + (s % slices) * WK + b_row;
		return *(const float4 *) ((const float *) p.weights + bd_conv2d_weight_offset (p) + (size_t) k * p.out.channels + n);
	};

	float acc[8][8] = {};
	float4 a_next = load_a (0), b_next = load_b (0);
	for (int s = 0; s < steps; s++) {
		As[a_c][a_row] = a_next.x;
		As[a_c + 1][a_row] = a_next.y;
		As[a_c + 2][a_row] = a_next.z;
		As[a_c + 3][a_row] = a_next.w;
		*(float4 *) &Bs[b_row][b_col] = b_next;
		__syncthreads ();
		if (s + 1 < steps) {
			a_next = load_a (s + 1);
			b_next = load_b (s + 1);
		}
#pragma unroll
		for (int k = 0; k < WK; k++) {
			float4 a0 = *(const float4 *) &As[k][ty * 4], a1 = *(const float4 *) &As[k][64 + ty * 4];
			float4 b0 = *(const float4 *) &Bs[k][tx * 4], b1 = *(const float4 *) &Bs[k][64 + tx * 4];
			const float a[8] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };
			const float b[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
			for (int i = 0; i < 8; i++)
#pragma unroll
				for (int j = 0; j < 8; j++)
					acc[i][j] = fmaf (a[i], b[j], acc[i][j]);
		}
		__syncthreads ();
	}

#pragma unroll
	for (int i = 0; i < 8; i++) {
		int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
		if (m >= M)
			continue;
		float *dst = (float *) p.out.data + bd_conv2d_out_index (p, m);
#pragma unroll
		for (int half = 0; half < 2; half++) {
			int n = n0 + half * 64 + tx * 4;
			if (n >= (int) p.out.channels)
				continue;
			float4 r;
			float *rv = &r.x;
#pragma unroll
			for (int j = 0; j < 4; j++) {
				float v = acc[i][half * 4 + j] + p.bias[n + j];
				rv[j] = p.relu && v < 0.0f ? 0.0f : v;
			}
			*(float4 *) (dst + n) = r;
		}
	}
}

/* fp32 for the photo's layer (at most 4 input channels hold data): a direct convolution on
 * the CUDA cores. The tiled kernels would multiply all 16 stored channels, 13 of them zeros,
 * and stage them through shared memory; here each thread reads its pixel's 4 channels at
 * each tap straight from global memory (neighbours share them through L1) and keeps 32
 * output channels in registers, the weights broadcast from shared memory. */
constexpr int DIRECT_CO = 32, DIRECT_CIN = 4;

__global__ void __launch_bounds__ (THREADS)
conv2d_fp32_direct_kernel (const bd_gpu_conv2d_params p)
{
	__shared__ __align__ (16) float ws[9][DIRECT_CIN][DIRECT_CO];
	const int t = threadIdx.x, n0 = blockIdx.y * DIRECT_CO, cout = (int) p.out.channels;
	const int cin = (int) p.in.channels, W = (int) p.in.width, H = bd_conv2d_image_rows (p);
	for (int i = t; i < 9 * DIRECT_CIN * DIRECT_CO; i += THREADS) {
		int tap = i / (DIRECT_CIN * DIRECT_CO), c = i / DIRECT_CO % DIRECT_CIN, n = n0 + i % DIRECT_CO;
		ws[tap][c][i % DIRECT_CO] =
			tap < (int) p.taps && n < cout
				? ((const float *) p.weights)[bd_conv2d_weight_offset (p) + ((size_t) tap * cin + c) * cout + n] : 0.0f;
	}
	__syncthreads ();
	const int M = (int) (p.in.height * p.in.width), m = blockIdx.x * THREADS + t;
	if (m >= M)
		return;
	const int y = m / W % H, x = m % W;
	float acc[DIRECT_CO] = {};
	for (int tap = 0; tap < (int) p.taps; tap++) {
		tap_offset o = tap_of (tap, (int) p.taps);
		if (y + o.dy < 0 || y + o.dy >= H || x + o.dx < 0 || x + o.dx >= W)
			continue;
		float4 v = *(const float4 *) ((const float *) p.in.data + (size_t) (m + o.dy * W + o.dx) * p.in.pixel_stride);
		const float a[DIRECT_CIN] = { v.x, v.y, v.z, v.w };
#pragma unroll
		for (int c = 0; c < DIRECT_CIN; c++)
#pragma unroll
			for (int j = 0; j < DIRECT_CO; j += 4) {
				float4 w4 = *(const float4 *) &ws[tap][c][j];
				acc[j] = fmaf (a[c], w4.x, acc[j]);
				acc[j + 1] = fmaf (a[c], w4.y, acc[j + 1]);
				acc[j + 2] = fmaf (a[c], w4.z, acc[j + 2]);
				acc[j + 3] = fmaf (a[c], w4.w, acc[j + 3]);
			}
	}
	float *dst = (float *) p.out.data + bd_conv2d_out_index (p, m) + n0;
#pragma unroll
	for (int j = 0; j < DIRECT_CO; j += 4) {
		if (n0 + j >= cout)
			break;
		float4 r;
		float *rv = &r.x;
		for (int k = 0; k < 4; k++) {
			float v = acc[j + k] + p.bias[n0 + j + k];
			rv[k] = p.relu && v < 0.0f ? 0.0f : v;
		}
		*(float4 *) (dst + j) = r;
	}
}

} // namespace

namespace {

bd_status
launch_conv (const bd_gpu_conv2d_params *p, bd_precision precision, cudaStream_t stream, bool *pooled,
             bool *headed, bd_error *error)
{
	size_t M = (size_t) p->in.height * p->in.width;
	/* BACKDROP_GPU_SIMPLE_CONV=1 takes the plain tensor-core kernel, to tell the two apart. */
	const bool simple = bd_gpu_switches_get ().simple_conv;
	if (!simple && bd_gpu_conv2d_photo_fits (p, precision))
		return bd_gpu_conv2d_photo (p, stream, error);
	if (!simple && bd_gpu_conv2d_tma_fits (p, precision))
		return bd_gpu_conv2d_tma (p, stream, pooled, headed, error);
	if (!simple && bd_gpu_conv2d_hopper_fits (p, precision))
		return bd_gpu_conv2d_hopper (p, precision, stream, error);
	if (precision == BD_PRECISION_FAST && !simple) {
		bool wide = p->out.channels > 64, deep = p->in.channels % 32 == 0;
		dim3 grid (bd_div_up (M, BM), bd_div_up (p->out.channels, wide ? 128 : 64), bd_conv2d_grid_z (p));
		if (wide && deep)
			conv2d_tc_kernel<128, 32><<<grid, THREADS, 0, stream>>> (*p);
		else if (wide)
			conv2d_tc_kernel<128, 16><<<grid, THREADS, 0, stream>>> (*p);
		else if (deep)
			conv2d_tc_kernel<64, 32><<<grid, THREADS, 0, stream>>> (*p);
		else
			conv2d_tc_kernel<64, 16><<<grid, THREADS, 0, stream>>> (*p);
	} else if (precision == BD_PRECISION_FAST) {
		dim3 grid (bd_div_up (M, BM), bd_div_up (p->out.channels, BN), bd_conv2d_grid_z (p));
		conv2d_wmma_kernel<<<grid, THREADS, 0, stream>>> (*p);
	} else if (p->in_used && p->in_used <= DIRECT_CIN && !simple) {
		dim3 grid (bd_div_up (M, THREADS), bd_div_up (p->out.channels, DIRECT_CO), bd_conv2d_grid_z (p));
		conv2d_fp32_direct_kernel<<<grid, THREADS, 0, stream>>> (*p);
	} else if (p->out.channels >= 128) {
		dim3 grid (bd_div_up (M, WM), bd_div_up (p->out.channels, WN), bd_conv2d_grid_z (p));
		conv2d_fp32_wide_kernel<<<grid, THREADS, 0, stream>>> (*p);
	} else {
		dim3 grid (bd_div_up (M, FM), bd_div_up (p->out.channels, FN), bd_conv2d_grid_z (p));
		conv2d_fp32_kernel<<<grid, THREADS, 0, stream>>> (*p);
	}
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}

} // namespace

bd_status
bd_gpu_conv2d (const bd_gpu_conv2d_params *p, bd_precision precision, cudaStream_t stream, bd_error *error)
{
	if (p->in.channels % 16 || p->out.channels % 16 || (p->taps != 9 && p->taps != 1) ||
	    (p->out_step != 1 && p->out_step != 2) || p->in.pixel_stride % 16 || p->out.pixel_stride % 16 ||
	    (p->image_height && p->in.height % p->image_height) || (p->out_step == 2 && p->taps != 1) ||
	    p->splits > 1 || ((p->pool.data || p->head_out) && p->out_step != 1) || (p->head_out && !p->head_weight))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_gpu_conv2d: bad shape");
	size_t M = (size_t) p->in.height * p->in.width;
	if (M == 0 || p->out.channels == 0)
		return BD_OK;
	bool pooled = false, headed = false;
	bd_status st = launch_conv (p, precision, stream, &pooled, &headed, error);
	/* What the kernel did not fuse runs on its output. */
	if (st == BD_OK && p->pool.data && !pooled)
		st = bd_gpu_maxpool2x2 (&p->out, &p->pool, precision, stream, error);
	if (st == BD_OK && p->head_out && !headed)
		st = bd_gpu_head_sigmoid (&p->out, p->head_channels, p->head_weight, p->head_bias, p->head_out, precision,
		                          stream, error);
	return st;
}
