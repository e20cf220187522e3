/* Convolution on Hopper's warpgroup tensor cores (conv2d.cuh): the fast path for layers whose
 * input channels are a multiple of 64, on GPUs of compute capability 9.0.
 *
 * Implicit GEMM, M = pixels, N = output channels, K = taps x input channels. A block computes
 * a tile of pixels x channels (128 x 128, 128 x 256, or 256 x 64) with two warpgroups. A step
 * of K is one tap's 64-channel slice: each of the tile's pixels contributes one 128-byte row
 * (its shifted neighbour's channels, or zeros outside the image), each output channel one
 * 128-byte row of the K-major weights. cp.async copies them, STAGES steps ahead, into swizzled shared tiles
 * that wgmma reads directly; one multiply stays in flight while the next step's copies
 * land. Epilogue: bias and ReLU in registers, the tile staged through shared memory as
 * halves, written out 16 bytes a thread into the output's channel slice. */
#include "conv2d.cuh"
#include "wgmma.cuh"

#include <stdlib.h>
#include <string.h>

/* Outside the sm_90a pass the kernel compiles empty, leaving its helpers unused. */
#pragma nv_diag_suppress 177

namespace {

constexpr int BK = 64, THREADS = 256;

/* A block's tile: PIX pixels x CO output channels. Normally each warpgroup multiplies 64 of
 * the pixels (A) by all CO channels' weights (B, wgmma's N = CO). With SWAP the roles turn
 * round for 64-channel layers: the 64 channels' weights are A and each warpgroup's PIX / 2
 * pixels are B, so one multiply reads 64 x 16 weights and 128 x 16 pixels rather than
 * 64 x 16 pixels and only 64 x 16 weights, and shared-memory bandwidth stops being the limit. */
template <int PIX, int CO, bool SWAP> struct tile {
	static constexpr int N = SWAP ? PIX / 2 : CO;              /* wgmma's N */
	static constexpr int STAGE = (PIX + CO) * 128;             /* bytes per pipeline step */
	static constexpr int STAGES = (226 * 1024) / STAGE > 6 ? 6 : (226 * 1024) / STAGE;
	static constexpr int SMEM = STAGES * STAGE + 1024;         /* + alignment slack */
	static_assert (!SWAP || CO == 64, "swapped tiles hold 64 channels (wgmma's M)");
	static_assert (SWAP || PIX == 128, "two warpgroups of 64 pixels");
	static_assert (PIX * (CO + 8) * 2 <= STAGES * STAGE, "the epilogue's tile fits");
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

__global__ void
probe_kernel (int *has_wgmma)
{
	*has_wgmma = BD_HAVE_WGMMA;
}

template <int PIX, int CO, bool SWAP>
__global__ void __launch_bounds__ (THREADS, 1)
conv2d_wgmma_kernel (const bd_gpu_conv2d_params p)
{
#if BD_HAVE_WGMMA
	using T = tile<PIX, CO, SWAP>;
	constexpr int S = T::STAGES, AHEAD = S - 2, R = T::N / 2;
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *) (((uintptr_t) smem_raw + 1023) & ~(uintptr_t) 1023);
	const uint32_t base = (uint32_t) __cvta_generic_to_shared (smem);
	/* Step s's pixel tile at base + slot * STAGE, its weight tile PIX rows after it. */

	const int t = threadIdx.x, wg = t / 128;
	const int m0 = blockIdx.x * PIX, n0 = blockIdx.y * CO;
	const int cin = (int) p.in.channels, slices = cin / BK, steps = (int) p.taps * slices;
	const int K = (int) p.taps * cin, cout = (int) p.out.channels;
	const int M = (int) (p.in.height * p.in.width), W = (int) p.in.width, H = (int) p.in.height;

	/* This thread copies chunk `chunk` of rows row0 + 32 i. Their swizzled chunk is the same
	 * for all of them (32 i does not change row % 8). */
	const int chunk = t % 8, row0 = t / 8;
	const uint32_t dst0 = sw128_offset (row0, chunk);
	int ay[PIX / 32], ax[PIX / 32];
#pragma unroll
	for (int i = 0; i < PIX / 32; i++) {
		int m = m0 + row0 + 32 * i;
		ay[i] = m < M ? m / W : -100000;   /* never inside the image, whatever the tap */
		ax[i] = m < M ? m % W : 0;
	}
	const __half *in = (const __half *) p.in.data;
	const __half *wk = (const __half *) p.weights_k;

	auto load = [&] (int s) {
		const uint32_t pix_tile = base + (s % S) * T::STAGE, w_tile = pix_tile + PIX * 128;
		const int tap = s / slices, c = (s % slices) * BK + chunk * 8;
		const int dy = p.taps == 9 ? tap / 3 - 1 : 0, dx = p.taps == 9 ? tap % 3 - 1 : 0;
#pragma unroll
		for (int i = 0; i < PIX / 32; i++) {
			int y = ay[i] + dy, x = ax[i] + dx;
			bool ok = y >= 0 && x >= 0 && y < H && x < W;
			const __half *src = ok ? in + ((size_t) y * W + x) * p.in.pixel_stride + c : in;
			cp_async16 (pix_tile + i * 32 * 128 + dst0, src, ok);
		}
#pragma unroll
		for (int j = 0; j < CO / 32; j++) {
			int n = n0 + row0 + 32 * j;
			bool ok = n < cout;
			const __half *src = ok ? wk + (size_t) n * K + (size_t) s * BK + chunk * 8 : wk;
			cp_async16 (w_tile + j * 32 * 128 + dst0, src, ok);
		}
	};

	float d[R];
#pragma unroll
	for (int i = 0; i < R; i++)
		d[i] = 0.0f;

	for (int s = 0; s < AHEAD; s++) {
		if (s < steps)
			load (s);
		cp_async_commit ();
	}
	for (int s = 0; s < steps; s++) {
		/* Step s's copies are done (at most AHEAD - 1 younger groups pending); publish them
		 * to the tensor cores and to the other threads. */
		cp_async_wait<AHEAD - 1> ();
		fence_proxy_async ();
		__syncthreads ();
		/* Every warpgroup has finished the multiply of step s - 2 (it waited for all but
		 * step s - 1's), so that step's slot can be refilled with step s + AHEAD. */
		if (s + AHEAD < steps)
			load (s + AHEAD);
		cp_async_commit ();

		const uint32_t pix_tile = base + (s % S) * T::STAGE, w_tile = pix_tile + PIX * 128;
		const uint64_t da = sw128_descriptor (SWAP ? w_tile : pix_tile + wg * 64 * 128);
		const uint64_t db = sw128_descriptor (SWAP ? pix_tile + wg * (PIX / 2) * 128 : w_tile);
		wgmma_fence_operands (d);
		wgmma_fence ();
#pragma unroll
		for (int k = 0; k < BK / 16; k++)   /* 16 halves = 32 bytes = 2 descriptor units */
			wgmma_f16<T::N>::mma (d, da + 2 * k, db + 2 * k);
		wgmma_commit ();
		wgmma_wait<1> ();
		wgmma_fence_operands (d);
	}
	wgmma_wait<0> ();
	wgmma_fence_operands (d);
	cp_async_wait<0> ();
	__syncthreads ();   /* every multiply has read its tiles: the shared memory is free */

	/* Accumulator fragment: register i of lane l in warp w of the warpgroup holds row
	 * w * 16 + l / 4 + 8 * (i / 2 % 2), column (i / 4) * 8 + (l % 4) * 2 + i % 2 of the
	 * warpgroup's 64 x N result. Staged as [pixel][channel] halves. */
	constexpr int PITCH = CO + 8;   /* halves; the 16-byte pad spreads rows over the banks */
	__half *out_tile = (__half *) smem;
	const int lane = t % 32, frow = (t % 128) / 32 * 16 + lane / 4;
#pragma unroll
	for (int i = 0; i < R; i += 2) {
		int row = frow + 8 * (i / 2 % 2), col = (i / 4) * 8 + (lane % 4) * 2;
		if (SWAP) {   /* row: channel; col, col + 1: two pixels */
			float b = n0 + row < cout ? p.bias[n0 + row] : 0.0f;
			float v0 = d[i] + b, v1 = d[i + 1] + b;
			if (p.relu) {
				v0 = fmaxf (v0, 0.0f);
				v1 = fmaxf (v1, 0.0f);
			}
			int pix = wg * (PIX / 2) + col;
			out_tile[pix * PITCH + row] = __float2half_rn (v0);
			out_tile[(pix + 1) * PITCH + row] = __float2half_rn (v1);
		} else {      /* row: pixel; col, col + 1: two channels */
			float b0 = n0 + col < cout ? p.bias[n0 + col] : 0.0f;
			float b1 = n0 + col + 1 < cout ? p.bias[n0 + col + 1] : 0.0f;
			float v0 = d[i] + b0, v1 = d[i + 1] + b1;
			if (p.relu) {
				v0 = fmaxf (v0, 0.0f);
				v1 = fmaxf (v1, 0.0f);
			}
			*(__half2 *) &out_tile[(wg * 64 + row) * PITCH + col] = __floats2half2_rn (v0, v1);
		}
	}
	__syncthreads ();
	const size_t row_elems = (size_t) W * p.out_step * p.out.pixel_stride;
	for (int v = t; v < PIX * CO / 8; v += THREADS) {
		int row = v / (CO / 8), col = (v % (CO / 8)) * 8;
		int m = m0 + row, n = n0 + col;
		if (m >= M || n >= cout)
			continue;
		int y = m / W, x = m % W;
		__half *dst = (__half *) p.out.data + (size_t) y * p.out_step * row_elems +
		              (size_t) x * p.out_step * p.out.pixel_stride + n;
		*(uint4 *) dst = *(const uint4 *) &out_tile[row * PITCH + col];
	}
#endif
}

template <int PIX, int CO, bool SWAP>
bd_status
launch (const bd_gpu_conv2d_params *p, size_t M, cudaStream_t stream, bd_error *error)
{
	dim3 grid (bd_div_up (M, PIX), bd_div_up (p->out.channels, CO));
	conv2d_wgmma_kernel<PIX, CO, SWAP><<<grid, THREADS, tile<PIX, CO, SWAP>::SMEM, stream>>> (*p);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}

template <int PIX, int CO, bool SWAP>
bd_status
allow_smem (bd_error *error)
{
	BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_wgmma_kernel<PIX, CO, SWAP>,
	                                     cudaFuncAttributeMaxDynamicSharedMemorySize, tile<PIX, CO, SWAP>::SMEM));
	return BD_OK;
}

