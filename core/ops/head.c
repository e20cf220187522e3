/* SPDX-License-Identifier: Apache-2.0 */
/* The network's head: a 1x1 convolution to one channel, then the sigmoid, into a dense map. */
#include "ops.h"

#include <math.h>

typedef struct {
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
	uint32_t width = c->in->width;
	float *o = c->out + y * width;
	for (uint32_t x = 0; x < width; x++)
		o[x] = c->bias;
	for (uint32_t ch = 0; ch < c->channels; ch++) {
		const float *p = c->in->data + (size_t) (ch / BD_LANES) * c->in->plane_stride +
		                 y * c->in->row_stride + ch % BD_LANES;
		float w = c->weight[ch];
		for (uint32_t x = 0; x < width; x++)
			o[x] += w * p[(size_t) x * BD_LANES];
	}
	for (uint32_t x = 0; x < width; x++)
		o[x] = 1.0f / (1.0f + expf (-o[x]));
}

void
bd_head_sigmoid (bd_thread_pool *pool, const float *weight, float bias, uint32_t channels,
                 const bd_cpu_view *in, float *out)
{
	head_ctx c = { weight, bias, channels, in, out };
	bd_thread_pool_run (pool, in->height, head_task, &c);
}
