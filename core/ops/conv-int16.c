/* SPDX-License-Identifier: Apache-2.0 */
/* The integer convolutions' choice, and the 16-bit one's weights. On Intel processors with
 * AVX-512 VNNI but no AMX (Ice Lake, Tiger Lake, a Sapphire Rapids whose hypervisor hides the
 * tile unit) fast precision runs the 3x3 convolutions in integers: the encoder's at full resolution
 * in 16 bits with 32-bit sums (vpdpwssd, two input channels a lane: twice the fp32
 * multiply-add's work at its rate), the others in 8 bits (conv-int8.c, four times). Both are conv-dot.c's
 * loop (bd_conv2d_int16, bd_conv2d_int8). Meson builds this file with -mavx512vnni only.
 *
 * 16 bits: weights are scaled per output channel and inputs per buffer (bd_to_int16) to
 * integers of at most `levels` (conv->int16_levels), chosen when packing so that no 32-bit
 * sum of one chunk of input planes (BD_DOT_CHUNK) can overflow; each chunk's sums are then
 * scaled back into the fp32 outputs. */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VL BD_LANES
#define SUM_LIMIT 2147483647.0   /* the largest 32-bit sum */

bool
bd_cpu_vnni_usable (void)
{
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && (!strcmp (force, "generic") || !strcmp (force, "v3") || !strcmp (force, "fp32") ||
	              !strcmp (force, "bf16")))
		return false;
	__builtin_cpu_init ();
	return __builtin_cpu_supports ("avx512vnni") && __builtin_cpu_supports ("x86-64-v4");
}

/* On Intel, vpdpwssd and vpdpbusd issue on both multiply-add ports (a measured 0.20 and
 * 0.19 ns an instruction against vdpbf16ps's 0.78 on a Sapphire Rapids), so integers pay
 * where AMX is not there. AMD's Zen 4 and 5 run bf16 at fp32's rate doubled already, without
 * the scaling; untried there with integers, they keep it. */
bool
bd_cpu_vnni_pays (void)
{
	if (!bd_cpu_vnni_usable ())
		return false;
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && !strcmp (force, "vnni"))
		return true;
	return __builtin_cpu_is ("intel");
}

/* The packing's two steps, each a task an output block: the largest |w| of each output and
 * its largest chunk sum of |w| / largest; then, with the layer's levels, the integers. */
typedef struct {
	const float   *w;            /* the model's: w[co * s_co + ci * s_ci + tap * s_tap] */
	size_t         s_co, s_ci, s_tap;
	const int32_t *channel_of;   /* per stored input channel, its weights' channel or -1 */
	uint32_t       out_channels, in_channels;
	float         *ratio;        /* per output: its largest chunk sum of |w| / largest |w| */
	double         levels;
	bd_cpu_conv   *conv;
} pack_ctx;

static void
measure_task (void *data, size_t ob)
{
	const pack_ctx *c = data;
	uint32_t storage = c->conv->in_channels, chunk_ch = BD_DOT_CHUNK * VL, taps = c->conv->taps;
	for (uint32_t co = (uint32_t) ob * VL; co < c->out_channels && co < (ob + 1) * VL; co++) {
		const float *wo = c->w + co * c->s_co;
		float top = 0;
		for (uint32_t ci = 0; ci < c->in_channels; ci++)
			for (uint32_t t = 0; t < taps; t++) {
				float a = fabsf (wo[ci * c->s_ci + t * c->s_tap]);
				top = a > top ? a : top;
			}
		c->conv->int16_scale[co] = top;
		double ratio = 0;
		for (uint32_t s0 = 0; top > 0 && s0 < storage; s0 += chunk_ch) {
			double sum = 0;
			for (uint32_t s = s0; s < storage && s < s0 + chunk_ch; s++)
				for (uint32_t t = 0; c->channel_of[s] >= 0 && t < taps; t++)
					sum += fabsf (wo[(size_t) c->channel_of[s] * c->s_ci + t * c->s_tap]) / top;
			ratio = fmax (ratio, sum);
		}
		c->ratio[co] = (float) ratio;
	}
}

