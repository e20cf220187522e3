/* SPDX-License-Identifier: Apache-2.0 */
/* bd_composite on the device for a cut-out or a plain colour background: the person's colours
 * estimated from local means of person and background colours (core/image/colour-means.c),
 * then blended (core/image/composite.c). Every float step is the host's, in the host's order,
 * with rounded operations that the compiler may not fuse (__fadd_rn and friends), so the bytes
 * are the host's: a folder's cut-outs do not change with the device that made them.
 *
 * The grid steps are small (at most 768 cells on the long side): a thread a cell, and for the
 * box passes a thread a line and channel, running the host's sums along it. The photo goes up
 * once and the RGBA comes down once. */
#include "composite.cuh"

#include <math.h>

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
start_kernel (const uint8_t *photo, uint32_t channels, uint32_t width, uint32_t height, const uint8_t *alpha,
              uint32_t f, uint32_t gw, uint32_t gh, float *img, float *est)
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
			const uint8_t *px = photo + ((size_t) y * width + x) * channels;
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

/* composite.c's field_pos. */
__device__ void
field_pos (uint32_t x, uint32_t factor, uint32_t n, uint32_t *i0, uint32_t *i1, float *t)
{
	float u = __fsub_rn (__fdiv_rn (__fadd_rn ((float) x, 0.5f), (float) factor), 0.5f);
	u = u < 0 ? 0 : u;
	*i0 = (uint32_t) u < n ? (uint32_t) u : n - 1;
	*i1 = *i0 + 1 < n ? *i0 + 1 : *i0;
	*t = __fsub_rn (u, (float) *i0);
	*t = *t > 1 ? 1 : *t;
}

/* One output pixel (composite.c's blend_task), over nothing or a colour. */
enum blend_over { OVER_NOTHING, OVER_COLOUR, OVER_OUT };

__global__ void
blend_kernel (const uint8_t *photo, uint32_t channels, uint32_t width, uint32_t height, const uint8_t *alpha,
              const float *fg, const float *bg, uint32_t factor, uint32_t gw, uint32_t gh, blend_over over,
              uchar4 colour, uint8_t *out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * height)
		return;
	uint32_t x = (uint32_t) (i % width), y = (uint32_t) (i / width);
	const uint8_t *src = photo + i * channels;
	uint32_t a = alpha[i];
	uint8_t f[3] = { src[0], src[1], src[2] };
	if (a > 0 && a < 255) {
		uint32_t x0, x1, y0, y1;
		float tx, ty, al = __fdiv_rn ((float) a, 255.0f);
		field_pos (y, factor, gh, &y0, &y1, &ty);
		field_pos (x, factor, gw, &x0, &x1, &tx);
		size_t i00 = 3 * ((size_t) y0 * gw + x0), i01 = 3 * ((size_t) y0 * gw + x1);
		size_t i10 = 3 * ((size_t) y1 * gw + x0), i11 = 3 * ((size_t) y1 * gw + x1);
		float ux = __fsub_rn (1.0f, tx), uy = __fsub_rn (1.0f, ty);
		float w00 = __fmul_rn (ux, uy), w01 = __fmul_rn (tx, uy), w10 = __fmul_rn (ux, ty), w11 = __fmul_rn (tx, ty);
		for (int k = 0; k < 3; k++) {
			float fm = __fadd_rn (__fadd_rn (__fadd_rn (__fmul_rn (w00, fg[i00 + k]), __fmul_rn (w01, fg[i01 + k])),
			                                 __fmul_rn (w10, fg[i10 + k])), __fmul_rn (w11, fg[i11 + k]));
			float bm = __fadd_rn (__fadd_rn (__fadd_rn (__fmul_rn (w00, bg[i00 + k]), __fmul_rn (w01, bg[i01 + k])),
			                                 __fmul_rn (w10, bg[i10 + k])), __fmul_rn (w11, bg[i11 + k]));
			float inner = __fsub_rn (__fsub_rn ((float) src[k], __fmul_rn (al, fm)),
			                         __fmul_rn (__fsub_rn (1.0f, al), bm));
			float v = __fadd_rn (__fadd_rn (fm, __fmul_rn (al, inner)), 0.5f);
			f[k] = v > 0 ? (v < 255 ? (uint8_t) v : 255) : 0;
		}
	}
	uint32_t fa = channels == 4 ? (a * src[3] + 127) / 255 : a;
	uint8_t *o = out + 4 * i;
	if (over == OVER_NOTHING) {
		o[0] = f[0];
		o[1] = f[1];
		o[2] = f[2];
		o[3] = (uint8_t) fa;
		return;
	}
	/* Over a colour, or over the background already drawn into the output (opaque). */
	const uint8_t b[3] = { over == OVER_COLOUR ? colour.x : o[0], over == OVER_COLOUR ? colour.y : o[1],
	                       over == OVER_COLOUR ? colour.z : o[2] };
	uint32_t ba = over == OVER_COLOUR ? colour.w : 255, oa = fa * 255 + ba * (255 - fa);   /* "over", x 255 */
	for (int k = 0; k < 3; k++) {
		uint32_t num = f[k] * fa * 255 + b[k] * ba * (255 - fa);
		o[k] = (uint8_t) (oa ? (num + oa / 2) / oa : 0);
	}
	o[3] = (uint8_t) ((oa + 127) / 255);
}

