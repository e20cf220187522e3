/* SPDX-License-Identifier: Apache-2.0 */
/* The network's head: a 1x1 convolution to one channel, then the sigmoid, into a dense map.
 * The rows are head-row.c's, built once per x86-64 level. */
#include "ops.h"

typedef void (*head_row_fn) (const float *weight, float bias, uint32_t channels, const bd_cpu_view *in, size_t y,
                             float *out);

typedef struct {
	head_row_fn        row;
	const float       *weight;
	float              bias;
	uint32_t           channels;
	const bd_cpu_view *in;
	float             *out;
} head_ctx;

static void
head_task (void *data, size_t y)
{
	const head_ctx *c = data;
	c->row (c->weight, c->bias, c->channels, c->in, y, c->out + y * c->in->width);
}

/* The build of the rows for this CPU (bd_cpu_level_get), which the tests force in turn. */
static head_row_fn
pick_row (void)
{
	switch (bd_cpu_level_get ()) {
#if defined(BD_HAVE_X86_KERNELS)
	case BD_CPU_X86_64_V4:
		return bd_head_row_x86_64_v4;
	case BD_CPU_X86_64_V3:
		return bd_head_row_x86_64_v3;
#endif
	default:
		return bd_head_row_generic;
	}
}

void
bd_head_sigmoid (bd_thread_pool *pool, const float *weight, float bias, uint32_t channels,
                 const bd_cpu_view *in, float *out)
{
	head_ctx c = { pick_row (), weight, bias, channels, in, out };
	bd_thread_pool_run (pool, in->height, head_task, &c);
}