int hopper_state = -1;   /* -1 unknown, 0 unusable, 1 usable */

} // namespace

bd_status
bd_gpu_conv2d_hopper_init (bd_error *error)
{
	if (hopper_state >= 0)
		return BD_OK;
	int dev = 0, major = 0, minor = 0;
	BD_CUDA_CHECK (cudaGetDevice (&dev));
	BD_CUDA_CHECK (cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev));
	BD_CUDA_CHECK (cudaDeviceGetAttribute (&minor, cudaDevAttrComputeCapabilityMinor, dev));
	/* BACKDROP_GPU_NO_WGMMA=1 keeps the portable kernels, to compare the two. */
	const char *off = getenv ("BACKDROP_GPU_NO_WGMMA");
	if (major != 9 || minor != 0 || (off && *off && strcmp (off, "0"))) {
		hopper_state = 0;
		return BD_OK;
	}
	/* The kernels hold wgmma only in the sm_90a machine code: a build without it (or a
	 * driver that compiled PTX instead) runs empty kernels, so ask the device which it has. */
	int *flag, has = 0;
	BD_CUDA_CHECK (cudaMalloc (&flag, sizeof *flag));
	probe_kernel<<<1, 1>>> (flag);
	cudaError_t e = cudaGetLastError ();
	if (e == cudaSuccess)
		e = cudaMemcpy (&has, flag, sizeof has, cudaMemcpyDeviceToHost);
	cudaFree (flag);
	BD_CUDA_CHECK (e);
	bd_status st = BD_OK;
	if (has && st == BD_OK)
		st = allow_smem<256, 64, true> (error);
	if (has && st == BD_OK)
		st = allow_smem<128, 128, false> (error);
	if (has && st == BD_OK)
		st = allow_smem<128, 256, false> (error);
	if (st != BD_OK)
		return st;
	hopper_state = has;
	return BD_OK;
}

