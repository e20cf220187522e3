/* SPDX-License-Identifier: Apache-2.0 */
/* core/image/colour-means.c on the device. Every float step is the host's, in the host's order,
 * with rounded operations that the compiler may not fuse (__fadd_rn and friends), so the means
 * are the host's to the bit. The grid is small (at most 768 cells on the long side for a
 * composite): a thread a cell (a block's cells staged through shared memory), and for the box
 * passes a block a line (a thread a line where a line is too long for shared memory), with a
 * thread a channel running the host's sums along it. */
#include "colour-means.cuh"

namespace {

constexpr uint32_t K = 11;   /* F x alpha, alpha, B x (1 - alpha), 1 - alpha, plain RGB */

/* Offsets into the grid buffer, in floats, for @n cells. */
struct grid_layout {
	size_t img, est, sums_a, sums_b, fg, bg, total;
	explicit grid_layout (size_t n)
		: img (0), est (5 * n), sums_a (11 * n), sums_b (22 * n), fg (33 * n), bg (36 * n), total (39 * n) {}
};

/* Block sums of the photo and the mask (colour-means.c's block_row_task, the same order),
 * then their means and the first estimates (start_task). */
__global__ void
start_kernel (const uint8_t *photo, uint32_t channels, size_t pitch, uint32_t width, uint32_t height,
              const uint8_t *alpha, uint32_t f, uint32_t gw, uint32_t gh, float *img, float *est)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) gw * gh)
		return;
	uint32_t cx = (uint32_t) (i % gw), cy = (uint32_t) (i / gw);
	uint32_t x0 = cx * f, y0 = cy * f;
	uint32_t x1 = min (x0 + f, width), y1 = min (y0 + f, height);
	float s[5] = { 0, 0, 0, 0, 0 };
	for (uint32_t y = y0; y < y1; y++)
		for (uint32_t x = x0; x < x1; x++) {
			const uint8_t *px = photo + (size_t) y * pitch + (size_t) x * channels;
			s[0] = __fadd_rn (s[0], (float) px[0]);
			s[1] = __fadd_rn (s[1], (float) px[1]);
			s[2] = __fadd_rn (s[2], (float) px[2]);
			s[3] = __fadd_rn (s[3], __fdiv_rn ((float) alpha[(size_t) y * width + x], 255.0f));
			s[4] = __fadd_rn (s[4], 1.0f);
		}
	float *p = img + 5 * i;
	for (int k = 0; k < 4; k++)
		p[k] = __fdiv_rn (s[k], s[4]);
	p[4] = s[4];
	for (int k = 0; k < 3; k++)
		est[6 * i + k] = est[6 * i + 3 + k] = p[k];
}

/* A block's cells at a time in the kernels a thread a cell below: the block copies its
 * cells' values between global and shared memory in coalesced sweeps, so that a thread
 * reading 5, 6 or 11 floats of its own cell does not touch as many sectors. */
constexpr uint32_t CELLS = 256;

template <uint32_t C>
__device__ inline void
cells_in (float *to, const float *from, size_t first, uint32_t count)
{
	for (uint32_t t = threadIdx.x; t < count * C; t += blockDim.x)
		to[t] = from[first * C + t];
}

template <uint32_t C>
__device__ inline void
cells_out (float *to, const float *from, size_t first, uint32_t count)
{
	for (uint32_t t = threadIdx.x; t < count * C; t += blockDim.x)
		to[first * C + t] = from[t];
}

/* The sums the window averages (weigh_task); a block of CELLS cells. Read a thread a cell from
 * global memory, a 1080p frame's grid took 33 µs. */