/* The blurred background's means to 8 bits (composite.c's draw_blur). */
__global__ void
round_kernel (size_t n, const float *bg, uint8_t *rgb)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		rgb[i] = (uint8_t) __fadd_rn (bg[i], 0.5f);
}

/* bd_resample_rgb's horizontal pass (resample.c's filter_row) over every source row. */
__global__ void
resample_rows_kernel (const uint8_t *src, uint32_t sw, uint32_t sh, uint32_t width, const uint32_t *start,
                      const uint32_t *count, const float *weight, uint32_t max_taps, float *rows)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * sh)
		return;
	uint32_t x = (uint32_t) (i % width), y = (uint32_t) (i / width);
	const float *w = weight + (size_t) x * max_taps;
	const uint8_t *p = src + ((size_t) y * sw + start[x]) * 3;
	float v0 = 0, v1 = 0, v2 = 0;
	for (uint32_t k = 0; k < count[x]; k++, p += 3) {
		v0 = __fadd_rn (v0, __fmul_rn (w[k], (float) p[0]));
		v1 = __fadd_rn (v1, __fmul_rn (w[k], (float) p[1]));
		v2 = __fadd_rn (v2, __fmul_rn (w[k], (float) p[2]));
	}
	float *d = rows + i * 3;
	d[0] = v0;
	d[1] = v1;
	d[2] = v2;
}

/* Its vertical pass (vertical_task) into RGBA, opaque. */
__global__ void
resample_columns_kernel (const float *rows, uint32_t width, uint32_t height, const uint32_t *start,
                         const uint32_t *count, const float *weight, uint32_t max_taps, uint8_t *out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * height)
		return;
	uint32_t x = (uint32_t) (i % width), y = (uint32_t) (i / width);
	const float *w = weight + (size_t) y * max_taps;
	size_t n = (size_t) width * 3;
	const float *first = rows + (size_t) start[y] * n + (size_t) x * 3;
	uint8_t *o = out + i * 4;
	for (int c = 0; c < 3; c++) {
		float v = 0;
		for (uint32_t k = 0; k < count[y]; k++)
			v = __fadd_rn (v, __fmul_rn (w[k], first[k * n + c]));
		v = __fadd_rn (v, 0.5f);
		o[c] = v > 0 ? (v < 255 ? (uint8_t) v : 255) : 0;
	}
	o[3] = 255;
}

/* Grows a device buffer to at least @bytes; BD_ERR_NO_MEMORY when the GPU has no room, so that
 * bd_session_composite can compose on the host instead. */
bd_status
grow (void **buf, size_t *have, size_t bytes, bd_error *error)
{
	if (*have >= bytes)
		return BD_OK;
	cudaFree (*buf);
	*buf = nullptr;
	*have = 0;
	cudaError_t e = cudaMalloc (buf, bytes);
	if (e == cudaErrorMemoryAllocation) {
		cudaGetLastError ();   /* not sticky: clear it */
		return bd_error_set (error, BD_ERR_NO_MEMORY, "the GPU has no room for %zu MB to compose", bytes >> 20);
	}
	BD_CUDA_CHECK (e);
	*have = bytes;
	return BD_OK;
}