/* Every value of the block is written in order, zeros included: the memory needs no zeroing. */
static void
quantize_task (void *data, size_t ob)
{
	const pack_ctx *c = data;
	const bd_cpu_conv *conv = c->conv;
	uint32_t pairs = (conv->in_channels + 1) / 2, taps = conv->taps;
	int16_t *dst = conv->weights_int16 + ob * pairs * taps * 2 * VL;
	float levels = (float) c->levels;
	for (uint32_t p = 0; p < pairs; p++)
		for (uint32_t t = 0; t < taps; t++)
			for (uint32_t o = 0; o < VL; o++)
				for (uint32_t j = 0; j < 2; j++) {
					uint32_t co = (uint32_t) ob * VL + o, s = 2 * p + j;
					int32_t ci = s < conv->in_channels ? c->channel_of[s] : -1;
					float top = co < c->out_channels ? conv->int16_scale[co] : 0;
					float q = ci < 0 || top == 0 ? 0 : nearbyintf (c->w[co * c->s_co + (size_t) ci * c->s_ci + t * c->s_tap] / top * levels);
					*dst++ = (int16_t) q;
				}
}

bd_status
bd_cpu_conv_pack_int16 (bd_thread_pool *pool, bd_cpu_conv *conv, const float *w, const float *bias,
                        uint32_t out_channels, uint32_t in_channels, uint32_t taps, size_t s_co, size_t s_ci,
                        size_t s_tap, const uint32_t *in_map, uint32_t in_storage, bd_error *error)
{
	uint32_t blocks = (out_channels + VL - 1) / VL, pairs = (in_storage + 1) / 2;
	size_t n;
	if (!bd_size_mul3 ((size_t) pairs * taps, 2 * VL, blocks, &n)) {
		memset (conv, 0, sizeof *conv);
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	}
	bool begun = bd_cpu_conv_begin (conv, bias, out_channels, in_storage, taps);
	conv->weights_int16 = bd_alloc_aligned (n, sizeof *conv->weights_int16);   /* quantize_task writes it all */
	conv->int16_scale = bd_alloc_zeroed ((size_t) blocks * VL, sizeof (float));
	int32_t *channel_of = bd_cpu_channel_of (in_map, in_channels, in_storage);
	float *ratio = malloc ((out_channels ? out_channels : 1) * sizeof *ratio);
	if (!begun || !conv->weights_int16 || !conv->int16_scale || !channel_of || !ratio) {
		free (channel_of);
		free (ratio);
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	pack_ctx c = { w, s_co, s_ci, s_tap, channel_of, out_channels, in_channels, ratio, 0, conv };
	bd_thread_pool_run (pool, blocks, measure_task, &c);
	/* Weights and inputs get as many levels each: a weight's largest product with an input
	 * is then levels^2, and a chunk's sums stay within 32 bits while levels^2 times the
	 * layer's largest chunk sum of |w| / largest |w| does, plus half a level for each of the
	 * chunk's weights' rounding: levels^2 * ratio + levels * weights / 2 <= SUM_LIMIT. */
	double most = 1, weights = (double) BD_DOT_CHUNK * VL * taps;
	for (uint32_t co = 0; co < out_channels; co++)
		most = fmax (most, ratio[co]);
	c.levels = fmin (floor ((sqrt (weights * weights / 4 + 4 * most * SUM_LIMIT) - weights / 2) / (2 * most)), 32767.0);
	bd_thread_pool_run (pool, blocks, quantize_task, &c);
	for (uint32_t co = 0; co < out_channels; co++)
		conv->int16_scale[co] /= (float) c.levels;
	conv->int16_levels = (float) c.levels;
	free (channel_of);
	free (ratio);
	return BD_OK;
}
