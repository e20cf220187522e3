/* Mirror averaging on the device, one thread per pixel of the photo: the same arithmetic as
 * core/image/mirror-average.c. It writes only @prob and reads only @mirrored there, so no
 * pixel's read races another's write. */
#include "mirror-average.cuh"

namespace {

__device__ inline float
mirrored_at (const float *mirrored, const bd_letterbox &lb2, uint32_t x, uint32_t y)
{
	return mirrored[(size_t) (y + lb2.oy) * lb2.pw + lb2.pw - 1 - (x + lb2.ox)];
}

__device__ inline uint32_t
sample_axis (uint32_t i, uint32_t src, uint32_t dst, float *f)
{
	float c = ((float) i + 0.5f) * ((float) src / (float) dst) - 0.5f;
	c = c < 0.0f ? 0.0f : c > (float) (src - 1) ? (float) (src - 1) : c;
	uint32_t s0 = (uint32_t) c;
	s0 = s0 >= src - 1 ? (src > 1 ? src - 2 : 0) : s0;
	*f = src > 1 ? c - (float) s0 : 0.0f;
	return s0;
}

__global__ void
mirror_average_kernel (float *prob, const bd_letterbox lb, const float *mirrored, const bd_letterbox lb2)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= lb.sw)
		return;
	float fx, fy;
	uint32_t x0 = sample_axis (x, lb2.sw, lb.sw, &fx), x1 = lb2.sw > 1 ? x0 + 1 : x0;
	uint32_t y0 = sample_axis (y, lb2.sh, lb.sh, &fy), y1 = lb2.sh > 1 ? y0 + 1 : y0;
	float top = (1.0f - fx) * mirrored_at (mirrored, lb2, x0, y0) + fx * mirrored_at (mirrored, lb2, x1, y0);
	float bottom = (1.0f - fx) * mirrored_at (mirrored, lb2, x0, y1) + fx * mirrored_at (mirrored, lb2, x1, y1);
	float *p = prob + (size_t) (y + lb.oy) * lb.pw + lb.ox + x;
	*p = 0.5f * (*p + (1.0f - fy) * top + fy * bottom);
}

} // namespace

bd_status
bd_gpu_mirror_average (float *prob, const bd_letterbox &lb, const float *mirrored, const bd_letterbox &lb2,
                       cudaStream_t stream, bd_error *error)
{
	if (lb.sw == 0 || lb.sh == 0)
		return BD_OK;
	mirror_average_kernel<<<dim3 (bd_div_up (lb.sw, 128), lb.sh), 128, 0, stream>>> (prob, lb, mirrored, lb2);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
