/* SPDX-License-Identifier: Apache-2.0 */
/* Guided-filter upsampling on the device, step by step as on the CPU
 * (core/image/upsample-alpha.c): statistics, window means, per-pixel linear coefficients,
 * their window means, then one pass over the full-size photo. */
#include "upsample-alpha.cuh"

namespace {

constexpr int GF = 13;   /* I (3), p, I*p (3), I*I^T upper triangle (6) */

__global__ void
stats_kernel (const bd_gpu_upsample_params p, float *stats, float *coef_plain)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x, n = (size_t) p.lb.sw * p.lb.sh;
	if (i >= n)
		return;
	uint32_t x = (uint32_t) (i % p.lb.sw), y = (uint32_t) (i / p.lb.sw);
	float pr = p.prob[(size_t) (y + p.lb.oy) * p.lb.pw + x + p.lb.ox];
	coef_plain[i] = pr;
	const float *I = p.rgb_low + 3 * i;
	float *s = stats + GF * i;
	s[0] = I[0]; s[1] = I[1]; s[2] = I[2]; s[3] = pr;
	s[4] = I[0] * pr; s[5] = I[1] * pr; s[6] = I[2] * pr;
	s[7] = I[0] * I[0]; s[8] = I[0] * I[1]; s[9] = I[0] * I[2];
	s[10] = I[1] * I[1]; s[11] = I[1] * I[2]; s[12] = I[2] * I[2];
}

/* The mean over the (2r+1)^2 window clipped at the borders, of k interleaved channels, in two
 * passes: sums along the rows, then their sums down the columns divided by the window's size.
 * Every output summing its 81 inputs in one pass took 68 µs a call at 512x288 (13 channels). */
__global__ void
box_rows_kernel (const float *in, float *out, uint32_t w, uint32_t h, uint32_t k, uint32_t r)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) w * h * k)
		return;
	uint32_t c = (uint32_t) (i % k);
	size_t pix = i / k;
	uint32_t x = (uint32_t) (pix % w), y = (uint32_t) (pix / w);
	uint32_t x0 = x > r ? x - r : 0, x1 = x + r < w ? x + r : w - 1;
	const float *row = in + (size_t) y * w * k + c;
	float s = 0;
	for (uint32_t xx = x0; xx <= x1; xx++)
		s += row[(size_t) xx * k];
	out[i] = s;
}

__global__ void
box_columns_kernel (const float *in, float *out, uint32_t w, uint32_t h, uint32_t k, uint32_t r)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) w * h * k)
		return;
	size_t pix = i / k;
	uint32_t x = (uint32_t) (pix % w), y = (uint32_t) (pix / w);
	uint32_t x0 = x > r ? x - r : 0, x1 = x + r < w ? x + r : w - 1;
	uint32_t y0 = y > r ? y - r : 0, y1 = y + r < h ? y + r : h - 1;
	size_t line = (size_t) w * k;
	float s = 0;
	for (uint32_t yy = y0; yy <= y1; yy++)
		s += in[i - (size_t) y * line + (size_t) yy * line];
	out[i] = s / (float) ((x1 - x0 + 1) * (y1 - y0 + 1));
}

/* @in's window means into @out (which may be @in), the row sums through @tmp, a third buffer. */
bd_status
box_mean (const float *in, float *tmp, float *out, uint32_t w, uint32_t h, uint32_t k, uint32_t r,
          cudaStream_t stream, bd_error *error)
{
	size_t n = (size_t) w * h * k;
	box_rows_kernel<<<bd_div_up (n, 256), 256, 0, stream>>> (in, tmp, w, h, k, r);
	BD_CUDA_CHECK_LAUNCH ();
	box_columns_kernel<<<bd_div_up (n, 256), 256, 0, stream>>> (tmp, out, w, h, k, r);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}

