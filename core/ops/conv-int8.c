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
 * The session runs its full-resolution 3x3 convolutions in 16-bit integers instead
 * (conv-int16.c): at 8 bits the smallest people and the edges lost a little
 * (docs/PERFORMANCE.md). Meson builds this file with -mavx512vnni only. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VL BD_LANES

typedef struct {
	const float   *w;            /* the model's: w[co * s_co + ci * s_ci + tap * s_tap] */
	size_t         s_co, s_ci, s_tap;
	const int32_t *channel_of;   /* per stored input channel, its weights' channel or -1 */
	uint32_t       out_channels, in_channels;
	bd_cpu_conv   *conv;
} pack_ctx;

/* One output block, [quad][tap][16 outputs][4 inputs], every value written in order (zeros
 * included: the memory needs no zeroing), and each output's weight sum a chunk. */
static void
pack_task (void *data, size_t ob)
{
	const pack_ctx *c = data;
	bd_cpu_conv *conv = c->conv;
	uint32_t quads = (conv->in_channels + 3) / 4, chunk_ch = BD_DOT_CHUNK * VL, taps = conv->taps;
	float top[VL];
	for (uint32_t o = 0; o < VL; o++) {
		uint32_t co = (uint32_t) ob * VL + o;
		top[o] = 0;
		for (uint32_t ci = 0; co < c->out_channels && ci < c->in_channels; ci++)
			for (uint32_t t = 0; t < taps; t++) {
				float a = fabsf (c->w[co * c->s_co + ci * c->s_ci + t * c->s_tap]);
				top[o] = a > top[o] ? a : top[o];
			}
		conv->int8_scale[co] = top[o] / 127.0f;
	}
	int8_t *dst = conv->weights_int8 + ob * quads * taps * 4 * VL;
	for (uint32_t p = 0; p < quads; p++)
		for (uint32_t t = 0; t < taps; t++)
			for (uint32_t o = 0; o < VL; o++)
				for (uint32_t j = 0; j < 4; j++) {
					uint32_t co = (uint32_t) ob * VL + o, s = 4 * p + j;
					int32_t ci = s < conv->in_channels ? c->channel_of[s] : -1;
					float q = ci < 0 || top[o] == 0 ? 0 :
					          nearbyintf (c->w[co * c->s_co + (size_t) ci * c->s_ci + t * c->s_tap] / top[o] * 127.0f);
					*dst++ = (int8_t) q;
					conv->int8_sums[(size_t) (s / chunk_ch) * conv->cout_blocks * VL + co] += (int32_t) q;
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
	conv->weights_int8 = bd_alloc_aligned (n, 1);   /* pack_task writes it all */
	conv->int8_scale = bd_alloc_zeroed ((size_t) blocks * VL, sizeof (float));
	conv->int8_sums = bd_alloc_zeroed (sums, sizeof (int32_t));
	int32_t *channel_of = bd_cpu_channel_of (in_map, in_channels, in_storage);
	if (!begun || !conv->weights_int8 || !conv->int8_scale || !conv->int8_sums || !channel_of) {
		free (channel_of);
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	pack_ctx c = { w, s_co, s_ci, s_tap, channel_of, out_channels, in_channels, conv };
	bd_thread_pool_run (pool, blocks, pack_task, &c);
	free (channel_of);
	return BD_OK;
}
