/* Mirror averaging's last step (session.c): the mirror pass, run at another scale on a
 * canvas of its own, brought back to the photo's pass and averaged with it. */
#include "image.h"

static inline float
mirrored_at (const float *mirrored, const bd_letterbox *lb2, uint32_t x, uint32_t y)
{
	/* Column x of the scaled photo is column pw - 1 - (x + ox) of the mirrored canvas. */
	return mirrored[(size_t) (y + lb2->oy) * lb2->pw + lb2->pw - 1 - (x + lb2->ox)];
}

/* Bilinear sample position along an axis of @src samples for output index @i of @dst,
 * pixel centres aligned, clamped to the samples; *f is the second sample's weight. */
static inline uint32_t
sample_axis (uint32_t i, uint32_t src, uint32_t dst, float *f)
{
	float c = ((float) i + 0.5f) * ((float) src / (float) dst) - 0.5f;
	c = c < 0.0f ? 0.0f : c > (float) (src - 1) ? (float) (src - 1) : c;
	uint32_t s0 = (uint32_t) c;
	s0 = s0 >= src - 1 ? (src > 1 ? src - 2 : 0) : s0;
	*f = src > 1 ? c - (float) s0 : 0.0f;
	return s0;
}

void
bd_mirror_average (float *prob, const bd_letterbox *lb, const float *mirrored, const bd_letterbox *lb2)
{
	for (uint32_t y = 0; y < lb->sh; y++) {
		float fy;
		uint32_t y0 = sample_axis (y, lb2->sh, lb->sh, &fy), y1 = lb2->sh > 1 ? y0 + 1 : y0;
		float *row = prob + (size_t) (y + lb->oy) * lb->pw + lb->ox;
		for (uint32_t x = 0; x < lb->sw; x++) {
			float fx;
			uint32_t x0 = sample_axis (x, lb2->sw, lb->sw, &fx), x1 = lb2->sw > 1 ? x0 + 1 : x0;
			float top = (1.0f - fx) * mirrored_at (mirrored, lb2, x0, y0) + fx * mirrored_at (mirrored, lb2, x1, y0);
			float bottom = (1.0f - fx) * mirrored_at (mirrored, lb2, x0, y1) + fx * mirrored_at (mirrored, lb2, x1, y1);
			row[x] = 0.5f * (row[x] + (1.0f - fy) * top + fy * bottom);
		}
	}
}
