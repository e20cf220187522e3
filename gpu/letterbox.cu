/* SPDX-License-Identifier: Apache-2.0 */
/* Letterbox + normalise on the device: one thread per canvas pixel. */
#include "letterbox.cuh"

namespace {

/* The source span of output index i along an axis of src -> dst samples, and the weight of
 * source sample s in it (resample.c's taps, computed on the fly). */
struct axis_span {
	uint32_t s0, count;
	double   a, b;        /* shrinking: the covered interval */
	float    f;           /* enlarging: the second sample's weight */
	bool     shrink;
};

__device__ inline axis_span
span_of (uint32_t i, uint32_t src, uint32_t dst)
{
	axis_span sp;
	double scale = (double) src / dst;
	sp.shrink = scale > 1.0;
	if (sp.shrink) {
		sp.a = i * scale;
		sp.b = sp.a + scale;
		sp.s0 = (uint32_t) sp.a;
		uint32_t s1 = (uint32_t) ceil (sp.b);
		sp.count = (s1 > src ? src : s1) - sp.s0;
		sp.f = 0;
	} else {
		double c = (i + 0.5) * scale - 0.5;
		c = c < 0 ? 0 : c;
		sp.s0 = (uint32_t) c;
		if (sp.s0 >= src - 1) {
			sp.s0 = src - 1;
			sp.count = 1;
			sp.f = 0;
		} else {
			sp.count = 2;
			sp.f = (float) (c - sp.s0);
		}
		sp.a = sp.b = 0;
	}
	return sp;
}

__device__ inline float
weight_of (const axis_span &sp, uint32_t k)
{
	if (!sp.shrink)
		return sp.count == 1 ? 1.0f : (k == 0 ? 1.0f - sp.f : sp.f);
	double s = sp.s0 + k, lo = s > sp.a ? s : sp.a, hi = s + 1 < sp.b ? s + 1 : sp.b;
	return (float) (hi - lo);
}

template <typename T>
__global__ void
letterbox_kernel (const bd_gpu_letterbox_params p)
{
	uint32_t x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
	if (x >= p.lb.pw || y >= p.lb.ph)
		return;
	T *dst = (T *) p.canvas.data + ((size_t) y * p.canvas.width + x) * p.canvas.pixel_stride;
	uint32_t xs = p.mirror ? p.lb.pw - 1 - x : x;   /* the canvas column this pixel shows */
	int px = (int) xs - (int) p.lb.ox, py = (int) y - (int) p.lb.oy;
	if (px < 0 || py < 0 || px >= (int) p.lb.sw || py >= (int) p.lb.sh) {
		dst[0] = dst[1] = dst[2] = (T) 0.0f;
		return;
	}
	axis_span sx = span_of ((uint32_t) px, p.width, p.lb.sw), sy = span_of ((uint32_t) py, p.height, p.lb.sh);
	float acc[3] = { 0, 0, 0 }, wsx = 0, wsy = 0;
	for (uint32_t k = 0; k < sx.count; k++)
		wsx += weight_of (sx, k);
	for (uint32_t j = 0; j < sy.count; j++) {
		float wy = weight_of (sy, j);
		wsy += wy;
		const uint8_t *row = p.photo + (size_t) (sy.s0 + j) * p.stride + (size_t) sx.s0 * p.channels;
		for (uint32_t k = 0; k < sx.count; k++) {
			float w = wy * weight_of (sx, k);
			for (int c = 0; c < 3; c++)
				acc[c] += w * row[k * p.channels + c];
		}
	}
	float *low = p.rgb_low + ((size_t) py * p.lb.sw + px) * 3;
	for (int c = 0; c < 3; c++) {
		float v = acc[c] / (wsx * wsy) * (1.0f / 255.0f);
		if (!p.mirror)
			low[c] = v;
		dst[c] = (T) ((v - p.mean[c]) / p.std[c]);
	}
}

} // namespace

bd_status
bd_gpu_letterbox (const bd_gpu_letterbox_params *p, bd_precision precision, cudaStream_t stream, bd_error *error)
{
	if (p->width == 0 || p->height == 0 || (p->channels != 3 && p->channels != 4))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_gpu_letterbox: bad photo");
	dim3 grid (bd_div_up (p->lb.pw, 128), p->lb.ph);
	if (precision == BD_PRECISION_FAST)
		letterbox_kernel<__half><<<grid, 128, 0, stream>>> (*p);
	else
		letterbox_kernel<float><<<grid, 128, 0, stream>>> (*p);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
