/* SPDX-License-Identifier: Apache-2.0 */
/* Convolution on Hopper with warp-specialised blocks fed by the tensor memory accelerator
 * (TMA): the fast path (fp16) for layers whose input channels are a multiple of 64, on GPUs
 * of compute capability 9.0. The same implicit GEMM as conv2d-hopper.cu (M = pixels, N =
 * output channels, K = taps x input channels, a step = one tap's 64 channels), but:
 *
 * - A block's 128 pixels are a rectangle of the image (TW x TH, TW from 8 to 128 chosen per
 *   layer so that the rectangles waste the least), so a step's pixels are one TMA box at
 *   (channel, x + dx, y + dy, image): the copy engine fetches the shifted neighbours, writes
 *   zeros outside the image (the padding), and swizzles them as wgmma reads them. The
 *   weights are a second box. No thread computes an address.
 * - One producer warp issues the copies; two consumer warpgroups multiply. They meet on
 *   mbarriers, a "full" one per stage (the copy engine counts the bytes in) and an "empty"
 *   one (each consumer warp arrives when its multiply of that stage is done), so no
 *   block-wide barrier falls inside the K loop, and the copies run as many stages ahead as
 *   fit in shared memory.
 * - Halo tiles (3x3 layers of up to 64 outputs, the widest images): the block's pixels are
 *   16 rows of 8, and one box of 18 rows, shifted by dx, serves the three taps dy of that
 *   column at three 1 KB offsets: each input pixel is copied 3 times rather than 9.
 *
 * Epilogue as conv2d-hopper.cu: bias and ReLU in registers, the tile staged in shared memory,
 * 16 bytes a thread into the output's channel slice; and where asked, the 2x2 max-pool of the
 * tile for the next level and the network's 1x1 head. A split K's parts add up their sums in
 * a cluster, through each other's shared memory, or leave fp32 partial sums to
 * splitk-reduce.cu where its clusters would not all run at once.
 *
 * The tile rules below (bd_gpu_conv2d_tma) also give the layers whose weights fit in shared
 * memory to conv2d-resident.cu; what both files' kernels share is in tma.cuh. */
#include "conv2d-resident.cuh"
#include "splitk-reduce.cuh"
#include "tma.cuh"
#include "gpu-switches.cuh"

#include <cudaTypedefs.h>
#include <stdlib.h>
#include <string.h>

/* Outside the sm_90a pass the kernel compiles empty, leaving its helpers unused. */
#pragma nv_diag_suppress 177