/* colour-means.c's bd_colour_means_make on the device: the grid of @factor pixels a cell, its
 * window means after @iterations (radii[i] each), into the cells buffer (grid_layout). */
bd_status
colour_means (bd_gpu_composite_buffers *b, cudaStream_t stream, uint32_t w, uint32_t h, uint32_t ch,
              uint32_t factor, const uint32_t *radii, int iterations, uint32_t *gw_out, uint32_t *gh_out,
              bd_error *error)
{
	uint32_t gw = (w + factor - 1) / factor, gh = (h + factor - 1) / factor;
	size_t n = (size_t) gw * gh;
	grid_layout at (n);
	bd_status st = grow ((void **) &b->cells, &b->cells_bytes, at.total * sizeof (float), error);
	if (st != BD_OK)
		return st;
	float *c = b->cells;
	const unsigned threads = 256;
	start_kernel<<<bd_div_up (n, threads), threads, 0, stream>>> (b->photo, ch, w, h, b->alpha, factor, gw, gh,
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
	*gw_out = gw;
	*gh_out = gh;
	return BD_OK;
}

/* The photo blurred behind the person into b->out (composite.c's draw_blur): the background's
 * means on a grid of radius / 8 pixels a cell, to 8 bits, enlarged as bd_resample_rgb does. */
bd_status
draw_blur (bd_gpu_composite_buffers *b, cudaStream_t stream, uint32_t w, uint32_t h, uint32_t ch, float radius,
           bd_error *error)
{
	uint32_t f = radius > 8 ? (uint32_t) (radius / 8) : 1;
	uint32_t r = (uint32_t) lroundf (radius / (float) f / 2.0f);
	uint32_t radii[1] = { r > 0 ? r : 1 }, gw, gh;
	bd_status st = colour_means (b, stream, w, h, ch, f, radii, 1, &gw, &gh, error);
	if (st != BD_OK)
		return st;
	bd_resample_taps tx = {}, ty = {};
	if (!bd_resample_taps_bilinear (&tx, gw, w) || !bd_resample_taps_bilinear (&ty, gh, h)) {
		bd_resample_taps_clear (&tx);
		bd_resample_taps_clear (&ty);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory blurring the background");
	}
	/* Scratch: the grid in 8 bits, the taps, the horizontal pass's rows. */
	size_t n = (size_t) gw * gh, rgb_bytes = (3 * n + 15) & ~(size_t) 15;
	size_t tx_bytes = (size_t) w * (2 * sizeof (uint32_t) + tx.max_taps * sizeof (float));
	size_t ty_bytes = (size_t) h * (2 * sizeof (uint32_t) + ty.max_taps * sizeof (float));
	size_t rows_bytes = (size_t) gh * w * 3 * sizeof (float);
	st = grow ((void **) &b->scratch, &b->scratch_bytes, rgb_bytes + tx_bytes + ty_bytes + rows_bytes, error);
	uint8_t *rgb = nullptr;
	uint32_t *xs = nullptr, *xc = nullptr, *ys = nullptr, *yc = nullptr;
	float *xw = nullptr, *yw = nullptr, *rows = nullptr;
	cudaError_t e = cudaSuccess;
	if (st == BD_OK) {
		rgb = b->scratch;
		xs = (uint32_t *) (b->scratch + rgb_bytes);
		xc = xs + w;
		xw = (float *) (xc + w);
		ys = (uint32_t *) (xw + (size_t) w * tx.max_taps);
		yc = ys + h;
		yw = (float *) (yc + h);
		rows = yw + (size_t) h * ty.max_taps;
		/* Pageable sources are staged before each call returns: the host taps may go after. */
		const void *from[6] = { tx.start, tx.count, tx.weight, ty.start, ty.count, ty.weight };
		void *to[6] = { xs, xc, xw, ys, yc, yw };
		size_t bytes[6] = { w * sizeof (uint32_t), w * sizeof (uint32_t), (size_t) w * tx.max_taps * sizeof (float),
		                    h * sizeof (uint32_t), h * sizeof (uint32_t), (size_t) h * ty.max_taps * sizeof (float) };
		for (int i = 0; i < 6 && e == cudaSuccess; i++)
			e = cudaMemcpyAsync (to[i], from[i], bytes[i], cudaMemcpyHostToDevice, stream);
	}
	uint32_t tx_taps = tx.max_taps, ty_taps = ty.max_taps;
	bd_resample_taps_clear (&tx);
	bd_resample_taps_clear (&ty);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (e);
	grid_layout at (n);
	round_kernel<<<bd_div_up (3 * n, 256), 256, 0, stream>>> (3 * n, b->cells + at.bg, rgb);
	BD_CUDA_CHECK_LAUNCH ();
	resample_rows_kernel<<<bd_div_up ((size_t) w * gh, 256), 256, 0, stream>>> (rgb, gw, gh, w, xs, xc, xw, tx_taps,
	                                                                             rows);
	BD_CUDA_CHECK_LAUNCH ();
	resample_columns_kernel<<<bd_div_up ((size_t) w * h, 256), 256, 0, stream>>> (rows, w, h, ys, yc, yw, ty_taps,
	                                                                              b->out);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}

} // namespace

