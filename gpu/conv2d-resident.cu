/* SPDX-License-Identifier: Apache-2.0 */
/* The resident-weights kernels of the fast path on Hopper (sm_90a): a block a multiprocessor
 * copies a layer's weights into shared memory once and loops over tiles of pixels, so a tile
 * costs only the copy of its pixels. For the 3x3 layers of 64 or 128 input channels and up
 * to 64 output channels (and 64 -> 128), and the transposed convolutions of the decoder's
 * last levels. Warp-specialised as conv2d-tma.cu's kernel (tma.cuh); its tile rules choose
 * these kernels (bd_gpu_conv2d_tma). */
#include "conv2d-resident.cuh"
#include "gpu-switches.cuh"
#include "tma.cuh"

/* Outside the sm_90a pass the kernels compile empty, leaving their helpers unused. */
#pragma nv_diag_suppress 177

namespace {

/* Shared by the two resident-weights kernels below. */
#if BD_HAVE_WGMMA
/* S stages in two rings, one a consumer warpgroup ("empty": that warpgroup's 4 warps), the
 * barrier of the weights' copy, and each warpgroup's turn at the tensor cores (its 4 warps'
 * arrivals: resident_turn). */
__device__ __forceinline__ void
resident_barriers_init (uint32_t full, uint32_t empty, uint32_t loaded, uint32_t turn, int S)
{
	for (int i = 0; i < S; i++) {
		mbar_init (full + 8 * i, 1);      /* the producer's expect_tx */
		mbar_init (empty + 8 * i, 4);     /* the warps of the warpgroup that used it */
	}
	mbar_init (loaded, 1);
	mbar_init (turn, 4);
	mbar_init (turn + 8, 4);
	asm volatile ("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* A resident kernel's shared memory, for its tile type T: the weights (at wsm), S stages of
 * boxes, the two warpgroups' staging tiles, then the barriers. Lets the next kernel be
 * scheduled, sets the barriers up, and returns after the block's barrier. */
struct resident_smem {
	unsigned char *base;
	uint32_t       wsm, stages, full, empty, loaded, turn;
};

template <typename T>
__device__ __forceinline__ resident_smem
resident_start (unsigned char *raw)
{
	resident_smem m;
	m.base = (unsigned char *) (((uintptr_t) raw + 1023) & ~(uintptr_t) 1023);
	m.wsm = (uint32_t) __cvta_generic_to_shared (m.base);
	m.stages = m.wsm + T::WEIGHT_BYTES;
	m.full = m.stages + T::STAGES * T::BOX_BYTES + 2 * T::EPILOGUE_BYTES;
	m.empty = m.full + 8 * T::STAGES;
	m.loaded = m.empty + 8 * T::STAGES;
	m.turn = m.loaded + 8;
	bd_allow_next_kernel ();
	if (threadIdx.x == 0)
		resident_barriers_init (m.full, m.empty, m.loaded, m.turn, T::STAGES);
	__syncthreads ();
	return m;
}

/* Warpgroup cw's staging tile. */
template <typename T>
__device__ __forceinline__ __half *
resident_staging (const resident_smem &m, int cw)
{
	return (__half *) (m.base + T::WEIGHT_BYTES + T::STAGES * T::BOX_BYTES + cw * T::EPILOGUE_BYTES);
}

/* Where box `step` of the block's tile jt (of STEPS boxes each) lies among the S stages, and
 * the parity of its phase there. Tile jt is warpgroup jt % 2's, and each warpgroup has its
 * own ring of S / 2 stages. (One ring for both, the boxes in the block's order, is safe where
 * the warpgroups take turns, but measured slower: 81.8 against 77.5 us for the seed U-Net's
 * 128 -> 64 layer.) */
struct resident_ring_pos {
	int      slot;
	uint32_t parity;
};

template <int S, int STEPS>
__device__ __forceinline__ resident_ring_pos
resident_ring (int jt, int step)
{
	const int k = jt / 2 * STEPS + step, R = S / 2;
	return { jt % 2 * R + k % R, (uint32_t) (k / R) & 1 };
}

/* The producer: the box at (channel c, x, y, image img), of copy_bytes, into its stage (of
 * stage_bytes), once that is free. */
__device__ __forceinline__ void
resident_load_box (const CUtensorMap *pixels, uint32_t stages, uint32_t full, uint32_t empty, int stage_bytes,
                   int copy_bytes, resident_ring_pos at, int c, int x, int y, int img)
{
	mbar_wait (empty + 8 * at.slot, at.parity ^ 1);
	mbar_expect_bytes (full + 8 * at.slot, copy_bytes);
	tma_load_4d (stages + at.slot * stage_bytes, pixels, full + 8 * at.slot, c, x, y, img);
}

/* The two warpgroups take turns at the tensor cores: warpgroup cw issues the multiplies of
 * its n-th tile (or tap) only after the other has issued those of its own last one, so that
 * one stores its tile while the other multiplies. Left to themselves the two fall into step,
 * multiplying together and then storing together while the tensor cores wait. Warpgroup 0
 * goes first: its n-th turn follows warpgroup 1's (n - 1)-th (a fresh barrier counts parity 1
 * as passed), warpgroup 1's n-th follows warpgroup 0's n-th. A turn is passed only to a
 * warpgroup that will wait for it (an unclaimed phase is a fault to compute-sanitizer's
 * synccheck). */
__device__ __forceinline__ void
resident_turn_wait (uint32_t turn, int cw, int n)
{
	mbar_wait (turn + 8 * cw, cw ? n & 1 : (n - 1) & 1);
}

/* The other warpgroup's turn: one arrival from each warp of this one. */
__device__ __forceinline__ void
resident_turn_pass (uint32_t turn, int cw, int lane)
{
	if (lane == 0)
		mbar_arrive (turn + 8 * (1 - cw));
}

/* What a consumer thread keeps through the tiles: its warpgroup cw, the named barrier of
 * that warpgroup, and the two channels its registers hold (of 64, from `first`), with their
 * bias. */
struct resident_consumer {
	int   cw, lt, lane, bar, ch;
	float bias0, bias1, relu_floor;
};

__device__ __forceinline__ resident_consumer
resident_consumer_of (const bd_gpu_conv2d_params &p, int t, int first = 0)
{
	resident_consumer c;
	c.cw = t / 128, c.lt = t % 128, c.lane = t % 32, c.bar = 2 + c.cw;
	c.ch = c.lt / 32 * 16 + c.lane / 4;
	const int cout = (int) p.out.channels;
	c.bias0 = first + c.ch < cout ? p.bias[first + c.ch] : 0.0f;
	c.bias1 = first + c.ch + 8 < cout ? p.bias[first + c.ch + 8] : 0.0f;
	c.relu_floor = p.relu ? 0.0f : -INFINITY;   /* ReLU as a max */
	return c;
}

/* A warpgroup's 64 channels x PIX pixels (swapped fragment: register i of lane l in warp w
 * holds channel w * 16 + l / 4 + 8 * (i / 2 % 2), tile pixel (i / 4) * 8 + (l % 4) * 2 +
 * i % 2) + bias, ReLU, as half into its staging tile [pixel][PITCH], between two barriers
 * of the warpgroup (c.bar): the last tile is read no more before, this one is whole after.
 * Each 8 x 8 block of the fragment (8 channels of 8 pixels) goes in transposed by stmatrix,
 * four a store: 64 two-byte stores a thread took as many instructions as the multiplies. */
template <int PIX, int PITCH>
__device__ __forceinline__ void
resident_stage (const float (&d)[PIX / 2], __half *tile, const resident_consumer &c)
{
	asm volatile ("bar.sync %0, 128;\n" ::"r"(c.bar) : "memory");
	/* Store q's matrix j is pixel block 2q + j / 2, channel half j % 2; this thread names
	 * row (pixel) lane % 8 of matrix lane / 8. */
	const int j = c.lane / 8;
	const uint32_t at = (uint32_t) __cvta_generic_to_shared (tile) +
	                    (((j / 2) * 8 + c.lane % 8) * PITCH + c.lt / 32 * 16 + 8 * (j % 2)) * 2;
#pragma unroll
	for (int q = 0; q < PIX / 16; q++) {
		uint32_t r[4];
#pragma unroll
		for (int m = 0; m < 4; m++) {
			const int i = (2 * q + m / 2) * 4 + (m % 2) * 2;
			const float b = m % 2 ? c.bias1 : c.bias0;
			r[m] = pack_half2 (fmaxf (d[i] + b, c.relu_floor), fmaxf (d[i + 1] + b, c.relu_floor));
		}
		stmatrix_x4<true> (at + q * 16 * PITCH * 2, r[0], r[1], r[2], r[3]);
	}
	asm volatile ("bar.sync %0, 128;\n" ::"r"(c.bar) : "memory");
}
#endif

/* Resident weights, for 3x3 layers of 64 or 128 input and up to 64 output channels (the
 * widest images): the layer's weights (72 or 144 KB) are copied into shared memory once per
 * block, and each block (one a multiprocessor) loops over halo tiles of ROWS rows of 8
 * pixels, so a tile costs the copy of its pixels alone. conv2d_tma_kernel fetches the
 * weights again for every tile: 72 KB against 54 KB of pixels, most of the layer's traffic
 * from L2. The two consumer warpgroups take tiles in turn and each multiplies its whole tile
 * (wgmma N = the tile's pixels), so one stores its tile while the other multiplies the next.
 * 128 input channels leave room for 8-row tiles only. CO = 128 (64 inputs, the same 144 KB):
 * each warpgroup multiplies its box by both 64-channel halves of the weights and stages the
 * two halves in turn through its 64-channel epilogue tile.
 *
 * The boxes (WIDE, the default): 64 channels of ROWS + 2 rows of 10 pixels, the tile and its
 * halo on all four sides, one box a slice serving all nine taps: tap (dy, dx) is the box
 * from pixel dx of row dy on, its 8-pixel rows 10 pixels apart (sw128_descriptor's group
 * stride). Each pixel is copied once rather than three times, and a box holds three times a
 * column's work, so the copies run further ahead of the multiplies (the 128 -> 64 layer's
 * consumers had waited for its boxes a third of the time). Otherwise (BACKDROP_GPU_WIDE_BOXES
 * =0) a box is one column of taps, 8 pixels wide, read by its three taps at 1 KB offsets. */
template <int SLICES, int ROWS, int CO, bool WIDE> struct resident_tile {
	static constexpr int TAPS = 9, PIX = ROWS * 8, HALVES = CO / 64;
	static constexpr int WEIGHT_BYTES = TAPS * SLICES * CO * 128;   /* CO outputs x 64 inputs a tap and slice */
	/* A box: ROWS + 2 rows of 8 pixels x 64 channels, WIDE of 10; its stage 1024-aligned. */
	static constexpr int COPY_BYTES = (ROWS + 2) * (WIDE ? 10 : 8) * 128;
	static constexpr int BOX_BYTES = (COPY_BYTES + 1023) / 1024 * 1024;
	static constexpr int STEPS = WIDE ? SLICES : 3 * SLICES;        /* a tile's boxes */
	static constexpr int PITCH = 64 + 8;                            /* epilogue row, halves */
	static constexpr int EPILOGUE_BYTES = PIX * PITCH * 2;          /* one warpgroup's staged 64 channels */
	static constexpr int BARRIER_BYTES = 256;
	static constexpr int STAGES =
		(227 * 1024 - 1024 - WEIGHT_BYTES - 2 * EPILOGUE_BYTES - BARRIER_BYTES) / BOX_BYTES;
	static constexpr int SMEM = 1024 + WEIGHT_BYTES + STAGES * BOX_BYTES + 2 * EPILOGUE_BYTES + BARRIER_BYTES;
	static_assert (STAGES >= (WIDE ? 4 : 6), "each warpgroup's ring holds two wide boxes or three");
	static_assert (CO == 64 || (CO == 128 && SLICES == 1), "64 outputs, or 128 of 64 inputs (the weights fit)");
	static_assert ((2 * STAGES + 3) * 8 <= BARRIER_BYTES, "barriers fit");
};

template <int SLICES, int ROWS, int CO, bool WIDE>
__global__ void __launch_bounds__ (THREADS, 1)
conv2d_resident_kernel (const __grid_constant__ bd_gpu_conv2d_params p, const __grid_constant__ CUtensorMap pixels,
                        const __grid_constant__ CUtensorMap weights, const ws_geometry g, int tiles, bool turns)
{
#if BD_HAVE_WGMMA
	using T = resident_tile<SLICES, ROWS, CO, WIDE>;
	constexpr int S = T::STAGES, PIX = T::PIX, PITCH = T::PITCH, BOX = T::BOX_BYTES;
	/* A tile's boxes: 64 channels of a column of taps each, or (WIDE) of all nine. */
	constexpr int STEPS = T::STEPS, HALVES = T::HALVES;
	const int t = threadIdx.x, per_image = g.tiles_x * g.tiles_y;
	const int W = (int) p.in.width, H = bd_conv2d_image_rows (p), cout = (int) p.out.channels;
	const int cin = (int) p.in.channels;
	extern __shared__ unsigned char smem_raw[];
	const resident_smem m = resident_start<T> (smem_raw);
	const uint32_t wsm = m.wsm, stages = m.stages, full = m.full, empty = m.empty, loaded = m.loaded;

	if (t >= CONSUMERS) {   /* the producer warp: one thread issues every copy */
		if (t != CONSUMERS)
			return;
		prefetch_tensor_maps (&pixels, &weights);
		/* The model's weights, before waiting for the layer's input: tap and slice ts at
		 * CO x 128 bytes x ts. */
		mbar_expect_bytes (loaded, T::WEIGHT_BYTES);
		for (int ts = 0; ts < T::TAPS * SLICES; ts++)
			tma_load_3d (wsm + ts * CO * 128, &weights, loaded, ts / SLICES * cin + ts % SLICES * 64, 0, 0);
		bd_wait_for_earlier_kernels ();
		/* The block's tiles in turn, their boxes where resident_ring puts them. */
		for (int tile = blockIdx.x, j = 0; tile < tiles; tile += gridDim.x, j++) {
			const int x0 = tile % g.tiles_x * 8, y0 = tile / g.tiles_x % g.tiles_y * ROWS, img = tile / per_image;
			for (int step = 0; step < STEPS; step++)   /* column step / SLICES (WIDE: all), slice step % SLICES */
				resident_load_box (&pixels, stages, full, empty, BOX, T::COPY_BYTES, resident_ring<S, STEPS> (j, step),
				                   step % SLICES * 64, x0 + (WIDE ? 0 : step / SLICES) - 1, y0 - 1, img);
		}
		return;
	}
	bd_wait_for_earlier_kernels ();   /* the consumers write activations */

	/* Warpgroup cw takes the block's tiles cw, cw + 2, ... Its 64 x PIX result: register i
	 * of lane l in warp w holds channel w * 16 + l / 4 + 8 * (i / 2 % 2), pixel (i / 4) * 8 +
	 * (l % 4) * 2 + i % 2 (conv2d_tma_kernel's swapped fragment, PIX pixels wide). */
	const resident_consumer c = resident_consumer_of (p, t), c1 = resident_consumer_of (p, t, 64);
	const int cw = c.cw, lt = c.lt, lane = c.lane;
	__half *tile = resident_staging<T> (m, cw);
	mbar_wait (loaded, 0);
	int n = 0;   /* this warpgroup's tiles so far: its n-th is the block's 2n + cw-th */
	for (int index = blockIdx.x + cw * gridDim.x; index < tiles; index += 2 * gridDim.x, n++) {
		float d[HALVES][PIX / 2];   /* 128 outputs: two 64-channel multiplies of the same box */
#pragma unroll
		for (int h = 0; h < HALVES; h++)
#pragma unroll
			for (int i = 0; i < PIX / 2; i++)
				d[h][i] = 0.0f;
		if (turns)
			resident_turn_wait (m.turn, cw, n);
		int last = 0;   /* the stage of the box before */
#pragma unroll
		for (int step = 0; step < STEPS; step++) {
			const resident_ring_pos at = resident_ring<S, STEPS> (2 * n + cw, step);
			const int column = WIDE ? 0 : step / SLICES, slice = step % SLICES;
			mbar_wait (full + 8 * at.slot, at.parity);
			const uint32_t st = stages + at.slot * BOX;
#pragma unroll
			for (int h = 0; h < HALVES; h++)
				wgmma_fence_operands (d[h]);
			wgmma_fence ();
			/* Tap (row, column) reads box rows row .. row + ROWS - 1 (WIDE: from pixel column
			 * of each, rows 10 pixels apart; resident_tile). */
#pragma unroll
			for (int tap = WIDE ? 0 : column; tap < 9; tap += WIDE ? 1 : 3) {
				const int row = tap / 3;
				const uint64_t db = WIDE ? sw128_descriptor (st + (row * 10 + tap % 3) * 128, 10 * 128)
				                         : sw128_descriptor (st + row * 1024);
#pragma unroll
				for (int h = 0; h < HALVES; h++) {
					const uint64_t da = sw128_descriptor (wsm + (tap * SLICES + slice) * CO * 128 + h * 64 * 128);
#pragma unroll
					for (int k = 0; k < 4; k++)
						wgmma_f16<PIX>::mma (d[h], da + 2 * k, db + 2 * k);
				}
			}
			wgmma_commit ();
			wgmma_wait<1> ();   /* the previous box's multiply is done: its stage goes back */
#pragma unroll
			for (int h = 0; h < HALVES; h++)
				wgmma_fence_operands (d[h]);
			if (step > 0 && lane == 0)
				mbar_arrive (empty + 8 * last);
			last = at.slot;
		}
		if (turns && index + (int) gridDim.x < tiles)   /* the other's tile after this one */
			resident_turn_pass (m.turn, cw, lane);
		wgmma_wait<0> ();
#pragma unroll
		for (int h = 0; h < HALVES; h++)
			wgmma_fence_operands (d[h]);
		if (lane == 0)
			mbar_arrive (empty + 8 * last);

		const int x0 = index % g.tiles_x * 8, y0 = index / g.tiles_x % g.tiles_y * ROWS, img = index / per_image;
		auto pixel_index = [&] (int r) -> int {   /* flattened pixel of tile row r, or -1 outside */
			int x = x0 + (r & 7), y = y0 + (r >> 3);
			return x < W && y < H ? (img * H + y) * W + x : -1;
		};
		/* 64 channels at a time through the staging tile (head: CO is 64, bd_gpu_conv2d_tma). */
#pragma unroll
		for (int h = 0; h < HALVES; h++) {
			resident_stage<PIX, PITCH> (d[h], tile, h ? c1 : c);
			if (g.head) {   /* the network's last layer: only the probabilities leave the block */
				int m = lt < PIX ? pixel_index (lt) : -1;
				if (m >= 0)
					p.head_out[m] = head_probability (tile + lt * PITCH, p);
				continue;
			}
			/* Thread lt stores 16 bytes (channels col..) of tile pixels lt / 8 + 16 k: one
			 * column x, every second row from y. */
			const int first = h * 64, col = lt % 8 * 8, px = lt / 8, x = x0 + (px & 7), y = y0 + px / 8;
			if (x < W && first + col < cout) {
				const size_t rows2 = 2 * (size_t) W * p.out.pixel_stride;
				__half *dst = (__half *) p.out.data + ((size_t) (img * H + y) * W + x) * p.out.pixel_stride + first + col;
#pragma unroll
				for (int k = 0; k < PIX / 16; k++)
					if (y + 2 * k < H)
						*(uint4 *) (dst + k * rows2) = *(const uint4 *) (tile + (px + 16 * k) * PITCH + col);
			}
			if (g.pool) {   /* the next level's input: 2x2 maxima of the tile (W, H even) */
				for (int v = lt; v < PIX / 4 * 64 / 8; v += 128) {
					int q = v / 8, col = (v % 8) * 8;
					int r = q / 4 * 16 + q % 4 * 2, x = x0 + (r & 7), y = y0 + (r >> 3);
					if (x >= W || y >= H || first + col >= cout)
						continue;
					size_t o = ((size_t) ((img * H + y) / 2) * (W / 2) + x / 2) * p.pool.pixel_stride + first + col;
					pool_2x2_store (tile, r, 8, PITCH, col, (__half *) p.pool.data + o);
				}
			}
		}
	}
#endif
}

/* Resident weights for the transposed convolutions whose weights fit (64 or 128 inputs, up to
 * 64 outputs: 32 or 64 KB for the four taps), the last of the decoder: the tiles' K is one or
 * two steps, so conv2d_tma_kernel's blocks were mostly set-up, weights and epilogue, four
 * times over (a block a tap). Here one block a multiprocessor holds all four taps' weights
 * and loops over 128-pixel tiles of the input; a warpgroup multiplies its tile by each tap in
 * turn and stores that tap's pixels (2y + dy, 2x + dx) before the next, the two warpgroups
 * taking tiles in turn as in conv2d_resident_kernel. */
template <int SLICES> struct resident_up_tile {
	static constexpr int CO = 64, TAPS = 4, PIX = 128;
	static constexpr int WEIGHT_BYTES = TAPS * SLICES * CO * 128;
	static constexpr int BOX_BYTES = PIX * 128;                    /* 128 pixels x 64 channels */
	static constexpr int PITCH = CO + 8;
	static constexpr int EPILOGUE_BYTES = PIX * PITCH * 2;
	static constexpr int BARRIER_BYTES = 256;
	static constexpr int FIT = (227 * 1024 - 1024 - WEIGHT_BYTES - 2 * EPILOGUE_BYTES - BARRIER_BYTES) / BOX_BYTES;
	static constexpr int STAGES = (FIT > 8 ? 8 : FIT) / 2 * 2;     /* two rings of equal size */
	static constexpr int SMEM = 1024 + WEIGHT_BYTES + STAGES * BOX_BYTES + 2 * EPILOGUE_BYTES + BARRIER_BYTES;
	static_assert (STAGES / 2 > SLICES, "a ring holds a tile's boxes and more");
	static_assert ((2 * STAGES + 3) * 8 <= BARRIER_BYTES, "barriers fit");
};

template <int SLICES>
__global__ void __launch_bounds__ (THREADS, 1)
conv2d_resident_up_kernel (const __grid_constant__ bd_gpu_conv2d_params p, const __grid_constant__ CUtensorMap pixels,
                           const __grid_constant__ CUtensorMap weights, const ws_geometry g, int tiles, bool turns)
{
#if BD_HAVE_WGMMA
	using T = resident_up_tile<SLICES>;
	constexpr int S = T::STAGES, R = S / 2, CO = T::CO, PIX = T::PIX, PITCH = T::PITCH, BOX = T::BOX_BYTES;
	const int t = threadIdx.x, per_image = g.tiles_x * g.tiles_y;
	const int TW = 1 << g.tw_shift, TH = PIX >> g.tw_shift;
	const int W = (int) p.in.width, H = bd_conv2d_image_rows (p), cout = (int) p.out.channels;
	extern __shared__ unsigned char smem_raw[];
	const resident_smem m = resident_start<T> (smem_raw);
	const uint32_t wsm = m.wsm, stages = m.stages, full = m.full, empty = m.empty, loaded = m.loaded;

	if (t >= CONSUMERS) {   /* the producer warp: one thread issues every copy */
		if (t != CONSUMERS)
			return;
		prefetch_tensor_maps (&pixels, &weights);
		mbar_expect_bytes (loaded, T::WEIGHT_BYTES);   /* tap and slice ts at 8 KB x ts */
		for (int ts = 0; ts < T::TAPS * SLICES; ts++)
			tma_load_3d (wsm + ts * CO * 128, &weights, loaded, ts % SLICES * 64, 0, ts / SLICES);
		bd_wait_for_earlier_kernels ();
		for (int tile = blockIdx.x, j = 0; tile < tiles; tile += gridDim.x, j++) {
			const int x0 = (tile % g.tiles_x) * TW, y0 = tile / g.tiles_x % g.tiles_y * TH, img = tile / per_image;
			for (int slice = 0; slice < SLICES; slice++)
				resident_load_box (&pixels, stages, full, empty, BOX, BOX, resident_ring<S, SLICES> (j, slice),
				                   slice * 64, x0, y0, img);
		}
		return;
	}
	bd_wait_for_earlier_kernels ();   /* the consumers write activations */

	/* The fragment of conv2d_resident_kernel: register i of lane l in warp w holds channel
	 * w * 16 + l / 4 + 8 * (i / 2 % 2), tile pixel (i / 4) * 8 + (l % 4) * 2 + i % 2. */
	const resident_consumer c = resident_consumer_of (p, t);
	const int cw = c.cw, lt = c.lt, lane = c.lane;
	__half *tile = resident_staging<T> (m, cw);
	mbar_wait (loaded, 0);
	int k = 0, n = 0;   /* this warpgroup's boxes and taps so far */
	for (int index = blockIdx.x + cw * gridDim.x; index < tiles; index += 2 * gridDim.x, k += SLICES) {
		const int x0 = (index % g.tiles_x) * TW, y0 = index / g.tiles_x % g.tiles_y * TH, img = index / per_image;
		/* The tile's boxes, before any multiply: a wait between the multiplies serialises them. */
		for (int slice = 0; slice < SLICES; slice++)
			mbar_wait (full + 8 * (cw * R + (k + slice) % R), ((k + slice) / R) & 1);
#pragma unroll 1
		for (int tap = 0; tap < 4; tap++, n++) {
			float d[PIX / 2];
#pragma unroll
			for (int i = 0; i < PIX / 2; i++)
				d[i] = 0.0f;
			/* Warpgroup 0's last tile may have no partner (the other's tile after this one):
			 * past its first tap, no turns. */
			const bool partner = index + (int) gridDim.x < tiles;
			if (turns && (cw || tap == 0 || partner))
				resident_turn_wait (m.turn, cw, n);
			wgmma_fence_operands (d);
			wgmma_fence ();
#pragma unroll
			for (int slice = 0; slice < SLICES; slice++) {
				const int slot = cw * R + (k + slice) % R;
				const uint64_t da = sw128_descriptor (wsm + (tap * SLICES + slice) * CO * 128);
				const uint64_t db = sw128_descriptor (stages + slot * BOX);
#pragma unroll
				for (int kk = 0; kk < 4; kk++)
					wgmma_f16<PIX>::mma (d, da + 2 * kk, db + 2 * kk);
			}
			wgmma_commit ();
			if (turns && (partner || (cw && tap < 3)))
				resident_turn_pass (m.turn, cw, lane);
			wgmma_wait<0> ();
			wgmma_fence_operands (d);
			if (tap == 3 && lane == 0)   /* the tile's boxes are read no more */
				for (int slice = 0; slice < SLICES; slice++)
					mbar_arrive (empty + 8 * (cw * R + (k + slice) % R));

			resident_stage<PIX, PITCH> (d, tile, c);
			/* Tile pixel r is input pixel (x, y); this tap writes output (2x + dx, 2y + dy). */
			for (int v = lt; v < PIX * CO / 8; v += 128) {
				int r = v / (CO / 8), col = (v % (CO / 8)) * 8;
				int x = x0 + (r & (TW - 1)), y = y0 + (r >> g.tw_shift);
				if (x >= W || y >= H || col >= cout)
					continue;
				size_t o = ((size_t) (2 * (img * H + y) + tap / 2) * (2 * W) + 2 * x + tap % 2) * p.out.pixel_stride + col;
				*(uint4 *) ((__half *) p.out.data + o) = *(const uint4 *) (tile + r * PITCH + col);
			}
		}
	}
#endif
}

bool turns = true;        /* BACKDROP_GPU_TURNS=0: the warpgroups unordered */
bool wide_boxes = true;   /* BACKDROP_GPU_WIDE_BOXES=0: a box a column of taps (resident_tile) */
int multiprocessors;

/* One block a multiprocessor, each looping over its share of the tiles. */
template <int SLICES, int ROWS, int CO, bool WIDE>
bd_status
launch_resident_boxes (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed,
                       bd_error *error)
{
	using T = resident_tile<SLICES, ROWS, CO, WIDE>;
	ws_geometry g;
	CUtensorMap pixels, weights;
	unsigned tiles;
	bd_status st =
		bd_gpu_tma_prepare (p, T::PIX, CO, true, &g, &pixels, &weights, &tiles, pooled, headed, error, WIDE);
	if (st != BD_OK)
		return st;
	dim3 grid (tiles < (unsigned) multiprocessors ? tiles : (unsigned) multiprocessors);
	BD_CUDA_CHECK (bd_launch_early (p->launch_early, conv2d_resident_kernel<SLICES, ROWS, CO, WIDE>, grid,
	                                dim3 (THREADS), T::SMEM, stream, *p, pixels, weights, g, (int) tiles, turns));
	return BD_OK;
}

template <int SLICES, int ROWS, int CO = 64>
bd_status
launch_resident (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed, bd_error *error)
{
	return wide_boxes ? launch_resident_boxes<SLICES, ROWS, CO, true> (p, stream, pooled, headed, error)
	                  : launch_resident_boxes<SLICES, ROWS, CO, false> (p, stream, pooled, headed, error);
}

template <int SLICES>
bd_status
launch_resident_up (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed, bd_error *error)
{
	using T = resident_up_tile<SLICES>;
	ws_geometry g;
	CUtensorMap pixels, weights;
	unsigned tiles;
	bd_status st =
		bd_gpu_tma_prepare (p, T::PIX, T::CO, false, &g, &pixels, &weights, &tiles, pooled, headed, error);
	if (st != BD_OK)
		return st;
	dim3 grid (tiles < (unsigned) multiprocessors ? tiles : (unsigned) multiprocessors);
	BD_CUDA_CHECK (bd_launch_early (p->launch_early, conv2d_resident_up_kernel<SLICES>, grid, dim3 (THREADS), T::SMEM,
	                                stream, *p, pixels, weights, g, (int) tiles, turns));
	return BD_OK;
}

template <int SLICES, int ROWS, int CO = 64>
bd_status
allow_resident_smem (bd_error *error)
{
	BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_resident_kernel<SLICES, ROWS, CO, true>,
	                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
	                                     resident_tile<SLICES, ROWS, CO, true>::SMEM));
	BD_CUDA_CHECK (cudaFuncSetAttribute (conv2d_resident_kernel<SLICES, ROWS, CO, false>,
	                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
	                                     resident_tile<SLICES, ROWS, CO, false>::SMEM));
	return BD_OK;
}

} // namespace

