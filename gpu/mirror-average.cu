/* SPDX-License-Identifier: Apache-2.0 */
/* Mirror averaging on the device, with the CPU's arithmetic (core/image/mirror-sample.h). It
 * writes only @prob and reads only @mirrored, so no pixel's read races another's write. */
#include "mirror-average.cuh"

#include "average-views.cuh"
#include "image/mirror-sample.h"

namespace {

struct mirror_sample {
	const float *mirrored;
	bd_letterbox lb, lb2;

	__device__ float
	operator() (uint32_t x, uint32_t y, float) const
	{
		return bd_mirror_sample (mirrored, &lb, &lb2, x, y);
	}
};

} // namespace

bd_status
bd_gpu_mirror_average (float *prob, const bd_letterbox &lb, const float *mirrored, const bd_letterbox &lb2,
                       cudaStream_t stream, bd_error *error)
{
	return bd_gpu_average_views (prob, lb, mirror_sample { mirrored, lb, lb2 }, stream, error);
}