namespace {

/* A block's tile: PIX pixels x CO output channels. With SWAP the weights are wgmma's A (64
 * channels a warpgroup) and pixels its B (see conv2d-hopper.cu): 64-channel tiles give each
 * warpgroup PIX / 2 of the pixels, 128-channel tiles (256 pixels) each warpgroup 64 of the
 * channels and all the pixels, so that a multiply is 64 x 256, as of 128 x 256 tiles.
 * 256 x 64 tiles (a multiply reading 2 KB of weights for 4 KB of pixels, rather than 2 for
 * 2) stay for the tile sweep: they measured slower than 128 (docs/PERFORMANCE.md). */
template <int PIX, int CO, bool SWAP, int BLOCKS, bool HALO> struct ws_tile {
	static constexpr bool SPLIT_CHANNELS = SWAP && CO == 128;   /* warpgroup cw: channels cw * 64 .. */
	static constexpr int N = SWAP ? (SPLIT_CHANNELS ? PIX : PIX / 2) : CO;   /* wgmma's N */
	/* Bytes a step: its pixels (HALO: 8-pixel rows, 1 KB each, two more than the tile's
	 * 16) and its weights (HALO: the three taps of one column). */
	static constexpr int PIXEL_BYTES = HALO ? (PIX / 8 + 2) * 1024 : PIX * 128;
	static constexpr int STAGE = PIXEL_BYTES + (HALO ? 3 : 1) * CO * 128;
	static constexpr int BUDGET = (228 / BLOCKS - 2) * 1024;    /* a block's share, less slack */
	static constexpr int STAGES = BUDGET / STAGE > 8 ? 8 : BUDGET / STAGE;
	static constexpr int BARRIERS = 2 * STAGES * 8;             /* full and empty, 8 bytes each */
	static constexpr int SMEM = STAGES * STAGE + BARRIERS + 1024;   /* + alignment slack */
	static constexpr int PITCH = CO + 8;                        /* epilogue row, halves */
	/* A step in use, one in flight; three taps a step (HALO) afford that. */
	static_assert (STAGES >= (HALO ? 2 : 3), "too few stages");
	static_assert (!HALO || (SWAP && PIX == 128), "halo tiles: 16 rows of 8 pixels, swapped");
	static_assert (!SWAP || CO == 64 || (CO == 128 && PIX == 256), "swapped tiles: 64 channels, or 128 of 256 pixels");
	static_assert (PIX == 128 || (SWAP && PIX == 256), "a warpgroup multiplies 64 pixels, or 128 swapped");
	static_assert (PIX * PITCH * 2 <= STAGES * STAGE, "the epilogue's tile fits");
};

#if BD_HAVE_WGMMA
/* Every thread of the cluster meets here; the writes to shared memory before are seen by the
 * reads after, in any block of the cluster. */
__device__ __forceinline__ void
cluster_barrier ()
{
	asm volatile ("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ uint32_t
cluster_rank ()
{
	uint32_t r;
	asm volatile ("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

/* 16 bytes at shared address @local of the cluster's block @rank. */
__device__ __forceinline__ float4
load_from_block (uint32_t local, uint32_t rank)
{
	uint32_t a;
	float4 v;
	asm volatile ("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(a) : "r"(local), "r"(rank));
	asm volatile ("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
	              : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a) : "memory");
	return v;
}
#endif


/* SUMS: the blocks of a split K are a cluster (one a part, in the order of the parts) and add
 * up their sums through each other's shared memory, each finishing a share of the tile,
 * rather than leaving them to splitk-reduce.cu: no fp32 slabs through L2, no reduce kernel. */
template <int PIX, int CO, bool SWAP, int BLOCKS, bool HALO, bool SUMS = false>
__global__ void __launch_bounds__ (THREADS, BLOCKS)
conv2d_tma_kernel (const __grid_constant__ bd_gpu_conv2d_params p, const __grid_constant__ CUtensorMap pixels,
                   const __grid_constant__ CUtensorMap weights, const ws_geometry g)
{
#if BD_HAVE_WGMMA
	using T = ws_tile<PIX, CO, SWAP, BLOCKS, HALO>;
	constexpr int S = T::STAGES, R = T::N / 2;
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *) (((uintptr_t) smem_raw + 1023) & ~(uintptr_t) 1023);
	const uint32_t base = (uint32_t) __cvta_generic_to_shared (smem);
	const uint32_t full = base + S * T::STAGE, empty = full + 8 * S;

	const int t = threadIdx.x;
	/* A step: one tap's 64 channels; HALO (3x3 only): one column of taps (dx), its pixels
	 * one box of 8 x 18 that the three rows of taps (dy) read at three offsets. */
	const int cin = (int) p.in.channels, slices = cin / 64, steps = (HALO ? 3 : (int) p.taps) * slices;
	const bool split = p.out_step == 1 && p.splits > 1;
	const int first = split ? (int) ((long) steps * blockIdx.z / p.splits) : 0;
	const int last = split ? (int) ((long) steps * (blockIdx.z + 1) / p.splits) : steps;
	const int n = last - first;

	/* This block's rectangle. */
	const int TW = 1 << g.tw_shift, TH = PIX >> g.tw_shift;
	const int tx = blockIdx.x % g.tiles_x, ty = blockIdx.x / g.tiles_x % g.tiles_y;
	const int img = blockIdx.x / (g.tiles_x * g.tiles_y);
	const int x0 = tx * TW, y0 = ty * TH, n0 = blockIdx.y * CO;
	const int W = (int) p.in.width, H = bd_conv2d_image_rows (p), cout = (int) p.out.channels;

	bd_allow_next_kernel ();
	if (t == 0) {
		for (int i = 0; i < S; i++) {
			mbar_init (full + 8 * i, 1);                  /* the producer's expect_tx */
			mbar_init (empty + 8 * i, CONSUMERS / 32);    /* each consumer warp */
		}
		asm volatile ("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads ();

	static_assert (!SUMS || (!SWAP && !HALO), "the cluster's sums: plain tiles only");
	if (t >= CONSUMERS) {   /* the producer warp: one thread issues every copy */
		if (t != CONSUMERS) {
			if constexpr (SUMS) {   /* the consumers' two cluster barriers */
				cluster_barrier ();
				cluster_barrier ();
			}
			return;
		}
		prefetch_tensor_maps (&pixels, &weights);
		const int z = p.out_step == 2 ? (int) blockIdx.z : 0;
		/* Step i's weights (HALO: the three taps of its column) and pixels, into its stage. */
		auto load_weights = [&] (int i) {
			const int s = first + i, slot = i % S;
			const uint32_t st = base + slot * T::STAGE, bar = full + 8 * slot;
			mbar_expect_bytes (bar, T::STAGE);
			if (HALO) {
				const int column = s / slices, c = (s % slices) * 64;
				for (int row = 0; row < 3; row++)
					tma_load_3d (st + T::PIXEL_BYTES + row * CO * 128, &weights, bar, (row * 3 + column) * cin + c,
					             n0, z);
			} else {
				tma_load_3d (st + PIX * 128, &weights, bar, s / slices * cin + (s % slices) * 64, n0, z);
			}
		};
		auto load_pixels = [&] (int i) {
			const int s = first + i, slot = i % S;
			const uint32_t st = base + slot * T::STAGE, bar = full + 8 * slot;
			const int c = (s % slices) * 64;
			if (HALO) {
				tma_load_4d (st, &pixels, bar, c, x0 + s / slices - 1, y0 - 1, img);
			} else {
				const int tap = s / slices;
				const int dy = p.taps == 9 ? tap / 3 - 1 : 0, dx = p.taps == 9 ? tap % 3 - 1 : 0;
				tma_load_4d (st, &pixels, bar, c, x0 + dx, y0 + dy, img);
			}
		};
		/* The weights are the model's, not an earlier kernel's output: the first stages'
		 * are fetched while the layer before may still be running. */
		const int ahead = n < S ? n : S;
		for (int i = 0; i < ahead; i++)
			load_weights (i);
		bd_wait_for_earlier_kernels ();
		for (int i = 0; i < n; i++) {
			if (i >= S) {
				mbar_wait (empty + 8 * (i % S), ((i / S) & 1) ^ 1);
				load_weights (i);
			}
			load_pixels (i);
		}
		if constexpr (SUMS) {
			cluster_barrier ();
			cluster_barrier ();
		}
		return;
	}
	bd_wait_for_earlier_kernels ();   /* the consumers write activations */

	/* The consumers: warpgroup cw multiplies its half of the tile (ws_tile). */
	const int cw = t / 128;
	float d[R];
#pragma unroll
	for (int i = 0; i < R; i++)
		d[i] = 0.0f;
	int slot = 0, before = 0;   /* step i's stage and step i - 1's, counted rather than divided */
	uint32_t phase = 0;
	for (int i = 0; i < n; i++) {
		mbar_wait (full + 8 * slot, phase);
		const uint32_t st = base + slot * T::STAGE;
		wgmma_fence_operands (d);
		wgmma_fence ();
		if constexpr (HALO) {   /* tap row dy reads box rows cw * 8 + dy + 1 .. + 8 */
#pragma unroll
			for (int row = 0; row < 3; row++) {
				const uint64_t da = sw128_descriptor (st + T::PIXEL_BYTES + row * CO * 128);
				const uint64_t db = sw128_descriptor (st + (cw * 8 + row) * 1024);
#pragma unroll
				for (int k = 0; k < 4; k++)
					wgmma_f16<T::N>::mma (d, da + 2 * k, db + 2 * k);
			}
		} else {
			const uint32_t pix = st + (T::SPLIT_CHANNELS ? 0 : cw * (PIX / 2) * 128);
			const uint32_t w = st + PIX * 128 + (T::SPLIT_CHANNELS ? cw * 64 * 128 : 0);
			const uint64_t da = sw128_descriptor (SWAP ? w : pix), db = sw128_descriptor (SWAP ? pix : w);
#pragma unroll
			for (int k = 0; k < 4; k++)   /* 32 bytes of K a multiply = 2 descriptor units */
				wgmma_f16<T::N>::mma (d, da + 2 * k, db + 2 * k);
		}
		wgmma_commit ();
		/* The multiply of step i - 1 is done: its stage goes back to the producer. */
		wgmma_wait<1> ();
		wgmma_fence_operands (d);
		if (i > 0 && t % 32 == 0)
			mbar_arrive (empty + 8 * before);
		before = slot;
		if (++slot == S)
			slot = 0, phase ^= 1;
	}
	wgmma_wait<0> ();
	wgmma_fence_operands (d);
	consumers_sync ();   /* both warpgroups are done with every stage: reuse it */

	/* Accumulator fragment (conv2d-hopper.cu): register i of lane l in warp w of the
	 * warpgroup holds row w * 16 + l / 4 + 8 * (i / 2 % 2), column (i / 4) * 8 + (l % 4) * 2
	 * + i % 2 of the warpgroup's 64 x N result. Tile row r is pixel (x0 + r % TW, y0 + r / TW). */
	const int lane = t % 32, frow = (t % 128) / 32 * 16 + lane / 4;
	auto pixel_index = [&] (int r) -> int {   /* flattened pixel of tile row r, or -1 outside */
		int x = x0 + (r & (TW - 1)), y = y0 + (r >> g.tw_shift);
		return x < W && y < H ? (img * H + y) * W + x : -1;
	};
	if constexpr (SUMS) {
		/* This part's sums as fp32 [pixel][SP] into the stages (a half warp's float2 stores
		 * then cover the 32 banks once), then block `rank` finishes its share of the tile's
		 * 8-channel groups: the bias, every part's sums in order, ReLU, as splitk-reduce.cu
		 * adds them (the two paths split K into different parts, so their outputs differ by
		 * fp32 rounding). */
		constexpr int SP = CO + 8;
		static_assert (PIX * SP * 4 <= S * T::STAGE, "the sums fit in the stages");
		float *part = (float *) smem;
#pragma unroll
		for (int i = 0; i < R; i += 2) {
			const int row = cw * (PIX / 2) + frow + 8 * (i / 2 % 2), col = (i / 4) * 8 + (lane % 4) * 2;
			*(float2 *) (part + row * SP + col) = make_float2 (d[i], d[i + 1]);
		}
		cluster_barrier ();
		const uint32_t parts = p.splits, rank = cluster_rank ();
		const uint32_t local = (uint32_t) __cvta_generic_to_shared (part);
		constexpr int GROUPS = PIX * CO / 8;
		const int to = (int) (GROUPS * (rank + 1) / parts);
		for (int v = (int) (GROUPS * rank / parts) + t; v < to; v += CONSUMERS) {
			const int r = v / (CO / 8), col = (v % (CO / 8)) * 8;
			const int x = x0 + (r & (TW - 1)), y = y0 + (r >> g.tw_shift);
			if (x >= W || y >= H || n0 + col >= cout)
				continue;
			float s[8];
#pragma unroll
			for (int k = 0; k < 8; k++)
				s[k] = p.bias[n0 + col + k];
			for (uint32_t z = 0; z < parts; z++) {
				const uint32_t at = local + (uint32_t) (r * SP + col) * 4;
				const float4 a = load_from_block (at, z), b = load_from_block (at + 16, z);
				s[0] += a.x, s[1] += a.y, s[2] += a.z, s[3] += a.w;
				s[4] += b.x, s[5] += b.y, s[6] += b.z, s[7] += b.w;
			}
			const float relu_floor = p.relu ? 0.0f : -INFINITY;
			uint4 h;
			h.x = pack_half2 (fmaxf (s[0], relu_floor), fmaxf (s[1], relu_floor));
			h.y = pack_half2 (fmaxf (s[2], relu_floor), fmaxf (s[3], relu_floor));
			h.z = pack_half2 (fmaxf (s[4], relu_floor), fmaxf (s[5], relu_floor));
			h.w = pack_half2 (fmaxf (s[6], relu_floor), fmaxf (s[7], relu_floor));
			*(uint4 *) ((__half *) p.out.data + bd_conv2d_out_at (p, img * H + y, x) + n0 + col) = h;
		}
		cluster_barrier ();   /* no block leaves while another reads its sums */
		return;
	}
	if (split) {   /* raw sums to this part's slab; bd_gpu_splitk_reduce finishes the layer */
		const int M = (int) (p.in.height * p.in.width);
		float *slab = p.splitk + (size_t) blockIdx.z * M * cout;
#pragma unroll
		for (int i = 0; i < R; i++) {
			int row = frow + 8 * (i / 2 % 2), col = (i / 4) * 8 + (lane % 4) * 2 + i % 2;
			int r = T::SPLIT_CHANNELS ? col : SWAP ? cw * (PIX / 2) + col : cw * (PIX / 2) + row;
			int ch = T::SPLIT_CHANNELS ? cw * 64 + row : SWAP ? row : col;
			int m = pixel_index (r);
			if (m >= 0 && n0 + ch < cout)
				slab[(size_t) m * cout + n0 + ch] = d[i];
		}
		return;
	}
	/* Bias and ReLU, then the tile as half into shared memory [pixel][PITCH], each 8 x 8
	 * block of the fragment (block nb = i / 4 along wgmma's N, h = i / 2 % 2 down its 64
	 * rows) by stmatrix, four a store: store q's matrix m is block (2q + m / 2, m % 2), and
	 * this thread names row lane % 8 of matrix lane / 8. Swapped, the rows are channels and
	 * each block goes in transposed; else the rows are pixels. */
	constexpr int PITCH = T::PITCH;
	{
		const int w = (t % 128) / 32, j = lane / 8;
		const int pix0 = T::SPLIT_CHANNELS ? 0 : cw * (PIX / 2), ch0 = T::SPLIT_CHANNELS ? cw * 64 : 0;
		const uint32_t at = (uint32_t) __cvta_generic_to_shared (smem) +
		                    2 * (SWAP ? (pix0 + (j / 2) * 8 + lane % 8) * PITCH + ch0 + w * 16 + 8 * (j % 2)
		                              : (pix0 + w * 16 + 8 * (j % 2) + lane % 8) * PITCH + (j / 2) * 8);
		float row_bias[2];   /* swapped: the bias of the thread's two channels (rows) */
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int ch = n0 + ch0 + w * 16 + lane / 4 + 8 * h;
			row_bias[h] = SWAP && ch < cout ? p.bias[ch] : 0.0f;
		}
		const float relu_floor = p.relu ? 0.0f : -INFINITY;   /* ReLU as a max */
#pragma unroll
		for (int q = 0; q < T::N / 16; q++) {
			uint32_t r[4];
#pragma unroll
			for (int m = 0; m < 4; m++) {
				const int i = (2 * q + m / 2) * 4 + (m % 2) * 2;
				float b0 = row_bias[m % 2], b1 = b0;
				if (!SWAP) {   /* the columns are channels: two a pair */
					const int ch = n0 + (2 * q + m / 2) * 8 + (lane % 4) * 2;
					b0 = ch < cout ? p.bias[ch] : 0.0f;
					b1 = ch + 1 < cout ? p.bias[ch + 1] : 0.0f;
				}
				r[m] = pack_half2 (fmaxf (d[i] + b0, relu_floor), fmaxf (d[i + 1] + b1, relu_floor));
			}
			stmatrix_x4<SWAP> (at + q * (SWAP ? 16 * PITCH * 2 : 32), r[0], r[1], r[2], r[3]);
		}
	}
	consumers_sync ();
	const __half *tile = (const __half *) smem;
	if (g.head) {   /* the network's last layer: only the probabilities leave the block */
		int m = t < PIX ? pixel_index (t) : -1;
		if (m >= 0)
			p.head_out[m] = head_probability (tile + t * PITCH, p);
		return;
	}
	for (int v = t; v < PIX * CO / 8; v += CONSUMERS) {
		int r = v / (CO / 8), col = (v % (CO / 8)) * 8;
		int x = x0 + (r & (TW - 1)), y = y0 + (r >> g.tw_shift);
		if (x >= W || y >= H || n0 + col >= cout)
			continue;
		size_t e = bd_conv2d_out_at (p, img * H + y, x) + n0 + col;
		*(uint4 *) ((__half *) p.out.data + e) = *(const uint4 *) (tile + r * PITCH + col);
	}
	if (g.pool) {   /* the next level's input: 2x2 maxima of the tile (TW, TH, W, H even) */
		const int PW = TW / 2;
		for (int v = t; v < PIX / 4 * CO / 8; v += CONSUMERS) {
			int q = v / (CO / 8), col = (v % (CO / 8)) * 8;   /* TW a power of two: no divisions */
			int r = (q >> (g.tw_shift - 1)) * 2 * TW + (q & (PW - 1)) * 2;
			int x = x0 + (r & (TW - 1)), y = y0 + (r >> g.tw_shift);
			if (x >= W || y >= H || n0 + col >= cout)
				continue;
			size_t o = ((size_t) ((img * H + y) / 2) * (W / 2) + x / 2) * p.pool.pixel_stride + n0 + col;
			pool_2x2_store (tile, r, TW, PITCH, col, (__half *) p.pool.data + o);
		}
	}
#endif
}

/* The fast path's tiles here; BACKDROP_GPU_TILE=ws... forces one for every layer. */
enum ws_choice {
	WS_AUTO, WS_128x128, WS_128x256, WS_128x128x2, WS_128x64x2, WS_128x64x3, WS_256x64, WS_HALO, WS_HALO_TWICE,
	WS_RESIDENT, WS_256x128,
};
const char *const ws_names[] = {
	"", "ws128x128", "ws128x256", "ws128x128x2", "ws128x64x2", "ws128x64x3", "ws256x64", "wshalo", "wshalox2",
	"wsresident", "ws256x128",
};
ws_choice forced = WS_AUTO;
int tma_state = -1;   /* -1 unknown, 0 unusable, 1 usable: decided on the first GPU */
unsigned long long tma_devices;   /* those whose shared memory is granted, a bit each */
int wide_split = 0;         /* BACKDROP_GPU_WIDE_SPLIT=N: its fewest steps (0: never; bd_gpu_conv2d_tma) */
bool wide_pixels = true;    /* BACKDROP_GPU_WIDE_PIXELS=0 turns 256 x 128 off (both rules) */
bool swapped_up = false;    /* BACKDROP_GPU_SWAPPED_UP=1 turns them on (bd_gpu_conv2d_tma) */
bool wide_resident = true;  /* BACKDROP_GPU_RESIDENT_128=0 turns 64 -> 128 resident off */
bool cluster_sums = true;   /* BACKDROP_GPU_CLUSTER_SUMS=0: split K through splitk-reduce.cu */
int max_clusters[9];        /* of k = 2..8 blocks of the cluster sums' kernel at once (count_clusters) */
int split_steps = 50;       /* BACKDROP_GPU_SPLIT_STEPS=N: the fewest steps the reduce kernel's split takes */
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;
int multiprocessors;

template <int PIX, int CO, bool SWAP, int BLOCKS, bool HALO = false, bool SUMS = false>
bd_status
allow_smem (bd_error *error)
{
	BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_tma_kernel<PIX, CO, SWAP, BLOCKS, HALO, SUMS>,
	                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
	                                     ws_tile<PIX, CO, SWAP, BLOCKS, HALO>::SMEM));
	return BD_OK;
}

/* How many clusters of 2..8 blocks of the cluster sums' kernel the GPU runs at once: clusters
 * stay within a GPC, so fewer than the multiprocessors / k (an H200: 30 of 4, 15 of 8). Where
 * the runtime cannot tell, none: split K goes through the reduce kernel. */
void
count_clusters ()
{
	for (int k = 2; k <= 8; k++) {
		cudaLaunchAttribute cluster;
		cluster.id = cudaLaunchAttributeClusterDimension;
		cluster.val.clusterDim.x = 1;
		cluster.val.clusterDim.y = 1;
		cluster.val.clusterDim.z = (unsigned) k;
		cudaLaunchConfig_t config = {};
		config.gridDim = dim3 (1, 1, (unsigned) k);
		config.blockDim = dim3 (THREADS);
		config.dynamicSmemBytes = ws_tile<128, 128, false, 1, false>::SMEM;
		config.attrs = &cluster;
		config.numAttrs = 1;
		if (cudaOccupancyMaxActiveClusters (&max_clusters[k],
		                                    conv2d_tma_kernel<128, 128, false, 1, false, true>,
		                                    &config) != cudaSuccess) {
			cudaGetLastError ();
			max_clusters[k] = 0;
		}
	}
}

/* Into how many parts a split K of @tiles tiles of 128 x 128 and @steps steps goes when its
 * parts sum in a cluster: the most (at most 8, of 8 steps or more) whose clusters all run at
 * once, one block a multiprocessor with all its stages; 0 where none fits or it is off.
 * Clusters in waves cost more than the reduce saves (level 4 of the seed U-Net at 4 parts, 64
 * clusters where 30 fit: 0.747 ms against 0.691 at 2 and 0.710 by the reduce kernel). */
uint32_t
cluster_parts (size_t tiles, size_t steps)
{
	if (!cluster_sums)
		return 0;
	for (int k = 8; k >= 2; k--)
		if ((size_t) k * 8 <= steps && tiles <= (size_t) max_clusters[k])
			return (uint32_t) k;
	return 0;
}

/* The rectangle width (8..128, a power of two) whose tiles cover width x height with the
 * fewest wasted pixels; on a tie the wider (longer rows a copy). */
int
choose_tw_shift (int width, int height, int widest, int pixels)
{
	int best = widest;
	long best_area = -1;
	for (int s = widest; s >= 3; s--) {
		long tw = 1L << s, th = pixels >> s;
		long area = (long) bd_div_up ((size_t) width, (unsigned) tw) * tw *
		            (long) bd_div_up ((size_t) height, (unsigned) th) * th;
		if (best_area < 0 || area < best_area)
			best = s, best_area = area;
	}
	return best;
}

bd_status
encode (CUtensorMap *map, const void *data, int rank, const cuuint64_t *dims, const cuuint64_t *strides,
        const cuuint32_t *box, bd_error *error)
{
	static const cuuint32_t ones[4] = { 1, 1, 1, 1 };
	CUresult r = encode_tiled (map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, (cuuint32_t) rank, (void *) data, dims,
	                           strides, box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
	                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS)
		return bd_error_set (error, BD_ERR_DEVICE, "cuTensorMapEncodeTiled failed (%d) for a %d-d map", (int) r, rank);
	return BD_OK;
}


template <int PIX, int CO, bool SWAP, int BLOCKS, bool HALO = false, bool SUMS = false>
bd_status
launch (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed, bd_error *error)
{
	using T = ws_tile<PIX, CO, SWAP, BLOCKS, HALO>;
	ws_geometry g;
	CUtensorMap pixels, weights;
	unsigned tiles;
	bd_status st = bd_gpu_tma_prepare (p, PIX, CO, HALO, &g, &pixels, &weights, &tiles, pooled, headed, error);
	if (st != BD_OK)
		return st;
	dim3 grid (tiles, bd_div_up (p->out.channels, CO), bd_conv2d_grid_z (p));
	const dim3 cluster (1, 1, SUMS ? grid.z : 1);   /* SUMS: a split K's parts */
	BD_CUDA_CHECK (bd_launch_early_in_clusters (p->launch_early, cluster,
	                                            conv2d_tma_kernel<PIX, CO, SWAP, BLOCKS, HALO, SUMS>, grid,
	                                            dim3 (THREADS), T::SMEM, stream, *p, pixels, weights, g));
	return BD_OK;
}

} // namespace

/* The geometry and tensor maps of a launch (tma.cuh). */
bd_status
bd_gpu_tma_prepare (const bd_gpu_conv2d_params *p, int PIX, int CO, bool HALO, ws_geometry *g, CUtensorMap *pixels,
                    CUtensorMap *weights, unsigned *tiles, bool *pooled, bool *headed, bd_error *error, bool wide)
{
	const size_t el = sizeof (__half);
	const uint32_t H = p->image_height ? p->image_height : p->in.height, images = p->in.height / H;
	const bool whole = p->out_step == 1 && p->splits <= 1;   /* the block holds final values */
	/* Pooling in the block needs whole 2x2 squares: rectangles at least two rows high. */
	g->pool = whole && p->pool.data && p->in.width % 2 == 0 && H % 2 == 0;
	g->head = whole && p->head_out && p->out.channels <= (uint32_t) CO;
	g->tw_shift = HALO ? 3 : choose_tw_shift ((int) p->in.width, (int) H, g->pool ? 6 : 7, PIX);
	*pooled = g->pool;
	*headed = g->head;
	g->tiles_x = (int) bd_div_up (p->in.width, 1u << g->tw_shift);
	g->tiles_y = (int) bd_div_up (H, (unsigned) PIX >> g->tw_shift);
	*tiles = images * (unsigned) (g->tiles_x * g->tiles_y);

	/* The pixels: channels x width x rows x images, strided as the view (a channel slice of
	 * a wider buffer reads its own channels only). */
	const cuuint64_t pdims[4] = { p->in.channels, p->in.width, H, images };
	const cuuint64_t pstrides[3] = { p->in.pixel_stride * el, (cuuint64_t) p->in.width * p->in.pixel_stride * el,
		                         (cuuint64_t) H * p->in.width * p->in.pixel_stride * el };
	const uint32_t box_width = (1u << g->tw_shift) + (wide ? 2 : 0);
	const uint32_t box_rows = ((uint32_t) PIX >> g->tw_shift) + (HALO ? 2 : 0);
	const cuuint32_t pbox[4] = { 64, box_width, box_rows, 1 };
	/* The K-major weights: K x output channels x (the transposed convolution's 4 taps). */
	const cuuint64_t K = (cuuint64_t) p->taps * p->in.channels, Z = p->out_step == 2 ? 4 : 1;
	const cuuint64_t wdims[3] = { K, p->out.channels, Z };
	const cuuint64_t wstrides[2] = { K * el, K * p->out.channels * el };
	const cuuint32_t wbox[3] = { 64, (cuuint32_t) CO, 1 };
	bd_status st = encode (pixels, p->in.data, 4, pdims, pstrides, pbox, error);
	return st != BD_OK ? st : encode (weights, p->weights_k, 3, wdims, wstrides, wbox, error);
}

static bd_status grant_tma_smem (int device, unsigned long long bit, bd_error *error);

bd_status
bd_gpu_conv2d_tma_init (bd_error *error)
{
	/* The shared memory is granted per device (cudaFuncSetAttribute), the rest once. */
	int device = 0;
	if (cudaGetDevice (&device) != cudaSuccess)
		return bd_error_set (error, BD_ERR_DEVICE, "cannot tell the current GPU");
	const unsigned long long bit = device < 64 ? 1ull << device : 0;
	if (tma_state == 0 || (tma_state == 1 && (tma_devices & bit)))
		return BD_OK;
	if (tma_state == 1)
		return grant_tma_smem (device, bit, error);
	tma_state = 0;
	/* BACKDROP_GPU_NO_TMA=1 keeps conv2d-hopper.cu's kernels, to compare the two. */
	const bd_gpu_switches &sw = bd_gpu_switches_get ();
	if (sw.no_tma)
		return BD_OK;
	/* The encoder is the driver's: found through the runtime, so nothing links libcuda. */
	void *fn = NULL;
	cudaDriverEntryPointQueryResult found;
	if (cudaGetDriverEntryPointByVersion ("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
	            cudaSuccess ||
	    found != cudaDriverEntryPointSuccess || !fn) {
		cudaGetLastError ();   /* an old driver: the other Hopper kernels remain */
		return BD_OK;
	}
	encode_tiled = (PFN_cuTensorMapEncodeTiled_v12000) fn;
	if (sw.wide_split >= 0)
		wide_split = sw.wide_split;
	wide_pixels = sw.wide_pixels;
	swapped_up = sw.swapped_up;
	wide_resident = sw.resident_128;
	cluster_sums = sw.cluster_sums;
	if (sw.split_steps >= 0)
		split_steps = sw.split_steps;
	/* BACKDROP_GPU_TILE naming one of conv2d-hopper.cu's tiles leaves every layer to it. */
	const char *tile = sw.tile;
	for (int i = 1; tile && i < (int) BD_ARRAY_LEN (ws_names); i++)
		if (!strcmp (tile, ws_names[i]))
			forced = (ws_choice) i;
	if (tile && *tile && forced == WS_AUTO)
		return BD_OK;
	return grant_tma_smem (device, bit, error);
}

/* The kernels' shared memory on the current @device (@bit of tma_devices). */
static bd_status
grant_tma_smem (int device, unsigned long long bit, bd_error *error)
{
	bd_status st = allow_smem<128, 128, false, 1> (error);
	if (st == BD_OK)
		st = allow_smem<128, 256, false, 1> (error);
	if (st == BD_OK)
		st = allow_smem<128, 128, false, 2> (error);
	if (st == BD_OK)
		st = allow_smem<128, 128, false, 1, false, true> (error);
	if (st == BD_OK)
		count_clusters ();
	if (st == BD_OK)
		st = allow_smem<128, 64, true, 2> (error);
	if (st == BD_OK)
		st = allow_smem<128, 64, true, 3> (error);
	if (st == BD_OK)
		st = allow_smem<256, 64, true, 1> (error);
	if (st == BD_OK)
		st = allow_smem<256, 128, true, 1> (error);
	if (st == BD_OK)
		st = allow_smem<128, 64, true, 1, true> (error);
	if (st == BD_OK)
		st = allow_smem<128, 64, true, 2, true> (error);
	if (st == BD_OK)
		st = bd_gpu_conv2d_resident_grant (device, error);
	if (st == BD_OK && cudaDeviceGetAttribute (&multiprocessors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
		st = bd_error_set (error, BD_ERR_DEVICE, "cannot count the GPU's multiprocessors");
	if (st != BD_OK)
		return st;
	tma_state = 1;
	tma_devices |= bit;
	return BD_OK;
}

bool
bd_gpu_conv2d_tma_fits (const bd_gpu_conv2d_params *p, bd_precision precision)
{
	/* TMA needs 16-byte aligned rows and strides: channels padded to 16 give that. */
	return tma_state == 1 && precision == BD_PRECISION_FAST && p->weights_k && p->in.channels % 64 == 0 &&
	       p->in.pixel_stride % 8 == 0 && p->out.pixel_stride % 8 == 0 && ((uintptr_t) p->in.data & 15) == 0 &&
	       p->in.width <= (1u << 24) && p->in.height <= (1u << 24);
}

bd_status
bd_gpu_conv2d_tma (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed, bd_error *error)
{
	*pooled = *headed = false;
	switch (forced) {
	case WS_128x128: return launch<128, 128, false, 1> (p, stream, pooled, headed, error);
	case WS_128x256: return launch<128, 256, false, 1> (p, stream, pooled, headed, error);
	case WS_128x128x2: return launch<128, 128, false, 2> (p, stream, pooled, headed, error);
	case WS_128x64x2: return launch<128, 64, true, 2> (p, stream, pooled, headed, error);
	case WS_128x64x3: return launch<128, 64, true, 3> (p, stream, pooled, headed, error);
	case WS_256x64: return launch<256, 64, true, 1> (p, stream, pooled, headed, error);
	case WS_256x128: return launch<256, 128, true, 1> (p, stream, pooled, headed, error);
	case WS_HALO:
	case WS_HALO_TWICE:
		if (p->taps != 9 || p->out.channels > 64)
			break;   /* the halo tiles only for 3x3 layers of up to 64 outputs */
		return forced == WS_HALO ? launch<128, 64, true, 1, true> (p, stream, pooled, headed, error)
		                         : launch<128, 64, true, 2, true> (p, stream, pooled, headed, error);
	case WS_RESIDENT:
	case WS_AUTO: break;
	}
	const bool resident = p->taps == 9 && (p->in.channels == 64 || p->in.channels == 128) &&
	                      p->out.channels <= 64 && p->out_step == 1;
	if (resident && (forced == WS_AUTO || forced == WS_RESIDENT))
		return bd_gpu_conv2d_resident (p, stream, pooled, headed, error);
	/* 64 inputs and 128 outputs: the same weights' size (144 KB) as 128 and 64, resident, the
	 * two warpgroups each multiplying a box by both halves of them, where the 8 x 8 tiles make
	 * 4 waves or more (the first layer of level 1 at 512 x 512). */
	const bool resident_wide = wide_resident && p->taps == 9 && p->in.channels == 64 && p->out.channels > 64 &&
	                           p->out.channels <= 128 && p->out_step == 1 && !p->head_out &&
	                           bd_div_up (p->in.width, 8) * bd_div_up (bd_conv2d_image_rows (*p), 8) *
	                                           (p->in.height / bd_conv2d_image_rows (*p)) >=
	                                   4 * (size_t) multiprocessors;
	if (resident_wide && (forced == WS_AUTO || forced == WS_RESIDENT))
		return bd_gpu_conv2d_resident (p, stream, pooled, headed, error);
	const bool resident_up = p->out_step == 2 && (p->in.channels == 64 || p->in.channels == 128) &&
	                         p->out.channels <= 64;
	if (resident_up && forced == WS_AUTO)   /* BACKDROP_GPU_TILE=wsresident: the 3x3 ones only */
		return bd_gpu_conv2d_resident (p, stream, pooled, headed, error);
	/* Transposed convolutions of 512 inputs or more (8 steps and more, 4 taps), when asked:
	 * swapped 128 x 64 tiles, two blocks a multiprocessor, so that one block's epilogue
	 * overlaps the other's copies. They paid before the epilogues' stmatrix (ncu, seed U-Net:
	 * 14 against 17.5 us at 1024 inputs), no longer since (the network 0.705-0.707 ms without
	 * them and the wide split below, 0.711-0.715 with both; at batch 4 2.405 against 2.434). */
	if (p->out_step == 2 && swapped_up && p->in.channels >= 512 && forced == WS_AUTO)
		return launch<128, 64, true, 2> (p, stream, pooled, headed, error);
	/* From the per-layer sweep (docs/PERFORMANCE.md): 3x3 layers of 64 or 128 input channels
	 * and up to 64 outputs keep their weights resident (above); other layers of up to 64 outputs,
	 * swapped 128 x 64 tiles, for 3x3 layers with the halo (two blocks a multiprocessor: a stage
	 * holds three taps), else three blocks a multiprocessor; layers of too few tiles split
	 * K (of 50 steps or more, else swapped 128 x 64 tiles twice); one wave: 128 x 128; more:
	 * 256 x 128 for 128 outputs and for 256 in one wave, 128 x 256 where it needs no more
	 * waves, else 128 x 128 twice. */
	const size_t cout = p->out.channels;
	if (cout <= 64)
		return p->taps == 9 ? launch<128, 64, true, 2, true> (p, stream, pooled, headed, error)
		                    : launch<128, 64, true, 3> (p, stream, pooled, headed, error);
	const size_t rows = bd_div_up ((size_t) p->in.height * p->in.width, 128) * bd_conv2d_grid_z (p);
	const size_t tiles = rows * bd_div_up (cout, 128);
	const size_t steps = (size_t) p->taps * p->in.channels / 64;
	const uint32_t parts = p->splitk && p->out_step == 1 ? bd_gpu_splitk_parts (tiles, steps) : 1;
	if (parts >= 2) {
		bd_gpu_conv2d_params q = *p;
		/* The parts sum in a cluster where all its clusters run at once (cluster_parts)
		 * and the channels come in groups of 8 as the reduce kernel's do: no reduce, so
		 * short layers split too (the seed U-Net at 256 x 256: 0.320 -> 0.303 ms). */
		q.splits = cluster_parts (tiles, steps);
		if (q.splits && cout % 8 == 0 && p->out.pixel_stride % 8 == 0)
			return launch<128, 128, false, 1, false, true> (&q, stream, pooled, headed, error);
		/* Else too few steps (36: 256 inputs) to pay for the reduce: swapped 128 x 64 tiles,
		 * two a multiprocessor, for twice the tiles (the shipped model's shape: 0.471 ->
		 * 0.455 ms, before the cluster sums). */
		if (steps < (size_t) split_steps)
			return launch<128, 64, true, 2> (p, stream, pooled, headed, error);
		q.splits = parts;
		bd_status st = launch<128, 128, false, 2> (&q, stream, pooled, headed, error);
		return st != BD_OK ? st
		                   : bd_gpu_splitk_reduce (q.splitk, q.splits, q.bias, q.relu, &q.out, q.launch_early, stream,
		                                           error);
	}
	if (tiles <= 132) {
		/* One wave of 128 x 128 tiles, when asked (BACKDROP_GPU_WIDE_SPLIT=N): as many 128 x 256
		 * tiles, each with half of K, then the reduce, for layers of N steps and more. With 128
		 * it took the decoder's layer of 1024 inputs, and paid until the epilogues' stmatrix
		 * (above); 72 and 36 steps measured slower. The reduce cannot pool. */
		if (wide_split > 0 && p->splitk && p->out_step == 1 && cout % 256 == 0 && !p->head_out &&
		    !p->pool.data && (size_t) p->taps * p->in.channels / 64 >= (size_t) wide_split) {
			bd_gpu_conv2d_params q = *p;
			q.splits = 2;   /* 2 x M x cout floats: 2 x tiles of 128 x 128, within BD_GPU_SPLITK_FLOATS */
			bd_status st = launch<128, 256, false, 1> (&q, stream, pooled, headed, error);
			return st != BD_OK ? st
			                   : bd_gpu_splitk_reduce (q.splitk, q.splits, q.bias, q.relu, &q.out,
			                                           q.launch_early, stream, error);
		}
		return launch<128, 128, false, 1> (p, stream, pooled, headed, error);
	}
	/* 128 outputs of 128 inputs or more, a wave or more of 256-pixel tiles: 256 x 128, whose
	 * multiplies are 64 x 256 (64 inputs, 9 steps a tile, measured slower). */
	if (cout == 128 && p->in.channels >= 128 && wide_pixels &&
	    bd_div_up ((size_t) p->in.height * p->in.width, 256) * bd_conv2d_grid_z (p) >= 132)
		return launch<256, 128, true, 1> (p, stream, pooled, headed, error);
	size_t wide_waves = (rows * bd_div_up (cout, 256) + 131) / 132, square_waves = (tiles + 263) / 264;
	/* 256 outputs in one wave of 128 x 256 tiles (level 2 of the seed U-Net at 512 x 512): as
	 * many 256 x 128 tiles, 5-6 us faster a layer by ncu (22 against 28 us for 128 -> 256
	 * channels at 128 x 128; the seed U-Net 0.856 -> 0.835 ms). Not at 512 outputs (level 3:
	 * slower) nor over several waves (measured only at one). */
	if (cout == 256 && wide_pixels && wide_waves == 1 && wide_waves <= square_waves)
		return launch<256, 128, true, 1> (p, stream, pooled, headed, error);
	if (cout >= 256 && wide_waves <= square_waves)
		return launch<128, 256, false, 1> (p, stream, pooled, headed, error);
	return launch<128, 128, false, 2> (p, stream, pooled, headed, error);
}