bd_status
bd_gpu_composite (bd_gpu_composite_buffers *b, cudaStream_t stream, const bd_image *photo, const uint8_t *alpha,
                  size_t alpha_stride, const bd_background *background, uint8_t *out, size_t out_stride,
                  bd_error *error)
{
	uint32_t w = photo->width, h = photo->height, ch = photo->format == BD_PIXEL_RGBA8 ? 4 : 3;
	size_t pixels = (size_t) w * h;
	bd_status st = grow ((void **) &b->photo, &b->photo_bytes, pixels * ch, error);
	if (st == BD_OK)
		st = grow ((void **) &b->alpha, &b->alpha_bytes, pixels, error);
	if (st == BD_OK)
		st = grow ((void **) &b->out, &b->out_bytes, pixels * 4, error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (cudaMemcpy2DAsync (b->photo, (size_t) w * ch, photo->pixels, photo->stride, (size_t) w * ch, h,
	                                  cudaMemcpyHostToDevice, stream));
	BD_CUDA_CHECK (cudaMemcpy2DAsync (b->alpha, w, alpha, alpha_stride, w, h, cudaMemcpyHostToDevice, stream));
	blend_over over = OVER_NOTHING;
	if (background->kind == BD_BACKGROUND_COLOR)
		over = OVER_COLOUR;
	else if (background->kind == BD_BACKGROUND_BLUR) {
		over = OVER_OUT;
		st = draw_blur (b, stream, w, h, ch, background->blur_radius, error);
		if (st != BD_OK)
			return st;
	}
	/* The person's colours: colour means on a grid at most 768 cells long, two iterations. */
	uint32_t factor, radii[2], gw, gh;
	bd_composite_grid (w, h, &factor, radii);
	st = colour_means (b, stream, w, h, ch, factor, radii, 2, &gw, &gh, error);
	if (st != BD_OK)
		return st;
	grid_layout at ((size_t) gw * gh);
	uchar4 colour = make_uchar4 (background->color[0], background->color[1], background->color[2], background->color[3]);
	blend_kernel<<<bd_div_up (pixels, 256), 256, 0, stream>>> (b->photo, ch, w, h, b->alpha, b->cells + at.fg,
	                                                            b->cells + at.bg, factor, gw, gh, over, colour, b->out);
	BD_CUDA_CHECK_LAUNCH ();
	BD_CUDA_CHECK (cudaMemcpy2DAsync (out, out_stride, b->out, (size_t) w * 4, (size_t) w * 4, h,
	                                  cudaMemcpyDeviceToHost, stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (stream));
	return BD_OK;
}

void
bd_gpu_composite_free (bd_gpu_composite_buffers *b)
{
	cudaFree (b->photo);
	cudaFree (b->alpha);
	cudaFree (b->out);
	cudaFree (b->cells);
	cudaFree (b->scratch);
	*b = bd_gpu_composite_buffers {};
}
