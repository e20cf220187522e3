/* SPDX-License-Identifier: Apache-2.0 */
/* 2x2 stride-2 transposed convolution: each input pixel spreads to a 2x2 output patch, so
 * the op is four 1x1 convolutions, one per (dy, dx), each writing every other output pixel. */
#include "ops.h"

void
bd_conv_transpose2x2 (bd_thread_pool *pool, const bd_cpu_conv taps[4],
                      const bd_cpu_view *in, const bd_cpu_view *out)
{
	for (int t = 0; t < 4; t++) {
		int dy = t / 2, dx = t % 2;
		bd_cpu_view o = *out;
		o.data = out->data + (size_t) dy * out->row_stride + (size_t) dx * BD_LANES;
		o.height = in->height;
		o.width = in->width;
		bd_conv_run (pool, &taps[t], in, &o, 2, false);
	}
}
