/* Convolution on Hopper's warpgroup tensor cores (conv2d.cuh): the fast path for layers whose
 * input channels are a multiple of 64, on GPUs of compute capability 9.0.
 *
 * Implicit GEMM, M = pixels, N = output channels, K = taps x input channels. A block computes
 * 128 pixels x BN channels with two warpgroups of 64 pixels each. A step of K is one tap's
 * 64-channel slice: each of the block's 128 pixels contributes one 128-byte row (its shifted
 * neighbour's channels, or zeros outside the image), each output channel one 128-byte row of
 * the K-major weights. cp.async copies them, STAGES steps ahead, into swizzled shared tiles
 * that wgmma reads directly; one multiply stays in flight while the next step's copies
 * land. Epilogue: bias and ReLU in registers, the tile staged through shared memory as
 * halves, written out 16 bytes a thread into the output's channel slice. */
#include "conv2d.cuh"
#include "wgmma.cuh"

#include <stdlib.h>

namespace {

constexpr int BM = 128, BK = 64, THREADS = 256;

/* Shared memory per pipeline step: the A and B tiles, 128 bytes a row. The depth keeps
 * the total within Hopper's 227 KB: 5 x 32 KB for BN = 128, 4 x 48 KB for BN = 256. */
template <int BN> constexpr int stages () { return BN == 256 ? 4 : BN == 128 ? 5 : 6; }
template <int BN> constexpr int smem_bytes () { return stages<BN> () * (BM + BN) * 128 + 1024; }

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

template <int BN>
__global__ void __launch_bounds__ (THREADS, 1)
conv2d_wgmma_kernel (const bd_gpu_conv2d_params p)
{
#if BD_HAVE_WGMMA
	constexpr int S = stages<BN> (), AHEAD = S - 2, R = BN / 2;
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *) (((uintptr_t) smem_raw + 1023) & ~(uintptr_t) 1023);
	const uint32_t a_base = (uint32_t) __cvta_generic_to_shared (smem);
	const uint32_t b_base = a_base + S * BM * 128;

	const int t = threadIdx.x, wg = t / 128;
	const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
	const int cin = (int) p.in.channels, slices = cin / BK, steps = (int) p.taps * slices;
	const int K = (int) p.taps * cin, cout = (int) p.out.channels;
	const int M = (int) (p.in.height * p.in.width), W = (int) p.in.width, H = (int) p.in.height;

	/* This thread copies chunk `chunk` of rows row0 + 32 i: 4 rows of A, BN / 32 of B. Their
	 * swizzled chunk is the same for all of them (32 i does not change row % 8). */
	const int chunk = t % 8, row0 = t / 8;
	const uint32_t dst0 = sw128_offset (row0, chunk);
	int ay[4], ax[4];
#pragma unroll
	for (int i = 0; i < 4; i++) {
		int m = m0 + row0 + 32 * i;
		ay[i] = m < M ? m / W : -100000;   /* never inside the image, whatever the tap */
		ax[i] = m < M ? m % W : 0;
	}
	const __half *in = (const __half *) p.in.data;
	const __half *wk = (const __half *) p.weights_k;

