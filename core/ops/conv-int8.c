/* SPDX-License-Identifier: Apache-2.0 */
/* The 8-bit convolution's weights, for Intel processors with AVX-512 VNNI but no AMX: 3x3
 * convolutions and 1x1 ones (the up-convolutions' taps) whose inputs are 8-bit unsigned
 * integers (bd_to_int8: 255 levels over the buffer's range, zero at `offset`) and weights
 * 8-bit signed ones (127 levels of each output's largest |w|), run by conv-dot.c built as
 * bd_conv_run_int8. vpdpbusd multiplies four input channels by their weights and adds the
 * four products into one 32-bit lane, at the fp32 multiply-add's rate there: four times its
 * work. No 32-bit sum can overflow (a chunk of 1024 channels, BD_INT8_CHUNK, sums at most
 * 1024 x 9 x 255 x 127 < 2^29). Each chunk's sums, less `offset` times the chunk's weight
 * sum (int8_sums), turn to fp32 times the two scales.
 *
 * The weights are packed from the model's own values, floats or halves, with no widened
 * copy (pack_task). The session runs the encoder's full-resolution 3x3 convolutions in
 * 16-bit integers instead (conv-int16.c): at 8 bits the smallest people and the edges lost a
 * little (docs/PERFORMANCE.md; the decoder's at full resolution lost nothing). Meson builds
 * this file with -mavx512vnni only. */
#include "ops.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VL BD_LANES

typedef struct {
	const void    *w;            /* the model's: w[co * s_co + ci * s_ci + tap * s_tap] */
	bool           half;         /* ... halves, else floats */
	size_t         s_co, s_ci, s_tap;
	const int32_t *channel_of;   /* per stored input channel, its weights' channel or -1 */
	uint32_t       out_channels, in_channels;
	bd_cpu_conv   *conv;
} pack_ctx;

/* Weight @ci, @tap of the block's 16 outputs, a lane each (@at: their offsets in @c->w), the
 * lanes outside @outputs zero. A half is gathered as the upper half of the four bytes that
 * end with it (the smallest gather reads four), widened exactly (F16C, as bd_half_to_float). */
static inline __m512
weights_of (const pack_ctx *c, __m512i at, __mmask16 outputs, uint32_t ci, uint32_t tap)
{
	size_t i = ci * c->s_ci + tap * c->s_tap;
	if (!c->half)
		return _mm512_mask_i32gather_ps (_mm512_setzero_ps (), outputs, at, (const float *) c->w + i, 4);
	const uint8_t *before = (const uint8_t *) c->w + 2 * i - 2;
	__m512i pairs = _mm512_mask_i32gather_epi32 (_mm512_setzero_si512 (), outputs, at, before, 2);
	return _mm512_cvtph_ps (_mm512_cvtepi32_epi16 (_mm512_srli_epi32 (pairs, 16)));
}

/* One output block, [quad][tap][16 outputs][4 inputs], a lane an output throughout: each
 * output's largest |w|, then each quad and tap's 64 weights rounded to 127 levels of it and
 * stored at once, with each chunk's weight sum. Gathered straight from the model's order
 * (a 3x3 convolution's [out][in][tap], an up-convolution's [in][out][2][2]): one output and
 * one weight at a time, placing bytes 64 apart, took 13 ms of a session's start on the
 * 2-core Xeon. Rounding as nearbyintf does (the current mode, to nearest even). */
