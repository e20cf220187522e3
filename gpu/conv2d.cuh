#pragma once

#include "cuda-common.cuh"

/* A 3x3 (padding 1) or 1x1 convolution, stride 1, + bias + optional ReLU, as an implicit
 * GEMM: M = pixels, N = output channels, K = taps x input channels. With out_step 2 it
 * writes every other pixel of a twice-as-large output (the transposed convolution's taps). */
struct bd_gpu_conv2d_params {
	bd_gpu_view  in;            /* height x width, channels a multiple of 16 */
	bd_gpu_view  out;           /* (height, width) x out_step; channels = output channels */
	uint32_t     out_step;      /* 1, or 2 for a transposed convolution's tap */
	uint32_t     taps;          /* 9 (3x3) or 1 */
	const void  *weights;       /* [taps][in channels][out channels], half or float */
	const float *bias;          /* [out channels] */
	bool         relu;
	const void  *weights_k;     /* or null: [out channels][taps][in channels], half or float
	                             * (K-major, as Hopper's wgmma reads them) */
	const float *weights_k_small;   /* exact only, or null: weights_k minus its tf32 part */
};

/* Output element index of pixel m (flattened y * width + x of the input) at channel 0: with
 * out_step 2, pixel (2y, 2x) of the twice-as-large output. */
__device__ inline size_t
bd_conv2d_out_index (const bd_gpu_conv2d_params &p, int m)
{
	int y = m / (int) p.in.width, x = m % (int) p.in.width;
	size_t w = (size_t) p.in.width * p.out_step;
	return ((size_t) y * p.out_step * w + (size_t) x * p.out_step) * p.out.pixel_stride;
}

bd_status bd_gpu_conv2d (const bd_gpu_conv2d_params *p, bd_precision precision,
                         cudaStream_t stream, bd_error *error);

/* The Hopper kernels (conv2d-hopper.cu): init once per process before capturing a graph (it
 * finds out whether this GPU and build can run wgmma); bd_gpu_conv2d uses them for the layers
 * that fit (K-major weights given; input channels a multiple of 64 in fast precision, of 32
 * with the small parts of the weights in exact). */
bd_status bd_gpu_conv2d_hopper_init (bd_error *error);
bool      bd_gpu_conv2d_hopper_fits (const bd_gpu_conv2d_params *p, bd_precision precision);
bd_status bd_gpu_conv2d_hopper (const bd_gpu_conv2d_params *p, bd_precision precision,
                                cudaStream_t stream, bd_error *error);
