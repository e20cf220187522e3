/* SPDX-License-Identifier: Apache-2.0 */
/* The AMX convolution's weights (conv-amx.c runs them): packed once a session into the B
 * tiles' layout, [out block][input pair][tap][16 pairs of input channels][16 outputs][2], in
 * bf16. Meson builds this file with the AMX kernels (-march=x86-64-v4). */
#include "amx-tiles.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VL BD_LANES
#define PAIR BD_AMX_PAIR
#define TILE_WEIGHTS BD_AMX_WEIGHTS

typedef struct {
	const float    *w;
	size_t          s_co, s_ci, s_tap;
	const int32_t  *channel_of;   /* per stored input channel, its weights' channel or -1 */
	uint32_t        out_channels, taps;
	bd_cpu_conv    *conv;
} pack_ctx;

/* bd_bf16_from_float of the 16 floats at @w + o * s_co (@at: those offsets), lanes past
 * @live zero, each rounded in the low half of its lane's bits. In integers, as the scalar
 * rounding does it, not vcvtne2ps2bf16, which would flush a denormal weight to zero. */
static inline __m512i
rounded_outputs (const float *w, __m512i at, __mmask16 live)
{
	if (!w)
		return _mm512_setzero_si512 ();
	__m512i u = _mm512_castps_si512 (_mm512_mask_i32gather_ps (_mm512_setzero_ps (), live, at, w, 4));
	__m512i odd = _mm512_and_si512 (_mm512_srli_epi32 (u, 16), _mm512_set1_epi32 (1));
	return _mm512_srli_epi32 (_mm512_add_epi32 (u, _mm512_add_epi32 (odd, _mm512_set1_epi32 (0x7fff))), 16);
}

/* One output block's B tiles, [pair][tap]: row k of a tile holds input channels 2k and 2k + 1
 * of its pair for each of the 16 outputs, zero where no weight maps (a channel left out, an
 * output past the last). Every value is written, tile by tile in order, so the memory needs
 * no zeroing first, and a pair's weights (16 outputs x 32 channels x 9 taps, 18 KB) stay in
 * the cache for all its taps. A row is two gathers of 16 outputs' weights, one per channel,
 * each output's two bf16 then one 32-bit lane (channel 2k low), as the row lies in memory.
 * Writing each weight's nine taps at once, nine tiles a kilobyte apart, into memory zeroed
 * first, a session of the shipped model took 20-26 ms to make on two cores; tile by tile,
 * one weight at a time, 12-16 ms. */
static void
pack_task (void *data, size_t ob)
{
	const pack_ctx *c = data;
	const bd_cpu_conv *conv = c->conv;
	uint32_t pairs = (conv->in_channels + PAIR - 1) / PAIR;
	uint32_t outs = c->out_channels - (uint32_t) ob * VL < VL ? c->out_channels - (uint32_t) ob * VL : VL;
	const float *wb = c->w + ob * VL * c->s_co;
	uint16_t *tile = conv->weights_amx + ob * pairs * c->taps * TILE_WEIGHTS;
	__mmask16 live = (__mmask16) ((1u << outs) - 1);
	__m512i at = _mm512_mullo_epi32 (_mm512_set1_epi32 ((int) c->s_co),
	                                 _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
	for (uint32_t p = 0; p < pairs; p++)
		for (uint32_t t = 0; t < c->taps; t++, tile += TILE_WEIGHTS)
			for (uint32_t k = 0; k < PAIR; k += 2) {
				const float *w[2];
				for (int j = 0; j < 2; j++) {
					uint32_t s = p * PAIR + k + (uint32_t) j;
					int32_t ci = s < conv->in_channels ? c->channel_of[s] : -1;
					w[j] = ci < 0 ? NULL : wb + (size_t) ci * c->s_ci + t * c->s_tap;
				}
				__m512i lo = rounded_outputs (w[0], at, live), hi = rounded_outputs (w[1], at, live);
				_mm512_storeu_si512 (tile + (k / 2) * PAIR, _mm512_or_si512 (lo, _mm512_slli_epi32 (hi, 16)));
			}
}

bd_status
bd_cpu_conv_pack_amx (bd_thread_pool *pool, bd_cpu_conv *conv, const float *w, const float *bias,
                      uint32_t out_channels, uint32_t in_channels, uint32_t taps, size_t s_co, size_t s_ci,
                      size_t s_tap, const uint32_t *in_map, uint32_t in_storage, bd_error *error)
{
	memset (conv, 0, sizeof *conv);
	if (taps != 9 && taps != 1)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "AMX convolutions are 3x3 or 1x1");
	if (s_co > INT32_MAX / VL)   /* pack_task gathers 16 outputs by 32-bit offsets */
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	uint32_t blocks = (out_channels + VL - 1) / VL, pairs = (in_storage + PAIR - 1) / PAIR;
	size_t n;
	if (!bd_size_mul3 ((size_t) pairs * taps, TILE_WEIGHTS, blocks, &n))
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	bool begun = bd_cpu_conv_begin (conv, bias, out_channels, in_storage, taps);
	conv->weights_amx = bd_alloc_aligned (n, sizeof *conv->weights_amx);   /* pack_task writes it all */
	if (!begun || !conv->weights_amx) {
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	int32_t *channel_of = bd_cpu_channel_of (in_map, in_channels, in_storage);
	if (!channel_of) {
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	pack_ctx c = { w, s_co, s_ci, s_tap, channel_of, out_channels, taps, conv };
	bd_thread_pool_run (pool, blocks, pack_task, &c);
	free (channel_of);
	return BD_OK;
}
