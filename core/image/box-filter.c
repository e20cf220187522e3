/* SPDX-License-Identifier: Apache-2.0 */
/* One box pass along a line by running sums: the blur (blur.c), the colour means behind a
 * cut-out (colour-means.c) and the guided filter's window means (upsample-alpha.c) all
 * build on it. The cost is one add and one subtract a sample whatever the radius, and the
 * first window is counted, not looped over, so a radius far larger than the line costs
 * nothing extra. */
#include "image.h"

#include <string.h>

void
bd_box_line (float *line, uint32_t n, uint32_t k, uint32_t r, bd_box_edge edge, float *scratch)
{
	if (n == 0 || k == 0 || k > BD_BOX_MAX_CHANNELS)
		return;
	float sum[BD_BOX_MAX_CHANNELS];
	memcpy (scratch, line, (size_t) n * k * sizeof *line);
	const float *first = scratch, *last_sample = scratch + (size_t) (n - 1) * k;
	/* The window around sample 0: samples 0..last, and with BD_BOX_REPEAT r copies of the
	 * first sample before them and copies of the last for the part of 0..r past the end. */
	uint32_t last = r < n ? r : n - 1;
	float first_copies = edge == BD_BOX_REPEAT ? (float) r : 0;
	float last_copies = edge == BD_BOX_REPEAT ? (float) (r - last) : 0;
	for (uint32_t c = 0; c < k; c++)
		sum[c] = first_copies * first[c] + last_copies * last_sample[c];
	for (uint32_t j = 0; j <= last; j++)
		for (uint32_t c = 0; c < k; c++)
			sum[c] += scratch[(size_t) j * k + c];

	float scale = 1.0f / (float) (2 * (uint64_t) r + 1);
	for (uint32_t j = 0; j < n; j++) {
		int64_t in = (int64_t) j + r + 1, out = (int64_t) j - r;
		float *o = line + (size_t) j * k;
		if (edge == BD_BOX_REPEAT) {
			const float *vi = scratch + (size_t) (in >= n ? n - 1 : in) * k;
			const float *vo = scratch + (size_t) (out < 0 ? 0 : out) * k;
			for (uint32_t c = 0; c < k; c++) {
				o[c] = sum[c] * scale;
				sum[c] += vi[c] - vo[c];
			}
		} else {
			/* The window clipped to the line: divide by what it holds. */
			int64_t lo = out < 0 ? 0 : out, hi = in - 1 >= n ? n - 1 : in - 1;
			float held = (float) (hi - lo + 1);
			for (uint32_t c = 0; c < k; c++)
				o[c] = sum[c] / held;
			if (in < n)
				for (uint32_t c = 0; c < k; c++)
					sum[c] += scratch[(size_t) in * k + c];
			if (out >= 0)
				for (uint32_t c = 0; c < k; c++)
					sum[c] -= scratch[(size_t) out * k + c];
		}
	}
}

void
bd_box_columns (float *img, uint32_t w, uint32_t h, uint32_t k, uint32_t x0, uint32_t x1, uint32_t r,
                uint32_t passes, float *scratch)
{
	if (h == 0 || x1 <= x0)
		return;
	size_t s = (size_t) (x1 - x0) * k, row = (size_t) w * k;
	float *strip = img + (size_t) x0 * k, *copy = scratch, *sum = scratch + (size_t) h * s;
	uint32_t last = r < h ? r : h - 1;
	float first_copies = (float) r, last_copies = (float) (r - last);
	float scale = 1.0f / (float) (2 * (uint64_t) r + 1);
	for (uint32_t pass = 0; pass < passes; pass++) {
		for (uint32_t j = 0; j < h; j++)
			memcpy (copy + j * s, strip + j * row, s * sizeof *copy);
		/* Each element's sum in the order bd_box_line makes it, so the floats agree. */
		const float *first = copy, *last_row = copy + (size_t) (h - 1) * s;
		for (size_t e = 0; e < s; e++)
			sum[e] = first_copies * first[e] + last_copies * last_row[e];
		for (uint32_t j = 0; j <= last; j++)
			for (size_t e = 0; e < s; e++)
				sum[e] += copy[j * s + e];
		for (uint32_t j = 0; j < h; j++) {
			int64_t in = (int64_t) j + r + 1, out = (int64_t) j - r;
			const float *vi = copy + (size_t) (in >= h ? h - 1 : in) * s;
			const float *vo = copy + (size_t) (out < 0 ? 0 : out) * s;
			float *o = strip + j * row;
			for (size_t e = 0; e < s; e++) {
				o[e] = sum[e] * scale;
				sum[e] += vi[e] - vo[e];
			}
		}
	}
}
