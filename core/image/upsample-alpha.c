/* SPDX-License-Identifier: Apache-2.0 */
/* Full-resolution alpha from the network's low-resolution probabilities.
 *
 * Edge-aware: a colour guided filter (He et al.) is fitted at the network's resolution, where
 * the mask and the photo line up, giving for every pixel a linear model alpha = A . rgb + b.
 * A and b vary slowly, so they are upsampled bilinearly and applied to the full-resolution
 * photo: the mask's edges then follow the photo's real edges, hair strands included, at the
 * cost of one pass over the full-size pixels (the "fast guided filter"). */
#include "image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GF_CHANNELS 13   /* I (3), p, I*p (3), I*I^T upper triangle (6) */

/* Mean over a (2r+1)^2 window, clipped at the borders, of @k interleaved channels, in place;
 * @line holds 2 * max(w, h) * k floats. */
static void
box_mean (float *img, uint32_t w, uint32_t h, uint32_t k, uint32_t r, float *line)
{
	size_t half = (size_t) (w > h ? w : h) * k;
	for (uint32_t y = 0; y < h; y++)
		bd_box_line (img + (size_t) y * w * k, w, k, r, BD_BOX_CLIP, line);
	for (uint32_t x = 0; x < w; x++) {
		for (uint32_t y = 0; y < h; y++)
			memcpy (line + (size_t) y * k, img + ((size_t) y * w + x) * k, k * sizeof *line);
		bd_box_line (line, h, k, r, BD_BOX_CLIP, line + half);
		for (uint32_t y = 0; y < h; y++)
			memcpy (img + ((size_t) y * w + x) * k, line + (size_t) y * k, k * sizeof *line);
	}
}

/* Solves (Sigma + eps I) a = cov for a symmetric 3x3 Sigma given by its upper triangle. */
static void
solve3 (const float s[6], float eps, const float cov[3], float a[3])
{
	float m00 = s[0] + eps, m01 = s[1], m02 = s[2], m11 = s[3] + eps, m12 = s[4], m22 = s[5] + eps;
	float c00 = m11 * m22 - m12 * m12, c01 = m02 * m12 - m01 * m22, c02 = m01 * m12 - m02 * m11;
	float c11 = m00 * m22 - m02 * m02, c12 = m01 * m02 - m00 * m12, c22 = m00 * m11 - m01 * m01;
	float det = m00 * c00 + m01 * c01 + m02 * c02;
	float inv = 1.0f / det;
	a[0] = (c00 * cov[0] + c01 * cov[1] + c02 * cov[2]) * inv;
	a[1] = (c01 * cov[0] + c11 * cov[1] + c12 * cov[2]) * inv;
	a[2] = (c02 * cov[0] + c12 * cov[1] + c22 * cov[2]) * inv;
}

typedef struct {
	const float    *coef;      /* lw x lh x 4: A (3), b; or the probabilities (1 channel) */
	uint32_t        k;
	uint32_t        lw, lh;
	const bd_image *photo;
	uint8_t        *alpha;
	size_t          stride;
	uint32_t       *x0;        /* per output column: left sample and weight */
	float          *fx;
} apply_ctx;

static void
apply_task (void *data, size_t y)
{
	const apply_ctx *c = data;
	float v = ((float) y + 0.5f) * (float) c->lh / (float) c->photo->height - 0.5f;
	if (v < 0)
		v = 0;
	uint32_t y0 = (uint32_t) v;
	if (y0 > c->lh - 1)
		y0 = c->lh - 1;
	uint32_t y1 = y0 + 1 < c->lh ? y0 + 1 : y0;
	float fy = v - (float) y0;
	if (fy > 1)
		fy = 1;
	uint32_t ch = bd_image_channels (c->photo);
	const uint8_t *px = c->photo->pixels + y * c->photo->stride;
	uint8_t *out = c->alpha + y * c->stride;
	const float *r0 = c->coef + (size_t) y0 * c->lw * c->k, *r1 = c->coef + (size_t) y1 * c->lw * c->k;
	for (uint32_t x = 0; x < c->photo->width; x++) {
		uint32_t xa = c->x0[x], xb = xa + 1 < c->lw ? xa + 1 : xa;
		float fx = c->fx[x];
		float w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy;
		float q[4];
		for (uint32_t i = 0; i < c->k; i++)
			q[i] = w00 * r0[xa * c->k + i] + w01 * r0[xb * c->k + i] +
			       w10 * r1[xa * c->k + i] + w11 * r1[xb * c->k + i];
		float a;
		if (c->k == 4) {
			const uint8_t *p = px + (size_t) x * ch;
			a = (q[0] * p[0] + q[1] * p[1] + q[2] * p[2]) * (1.0f / 255.0f) + q[3];
		} else {
			a = q[0];
		}
		a = a * 255.0f + 0.5f;
		out[x] = bd_u8_from_float (a);
	}
}