	auto load = [&] (int s) {
		const int slot = s % S, tap = s / slices, c = (s % slices) * BK + chunk * 8;
		const int dy = p.taps == 9 ? tap / 3 - 1 : 0, dx = p.taps == 9 ? tap % 3 - 1 : 0;
#pragma unroll
		for (int i = 0; i < 4; i++) {
			int y = ay[i] + dy, x = ax[i] + dx;
			bool ok = y >= 0 && x >= 0 && y < H && x < W;
			const __half *src = ok ? in + ((size_t) y * W + x) * p.in.pixel_stride + c : in;
			cp_async16 (a_base + slot * BM * 128 + i * 32 * 128 + dst0, src, ok);
		}
#pragma unroll
		for (int j = 0; j < BN / 32; j++) {
			int n = n0 + row0 + 32 * j;
			bool ok = n < cout;
			const __half *src = ok ? wk + (size_t) n * K + (size_t) s * BK + chunk * 8 : wk;
			cp_async16 (b_base + slot * BN * 128 + j * 32 * 128 + dst0, src, ok);
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

		const int slot = s % S;
		const uint64_t da = sw128_descriptor (a_base + slot * BM * 128 + wg * 64 * 128);
		const uint64_t db = sw128_descriptor (b_base + slot * BN * 128);
		wgmma_fence_operands (d);
		wgmma_fence ();
#pragma unroll
		for (int k = 0; k < BK / 16; k++)   /* 16 halves = 32 bytes = 2 descriptor units */
			wgmma_f16<BN>::mma (d, da + 2 * k, db + 2 * k);
		wgmma_commit ();
		wgmma_wait<1> ();
		wgmma_fence_operands (d);
	}
	wgmma_wait<0> ();
	wgmma_fence_operands (d);
	cp_async_wait<0> ();
	__syncthreads ();   /* every multiply has read its tiles: the shared memory is free */

	/* Accumulator fragment: register i of lane l in warp w of the warpgroup holds row
	 * w * 16 + l / 4 + 8 * (i / 2 % 2), column (i / 4) * 8 + (l % 4) * 2 + i % 2. */
	constexpr int PITCH = BN + 8;   /* halves; the 16-byte pad spreads rows over the banks */
	__half *tile = (__half *) smem;
	const int lane = t % 32, wrow = wg * 64 + (t % 128) / 32 * 16 + lane / 4;
#pragma unroll
	for (int i = 0; i < R; i += 2) {
		int row = wrow + 8 * (i / 2 % 2), col = (i / 4) * 8 + (lane % 4) * 2;
		float b0 = n0 + col < cout ? p.bias[n0 + col] : 0.0f;
		float b1 = n0 + col + 1 < cout ? p.bias[n0 + col + 1] : 0.0f;
		float v0 = d[i] + b0, v1 = d[i + 1] + b1;
		if (p.relu) {
			v0 = fmaxf (v0, 0.0f);
			v1 = fmaxf (v1, 0.0f);
		}
		*(__half2 *) &tile[row * PITCH + col] = __floats2half2_rn (v0, v1);
	}
	__syncthreads ();
	const size_t row_elems = (size_t) W * p.out_step * p.out.pixel_stride;
	for (int v = t; v < BM * BN / 8; v += THREADS) {
		int row = v / (BN / 8), col = (v % (BN / 8)) * 8;
		int m = m0 + row, n = n0 + col;
		if (m >= M || n >= cout)
			continue;
		int y = m / W, x = m % W;
		__half *dst = (__half *) p.out.data + (size_t) y * p.out_step * row_elems +
		              (size_t) x * p.out_step * p.out.pixel_stride + n;
		*(uint4 *) dst = *(const uint4 *) &tile[row * PITCH + col];
	}
#endif
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
	if (major != 9 || minor != 0 || getenv ("BACKDROP_GPU_NO_WGMMA")) {
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
	if (has) {
		BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_wgmma_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
		                                     smem_bytes<64> ()));
		BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_wgmma_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
		                                     smem_bytes<128> ()));
		BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_wgmma_kernel<256>, cudaFuncAttributeMaxDynamicSharedMemorySize,
		                                     smem_bytes<256> ()));
	}
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
	/* Wide tiles read the A tile once for more channels, but the deep layers have few
	 * pixels: keep at least one block per multiprocessor (132 on an H100/H200). */
	int bn = cout <= 64 ? 64 : (cout >= 256 && bd_div_up (M, BM) * bd_div_up (cout, 256) >= 132) ? 256 : 128;
	dim3 grid (bd_div_up (M, BM), bd_div_up (cout, bn));
	if (bn == 64)
		conv2d_wgmma_kernel<64><<<grid, THREADS, smem_bytes<64> (), stream>>> (*p);
	else if (bn == 128)
		conv2d_wgmma_kernel<128><<<grid, THREADS, smem_bytes<128> (), stream>>> (*p);
	else
		conv2d_wgmma_kernel<256><<<grid, THREADS, smem_bytes<256> (), stream>>> (*p);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
