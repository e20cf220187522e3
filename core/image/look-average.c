/* SPDX-License-Identifier: Apache-2.0 */
/* The run turned's second view (session.c): its pass averaged with the quick look that agrees
 * with it more, of the two that chose the turn, where that look is lower, instead of a mirror
 * pass (upright.c says why). */
#include "image.h"
#include "look-sample.h"

void
bd_look_average (float *prob, const bd_letterbox *lb, const bd_turned_looks *looks)
{
	for (uint32_t y = 0; y < lb->sh; y++) {
		float *row = prob + (size_t) (y + lb->oy) * lb->pw + lb->ox;
		for (uint32_t x = 0; x < lb->sw; x++)
			row[x] = 0.5f * (row[x] + bd_look_sample (looks->standing, looks->on_head, looks->width, looks->height,
			                                          lb, x, y, row[x]));
	}
}