__global__ void
weigh_kernel (size_t n, const float *img, const float *est, float *sums)
{
	__shared__ float s_img[CELLS * 5], s_est[CELLS * 6], s_sums[CELLS * K];
	size_t first = (size_t) blockIdx.x * CELLS;
	uint32_t count = (uint32_t) min ((size_t) CELLS, n - first);
	cells_in<5> (s_img, img, first, count);
	cells_in<6> (s_est, est, first, count);
	__syncthreads ();
	uint32_t i = threadIdx.x;
	if (i < count) {
		const float *p = s_img + 5 * i, *e = s_est + 6 * i;
		float *sm = s_sums + K * i, a = p[3], b = __fsub_rn (1.0f, a);
		for (int k = 0; k < 3; k++) {
			sm[k] = __fmul_rn (e[k], a);
			sm[4 + k] = __fmul_rn (e[3 + k], b);
			sm[8 + k] = p[k];
		}
		sm[3] = a;
		sm[7] = b;
	}
	__syncthreads ();
	cells_out<K> (sums, s_sums, first, count);
}

/* One box pass with repeated ends along each of @lines lines of @n samples, a thread a line
 * and channel: bd_box_line's running sum, from @src to @dst. */
__global__ void
box_kernel (const float *src, float *dst, uint32_t lines, uint32_t n, size_t line_step, size_t sample_step,
            uint32_t r)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) lines * K)
		return;
	size_t base = (i / K) * line_step + i % K;
	const float *in = src + base;
	float *out = dst + base;
	uint32_t last = r < n ? r : n - 1;
	float sum = __fadd_rn (__fmul_rn ((float) r, in[0]), __fmul_rn ((float) (r - last), in[(size_t) (n - 1) * sample_step]));
	for (uint32_t j = 0; j <= last; j++)
		sum = __fadd_rn (sum, in[(size_t) j * sample_step]);
	float scale = __fdiv_rn (1.0f, (float) (2 * (uint64_t) r + 1));
	for (uint32_t j = 0; j < n; j++) {
		int64_t add = (int64_t) j + r + 1, drop = (int64_t) j - r;
		float vi = in[(size_t) (add >= n ? n - 1 : add) * sample_step];
		float vo = in[(size_t) (drop < 0 ? 0 : drop) * sample_step];
		out[(size_t) j * sample_step] = __fmul_rn (sum, scale);
		sum = __fadd_rn (sum, __fsub_rn (vi, vo));
	}
}

/* The three passes in one direction with a block a line, for lines that fit in shared memory:
 * the block brings the line in once (coalesced), and for each pass works out every step's
 * change (the sample entering the window less the one leaving it) side by side; then a
 * thread a channel runs the host's sums over those changes, the only part that must go in
 * order, writing the pass's result over the line; the block writes the line out once. The
 * kernel above, a thread a line and channel waiting on global memory at every step, took 96 µs
 * a pass on a 1 MP photo's grid; a block a pass, loading the line and writing it each time,
 * 14 µs a pass on a 1080p frame's grid of 640x360. */
constexpr uint32_t STAGED_MAX = (48u * 1024u) / (K * sizeof (float));   /* samples a line: 96 KB with their changes */

