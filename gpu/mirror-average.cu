/* Mirror averaging of two probability maps, one thread per pixel; it writes only @sum and
 * reads only @mirrored there, so no pixel's read races another's write. */
#include "mirror-average.cuh"

namespace {

__global__ void
mirror_average_kernel (float *sum, const float *mirrored, uint32_t width, uint32_t height)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * height)
		return;
	uint32_t x = (uint32_t) (i % width);
	size_t row = i - x;
	sum[i] = 0.5f * (sum[i] + mirrored[row + width - 1 - x]);
}

} // namespace

bd_status
bd_gpu_mirror_average (float *sum, const float *mirrored, uint32_t width, uint32_t height,
                       cudaStream_t stream, bd_error *error)
{
	size_t n = (size_t) width * height;
	if (n == 0)
		return BD_OK;
	mirror_average_kernel<<<bd_div_up (n, 256), 256, 0, stream>>> (sum, mirrored, width, height);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
