/* SPDX-License-Identifier: Apache-2.0 */
/* bd_composite on the device for a cut-out, a plain colour or a blurred background: the
 * person's colours estimated from local means of person and background colours
 * (colour-means.cu), then blended (core/image/composite.c). Every float step is the host's, in
 * the host's order, with rounded operations that the compiler may not fuse, so the bytes are
 * the host's: a folder's cut-outs do not change with the device that made them. The photo
 * goes up once and the RGBA comes down once. */
#include "composite.cuh"

#include "colour-means.cuh"
#include "resample.cuh"

#include <math.h>

namespace {

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
blend_kernel (const uint8_t *photo, uint32_t channels, size_t pitch, uint32_t width, uint32_t height,
              const uint8_t *alpha, const float *fg, const float *bg, uint32_t factor, uint32_t gw, uint32_t gh,
              blend_over over, uchar4 colour, uint8_t *out)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * height)
		return;
	uint32_t x = (uint32_t) (i % width), y = (uint32_t) (i / width);
	const uint8_t *src = photo + (size_t) y * pitch + (size_t) x * channels;
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

/* The photo blurred behind the person into b->out (composite.c's draw_blur): the background's
 * means on a grid of radius / 8 pixels a cell, to 8 bits, enlarged as bd_resample_rgb does. */
bd_status
draw_blur (bd_gpu_composite_buffers *b, cudaStream_t stream, uint32_t w, uint32_t h, uint32_t ch, size_t pitch,
           float radius, bd_error *error)
{
	uint32_t f = radius > 8 ? (uint32_t) (radius / 8) : 1;
	uint32_t r = (uint32_t) lroundf (radius / (float) f / 2.0f);
	uint32_t radii[1] = { r > 0 ? r : 1 };
	bd_gpu_means_grid grid;
	bd_status st = bd_gpu_colour_means (b->photo, ch, pitch, b->alpha, w, h, f, radii, 1, &b->cells, &b->cells_bytes,
	                                    &grid, stream, error);
	if (st != BD_OK)
		return st;
	size_t n = (size_t) grid.w * grid.h;
	st = bd_gpu_grow ((void **) &b->grid_rgb, &b->grid_rgb_bytes, 3 * n, error);
	if (st != BD_OK)
		return st;
	round_kernel<<<bd_div_up (3 * n, 256), 256, 0, stream>>> (3 * n, grid.bg, b->grid_rgb);
	BD_CUDA_CHECK_LAUNCH ();
	return bd_gpu_resample_rgb (b->grid_rgb, grid.w, grid.h, (size_t) grid.w * 3, 3, w, h, b->out, 4, &b->scratch,
	                            &b->scratch_bytes, stream, error);
}

} // namespace

bd_status
bd_gpu_composite (bd_gpu_composite_buffers *b, cudaStream_t stream, const bd_image *photo, const uint8_t *alpha,
                  size_t alpha_stride, const bd_background *background, uint8_t *out, size_t out_stride,
                  bd_error *error)
{
	uint32_t w = photo->width, h = photo->height, ch = photo->format == BD_PIXEL_RGBA8 ? 4 : 3;
	size_t pixels = (size_t) w * h;
	/* On the device the photo keeps the host's row pitch: one plain copy brings it up. */
	size_t row = (size_t) w * ch, pitch = photo->stride;
	bd_status st = bd_gpu_grow ((void **) &b->photo, &b->photo_bytes, pitch * (h - 1) + row, error);
	if (st == BD_OK)
		st = bd_gpu_grow ((void **) &b->alpha, &b->alpha_bytes, pixels, error);
	if (st == BD_OK)
		st = bd_gpu_grow ((void **) &b->out, &b->out_bytes, pixels * 4, error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (bd_gpu_copy_rows (b->photo, pitch, photo->pixels, photo->stride, row, h, cudaMemcpyHostToDevice,
	                                 stream));
	BD_CUDA_CHECK (bd_gpu_copy_rows (b->alpha, w, alpha, alpha_stride, w, h, cudaMemcpyHostToDevice, stream));
	blend_over over = OVER_NOTHING;
	if (background->kind == BD_BACKGROUND_COLOR)
		over = OVER_COLOUR;
	else if (background->kind == BD_BACKGROUND_BLUR) {
		over = OVER_OUT;
		st = draw_blur (b, stream, w, h, ch, pitch, background->blur_radius, error);
		if (st != BD_OK)
			return st;
	}
	/* The person's colours: colour means on a grid at most 768 cells long, two iterations. */
	uint32_t factor, radii[2];
	bd_composite_grid (w, h, &factor, radii);
	bd_gpu_means_grid grid;
	st = bd_gpu_colour_means (b->photo, ch, pitch, b->alpha, w, h, factor, radii, 2, &b->cells, &b->cells_bytes, &grid,
	                          stream, error);
	if (st != BD_OK)
		return st;
	uchar4 colour = make_uchar4 (background->color[0], background->color[1], background->color[2], background->color[3]);
	blend_kernel<<<bd_div_up (pixels, 256), 256, 0, stream>>> (b->photo, ch, pitch, w, h, b->alpha, grid.fg, grid.bg,
	                                                            factor, grid.w, grid.h, over, colour, b->out);
	BD_CUDA_CHECK_LAUNCH ();
	BD_CUDA_CHECK (bd_gpu_copy_rows (out, out_stride, b->out, (size_t) w * 4, (size_t) w * 4, h,
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
	cudaFree (b->grid_rgb);
	cudaFree (b->scratch);
	*b = bd_gpu_composite_buffers {};
}
