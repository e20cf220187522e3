/* SPDX-License-Identifier: Apache-2.0 */
/* Convolution on Hopper's warpgroup tensor cores (conv2d.cuh), on GPUs of compute
 * capability 9.0: the fast path for layers whose input channels are a multiple of 64, the
 * exact path for multiples of 32.
 *
 * Implicit GEMM, M = pixels, N = output channels, K = taps x input channels. A block computes
 * a tile of pixels x channels (fast: 128 x 128, 128 x 256 or 128 x 64 chosen per layer, 256 x
 * 128 and 256 x 64 for comparison; exact: 128 x 128 or 128 x 64) with two warpgroups, one to
 * three blocks a multiprocessor. A step of K is one tap's 128-byte slice of
 * channels (64 halves or 32 floats): each of the tile's pixels contributes one row (its
 * shifted neighbour's channels, or zeros outside the image), each output channel one row of
 * the K-major weights. cp.async copies them, STAGES - 2 steps ahead, into swizzled shared
 * tiles that wgmma reads directly; one multiply stays in flight while the next step's copies
 * land. Epilogue: bias and ReLU in registers, the tile staged through shared memory in the
 * output's type, written out 16 bytes a thread into the output's channel slice. Layers with
 * too few tiles to fill the GPU split K over block z instead: each part writes its fp32 sums
 * to scratch and splitk-reduce.cu adds them up, with the bias and ReLU. */
#include "conv2d.cuh"
#include "splitk-reduce.cuh"
#include "wgmma.cuh"
#include "gpu-switches.cuh"

#include <stdlib.h>
#include <string.h>

/* Outside the sm_90a pass the kernel compiles empty, leaving its helpers unused. */
#pragma nv_diag_suppress 177