__global__ void
box3_staged_kernel (const float *src, float *dst, uint32_t n, size_t line_step, size_t sample_step, uint32_t r)
{
	extern __shared__ float line[];   /* n samples of K channels, then n steps' changes */
	float *change = line + (size_t) n * K;
	const uint32_t total = n * K;
	const float *from = src + (size_t) blockIdx.x * line_step;
	float *to = dst + (size_t) blockIdx.x * line_step;
	/* Four loads in flight a thread: one at a time, each thread waited on memory 14 times. */
	for (uint32_t t0 = threadIdx.x; t0 < total; t0 += 4 * blockDim.x) {
		float v[4];
#pragma unroll
		for (uint32_t u = 0; u < 4; u++) {
			uint32_t t = t0 + u * blockDim.x, j = t / K;
			v[u] = t < total ? from[(size_t) j * sample_step + (t - j * K)] : 0.0f;
		}
#pragma unroll
		for (uint32_t u = 0; u < 4; u++)
			if (t0 + u * blockDim.x < total)
				line[t0 + u * blockDim.x] = v[u];
	}
	uint32_t last = r < n ? r : n - 1;
	float scale = __fdiv_rn (1.0f, (float) (2 * (uint64_t) r + 1));
	for (int pass = 0; pass < 3; pass++) {
		__syncthreads ();
		for (uint32_t t = threadIdx.x; t < total; t += blockDim.x) {
			uint32_t j = t / K, k = t - j * K;
			uint32_t add = j + r + 1 < n ? j + r + 1 : n - 1, drop = j > r ? j - r : 0;
			change[t] = __fsub_rn (line[add * K + k], line[drop * K + k]);
		}
		__syncthreads ();
		uint32_t k = threadIdx.x;
		if (k < K) {
			/* Thread k reads and writes channel k alone: the window's first sum from the
			 * line, then each step's result over the sample it came from. */
			float *in = line + k;
			const float *d = change + k;
			float sum = __fadd_rn (__fmul_rn ((float) r, in[0]), __fmul_rn ((float) (r - last), in[(n - 1) * K]));
			for (uint32_t j = 0; j <= last; j++)
				sum = __fadd_rn (sum, in[j * K]);
			/* The changes sixteen at a time into registers, then the sums. */
			uint32_t j = 0;
			for (; j + 16 <= n; j += 16) {
				float c[16];
#pragma unroll
				for (uint32_t u = 0; u < 16; u++)
					c[u] = d[(j + u) * K];
#pragma unroll
				for (uint32_t u = 0; u < 16; u++) {
					in[(j + u) * K] = __fmul_rn (sum, scale);
					sum = __fadd_rn (sum, c[u]);
				}
			}
			for (; j < n; j++) {
				in[j * K] = __fmul_rn (sum, scale);
				sum = __fadd_rn (sum, d[j * K]);
			}
		}
	}
	__syncthreads ();
	for (uint32_t t = threadIdx.x; t < total; t += blockDim.x) {
		uint32_t j = t / K;
		to[(size_t) j * sample_step + (t - j * K)] = line[t];
	}
}

/* Shared memory of box3_staged_kernel for lines of @n samples. */
static size_t
staged_bytes (uint32_t n)
{
	return 2 * (size_t) n * K * sizeof (float);
}

/* Each side's window mean, and the next estimates (means_task); a block of CELLS cells. */
__global__ void
means_kernel (size_t n, const float *img, const float *sums, float *est, float *fg, float *bg)
{
	__shared__ float s_sums[CELLS * K], s_img[CELLS * 5], s_est[CELLS * 6], s_fg[CELLS * 3], s_bg[CELLS * 3];
	size_t first = (size_t) blockIdx.x * CELLS;
	uint32_t count = (uint32_t) min ((size_t) CELLS, n - first);
	cells_in<K> (s_sums, sums, first, count);
	cells_in<5> (s_img, img, first, count);
	__syncthreads ();
	uint32_t i = threadIdx.x;
	if (i < count) {
		const float *sm = s_sums + K * i, *p = s_img + 5 * i;
		float *fm = s_fg + 3 * i, *bm = s_bg + 3 * i, *e = s_est + 6 * i, a = p[3], b = __fsub_rn (1.0f, a);
		const float eps = 0.02f;
		for (int k = 0; k < 3; k++) {
			fm[k] = __fdiv_rn (__fadd_rn (sm[k], __fmul_rn (eps, sm[8 + k])), __fadd_rn (sm[3], eps));
			bm[k] = __fdiv_rn (__fadd_rn (sm[4 + k], __fmul_rn (eps, sm[8 + k])), __fadd_rn (sm[7], eps));
			float r = __fsub_rn (__fsub_rn (p[k], __fmul_rn (a, fm[k])), __fmul_rn (b, bm[k]));
			float fv = __fadd_rn (fm[k], __fmul_rn (a, r)), bv = __fadd_rn (bm[k], __fmul_rn (b, r));
			e[k] = fv < 0 ? 0 : fv > 255 ? 255 : fv;
			e[3 + k] = bv < 0 ? 0 : bv > 255 ? 255 : bv;
		}
	}
	__syncthreads ();
	cells_out<6> (est, s_est, first, count);
	cells_out<3> (fg, s_fg, first, count);
	cells_out<3> (bg, s_bg, first, count);
}

} // namespace