__global__ void
coef_kernel (const float *means, float *coef, size_t n, float eps)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float *s = means + GF * i, *mI = s;
	float mp = s[3];
	float cov[3] = { s[4] - mI[0] * mp, s[5] - mI[1] * mp, s[6] - mI[2] * mp };
	float m00 = s[7] - mI[0] * mI[0] + eps, m01 = s[8] - mI[0] * mI[1], m02 = s[9] - mI[0] * mI[2];
	float m11 = s[10] - mI[1] * mI[1] + eps, m12 = s[11] - mI[1] * mI[2], m22 = s[12] - mI[2] * mI[2] + eps;
	float c00 = m11 * m22 - m12 * m12, c01 = m02 * m12 - m01 * m22, c02 = m01 * m12 - m02 * m11;
	float c11 = m00 * m22 - m02 * m02, c12 = m01 * m02 - m00 * m12, c22 = m00 * m11 - m01 * m01;
	float inv = 1.0f / (m00 * c00 + m01 * c01 + m02 * c02);
	float *a = coef + 4 * i;
	a[0] = (c00 * cov[0] + c01 * cov[1] + c02 * cov[2]) * inv;
	a[1] = (c01 * cov[0] + c11 * cov[1] + c12 * cov[2]) * inv;
	a[2] = (c02 * cov[0] + c12 * cov[1] + c22 * cov[2]) * inv;
	a[3] = mp - a[0] * mI[0] - a[1] * mI[1] - a[2] * mI[2];
}

/* Bilinear place of full-size coordinate @x in a grid of @n samples covering @full pixels. */
__device__ inline void
grid_pos (uint32_t x, uint32_t full, uint32_t n, uint32_t *i0, uint32_t *i1, float *t)
{
	float u = ((float) x + 0.5f) * (float) n / (float) full - 0.5f;
	u = u < 0 ? 0 : u;
	*i0 = (uint32_t) u < n ? (uint32_t) u : n - 1;
	*i1 = *i0 + 1 < n ? *i0 + 1 : *i0;
	*t = u - (float) *i0;
	*t = *t > 1 ? 1 : *t;
}

__global__ void
apply_kernel (const bd_gpu_upsample_params p, const float *coef, uint32_t k)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= p.width)
		return;
	uint32_t x0, x1, y0, y1;
	float fx, fy;
	grid_pos (x, p.width, p.lb.sw, &x0, &x1, &fx);
	grid_pos (y, p.height, p.lb.sh, &y0, &y1, &fy);
	float w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy;
	const float *r0 = coef + (size_t) y0 * p.lb.sw * k, *r1 = coef + (size_t) y1 * p.lb.sw * k;
	float q[4];
	for (uint32_t i = 0; i < k; i++)
		q[i] = w00 * r0[x0 * k + i] + w01 * r0[x1 * k + i] + w10 * r1[x0 * k + i] + w11 * r1[x1 * k + i];
	float a;
	if (k == 4) {
		const uint8_t *px = p.photo + (size_t) y * p.stride + (size_t) x * p.channels;
		a = (q[0] * px[0] + q[1] * px[1] + q[2] * px[2]) * (1.0f / 255.0f) + q[3];
	} else {
		a = q[0];
	}
	a = a * 255.0f + 0.5f;
	p.alpha[(size_t) y * p.width + x] = (uint8_t) (a < 0 ? 0 : a > 255 ? 255 : a);
}

} // namespace

bd_status
bd_gpu_upsample_alpha (const bd_gpu_upsample_params *p, cudaStream_t stream, bd_error *error)
{
	size_t n = (size_t) p->lb.sw * p->lb.sh;
	float *stats = p->scratch, *means = stats + GF * n, *coef = means + GF * n, *coef_mean = coef + 4 * n;
	/* Without refinement the probabilities themselves are interpolated (coef_mean holds them). */
	stats_kernel<<<bd_div_up (n, 256), 256, 0, stream>>> (*p, stats, coef_mean);
	BD_CUDA_CHECK_LAUNCH ();
	uint32_t k = 1;
	if (p->refine) {
		uint32_t r = bd_guided_radius (p->lb.sw > p->lb.sh ? p->lb.sw : p->lb.sh);
		/* The statistics' row sums go into @means and their means back into @stats, which
		 * are then no longer needed; the coefficients' row sums into @coef_mean and
		 * their means into @coef. */
		bd_status st = box_mean (stats, means, stats, p->lb.sw, p->lb.sh, GF, r, stream, error);
		if (st != BD_OK)
			return st;
		coef_kernel<<<bd_div_up (n, 256), 256, 0, stream>>> (stats, coef, n, BD_GUIDED_EPS);
		BD_CUDA_CHECK_LAUNCH ();
		st = box_mean (coef, coef_mean, coef, p->lb.sw, p->lb.sh, 4, r, stream, error);
		if (st != BD_OK)
			return st;
		k = 4;
	}
	dim3 grid (bd_div_up (p->width, 128), p->height);
	apply_kernel<<<grid, 128, 0, stream>>> (*p, k == 4 ? coef : coef_mean, k);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