bool
bd_gpu_conv2d_hopper_fits (const bd_gpu_conv2d_params *p)
{
	return hopper_state == 1 && p->weights_k && p->in.channels % BK == 0 && p->in.pixel_stride % 8 == 0 &&
	       p->out.pixel_stride % 8 == 0;
}

bd_status
bd_gpu_conv2d_hopper (const bd_gpu_conv2d_params *p, cudaStream_t stream, bd_error *error)
{
	size_t M = (size_t) p->in.height * p->in.width, cout = p->out.channels;
	if (cout <= 64)
		return launch<256, 64, true> (p, M, stream, error);
	/* Wide tiles read each pixel tile for more channels, but deep layers have few pixels:
	 * count the waves of blocks over the 132 multiprocessors of an H100/H200, each wave of
	 * 128-channel tiles taking about 0.6 of a 256-channel one's time (measured per layer). */
	size_t waves256 = (bd_div_up (M, 128) * bd_div_up (cout, 256) + 131) / 132;
	size_t waves128 = (bd_div_up (M, 128) * bd_div_up (cout, 128) + 131) / 132;
	if (cout >= 256 && waves256 * 10 <= waves128 * 6)
		return launch<128, 256, false> (p, M, stream, error);
	return launch<128, 128, false> (p, M, stream, error);
}
