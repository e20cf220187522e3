/* Local mean colours of the person and of the background around every pixel, on a grid
 * `factor` times coarser than the photo: averages weighted by alpha and by 1 - alpha over a
 * window (three box passes). With several iterations (Forte and Pitie's blur fusion), each
 * one averages the previous iteration's estimates of the person's and the background's own
 * colours instead of the photo's, the first with a wide window that reaches pure colours, the
 * next with a narrow one that follows them closely. The blurred background uses one
 * iteration's background means; the cut-out uses both means of two (composite.c). */
#include "image.h"

#include <stdlib.h>

/* Three box passes of @r along each axis of @k interleaved float channels, in place. */
static void
box_blur_f32 (float *img, uint32_t w, uint32_t h, uint32_t k, uint32_t r, float *line)
{
	for (int axis = 0; axis < 2; axis++) {
		uint32_t n = axis ? h : w, lines = axis ? w : h;
		size_t step = axis ? (size_t) w * k : k, next = axis ? k : (size_t) w * k;
		for (uint32_t i = 0; i < lines; i++) {
			float *p = img + i * next;
			for (int pass = 0; pass < 3; pass++)
				for (uint32_t c = 0; c < k; c++) {
					for (uint32_t j = 0; j < n; j++)
						line[j] = p[j * step + c];
					/* Edges repeat the border sample, so borders do not darken. */
					float sum = 0;
					for (int64_t j = -(int64_t) r; j <= (int64_t) r; j++)
						sum += line[j < 0 ? 0 : j >= n ? n - 1 : j];
					for (uint32_t j = 0; j < n; j++) {
						p[j * step + c] = sum / (float) (2 * r + 1);
						int64_t in = (int64_t) j + r + 1, out = (int64_t) j - r;
						sum += line[in >= n ? n - 1 : in] - line[out < 0 ? 0 : out];
					}
				}
		}
	}
}

void
bd_colour_means_clear (bd_colour_means *m)
{
	bd_free_aligned (m->fg);
	bd_free_aligned (m->bg);
	m->fg = m->bg = NULL;
}

bd_status
bd_colour_means_make (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride, uint32_t factor,
                      const uint32_t *radii, int iterations, bd_colour_means *m, bd_error *error)
{
	enum { K = 11 };   /* F x alpha, alpha, B x (1 - alpha), 1 - alpha, plain RGB */
	uint32_t f = factor ? factor : 1;
	m->factor = f;
	m->w = (photo->width + f - 1) / f;
	m->h = (photo->height + f - 1) / f;
	size_t n = (size_t) m->w * m->h;
	float *img = bd_alloc_zeroed (n, 5 * sizeof (float));      /* reduced photo RGB, alpha, count */
	float *est = bd_alloc_zeroed (n, 6 * sizeof (float));      /* current estimates F, B */
	float *sums = bd_alloc_zeroed (n, K * sizeof (float));
	float *line = bd_alloc_zeroed (m->w > m->h ? m->w : m->h, sizeof (float));
	m->fg = bd_alloc_zeroed (n, 3 * sizeof (float));
	m->bg = bd_alloc_zeroed (n, 3 * sizeof (float));
	if (!img || !est || !sums || !line || !m->fg || !m->bg) {
		bd_free_aligned (img);
		bd_free_aligned (est);
		bd_free_aligned (sums);
		bd_free_aligned (line);
		bd_colour_means_clear (m);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory estimating colours");
	}

	/* The photo and mask averaged over blocks of f x f pixels. */
	uint32_t ch = bd_image_channels (photo);
	for (uint32_t y = 0; y < photo->height; y++) {
		const uint8_t *px = photo->pixels + (size_t) y * photo->stride, *a = alpha + (size_t) y * alpha_stride;
		float *row = img + (size_t) (y / f) * m->w * 5;
		for (uint32_t x = 0; x < photo->width; x++, px += ch) {
			float *p = row + (size_t) (x / f) * 5;
			p[0] += px[0];
			p[1] += px[1];
			p[2] += px[2];
			p[3] += a[x] / 255.0f;
			p[4] += 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		float *p = img + 5 * i;
		for (int c = 0; c < 4; c++)
			p[c] /= p[4];
		for (int c = 0; c < 3; c++)
			est[6 * i + c] = est[6 * i + 3 + c] = p[c];
	}

	for (int it = 0; it < iterations; it++) {
		for (size_t i = 0; i < n; i++) {
			const float *p = img + 5 * i, *e = est + 6 * i;
			float *s = sums + K * i, a = p[3];
			for (int c = 0; c < 3; c++) {
				s[c] = e[c] * a;
				s[4 + c] = e[3 + c] * (1 - a);
				s[8 + c] = p[c];
			}
			s[3] = a;
			s[7] = 1 - a;
		}
		box_blur_f32 (sums, m->w, m->h, K, radii[it] ? radii[it] : 1, line);
		for (size_t i = 0; i < n; i++) {
			const float *s = sums + K * i, *p = img + 5 * i;
			float *fm = m->fg + 3 * i, *bm = m->bg + 3 * i, *e = est + 6 * i, a = p[3];
			/* A little of the plain mean keeps each ratio defined where a window holds none
			 * of that side (deep inside the person, or far from anyone). */
			const float eps = 0.02f;
			for (int c = 0; c < 3; c++) {
				fm[c] = (s[c] + eps * s[8 + c]) / (s[3] + eps);
				bm[c] = (s[4 + c] + eps * s[8 + c]) / (s[7] + eps);
				/* The next iteration's estimates: each side's mean, corrected so that
				 * a F + (1 - a) B reproduces the photo. */
				float r = p[c] - a * fm[c] - (1 - a) * bm[c];
				float fv = fm[c] + a * r, bv = bm[c] + (1 - a) * r;
				e[c] = fv < 0 ? 0 : fv > 255 ? 255 : fv;
				e[3 + c] = bv < 0 ? 0 : bv > 255 ? 255 : bv;
			}
		}
	}
	bd_free_aligned (img);
	bd_free_aligned (est);
	bd_free_aligned (sums);
	bd_free_aligned (line);
	return BD_OK;
}