static void
pack_task (void *data, size_t ob)
{
	const pack_ctx *c = data;
	bd_cpu_conv *conv = c->conv;
	uint32_t quads = (conv->in_channels + 3) / 4, chunk_ch = BD_INT8_CHUNK * VL, taps = conv->taps;
	uint32_t first = (uint32_t) ob * VL, count = c->out_channels - first < VL ? c->out_channels - first : VL;
	__mmask16 outputs = (__mmask16) ((1u << count) - 1);
	__m512i at = _mm512_mullo_epi32 (_mm512_add_epi32 (_mm512_set1_epi32 ((int32_t) first),
	                                                   _mm512_set_epi32 (15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3,
	                                                                     2, 1, 0)),
	                                 _mm512_set1_epi32 ((int32_t) c->s_co));
	__m512 top = _mm512_setzero_ps ();
	for (uint32_t ci = 0; ci < c->in_channels; ci++)
		for (uint32_t t = 0; t < taps; t++)
			top = _mm512_max_ps (top, _mm512_abs_ps (weights_of (c, at, outputs, ci, t)));
	_mm512_mask_storeu_ps (conv->int8_scale + first, outputs, _mm512_div_ps (top, _mm512_set1_ps (127.0f)));
	/* An output whose weights are all zero stays zero, its sums too. */
	__mmask16 live = _mm512_mask_cmp_ps_mask (outputs, top, _mm512_setzero_ps (), _CMP_NEQ_OQ);
	__m512 levels = _mm512_set1_ps (127.0f);
	int8_t *dst = conv->weights_int8 + ob * quads * taps * 4 * VL;
	__m512i sums = _mm512_setzero_si512 ();
	for (uint32_t q = 0; q < quads; q++) {
		for (uint32_t t = 0; t < taps; t++) {
			__m512i placed = _mm512_setzero_si512 ();
			for (uint32_t k = 0; k < 4; k++) {
				uint32_t s = 4 * q + k;
				int32_t ci = s < conv->in_channels ? c->channel_of[s] : -1;
				if (ci < 0)
					continue;
				__m512 v = _mm512_mul_ps (_mm512_div_ps (weights_of (c, at, live, (uint32_t) ci, t), top), levels);
				__m512i w8 = _mm512_maskz_cvtps_epi32 (live, v);
				sums = _mm512_add_epi32 (sums, w8);
				placed = _mm512_or_si512 (placed, _mm512_slli_epi32 (_mm512_and_si512 (w8, _mm512_set1_epi32 (0xff)),
				                                                     8 * k));
			}
			_mm512_storeu_si512 (dst + ((size_t) q * taps + t) * 4 * VL, placed);
		}
		/* A chunk's quads end together (chunk_ch is a multiple of 4). */
		if ((4 * (q + 1)) % chunk_ch == 0 || q + 1 == quads) {
			int32_t *chunk = conv->int8_sums + (size_t) (4 * q / chunk_ch) * conv->cout_blocks * VL + first;
			_mm512_mask_storeu_epi32 (chunk, outputs, _mm512_add_epi32 (_mm512_maskz_loadu_epi32 (outputs, chunk), sums));
			sums = _mm512_setzero_si512 ();
		}
	}
}

bd_status
bd_cpu_conv_pack_int8 (bd_thread_pool *pool, bd_cpu_conv *conv, const bd_weight *w, size_t first, const float *bias,
                       uint32_t out_channels, uint32_t in_channels, uint32_t taps, size_t s_co, size_t s_ci,
                       size_t s_tap, const uint32_t *in_map, uint32_t in_storage, bd_error *error)
{
	uint32_t blocks = (out_channels + VL - 1) / VL, quads = (in_storage + 3) / 4;
	uint32_t chunks = (quads * 4 + BD_INT8_CHUNK * VL - 1) / (BD_INT8_CHUNK * VL);
	size_t n, sums;
	if (!bd_size_mul3 ((size_t) quads * taps, 4 * VL, blocks, &n) || !bd_size_mul3 (chunks, blocks, VL, &sums)) {
		memset (conv, 0, sizeof *conv);
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	}
	bool begun = bd_cpu_conv_begin (conv, bias, out_channels, in_storage, taps);
	conv->weights_int8 = bd_alloc_aligned (n, 1);   /* pack_task writes it whole */
	conv->int8_scale = bd_alloc_zeroed ((size_t) blocks * VL, sizeof (float));
	conv->int8_sums = bd_alloc_zeroed (sums, sizeof (int32_t));
	int32_t *channel_of = bd_cpu_channel_of (in_map, in_channels, in_storage);
	if (!begun || !conv->weights_int8 || !conv->int8_scale || !conv->int8_sums || !channel_of) {
		free (channel_of);
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	const void *values = w->half ? (const void *) ((const uint16_t *) w->data + first)
	                             : (const void *) ((const float *) w->data + first);
	pack_ctx c = { values, w->half, s_co, s_ci, s_tap, channel_of, out_channels, in_channels, conv };
	bd_thread_pool_run (pool, blocks, pack_task, &c);
	free (channel_of);
	return BD_OK;
}
