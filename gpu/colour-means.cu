/* SPDX-License-Identifier: Apache-2.0 */
/* core/image/colour-means.c on the device. Every float step is the host's, in the host's order,
 * with rounded operations that the compiler may not fuse (__fadd_rn and friends), so the means
 * are the host's to the bit. The grid is small (at most 768 cells on the long side for a
 * composite): a thread a cell, and for the box passes a block a line (a thread a line where a
 * line is too long for shared memory), with a thread a channel running the host's sums along
 * it. */
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

/* The sums the window averages (weigh_task). */
__global__ void
weigh_kernel (size_t n, const float *img, const float *est, float *sums)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float *p = img + 5 * i, *e = est + 6 * i;
	float *sm = sums + K * i, a = p[3], b = __fsub_rn (1.0f, a);
	for (int k = 0; k < 3; k++) {
		sm[k] = __fmul_rn (e[k], a);
		sm[4 + k] = __fmul_rn (e[3 + k], b);
		sm[8 + k] = p[k];
	}
	sm[3] = a;
	sm[7] = b;
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

/* The same pass with a block a line, for lines that fit in shared memory: the block brings
 * the line's samples in together (coalesced), then a thread a channel runs the host's sums
 * from there. The thread a line above waits on global memory at every step: 96 µs a pass on
 * a 1 MP photo's grid by Nsight Systems, 12 passes a cut-out. */
constexpr uint32_t STAGED_MAX = (48u * 1024u) / (K * sizeof (float));   /* samples a line */

__global__ void
box_staged_kernel (const float *src, float *dst, uint32_t n, size_t line_step, size_t sample_step, uint32_t r)
{
	extern __shared__ float line[];   /* n samples of K channels */
	size_t base = (size_t) blockIdx.x * line_step;
	for (uint32_t t = threadIdx.x; t < n * K; t += blockDim.x)
		line[t] = src[base + (size_t) (t / K) * sample_step + t % K];
	__syncthreads ();
	uint32_t k = threadIdx.x;
	if (k >= K)
		return;
	const float *in = line + k;
	float *out = dst + base + k;
	uint32_t last = r < n ? r : n - 1;
	float sum = __fadd_rn (__fmul_rn ((float) r, in[0]), __fmul_rn ((float) (r - last), in[(size_t) (n - 1) * K]));
	for (uint32_t j = 0; j <= last; j++)
		sum = __fadd_rn (sum, in[(size_t) j * K]);
	float scale = __fdiv_rn (1.0f, (float) (2 * (uint64_t) r + 1));
	for (uint32_t j = 0; j < n; j++) {
		int64_t add = (int64_t) j + r + 1, drop = (int64_t) j - r;
		float vi = in[(size_t) (add >= n ? n - 1 : add) * K];
		float vo = in[(size_t) (drop < 0 ? 0 : drop) * K];
		out[(size_t) j * sample_step] = __fmul_rn (sum, scale);
		sum = __fadd_rn (sum, __fsub_rn (vi, vo));
	}
}

/* Each side's window mean, and the next estimates (means_task). */
__global__ void
means_kernel (size_t n, const float *img, const float *sums, float *est, float *fg, float *bg)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float *sm = sums + K * i, *p = img + 5 * i;
	float *fm = fg + 3 * i, *bm = bg + 3 * i, *e = est + 6 * i, a = p[3], b = __fsub_rn (1.0f, a);
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
	start_kernel<<<bd_div_up (n, threads), threads, 0, stream>>> (photo, ch, pitch, w, h, alpha, factor, gw, gh,
	                                                               c + at.img, c + at.est);
	BD_CUDA_CHECK_LAUNCH ();
	for (int it = 0; it < iterations; it++) {
		uint32_t r = radii[it] ? radii[it] : 1;
		weigh_kernel<<<bd_div_up (n, threads), threads, 0, stream>>> (n, c + at.img, c + at.est, c + at.sums_a);
		BD_CUDA_CHECK_LAUNCH ();
		/* Three passes along the rows, then three down the columns (colour-means.c's
		 * box_blur_f32), from one buffer to the other: the last lands in sums_a. */
		float *from = c + at.sums_a, *to = c + at.sums_b;
		for (int pass = 0; pass < 6; pass++) {
			bool rows = pass < 3;
			uint32_t lines = rows ? gh : gw, len = rows ? gw : gh;
			size_t line_step = rows ? (size_t) gw * K : K, sample_step = rows ? K : (size_t) gw * K;
			if (len <= STAGED_MAX)
				box_staged_kernel<<<lines, 128, (size_t) len * K * sizeof (float), stream>>> (from, to, len, line_step,
				                                                                           sample_step, r);
			else
				box_kernel<<<bd_div_up ((size_t) lines * K, 64), 64, 0, stream>>> (from, to, lines, len, line_step,
				                                                                   sample_step, r);
			BD_CUDA_CHECK_LAUNCH ();
			float *t = from;
			from = to;
			to = t;
		}
		means_kernel<<<bd_div_up (n, threads), threads, 0, stream>>> (n, c + at.img, from, c + at.est, c + at.fg,
		                                                               c + at.bg);
		BD_CUDA_CHECK_LAUNCH ();
	}
	*grid = bd_gpu_means_grid { gw, gh, c + at.fg, c + at.bg };
	return BD_OK;
}
