/* SPDX-License-Identifier: Apache-2.0 */
/* A quarter turn of 8-bit pixels, for running a photo turned (core/upright.c) and turning
 * its mask back. Tiles of 64 x 64 pixels keep both the rows read and the rows written in
 * cache, and the pool's threads share the tiles. */
#include "image.h"

#define TILE 64

typedef struct {
	const uint8_t *src;
	uint32_t       width, height, channels;
	size_t         src_stride, dst_stride;
	bool           clockwise;
	uint8_t       *dst;
} turn_ctx;

/* Output rows i0 .. i0 + TILE - 1 (source columns), a tile of source rows at a time. */
static void
turn_task (void *data, size_t index)
{
	const turn_ctx *c = data;
	uint32_t i0 = (uint32_t) index * TILE, i1 = i0 + TILE < c->width ? i0 + TILE : c->width, ch = c->channels;
	for (uint32_t j0 = 0; j0 < c->height; j0 += TILE) {
		uint32_t j1 = j0 + TILE < c->height ? j0 + TILE : c->height;
		for (uint32_t i = i0; i < i1; i++) {
			uint8_t *out = c->dst + (size_t) i * c->dst_stride;
			uint32_t x = c->clockwise ? i : c->width - 1 - i;
			for (uint32_t j = j0; j < j1; j++) {
				uint32_t y = c->clockwise ? c->height - 1 - j : j;
				const uint8_t *px = c->src + (size_t) y * c->src_stride + (size_t) x * ch;
				for (uint32_t k = 0; k < ch; k++)
					out[(size_t) j * ch + k] = px[k];
			}
		}
	}
}

void
bd_rotate_quarter (bd_thread_pool *pool, const uint8_t *src, uint32_t width, uint32_t height, size_t src_stride,
                   uint32_t channels, bool clockwise, uint8_t *dst, size_t dst_stride)
{
	/* The result is height pixels wide and width rows tall. Turned to the left (counter-
	 * clockwise), output row i is source column width - 1 - i read downwards; turned to the
	 * right, output row i is source column i read upwards. */
	turn_ctx c = { src, width, height, channels, src_stride, dst_stride, clockwise, dst };
	bd_thread_pool_run (pool, (width + TILE - 1) / TILE, turn_task, &c);
}