bd_status
bd_gpu_conv2d_resident_grant (int device, bd_error *error)
{
	const bd_gpu_switches &sw = bd_gpu_switches_get ();
	turns = sw.turns;
	wide_boxes = sw.wide_boxes;
	bd_status st = allow_resident_smem<1, 16> (error);
	if (st == BD_OK)
		st = allow_resident_smem<2, 8> (error);
	if (st == BD_OK)
		st = allow_resident_smem<1, 8, 128> (error);
	if (st == BD_OK && (cudaFuncSetAttribute (conv2d_resident_up_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
	                                          resident_up_tile<1>::SMEM) != cudaSuccess ||
	                    cudaFuncSetAttribute (conv2d_resident_up_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
	                                          resident_up_tile<2>::SMEM) != cudaSuccess))
		st = bd_error_set (error, BD_ERR_DEVICE, "cannot give the resident up-convolution its shared memory");
	if (st == BD_OK && cudaDeviceGetAttribute (&multiprocessors, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
		st = bd_error_set (error, BD_ERR_DEVICE, "cannot count the GPU's multiprocessors");
	return st;
}

bd_status
bd_gpu_conv2d_resident (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed,
                        bd_error *error)
{
	if (p->out_step == 2)
		return p->in.channels == 64 ? launch_resident_up<1> (p, stream, pooled, headed, error)
		                            : launch_resident_up<2> (p, stream, pooled, headed, error);
	if (p->out.channels > 64)
		return launch_resident<1, 8, 128> (p, stream, pooled, headed, error);
	return p->in.channels == 64 ? launch_resident<1, 16> (p, stream, pooled, headed, error)
	                            : launch_resident<2, 8> (p, stream, pooled, headed, error);
}
