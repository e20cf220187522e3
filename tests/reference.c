/* SPDX-License-Identifier: Apache-2.0 */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
ref_conv2d (const float *in, uint32_t cin, uint32_t h, uint32_t w,
            const float *weight, const float *bias, uint32_t cout, uint32_t k,
            int relu, float *out)
{
	int pad = (int) k / 2;
	for (uint32_t co = 0; co < cout; co++)
		for (uint32_t y = 0; y < h; y++)
			for (uint32_t x = 0; x < w; x++) {
				double s = bias[co];
				for (uint32_t ci = 0; ci < cin; ci++)
					for (uint32_t ky = 0; ky < k; ky++)
						for (uint32_t kx = 0; kx < k; kx++) {
							int iy = (int) y + (int) ky - pad, ix = (int) x + (int) kx - pad;
							if (iy < 0 || ix < 0 || iy >= (int) h || ix >= (int) w)
								continue;
							s += (double) weight[((co * cin + ci) * k + ky) * k + kx] *
							     in[((size_t) ci * h + (size_t) iy) * w + (size_t) ix];
						}
				out[((size_t) co * h + y) * w + x] = (float) (relu && s < 0 ? 0 : s);
			}
}

void
ref_conv_transpose2x2 (const float *in, uint32_t cin, uint32_t h, uint32_t w,
                       const float *weight, const float *bias, uint32_t cout, float *out)
{
	for (uint32_t co = 0; co < cout; co++)
		for (uint32_t y = 0; y < 2 * h; y++)
			for (uint32_t x = 0; x < 2 * w; x++) {
				double s = bias[co];
				for (uint32_t ci = 0; ci < cin; ci++)
					s += (double) weight[((ci * cout + co) * 2 + y % 2) * 2 + x % 2] *
					     in[((size_t) ci * h + y / 2) * w + x / 2];
				out[((size_t) co * 2 * h + y) * 2 * w + x] = (float) s;
			}
}

void
ref_maxpool2x2 (const float *in, uint32_t c, uint32_t h, uint32_t w, float *out)
{
	for (uint32_t ch = 0; ch < c; ch++)
		for (uint32_t y = 0; y < h / 2; y++)
			for (uint32_t x = 0; x < w / 2; x++) {
				const float *p = in + ((size_t) ch * h + 2 * y) * w + 2 * x;
				float m = fmaxf (fmaxf (p[0], p[1]), fmaxf (p[w], p[w + 1]));
				out[((size_t) ch * (h / 2) + y) * (w / 2) + x] = m;
			}
}

static uint32_t
rd32 (const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint64_t
rd64 (const uint8_t *p)
{
	return rd32 (p) | (uint64_t) rd32 (p + 4) << 32;
}

/* The named f32 tensor's data (the reference reads f32 files only). */
static const float *
tensor (const uint8_t *b, const char *name)
{
	uint32_t n = rd32 (b + 96);
	uint64_t table = rd64 (b + 104), data = rd64 (b + 112);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = b + table + (size_t) i * 96;
		if (strncmp ((const char *) e, name, 56) == 0 && rd32 (e + 56) == 0)
			return (const float *) (b + data + rd64 (e + 80));
	}
	return NULL;
}

#include <stdio.h>

#define T(...) (snprintf (name, sizeof name, __VA_ARGS__), tensor (model_bytes, name))

#include <stdio.h>

int
ref_unet_forward (const uint8_t *model_bytes, const float *in, uint32_t h, uint32_t w, float *out)
{
	uint32_t depth = rd32 (model_bytes + 24), widths[8];
	for (int l = 0; l < 8; l++)
		widths[l] = rd32 (model_bytes + 64 + 4 * l);
	char name[64];
	float *skip[8] = { 0 };
	float *x = malloc (3 * (size_t) h * w * sizeof *x);
	if (!x)
		return -1;
	memcpy (x, in, 3 * (size_t) h * w * sizeof *x);
	uint32_t cin = 3;
	for (uint32_t l = 0; l < depth; l++) {
		uint32_t lh = h >> l, lw = w >> l, c = widths[l];
		if (l > 0) {
			float *p = malloc ((size_t) cin * lh * lw * sizeof *p);
			ref_maxpool2x2 (skip[l - 1], cin, lh * 2, lw * 2, p);
			free (x);
			x = p;
		}
		float *t = malloc ((size_t) c * lh * lw * sizeof *t), *y = malloc ((size_t) c * lh * lw * sizeof *y);
		ref_conv2d (x, cin, lh, lw, T ("enc%u.conv0.weight", l), T ("enc%u.conv0.bias", l), c, 3, 1, t);
		ref_conv2d (t, c, lh, lw, T ("enc%u.conv1.weight", l), T ("enc%u.conv1.bias", l), c, 3, 1, y);
		free (t);
		if (l + 1 < depth)
			skip[l] = y;
		else {
			free (x);
			x = y;
		}
		cin = c;
	}
	for (uint32_t l = depth - 1; l-- > 0;) {
		uint32_t lh = h >> l, lw = w >> l, c = widths[l];
		float *cat = malloc (2 * (size_t) c * lh * lw * sizeof *cat);
		memcpy (cat, skip[l], (size_t) c * lh * lw * sizeof *cat);
		ref_conv_transpose2x2 (x, widths[l + 1], lh / 2, lw / 2, T ("up%u.weight", l), T ("up%u.bias", l),
		                       c, cat + (size_t) c * lh * lw);
		float *t = malloc ((size_t) c * lh * lw * sizeof *t);
		free (x);
		x = malloc ((size_t) c * lh * lw * sizeof *x);
		ref_conv2d (cat, 2 * c, lh, lw, T ("dec%u.conv0.weight", l), T ("dec%u.conv0.bias", l), c, 3, 1, t);
		ref_conv2d (t, c, lh, lw, T ("dec%u.conv1.weight", l), T ("dec%u.conv1.bias", l), c, 3, 1, x);
		free (t);
		free (cat);
		free (skip[l]);
	}
	ref_conv2d (x, widths[0], h, w, T ("head.weight"), T ("head.bias"), 1, 1, 0, out);
	for (size_t i = 0; i < (size_t) h * w; i++)
		out[i] = 1.0f / (1.0f + expf (-out[i]));
	free (x);
	return 0;
}

double
ref_relative_error (const float *a, const float *b, size_t n)
{
	double num = 0, den = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite (a[i]))
			return INFINITY;
		num += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
		den += (double) b[i] * b[i];
	}
	return den > 0 ? sqrt (num / den) : sqrt (num);
}
