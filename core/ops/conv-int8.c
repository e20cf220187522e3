/* SPDX-License-Identifier: Apache-2.0 */
/* The 8-bit convolution's weights, for Intel processors with AVX-512 VNNI but no AMX: 3x3
 * convolutions and 1x1 ones (the up-convolutions' taps) whose inputs are 8-bit unsigned
 * integers (bd_to_int8: 255 levels over the buffer's range, zero at `offset`) and weights
 * 8-bit signed ones (127 levels of each output's largest |w|), run by conv-dot.c built as
 * bd_conv_run_int8. vpdpbusd multiplies four input channels by their weights and adds the
 * four products into one 32-bit lane, at the fp32 multiply-add's rate there: four times its
 * work. No 32-bit sum can overflow (a chunk of 128 channels sums at most 128 x 9 x 255 x 127
 * < 2^26). Each chunk's sums, less `offset` times the chunk's weight sum (int8_sums), turn
 * to fp32 times the two scales.
 *
 * The session runs the encoder's full-resolution 3x3 convolutions in 16-bit integers
 * instead (conv-int16.c): at 8 bits the smallest people and the edges lost a little
 * (docs/PERFORMANCE.md; the decoder's at full resolution lost nothing). Meson builds this file with -mavx512vnni only. */
#include "ops.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VL BD_LANES

typedef struct {
	const float   *w;            /* the model's: w[co * s_co + ci * s_ci + tap * s_tap] */
	size_t         s_co, s_ci, s_tap;
	const int32_t *channel_of;   /* per stored input channel, its weights' channel or -1 */
	uint32_t       out_channels, in_channels;
	float         *rows;         /* per task, one output's weights [ci][tap] */
	bd_cpu_conv   *conv;
} pack_ctx;

/* The largest |value| of @n floats: 16 lanes at a time (one running maximum a value was a
 * chain of dependent instructions, most of the packing's time). */
static float
largest_magnitude (const float *v, size_t n)
{
	__m512 top = _mm512_setzero_ps ();
	size_t k = 0;
	for (; k + VL <= n; k += VL)
		top = _mm512_max_ps (top, _mm512_abs_ps (_mm512_loadu_ps (v + k)));
	if (k < n)
		top = _mm512_max_ps (top, _mm512_abs_ps (_mm512_maskz_loadu_ps ((__mmask16) ((1u << (n - k)) - 1), v + k)));
	return _mm512_reduce_max_ps (top);
}

/* One output block, [quad][tap][16 outputs][4 inputs]: zeroed, then each output's weights
 * gathered into a row in the model's order, rounded there (a vector loop: the divisions are
 * most of the work), and placed with each chunk's weight sum. */
static void
pack_task (void *data, size_t ob)
{
	const pack_ctx *c = data;
	bd_cpu_conv *conv = c->conv;
	uint32_t quads = (conv->in_channels + 3) / 4, chunk_ch = BD_DOT_CHUNK * VL, taps = conv->taps;
	size_t n = (size_t) c->in_channels * taps;
	float *row = c->rows + ob * n;
	int8_t *dst = conv->weights_int8 + ob * quads * taps * 4 * VL;
	memset (dst, 0, (size_t) quads * taps * 4 * VL);
	for (uint32_t co = (uint32_t) ob * VL; co < c->out_channels && co < (ob + 1) * VL; co++) {
		if (c->s_tap == 1 && c->s_ci == taps)   /* a 3x3 convolution's [out][in][tap] */
			memcpy (row, c->w + co * c->s_co, n * sizeof *row);
		else
			for (uint32_t ci = 0; ci < c->in_channels; ci++)
				for (uint32_t t = 0; t < taps; t++)
					row[ci * taps + t] = c->w[co * c->s_co + ci * c->s_ci + t * c->s_tap];
		float top = largest_magnitude (row, n);
		conv->int8_scale[co] = top / 127.0f;
		if (top == 0)
			continue;
		for (size_t k = 0; k < n; k++)
			row[k] = nearbyintf (row[k] / top * 127.0f);
		for (uint32_t s = 0; s < conv->in_channels; s++) {
			int32_t ci = c->channel_of[s];
			if (ci < 0)
				continue;
			int8_t *d = dst + ((size_t) (s / 4) * taps * VL + co % VL) * 4 + s % 4;
			int32_t sum = 0;
			for (uint32_t t = 0; t < taps; t++) {
				int8_t q = (int8_t) row[(size_t) ci * taps + t];
				d[(size_t) t * VL * 4] = q;
				sum += q;
			}
			conv->int8_sums[(size_t) (s / chunk_ch) * conv->cout_blocks * VL + co] += sum;
		}
	}
}

bd_status
bd_cpu_conv_pack_int8 (bd_thread_pool *pool, bd_cpu_conv *conv, const float *w, const float *bias,
                       uint32_t out_channels, uint32_t in_channels, uint32_t taps, size_t s_co, size_t s_ci,
                       size_t s_tap, const uint32_t *in_map, uint32_t in_storage, bd_error *error)
{
	uint32_t blocks = (out_channels + VL - 1) / VL, quads = (in_storage + 3) / 4;
	uint32_t chunks = (quads * 4 + BD_DOT_CHUNK * VL - 1) / (BD_DOT_CHUNK * VL);
	size_t n, sums;
	if (!bd_size_mul3 ((size_t) quads * taps, 4 * VL, blocks, &n) || !bd_size_mul3 (chunks, blocks, VL, &sums)) {
		memset (conv, 0, sizeof *conv);
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	}
	bool begun = bd_cpu_conv_begin (conv, bias, out_channels, in_storage, taps);
	conv->weights_int8 = bd_alloc_aligned (n, 1);   /* pack_task zeroes and fills it */
	conv->int8_scale = bd_alloc_zeroed ((size_t) blocks * VL, sizeof (float));
	conv->int8_sums = bd_alloc_zeroed (sums, sizeof (int32_t));
	int32_t *channel_of = bd_cpu_channel_of (in_map, in_channels, in_storage);
	size_t row_floats;
	float *rows = bd_size_mul3 (blocks, in_channels, taps, &row_floats) ? bd_alloc_aligned (row_floats, sizeof (float))
	                                                                     : NULL;
	if (!begun || !conv->weights_int8 || !conv->int8_scale || !conv->int8_sums || !channel_of || !rows) {
		free (channel_of);
		bd_free_aligned (rows);
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	pack_ctx c = { w, s_co, s_ci, s_tap, channel_of, out_channels, in_channels, rows, conv };
	bd_thread_pool_run (pool, blocks, pack_task, &c);
	free (channel_of);
	bd_free_aligned (rows);
	return BD_OK;
}