namespace {

constexpr int THREADS = 256;

/* A block's tile: PIX pixels x CO output channels. Normally each warpgroup multiplies 64 of
 * the pixels (A) by all CO channels' weights (B, wgmma's N = CO). With SWAP the roles turn
 * round for 64-channel layers: the 64 channels' weights are A and each warpgroup's PIX / 2
 * pixels are B, so one multiply reads 64 x 16 weights and 128 x 16 pixels rather than
 * 64 x 16 pixels and only 64 x 16 weights, and shared-memory bandwidth stops being the limit.
 *
 * F32 (exact precision): fp32 operands as three tf32 products, big x big + big x small +
 * small x big, where small = x - (x with its low 13 mantissa bits cleared, the part the
 * tensor cores read): the error stays near fp32's (measured: 7e-5 relative on deep random
 * U-Nets against 2e-6 for plain fp32, where tf32 alone gives 1e-3). A step is then 32
 * channels (a 128-byte row of floats) and carries each tile twice, big and small. */
template <int PIX, int CO, bool SWAP, bool F32, int BLOCKS> struct tile {
	static constexpr int ELEM = F32 ? 4 : 2;                   /* bytes per element */
	static constexpr int BK = 128 / ELEM;                      /* input channels per step */
	static constexpr int N = SWAP ? PIX / 2 : CO;              /* wgmma's N */
	static constexpr int STAGE = (PIX + CO) * 128 * (F32 ? 2 : 1);   /* bytes per step */
	/* A multiprocessor's 228 KB of shared memory, less 1 KB a block, shared by BLOCKS blocks. */
	static constexpr int BUDGET = (228 / BLOCKS - 2) * 1024;
	static constexpr int STAGES = BUDGET / STAGE > 6 ? 6 : BUDGET / STAGE;
	static constexpr int SMEM = STAGES * STAGE + 1024;         /* + alignment slack */
	static constexpr int PITCH = CO + 16 / ELEM;               /* epilogue row, elements */
	static_assert (STAGES >= 3, "at least one step in flight beside the two in use");
	static_assert (!SWAP || CO == 64, "swapped tiles hold 64 channels (wgmma's M)");
	static constexpr int MW = SWAP ? 1 : PIX / 128;            /* 64-row multiplies a warpgroup */
	static_assert (SWAP || PIX == 128 || PIX == 256, "two warpgroups of 64 or 128 pixels");
	static_assert (PIX * PITCH * ELEM <= STAGES * STAGE, "the epilogue's tile fits");
};

__device__ __forceinline__ void
cp_async16 (uint32_t dst, const void *src, bool valid)
{
	asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async_commit () { asm volatile ("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void
cp_async_wait ()
{
	asm volatile ("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* x minus the part of it that tf32 keeps: exact in fp32. */
__device__ __forceinline__ float
tf32_rest (float x)
{
	return x - __uint_as_float (__float_as_uint (x) & 0xffffe000u);
}

__global__ void
probe_kernel (int *has_wgmma)
{
	*has_wgmma = BD_HAVE_WGMMA;
}

template <int PIX, int CO, bool SWAP, bool F32, int BLOCKS>
__global__ void __launch_bounds__ (THREADS, BLOCKS)
conv2d_wgmma_kernel (const bd_gpu_conv2d_params p)
{
#if BD_HAVE_WGMMA
	using T = tile<PIX, CO, SWAP, F32, BLOCKS>;
	constexpr int S = T::STAGES, AHEAD = S - 2, R = T::N / 2, ELEM = T::ELEM, BK = T::BK;
	/* Within a step's bytes: pixels, weights, then (F32) their small parts. */
	constexpr int W_OFF = PIX * 128, PS_OFF = (PIX + CO) * 128, WS_OFF = (2 * PIX + CO) * 128;
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *) (((uintptr_t) smem_raw + 1023) & ~(uintptr_t) 1023);
	const uint32_t base = (uint32_t) __cvta_generic_to_shared (smem);

	const int t = threadIdx.x, wg = t / 128;
	const int m0 = blockIdx.x * PIX, n0 = blockIdx.y * CO;
	const int cin = (int) p.in.channels, slices = cin / BK, steps = (int) p.taps * slices;
	/* With a split K, block z runs steps [first, last) and writes fp32 partial sums. */
	const bool split = p.out_step == 1 && p.splits > 1;
	const int first = split ? (int) ((long) steps * blockIdx.z / p.splits) : 0;
	const int last = split ? (int) ((long) steps * (blockIdx.z + 1) / p.splits) : steps;
	const int K = (int) p.taps * cin, cout = (int) p.out.channels;
	const int M = (int) (p.in.height * p.in.width), W = (int) p.in.width, H = bd_conv2d_image_rows (p);

	/* This thread copies chunk `chunk` of rows row0 + 32 i. Their swizzled chunk is the same
	 * for all of them (32 i does not change row % 8). */
	const int chunk = t % 8, row0 = t / 8;
	const uint32_t dst0 = sw128_offset (row0, chunk);
	int ay[PIX / 32], ax[PIX / 32];
#pragma unroll
	for (int i = 0; i < PIX / 32; i++) {
		int m = m0 + row0 + 32 * i;
		ay[i] = m < M ? m / W % H : -100000;   /* never inside the image, whatever the tap */
		ax[i] = m < M ? m % W : 0;
	}
	const char *in = (const char *) p.in.data;
	const size_t w_off = bd_conv2d_weight_offset (p) * ELEM;
	const char *wk = (const char *) p.weights_k + w_off;
	const char *wk_small = F32 ? (const char *) p.weights_k_small + w_off : nullptr;

	auto load = [&] (int s) {
		const uint32_t st = base + (s % S) * T::STAGE;
		const int tap = s / slices, c = (s % slices) * BK + chunk * (16 / ELEM);
		const int dy = p.taps == 9 ? tap / 3 - 1 : 0, dx = p.taps == 9 ? tap % 3 - 1 : 0;
#pragma unroll
		for (int i = 0; i < PIX / 32; i++) {
			int y = ay[i] + dy, x = ax[i] + dx;
			bool ok = y >= 0 && x >= 0 && y < H && x < W;
			/* The neighbour, in this pixel's own image of the stack. */
			size_t m = (size_t) (m0 + row0 + 32 * i + dy * W + dx);
			const char *src = ok ? in + (m * p.in.pixel_stride + c) * ELEM : in;
			cp_async16 (st + i * 32 * 128 + dst0, src, ok);
		}
#pragma unroll
		for (int j = 0; j < CO / 32; j++) {
			int n = n0 + row0 + 32 * j;
			bool ok = n < cout;
			size_t off = ((size_t) n * K + (size_t) s * BK + chunk * (16 / ELEM)) * ELEM;
			cp_async16 (st + W_OFF + j * 32 * 128 + dst0, ok ? wk + off : wk, ok);
			if (F32)
				cp_async16 (st + WS_OFF + j * 32 * 128 + dst0, ok ? wk_small + off : wk_small, ok);
		}
	};

	constexpr int MW = T::MW;
	float d[MW][R];
	constexpr int PROMOTE = 1;   /* exact: steps summed on the tensor cores before acc */
	float acc[F32 ? MW : 1][F32 ? R : 1];
#pragma unroll
	for (int mi = 0; mi < MW; mi++)
#pragma unroll
		for (int i = 0; i < R; i++) {
			d[mi][i] = 0.0f;
			if constexpr (F32)
				acc[mi][i] = 0.0f;
		}

	for (int s = first; s < first + AHEAD; s++) {
		if (s < last)
			load (s);
		cp_async_commit ();
	}
	for (int s = first; s < last; s++) {
		/* Step s's copies are done (at most AHEAD - 1 younger groups pending). */
		cp_async_wait<AHEAD - 1> ();
		const uint32_t st = base + (s % S) * T::STAGE;
		if (F32) {   /* the small parts of the pixels this thread copied itself */
#pragma unroll
			for (int i = 0; i < PIX / 32; i++) {
				float4 *v = (float4 *) (smem + (st - base) + i * 32 * 128 + dst0);
				float4 *r = (float4 *) (smem + (st - base) + PS_OFF + i * 32 * 128 + dst0);
				float4 x = *v;
				*r = make_float4 (tf32_rest (x.x), tf32_rest (x.y), tf32_rest (x.z), tf32_rest (x.w));
			}
		}
		/* Publish them to the tensor cores and to the other threads. */
		fence_proxy_async ();
		__syncthreads ();
		/* Every warpgroup has finished the multiply of step s - 2 (it waited for all but
		 * step s - 1's), so that step's slot can be refilled with step s + AHEAD. */
		if (s + AHEAD < last)
			load (s + AHEAD);
		cp_async_commit ();

		const uint32_t pix = st + wg * (PIX / 2) * 128, w = st + W_OFF;
		const uint64_t da = sw128_descriptor (SWAP ? w : pix), db = sw128_descriptor (SWAP ? pix : w);
#pragma unroll
		for (int mi = 0; mi < MW; mi++)
			wgmma_fence_operands (d[mi]);
		wgmma_fence ();
#pragma unroll
		for (int k = 0; k < 4; k++) {   /* 32 bytes of K a multiply = 2 descriptor units */
			if constexpr (F32) {
				/* The small parts lie PS_OFF (pixels) and WS_OFF - W_OFF (weights) bytes
				 * after the big ones: big x small, small x big, then big x big. */
				const uint64_t das = sw128_descriptor (SWAP ? w + (WS_OFF - W_OFF) : pix + PS_OFF);
				const uint64_t dbs = sw128_descriptor (SWAP ? pix + PS_OFF : w + (WS_OFF - W_OFF));
#pragma unroll
				for (int mi = 0; mi < MW; mi++) {   /* 64 rows = 8192 bytes = 512 units */
					wgmma_tf32<T::N>::mma (d[mi], da + 512 * mi + 2 * k, dbs + 2 * k);
					wgmma_tf32<T::N>::mma (d[mi], das + 512 * mi + 2 * k, db + 2 * k);
					wgmma_tf32<T::N>::mma (d[mi], da + 512 * mi + 2 * k, db + 2 * k);
				}
			} else {
#pragma unroll
				for (int mi = 0; mi < MW; mi++)
					wgmma_f16<T::N>::mma (d[mi], da + 512 * mi + 2 * k, db + 2 * k);
			}
		}
		wgmma_commit ();
		wgmma_wait<1> ();
#pragma unroll
		for (int mi = 0; mi < MW; mi++)
			wgmma_fence_operands (d[mi]);
		if constexpr (F32) {
			/* The tensor cores' fp32 sums are not rounded to nearest: over a long K their
			 * error grows with K, not its square root (the shipped model against the CPU:
			 * 1.4e-3 relative, where these products summed exactly give 1.5e-5). After
			 * every PROMOTE steps the partial sums move into acc with rounded adds (every
			 * step: 3e-5..5e-5, the seed U-Net 6.2 ms; every 4th: up to 1e-4, 5.9 ms). */
			if ((s - first) % PROMOTE == PROMOTE - 1 || s == last - 1) {
				wgmma_wait<0> ();
#pragma unroll
				for (int mi = 0; mi < MW; mi++) {
					wgmma_fence_operands (d[mi]);
#pragma unroll
					for (int i = 0; i < R; i++) {
						acc[mi][i] += d[mi][i];
						d[mi][i] = 0.0f;
					}
					wgmma_fence_operands (d[mi]);
				}
			}
		}
	}
	wgmma_wait<0> ();
#pragma unroll
	for (int mi = 0; mi < MW; mi++) {
		wgmma_fence_operands (d[mi]);
		if constexpr (F32)
#pragma unroll
			for (int i = 0; i < R; i++)
				d[mi][i] = acc[mi][i];
	}
	cp_async_wait<0> ();
	__syncthreads ();   /* every multiply has read its tiles: the shared memory is free */

	/* Accumulator fragment: register i of lane l in warp w of the warpgroup holds row
	 * w * 16 + l / 4 + 8 * (i / 2 % 2), column (i / 4) * 8 + (l % 4) * 2 + i % 2 of the
	 * warpgroup's 64 x N result. Staged as [pixel][channel] in the output's type, rows
	 * padded by 16 bytes to spread them over the banks. */
	constexpr int PITCH = T::PITCH;
	const int lane = t % 32, frow = (t % 128) / 32 * 16 + lane / 4;
	if (split) {   /* raw sums to this part's slab; bd_gpu_splitk_reduce finishes the layer */
		float *slab = p.splitk + (size_t) blockIdx.z * M * cout;
#pragma unroll
		for (int mi = 0; mi < MW; mi++)
#pragma unroll
			for (int i = 0; i < R; i++) {
				int row = frow + 8 * (i / 2 % 2), col = (i / 4) * 8 + (lane % 4) * 2 + i % 2;
				int pix = SWAP ? wg * (PIX / 2) + col : wg * (PIX / 2) + mi * 64 + row;
				int ch = SWAP ? row : col;
				if (m0 + pix < M && n0 + ch < cout)
					slab[(size_t) (m0 + pix) * cout + n0 + ch] = d[mi][i];
			}
		return;
	}
#pragma unroll
	for (int mi = 0; mi < MW; mi++) {
#pragma unroll
		for (int i = 0; i < R; i += 2) {
			int row = frow + 8 * (i / 2 % 2), col = (i / 4) * 8 + (lane % 4) * 2;
			int pix0, pix1, ch0, ch1;   /* where d[i] and d[i + 1] go */
			if (SWAP) {   /* row: channel; col, col + 1: two pixels */
				pix0 = wg * (PIX / 2) + col, pix1 = pix0 + 1, ch0 = ch1 = row;
			} else {      /* row: pixel; col, col + 1: two channels */
				pix0 = pix1 = wg * (PIX / 2) + mi * 64 + row, ch0 = col, ch1 = col + 1;
			}
			float v0 = d[mi][i] + (n0 + ch0 < cout ? p.bias[n0 + ch0] : 0.0f);
			float v1 = d[mi][i + 1] + (n0 + ch1 < cout ? p.bias[n0 + ch1] : 0.0f);
			if (p.relu) {
				v0 = fmaxf (v0, 0.0f);
				v1 = fmaxf (v1, 0.0f);
			}
			if (F32) {
				((float *) smem)[pix0 * PITCH + ch0] = v0;
				((float *) smem)[pix1 * PITCH + ch1] = v1;
			} else {
				((__half *) smem)[pix0 * PITCH + ch0] = __float2half_rn (v0);
				((__half *) smem)[pix1 * PITCH + ch1] = __float2half_rn (v1);
			}
		}
	}
	__syncthreads ();
	constexpr int VEC = 16 / ELEM;   /* elements per 16-byte store */
	for (int v = t; v < PIX * CO / VEC; v += THREADS) {
		int row = v / (CO / VEC), col = (v % (CO / VEC)) * VEC;
		int m = m0 + row, n = n0 + col;
		if (m >= M || n >= cout)
			continue;
		size_t e = bd_conv2d_out_index (p, m) + n;
		*(uint4 *) ((char *) p.out.data + e * ELEM) =
			*(const uint4 *) (smem + ((size_t) row * PITCH + col) * ELEM);
	}
#endif
}

template <int PIX, int CO, bool SWAP, bool F32, int BLOCKS = 1>
bd_status
launch (const bd_gpu_conv2d_params *p, size_t M, cudaStream_t stream, bd_error *error)
{
	using T = tile<PIX, CO, SWAP, F32, BLOCKS>;
	dim3 grid (bd_div_up (M, PIX), bd_div_up (p->out.channels, CO), bd_conv2d_grid_z (p));
	conv2d_wgmma_kernel<PIX, CO, SWAP, F32, BLOCKS><<<grid, THREADS, T::SMEM, stream>>> (*p);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}

template <int PIX, int CO, bool SWAP, bool F32, int BLOCKS = 1>
bd_status
allow_smem (bd_error *error)
{
	BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_wgmma_kernel<PIX, CO, SWAP, F32, BLOCKS>,
	                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
	                                     tile<PIX, CO, SWAP, F32, BLOCKS>::SMEM));
	return BD_OK;
}

int hopper_state = -1;   /* -1 unknown, 0 unusable, 1 usable: decided on the first GPU */
/* cudaFuncSetAttribute holds for the current device only, so each GPU a session opens
 * (cuda:all opens every one) has the kernels' shared memory granted: a bit per device. */
unsigned long long smem_devices;

/* The fast path's tiles. */
enum fast_tile {
	TILE_AUTO, TILE_128x128, TILE_256x128, TILE_128x256, TILE_128x128_TWICE, TILE_256x64_SWAP,
	TILE_128x64_SWAP_TWICE, TILE_128x64_SWAP_THRICE,
};

/* BACKDROP_GPU_TILE names one tile for every layer it fits (bench-conv-cuda compares them). */
fast_tile forced_tile = TILE_AUTO;

/* The kernels' shared memory on the current device (@bit), then conv2d-tma.cu's, whose
 * warp-specialised kernels take the fast layers they fit. */
bd_status
grant_smem (unsigned long long bit, bd_error *error)
{
	bd_status st = allow_smem<256, 64, true, false> (error);
	if (st == BD_OK)
		st = allow_smem<128, 128, false, false> (error);
	if (st == BD_OK)
		st = allow_smem<256, 128, false, false> (error);
	if (st == BD_OK)
		st = allow_smem<128, 256, false, false> (error);
	if (st == BD_OK)
		st = allow_smem<128, 128, false, false, 2> (error);
	if (st == BD_OK)
		st = allow_smem<128, 64, true, false, 2> (error);
	if (st == BD_OK)
		st = allow_smem<128, 64, true, false, 3> (error);
	if (st == BD_OK)
		st = allow_smem<128, 64, false, true> (error);
	if (st == BD_OK)
		st = allow_smem<128, 128, false, true> (error);
	if (st != BD_OK)
		return st;
	hopper_state = 1;
	smem_devices |= bit;
	return bd_gpu_conv2d_tma_init (error);
}

} // namespace

bd_status
bd_gpu_conv2d_hopper_init (bd_error *error)
{
	int dev = 0, major = 0, minor = 0;
	BD_CUDA_CHECK (cudaGetDevice (&dev));
	const unsigned long long bit = dev < 64 ? 1ull << dev : 0;   /* beyond 64: granted each time */
	if (hopper_state == 0 || (hopper_state == 1 && (smem_devices & bit)))
		return BD_OK;
	if (hopper_state == 1)
		return grant_smem (bit, error);
	BD_CUDA_CHECK (cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev));
	BD_CUDA_CHECK (cudaDeviceGetAttribute (&minor, cudaDevAttrComputeCapabilityMinor, dev));
	/* BACKDROP_GPU_NO_WGMMA=1 keeps the portable kernels, to compare the two. */
	if (major != 9 || minor != 0 || bd_gpu_switches_get ().no_wgmma) {
		hopper_state = 0;
		return BD_OK;
	}
	/* The kernels hold wgmma only in the sm_90a machine code: a build without it (or a
	 * driver that compiled PTX instead) runs empty kernels, so ask the device which it has. */
	static const char *const names[] = {
		"", "128x128", "256x128", "128x256", "128x128x2", "256x64", "128x64x2", "128x64x3",
	};
	const char *tile = bd_gpu_switches_get ().tile;
	for (int i = 1; tile && i < (int) BD_ARRAY_LEN (names); i++)
		if (!strcmp (tile, names[i]))
			forced_tile = (fast_tile) i;
	int *flag, has = 0;
	BD_CUDA_CHECK (cudaMalloc (&flag, sizeof *flag));
	probe_kernel<<<1, 1>>> (flag);
	cudaError_t e = cudaGetLastError ();
	if (e == cudaSuccess)
		e = cudaMemcpy (&has, flag, sizeof has, cudaMemcpyDeviceToHost);
	cudaFree (flag);
	BD_CUDA_CHECK (e);
	if (!has) {
		hopper_state = 0;
		return BD_OK;
	}
	return grant_smem (bit, error);
}

bool
bd_gpu_conv2d_hopper_fits (const bd_gpu_conv2d_params *p, bd_precision precision)
{
	if (hopper_state != 1 || !p->weights_k || p->in.pixel_stride % 8 || p->out.pixel_stride % 8)
		return false;
	if (precision == BD_PRECISION_FAST)
		return p->in.channels % 64 == 0;
	return p->weights_k_small && p->in.channels % 32 == 0;
}

bd_status
bd_gpu_conv2d_hopper (const bd_gpu_conv2d_params *p, bd_precision precision, cudaStream_t stream,
                      bd_error *error)
{
	size_t M = (size_t) p->in.height * p->in.width, cout = p->out.channels;
	if (precision == BD_PRECISION_EXACT)
		return cout <= 64 ? launch<128, 64, false, true> (p, M, stream, error)
		                  : launch<128, 128, false, true> (p, M, stream, error);
	switch (forced_tile) {
	case TILE_128x128: return launch<128, 128, false, false> (p, M, stream, error);
	case TILE_256x128: return launch<256, 128, false, false> (p, M, stream, error);
	case TILE_128x256: return launch<128, 256, false, false> (p, M, stream, error);
	case TILE_128x128_TWICE: return launch<128, 128, false, false, 2> (p, M, stream, error);
	case TILE_256x64_SWAP: return launch<256, 64, true, false> (p, M, stream, error);
	case TILE_128x64_SWAP_TWICE: return launch<128, 64, true, false, 2> (p, M, stream, error);
	case TILE_128x64_SWAP_THRICE: return launch<128, 64, true, false, 3> (p, M, stream, error);
	case TILE_AUTO: break;
	}
	/* The tiles that won the per-layer sweep (bench/gpu-bench.sh runs every tile on every
	 * layer of the seed's table; docs/PERFORMANCE.md has the figures). The wide shallow
	 * layers have only 9 or 18 steps of K (one or two a tap), so a block's prologue and
	 * epilogue weigh: blocks that share a multiprocessor hide them behind each other's
	 * multiplies. Up to 64 output channels:
	 * 128 x 64 swapped, three blocks a multiprocessor. Up to one wave of 128 x 128 tiles over
	 * the 132 multiprocessors of an H100/H200 (deep layers of one image): 128 x 128, which
	 * makes the most blocks. More: 128 x 256 for 256+ channels where it needs no more waves,
	 * else 128 x 128 two blocks a multiprocessor. */
	if (cout <= 64)
		return launch<128, 64, true, false, 3> (p, M, stream, error);
	size_t rows = bd_div_up (M, 128) * bd_conv2d_grid_z (p), tiles = rows * bd_div_up (cout, 128);
	/* Too few tiles to fill the GPU (the deep levels of one image: 64 tiles at 32 x 32 x 1024,
	 * 24 for the shipped model's 32 x 22 x 512) leave multiprocessors idle through a long K:
	 * split K into parts of at least 8 steps, two blocks a multiprocessor, and sum the parts
	 * in a second kernel. splits x tiles <= 264 keeps the partial sums within the scratch. */
	const uint32_t parts =
		p->splitk && p->out_step == 1 ? bd_gpu_splitk_parts (tiles, (size_t) p->taps * p->in.channels / 64) : 1;
	if (parts >= 2) {
		bd_gpu_conv2d_params q = *p;
		q.splits = parts;
		bd_status st = launch<128, 128, false, false, 2> (&q, M, stream, error);
		return st != BD_OK ? st : bd_gpu_splitk_reduce (q.splitk, q.splits, q.bias, q.relu, &q.out, q.launch_early,
		                                                stream, error);
	}
	if (tiles <= 132)
		return launch<128, 128, false, false> (p, M, stream, error);
	size_t wide_waves = (rows * bd_div_up (cout, 256) + 131) / 132, square_waves = (tiles + 263) / 264;
	if (cout >= 256 && wide_waves <= square_waves)
		return launch<128, 256, false, false> (p, M, stream, error);
	return launch<128, 128, false, false, 2> (p, M, stream, error);
}
