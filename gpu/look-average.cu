/* SPDX-License-Identifier: Apache-2.0 */
/* The run turned's second view on the device, with the CPU's arithmetic
 * (core/image/look-sample.h). */
#include "look-average.cuh"

#include "average-views.cuh"
#include "image/look-sample.h"

namespace {

struct look_sample {
	const uint8_t *standing, *on_head;
	uint32_t       width, height;
	bd_letterbox   lb;

	__device__ float
	operator() (uint32_t x, uint32_t y, float pass) const
	{
		return bd_look_sample (standing, on_head, width, height, &lb, x, y, pass);
	}
};

} // namespace

bd_status
bd_gpu_look_average (float *prob, const bd_letterbox &lb, const uint8_t *standing, const uint8_t *on_head,
                     uint32_t width, uint32_t height, cudaStream_t stream, bd_error *error)
{
	if (width == 0 || height == 0)
		return BD_OK;
	return bd_gpu_average_views (prob, lb, look_sample { standing, on_head, width, height, lb }, stream, error);
}
