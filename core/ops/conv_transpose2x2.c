/* SPDX-License-Identifier: Apache-2.0 */
/* 2x2 stride-2 transposed convolution: each input pixel spreads to a 2x2 output patch, so
 * the op is four 1x1 convolutions, one per (dy, dx), each writing every other output pixel:
 * in fp32, or with integer weights and inputs (AVX-512 VNNI sessions, into halves). */
#include "ops.h"

/* The output pixels tap @t writes: from (dy, dx), every other one (out_step 2). */
static bd_cpu_view
tap_output (const bd_cpu_view *out, uint32_t in_height, uint32_t in_width, int t)
{
	size_t at = (size_t) (t / 2) * out->row_stride + (size_t) (t % 2) * BD_LANES;   /* (dy, dx) */
	bd_cpu_view o = *out;
	o.data = out->data ? out->data + at : NULL;
	o.halves = out->halves ? out->halves + at : NULL;
	o.height = in_height;
	o.width = in_width;
	return o;
}

void
bd_conv_transpose2x2 (bd_thread_pool *pool, const bd_cpu_conv taps[4],
                      const bd_cpu_view *in, const bd_cpu_view *out)
{
	for (int t = 0; t < 4; t++) {
		bd_cpu_view o = tap_output (out, in->height, in->width, t);
		bd_conv_run (pool, &taps[t], in, &o, 2, false);
	}
}

#if defined(BD_HAVE_VNNI_KERNELS)
void
bd_conv_transpose2x2_int8 (bd_thread_pool *pool, const bd_cpu_conv taps[4], const bd_cpu_view_int8 *in,
                           const bd_cpu_view *out, bd_range *range)
{
	for (int t = 0; t < 4; t++) {
		bd_cpu_view o = tap_output (out, in->height, in->width, t);
		bd_conv_run_int8 (pool, &taps[t], in, &o, 2, false, range);
	}
}
#endif