bd_status
bd_gpu_colour_means (const uint8_t *photo, uint32_t ch, size_t pitch, const uint8_t *alpha, uint32_t w, uint32_t h,
                     uint32_t factor, const uint32_t *radii, int iterations, float **cells, size_t *cells_bytes,
                     bd_gpu_means_grid *grid, cudaStream_t stream, bd_error *error)
{
	uint32_t gw = (w + factor - 1) / factor, gh = (h + factor - 1) / factor;
	size_t n = (size_t) gw * gh;
	grid_layout at (n);
	bd_status st = bd_gpu_grow ((void **) cells, cells_bytes, at.total * sizeof (float), error);
	if (st != BD_OK)
		return st;
	float *c = *cells;
	const unsigned threads = 256;
	/* A line and its changes take up to twice the 48 KB a block gets unasked: a Hopper GPU
	 * gives 227 KB when asked, a Turing one 64 KB. Lines longer than the device holds take
	 * the kernel a thread a line. Every call asks for the same, so that no session lowers
	 * the limit while another launches. */
	int device = 0, optin = 0;
	BD_CUDA_CHECK (cudaGetDevice (&device));
	BD_CUDA_CHECK (cudaDeviceGetAttribute (&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
	uint32_t fit = (uint32_t) ((size_t) optin / (2 * K * sizeof (float)));
	uint32_t staged_max = fit < STAGED_MAX ? fit : STAGED_MAX;
	if (staged_bytes (staged_max) > 48u * 1024u)
		BD_CUDA_CHECK (cudaFuncSetAttribute (box3_staged_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
		                                     (int) staged_bytes (staged_max)));
	start_kernel<<<bd_div_up (n, threads), threads, 0, stream>>> (photo, ch, pitch, w, h, alpha, factor, gw, gh,
	                                                               c + at.img, c + at.est);
	BD_CUDA_CHECK_LAUNCH ();
	for (int it = 0; it < iterations; it++) {
		uint32_t r = radii[it] ? radii[it] : 1;
		weigh_kernel<<<bd_div_up (n, CELLS), CELLS, 0, stream>>> (n, c + at.img, c + at.est, c + at.sums_a);
		BD_CUDA_CHECK_LAUNCH ();
		/* Three passes along the rows, then three down the columns (colour-means.c's
		 * box_blur_f32), from one buffer to the other. */
		float *from = c + at.sums_a, *to = c + at.sums_b;
		for (int rows = 1; rows >= 0; rows--) {
			uint32_t lines = rows ? gh : gw, len = rows ? gw : gh;
			size_t line_step = rows ? (size_t) gw * K : K, sample_step = rows ? K : (size_t) gw * K;
			/* The three passes in one launch where a line fits in shared memory, else one a launch. */
			int launches = len <= staged_max ? 1 : 3;
			for (int i = 0; i < launches; i++) {
				if (launches == 1)
					box3_staged_kernel<<<lines, 512, staged_bytes (len), stream>>> (from, to, len, line_step,
					                                                               sample_step, r);
				else
					box_kernel<<<bd_div_up ((size_t) lines * K, 64), 64, 0, stream>>> (from, to, lines, len,
					                                                                   line_step, sample_step, r);
				BD_CUDA_CHECK_LAUNCH ();
				float *t = from;
				from = to;
				to = t;
			}
		}
		means_kernel<<<bd_div_up (n, CELLS), CELLS, 0, stream>>> (n, c + at.img, from, c + at.est, c + at.fg,
		                                                               c + at.bg);
		BD_CUDA_CHECK_LAUNCH ();
	}
	*grid = bd_gpu_means_grid { gw, gh, c + at.fg, c + at.bg };
	return BD_OK;
}