bd_status
bd_upsample_alpha (bd_thread_pool *pool, const float *prob, const float *rgb_low,
                   uint32_t lw, uint32_t lh, const bd_image *photo, bool refine,
                   uint8_t *alpha, size_t alpha_stride, bd_error *error)
{
	size_t n = (size_t) lw * lh;
	float *stats = NULL, *line = NULL, *coef = NULL, *fx = NULL;
	uint32_t *x0 = NULL;
	bd_status st = BD_OK;

	x0 = calloc (photo->width, sizeof *x0);
	fx = calloc (photo->width, sizeof *fx);
	if (!x0 || !fx)
		goto oom;
	for (uint32_t x = 0; x < photo->width; x++) {
		float u = ((float) x + 0.5f) * (float) lw / (float) photo->width - 0.5f;
		if (u < 0)
			u = 0;
		x0[x] = (uint32_t) u < lw ? (uint32_t) u : lw - 1;
		fx[x] = u - (float) x0[x];
		if (fx[x] > 1)
			fx[x] = 1;
	}

	apply_ctx c = {
		.coef = prob, .k = 1, .lw = lw, .lh = lh, .photo = photo,
		.alpha = alpha, .stride = alpha_stride, .x0 = x0, .fx = fx,
	};
	if (refine) {
		/* A window of about 1% of the long side, and a regulariser that keeps flat regions
		 * flat while letting colour edges through. */
		uint32_t r = bd_guided_radius (lw > lh ? lw : lh);
		const float eps = BD_GUIDED_EPS;
		stats = bd_alloc_zeroed (n, GF_CHANNELS * sizeof (float));
		coef = bd_alloc_zeroed (n, 4 * sizeof (float));
		size_t line_len = 2 * (size_t) (lw > lh ? lw : lh) * GF_CHANNELS;
		line = bd_alloc_zeroed (line_len, sizeof (float));
		if (!stats || !coef || !line)
			goto oom;
		for (size_t i = 0; i < n; i++) {
			const float *I = rgb_low + 3 * i;
			float p = prob[i], *s = stats + GF_CHANNELS * i;
			s[0] = I[0]; s[1] = I[1]; s[2] = I[2]; s[3] = p;
			s[4] = I[0] * p; s[5] = I[1] * p; s[6] = I[2] * p;
			s[7] = I[0] * I[0]; s[8] = I[0] * I[1]; s[9] = I[0] * I[2];
			s[10] = I[1] * I[1]; s[11] = I[1] * I[2]; s[12] = I[2] * I[2];
		}
		box_mean (stats, lw, lh, GF_CHANNELS, r, line);
		for (size_t i = 0; i < n; i++) {
			const float *s = stats + GF_CHANNELS * i;
			const float *mI = s, mp = s[3];
			float cov[3] = { s[4] - mI[0] * mp, s[5] - mI[1] * mp, s[6] - mI[2] * mp };
			float var[6] = {
				s[7] - mI[0] * mI[0], s[8] - mI[0] * mI[1], s[9] - mI[0] * mI[2],
				s[10] - mI[1] * mI[1], s[11] - mI[1] * mI[2], s[12] - mI[2] * mI[2],
			};
			float *a = coef + 4 * i;
			solve3 (var, eps, cov, a);
			a[3] = mp - a[0] * mI[0] - a[1] * mI[1] - a[2] * mI[2];
		}
		box_mean (coef, lw, lh, 4, r, line);
		c.coef = coef;
		c.k = 4;
	}
	bd_thread_pool_run (pool, photo->height, apply_task, &c);
	goto out;
oom:
	st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory upsampling the mask");
out:
	free (x0);
	free (fx);
	bd_free_aligned (stats);
	bd_free_aligned (coef);
	bd_free_aligned (line);
	return st;
}
