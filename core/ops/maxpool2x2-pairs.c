/* SPDX-License-Identifier: Apache-2.0 */
/* 2x2 max-pool, stride 2, on bf16 pairs of planes (ops.h): the AMX path's skip connections to
 * the next level's input, with no fp32 copy between. A maximum is one of its inputs, so bf16
 * in, bf16 out is exact. One task per pair and output row. */
#include "ops.h"

#include <string.h>

#define PAIR (2 * BD_LANES)

static inline float
widen (uint16_t h)
{
	uint32_t u = (uint32_t) h << 16;
	float f;
	memcpy (&f, &u, sizeof f);
	return f;
}

static inline uint16_t
larger (uint16_t a, uint16_t b)
{
	return widen (a) >= widen (b) ? a : b;
}

typedef struct {
	const bd_cpu_view_bf16 *in;
	const bd_cpu_view_bf16 *out;
} pool_ctx;

static void
maxpool_task (void *data, size_t index)
{
	const pool_ctx *c = data;
	size_t pair = index / c->out->height;
	uint32_t y = (uint32_t) (index % c->out->height);
	const uint16_t *r0 = c->in->data + pair * c->in->plane_stride + (size_t) (2 * y) * c->in->row_stride;
	const uint16_t *r1 = r0 + c->in->row_stride;
	uint16_t *o = c->out->data + pair * c->out->plane_stride + (size_t) y * c->out->row_stride;
	for (uint32_t x = 0; x < c->out->width; x++) {
		const uint16_t *a = r0 + (size_t) 2 * x * PAIR, *b = r1 + (size_t) 2 * x * PAIR;
		for (int l = 0; l < PAIR; l++)
			o[(size_t) x * PAIR + l] = larger (larger (a[l], a[l + PAIR]), larger (b[l], b[l + PAIR]));
	}
}

void
bd_maxpool2x2_pairs (bd_thread_pool *pool, uint32_t pairs, const bd_cpu_view_bf16 *in, const bd_cpu_view_bf16 *out)
{
	pool_ctx c = { in, out };
	bd_thread_pool_run (pool, (size_t) pairs * out->height, maxpool_task, &c);
}
