/* SPDX-License-Identifier: Apache-2.0 */
/* Mirror averaging's last step (session.c): the mirror pass, run at another scale on a
 * canvas of its own, brought back to the photo's pass and averaged with it. */
#include "image.h"
#include "mirror-sample.h"

void
bd_mirror_average (float *prob, const bd_letterbox *lb, const float *mirrored, const bd_letterbox *lb2)
{
	for (uint32_t y = 0; y < lb->sh; y++) {
		float *row = prob + (size_t) (y + lb->oy) * lb->pw + lb->ox;
		for (uint32_t x = 0; x < lb->sw; x++)
			row[x] = 0.5f * (row[x] + bd_mirror_sample (mirrored, lb, lb2, x, y));
	}
}
