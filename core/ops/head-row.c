/* SPDX-License-Identifier: Apache-2.0 */
/* One row of the network's head (head.c): the 1x1 convolution to one channel, then the
 * sigmoid, over floats or an integer session's halves (widened exactly first). Built once
 * per x86-64 level and picked at run time, as the convolution's rows are, without fused
 * multiply-adds: every build sums each pixel's channels in the same order with the same
 * roundings, so every build gives the same floats. The x86-64-v4 build also gives the
 * AMX convolution that feeds the head directly (conv-amx.c) the same arithmetic a block of
 * channels at a time (BD_HEAD_BLOCK_NAME, BD_HEAD_SIGMOID_NAME). */
#include "ops.h"

#include <math.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__) && BD_LANES == 16
/* @r[m] holds pixel m's 16 channels; afterwards @r[c] holds channel c of the 16 pixels. */
static inline void
transpose16 (__m512 r[16])
{
	__m512 t[16];
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps (r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps (r[i], r[i + 1]);
	}
	/* Now t[4q..4q+3] hold pixels 4q..4q+3 two by two; below, r[4q + k] holds element k of
	 * every 128-bit lane of those four pixels: lane l is their channel 4l + k. */
	for (int q = 0; q < 16; q += 4) {
		__m512d a = _mm512_castps_pd (t[q]), b = _mm512_castps_pd (t[q + 2]);
		__m512d c = _mm512_castps_pd (t[q + 1]), d = _mm512_castps_pd (t[q + 3]);
		r[q] = _mm512_castpd_ps (_mm512_unpacklo_pd (a, b));
		r[q + 1] = _mm512_castpd_ps (_mm512_unpackhi_pd (a, b));
		r[q + 2] = _mm512_castpd_ps (_mm512_unpacklo_pd (c, d));
		r[q + 3] = _mm512_castpd_ps (_mm512_unpackhi_pd (c, d));
	}
	/* Channel 4l + k is lane l of r[k], r[4 + k], r[8 + k] and r[12 + k], in that order. */
	for (int k = 0; k < 4; k++) {
		__m512 a = _mm512_shuffle_f32x4 (r[k], r[4 + k], 0x88), b = _mm512_shuffle_f32x4 (r[k], r[4 + k], 0xdd);
		__m512 c = _mm512_shuffle_f32x4 (r[8 + k], r[12 + k], 0x88), d = _mm512_shuffle_f32x4 (r[8 + k], r[12 + k], 0xdd);
		t[k] = _mm512_shuffle_f32x4 (a, c, 0x88);
		t[8 + k] = _mm512_shuffle_f32x4 (a, c, 0xdd);
		t[4 + k] = _mm512_shuffle_f32x4 (b, d, 0x88);
		t[12 + k] = _mm512_shuffle_f32x4 (b, d, 0xdd);
	}
	for (int i = 0; i < 16; i++)
		r[i] = t[i];
}
#endif

#if defined(__AVX512F__) && BD_LANES == 16
/* @sum plus one block of channels (at most 16, @count) of 16 pixels, @r[m] pixel m's: their
 * lanes turned into one vector a channel, each weighed and added in order. */
static inline __m512
add_pixels (__m512 sum, __m512 r[16], const float *weight, uint32_t count)
{
	transpose16 (r);
	for (uint32_t c = 0; c < BD_LANES && c < count; c++)
		sum = _mm512_add_ps (sum, _mm512_mul_ps (_mm512_set1_ps (weight[c]), r[c]));
	return sum;
}

/* add_pixels with pixel m at @p + 16 m. */
static inline __m512
add_block (__m512 sum, const float *p, const float *weight, uint32_t count)
{
	__m512 r[16];
	for (int m = 0; m < 16; m++)
		r[m] = _mm512_loadu_ps (p + m * BD_LANES);
	return add_pixels (sum, r, weight, count);
}

/* add_pixels with pixel m's halves at @p + 16 m. */
static inline __m512
add_block_halves (__m512 sum, const uint16_t *p, const float *weight, uint32_t count)
{
	__m512 r[16];
	for (int m = 0; m < 16; m++)
		r[m] = _mm512_cvtph_ps (_mm256_loadu_si256 ((const __m256i *) (p + m * BD_LANES)));
	return add_pixels (sum, r, weight, count);
}

#if defined(BD_HEAD_BLOCK_NAME)
void
BD_HEAD_BLOCK_NAME (float sum[16], const float *pixels, const float *weight, uint32_t count)
{
	_mm512_storeu_ps (sum, add_block (_mm512_loadu_ps (sum), pixels, weight, count));
}
#endif
#endif

static inline float
sigmoid (float v)
{
	return 1.0f / (1.0f + expf (-v));
}

#if defined(BD_HEAD_BLOCK_NAME)
void
BD_HEAD_SIGMOID_NAME (const float *sums, uint32_t count, float *out)
{
	for (uint32_t x = 0; x < count; x++)
		out[x] = sigmoid (sums[x]);
}
#endif

void
BD_HEAD_ROW_NAME (const float *weight, float bias, uint32_t channels, const bd_cpu_view *in, size_t y, float *out)
{
	uint32_t width = in->width, x = 0;
	size_t row = y * in->row_stride;   /* elements */
#if defined(__AVX512F__) && BD_LANES == 16
	/* Sixteen pixels at a time. */
	for (; x + 16 <= width; x += 16) {
		__m512 sum = _mm512_set1_ps (bias);
		for (uint32_t first = 0; first < channels; first += BD_LANES) {
			size_t at = row + (size_t) (first / BD_LANES) * in->plane_stride + (size_t) x * BD_LANES;
			sum = in->halves ? add_block_halves (sum, in->halves + at, weight + first, channels - first)
			                 : add_block (sum, in->data + at, weight + first, channels - first);
		}
		_mm512_storeu_ps (out + x, sum);
	}
#endif
	for (uint32_t rest = x; rest < width; rest++)
		out[rest] = bias;
	for (uint32_t ch = 0; ch < channels; ch++) {
		size_t at = row + (size_t) (ch / BD_LANES) * in->plane_stride + ch % BD_LANES;
		float w = weight[ch];
		for (uint32_t rest = x; rest < width; rest++) {
			size_t i = at + (size_t) rest * BD_LANES;
			out[rest] += w * (in->halves ? bd_half_to_float (in->halves[i]) : in->data[i]);
		}
	}
	for (x = 0; x < width; x++)
		out[x] = sigmoid (out[x]);
}
