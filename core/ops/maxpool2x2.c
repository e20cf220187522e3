/* SPDX-License-Identifier: Apache-2.0 */
/* 2x2 max-pool, stride 2, on blocked activations: one task per plane and output row. */
#include "ops.h"

typedef struct {
	const bd_cpu_view *in;
	const bd_cpu_view *out;
} pool_ctx;

static void
maxpool_task (void *data, size_t index)
{
	const pool_ctx *c = data;
	size_t plane = index / c->out->height;
	uint32_t y = (uint32_t) (index % c->out->height);
	const float *r0 = c->in->data + plane * c->in->plane_stride + (size_t) (2 * y) * c->in->row_stride;
	const float *r1 = r0 + c->in->row_stride;
	float *o = c->out->data + plane * c->out->plane_stride + (size_t) y * c->out->row_stride;
	for (uint32_t x = 0; x < c->out->width; x++) {
		const float *a = r0 + (size_t) 2 * x * BD_LANES, *b = r1 + (size_t) 2 * x * BD_LANES;
		for (int l = 0; l < BD_LANES; l++) {
			float m0 = a[l] > a[l + BD_LANES] ? a[l] : a[l + BD_LANES];
			float m1 = b[l] > b[l + BD_LANES] ? b[l] : b[l + BD_LANES];
			o[(size_t) x * BD_LANES + l] = m0 > m1 ? m0 : m1;
		}
	}
}

void
bd_maxpool2x2 (bd_thread_pool *pool, uint32_t planes, const bd_cpu_view *in, const bd_cpu_view *out)
{
	pool_ctx c = { in, out };
	bd_thread_pool_run (pool, (size_t) planes * out->height, maxpool_task, &c);
}
