/* SPDX-License-Identifier: Apache-2.0 */
/* The resampler on the device, for a blurred background's enlargement (composite.cu) and
 * upright.c's quick looks shrinking a photo already there (cuda-backend.cu): its two
 * separable passes a thread an output sample, with the host's own taps uploaded. */
#include "resample.cuh"

namespace {

/* bd_resample_rgb's horizontal pass (resample.c's filter_row) over every source row. */
__global__ void
resample_rows_kernel (const uint8_t *src, size_t src_pitch, uint32_t pixel_bytes, uint32_t sh, uint32_t width,
                      const uint32_t *start, const uint32_t *count, const float *weight, uint32_t max_taps, float *rows)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * sh)
		return;
	uint32_t x = (uint32_t) (i % width), y = (uint32_t) (i / width);
	const float *w = weight + (size_t) x * max_taps;
	const uint8_t *p = src + (size_t) y * src_pitch + (size_t) start[x] * pixel_bytes;
	float v0 = 0, v1 = 0, v2 = 0;
	for (uint32_t k = 0; k < count[x]; k++, p += pixel_bytes) {
		v0 = __fadd_rn (v0, __fmul_rn (w[k], (float) p[0]));
		v1 = __fadd_rn (v1, __fmul_rn (w[k], (float) p[1]));
		v2 = __fadd_rn (v2, __fmul_rn (w[k], (float) p[2]));
	}
	float *d = rows + i * 3;
	d[0] = v0;
	d[1] = v1;
	d[2] = v2;
}

/* Its vertical pass (vertical_task) into @out_channels a pixel: RGB, or RGBA made opaque. */
__global__ void
resample_columns_kernel (const float *rows, uint32_t width, uint32_t height, const uint32_t *start,
                         const uint32_t *count, const float *weight, uint32_t max_taps, uint8_t *out,
                         uint32_t out_channels)
{
	size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (size_t) width * height)
		return;
	uint32_t x = (uint32_t) (i % width), y = (uint32_t) (i / width);
	const float *w = weight + (size_t) y * max_taps;
	size_t n = (size_t) width * 3;
	const float *first = rows + (size_t) start[y] * n + (size_t) x * 3;
	uint8_t *o = out + i * out_channels;
	for (int c = 0; c < 3; c++) {
		float v = 0;
		for (uint32_t k = 0; k < count[y]; k++)
			v = __fadd_rn (v, __fmul_rn (w[k], first[k * n + c]));
		v = __fadd_rn (v, 0.5f);
		o[c] = v > 0 ? (v < 255 ? (uint8_t) v : 255) : 0;
	}
	if (out_channels == 4)
		o[3] = 255;
}

} // namespace

bd_status
bd_gpu_resample_rgb (const uint8_t *src, uint32_t gw, uint32_t gh, size_t src_pitch, uint32_t pixel_bytes, uint32_t w,
                     uint32_t h, uint8_t *out, uint32_t out_channels, uint8_t **scratch, size_t *scratch_bytes,
                     cudaStream_t stream, bd_error *error)
{
	bd_resample_taps tx = {}, ty = {};
	if (!bd_resample_taps_bilinear (&tx, gw, w) || !bd_resample_taps_bilinear (&ty, gh, h)) {
		bd_resample_taps_clear (&tx);
		bd_resample_taps_clear (&ty);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory resampling");
	}
	/* Scratch: the taps of both axes, then the horizontal pass's rows. */
	size_t tx_bytes = (size_t) w * (2 * sizeof (uint32_t) + tx.max_taps * sizeof (float));
	size_t ty_bytes = (size_t) h * (2 * sizeof (uint32_t) + ty.max_taps * sizeof (float));
	size_t rows_bytes = (size_t) gh * w * 3 * sizeof (float);
	bd_status st = bd_gpu_grow ((void **) scratch, scratch_bytes, tx_bytes + ty_bytes + rows_bytes, error);
	uint32_t *xs = nullptr, *xc = nullptr, *ys = nullptr, *yc = nullptr;
	float *xw = nullptr, *yw = nullptr, *rows = nullptr;
	cudaError_t e = cudaSuccess;
	if (st == BD_OK) {
		xs = (uint32_t *) *scratch;
		xc = xs + w;
		xw = (float *) (xc + w);
		ys = (uint32_t *) (xw + (size_t) w * tx.max_taps);
		yc = ys + h;
		yw = (float *) (yc + h);
		rows = yw + (size_t) h * ty.max_taps;
		/* Pageable sources are staged before each call returns: the host taps may go after. */
		const void *from[6] = { tx.start, tx.count, tx.weight, ty.start, ty.count, ty.weight };
		void *to[6] = { xs, xc, xw, ys, yc, yw };
		size_t bytes[6] = { w * sizeof (uint32_t), w * sizeof (uint32_t), (size_t) w * tx.max_taps * sizeof (float),
		                    h * sizeof (uint32_t), h * sizeof (uint32_t), (size_t) h * ty.max_taps * sizeof (float) };
		for (int i = 0; i < 6 && e == cudaSuccess; i++)
			e = cudaMemcpyAsync (to[i], from[i], bytes[i], cudaMemcpyHostToDevice, stream);
	}
	uint32_t tx_taps = tx.max_taps, ty_taps = ty.max_taps;
	bd_resample_taps_clear (&tx);
	bd_resample_taps_clear (&ty);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (e);
	resample_rows_kernel<<<bd_div_up ((size_t) w * gh, 256), 256, 0, stream>>> (src, src_pitch, pixel_bytes, gh, w, xs,
	                                                                             xc, xw, tx_taps, rows);
	BD_CUDA_CHECK_LAUNCH ();
	resample_columns_kernel<<<bd_div_up ((size_t) w * h, 256), 256, 0, stream>>> (rows, w, h, ys, yc, yw, ty_taps,
	                                                                              out, out_channels);
	BD_CUDA_CHECK_LAUNCH ();
	return BD_OK;
}
