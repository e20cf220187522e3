/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* A 3x3 (padding 1) or 1x1 convolution, stride 1, + bias + optional ReLU, as an implicit
 * GEMM: M = pixels, N = output channels, K = taps x input channels. With out_step 2 it is a
 * 2x2 stride-2 transposed convolution: four 1x1 convolutions in one launch (block z = tap
 * 2 dy + dx), each writing every other pixel (2y + dy, 2x + dx) of the twice-as-large output.
 * A batch is its images stacked into one view, image_height rows each: the GEMM runs over
 * all of them at once, and the 3x3 taps see zeros beyond each image's own edges. */
struct bd_gpu_conv2d_params {
	bd_gpu_view  in;            /* height x width, channels a multiple of 16 */
	bd_gpu_view  out;           /* (height, width) x out_step; channels = output channels */
	uint32_t     out_step;      /* 1, or 2 for a transposed convolution (taps 1) */
	uint32_t     taps;          /* 9 (3x3) or 1 */
	const void  *weights;       /* [taps][in channels][out channels], half or float; a
	                             * transposed convolution's 4 taps one after the other */
	const float *bias;          /* [out channels] */
	bool         relu;
	const void  *weights_k;     /* or null: [out channels][taps][in channels], half or float
	                             * (K-major, as Hopper's wgmma reads them); transposed: 4 x
	                             * [out channels][in channels] */
	const float *weights_k_small;   /* exact only, or null: weights_k minus its tf32 part */
	uint32_t     image_height;  /* rows of one image of a batch (divides in.height); 0: one image */
	uint32_t     in_used;       /* input channels that hold data, the rest zeros (the photo's 3
	                             * of 16); 0: all */
	float       *splitk;        /* or null: BD_GPU_SPLITK_FLOATS floats of scratch that lets the
	                             * Hopper kernels split K over blocks when a layer has too few
	                             * tiles to fill the GPU (conv2d-hopper.cu) */
	uint32_t     splits;        /* set by the launcher: K split in this many parts (block z) */
	/* Optional work on the output, fused into the convolution's epilogue where the kernel
	 * can (conv2d-tma.cu), else run after it by bd_gpu_conv2d: */
	bd_gpu_view  pool;          /* data not null: also the 2x2 max-pool of out (even sizes) */
	float       *head_out;      /* not null: also sigmoid(head_weight . out + head_bias) per
	                             * pixel over head_channels channels (the 1x1 head); out
	                             * itself is then not needed and may stay unwritten */
	const float *head_weight;
	float        head_bias;
	uint32_t     head_channels;
	bool         launch_early;  /* the session's GPU starts kernels in the tail of the one before
	                             * (bd_launch_early, cuda-common.cuh) */
};

/* Split K is taken while splits x tiles of 128 x 128 stay within two blocks on each of 132
 * multiprocessors, so the partial sums of one layer never exceed this many floats. */
#define BD_GPU_SPLITK_FLOATS ((size_t) 264 * 128 * 128)

/* The rows of one image: where a 3x3 tap's neighbours stop. */
__host__ __device__ inline int
bd_conv2d_image_rows (const bd_gpu_conv2d_params &p)
{
	return (int) (p.image_height ? p.image_height : p.in.height);
}

/* Output element index of input pixel (x, y) at channel 0, y counting the rows of all the
 * stacked images: with out_step 2, pixel (2y + dy, 2x + dx) of the twice-as-large output
 * for this block's tap. Stacked images stay stacked: image i's rows 2y are rows
 * 2 (i * image_height + y) of the stacked output. */
__device__ inline size_t
bd_conv2d_out_at (const bd_gpu_conv2d_params &p, int y, int x)
{
	size_t w = (size_t) p.in.width * p.out_step;
	size_t ty = p.out_step == 2 ? blockIdx.z / 2 : 0, tx = p.out_step == 2 ? blockIdx.z % 2 : 0;
	return (((size_t) y * p.out_step + ty) * w + (size_t) x * p.out_step + tx) * p.out.pixel_stride;
}

/* The same for pixel m (flattened y * width + x of the input). The TMA kernels' epilogues
 * know x and y and call bd_conv2d_out_at: a division a store cost them more than the
 * stores. */
__device__ inline size_t
bd_conv2d_out_index (const bd_gpu_conv2d_params &p, int m)
{
	return bd_conv2d_out_at (p, m / (int) p.in.width, m % (int) p.in.width);
}

/* Where this block's weights start, in elements: a transposed convolution's tap z has its own. */
__device__ inline size_t
bd_conv2d_weight_offset (const bd_gpu_conv2d_params &p)
{
	return p.out_step == 2 ? (size_t) blockIdx.z * p.in.channels * p.out.channels : 0;
}

/* The launch's third grid dimension: the transposed convolution's four taps, or the parts
 * of a split K. */
static inline unsigned
bd_conv2d_grid_z (const bd_gpu_conv2d_params *p)
{
	return p->out_step == 2 ? 4 : p->splits > 1 ? p->splits : 1;
}

bd_status bd_gpu_conv2d (const bd_gpu_conv2d_params *p, bd_precision precision,
                         cudaStream_t stream, bd_error *error);

/* The photo's layer in fast precision (conv2d-photo.cu): at most 4 input channels hold data
 * (in_used), 3x3; any GPU. bd_gpu_conv2d prefers it for the layers that fit. */
bool      bd_gpu_conv2d_photo_fits (const bd_gpu_conv2d_params *p, bd_precision precision);
bd_status bd_gpu_conv2d_photo (const bd_gpu_conv2d_params *p, cudaStream_t stream, bd_error *error);

/* The Hopper kernels (conv2d-hopper.cu): init once per process before capturing a graph (it
 * finds out whether this GPU and build can run wgmma); bd_gpu_conv2d uses them for the layers
 * that fit (K-major weights given; input channels a multiple of 64 in fast precision, of 32
 * with the small parts of the weights in exact). */
bd_status bd_gpu_conv2d_hopper_init (bd_error *error);
bool      bd_gpu_conv2d_hopper_fits (const bd_gpu_conv2d_params *p, bd_precision precision);
bd_status bd_gpu_conv2d_hopper (const bd_gpu_conv2d_params *p, bd_precision precision,
                                cudaStream_t stream, bd_error *error);

/* The warp-specialised TMA kernels (conv2d-tma.cu), fast precision: init once per process
 * after bd_gpu_conv2d_hopper_init found wgmma usable; bd_gpu_conv2d prefers them for the
 * layers that fit (K-major weights, input channels a multiple of 64). */
bd_status bd_gpu_conv2d_tma_init (bd_error *error);
bool      bd_gpu_conv2d_tma_fits (const bd_gpu_conv2d_params *p, bd_precision precision);
bd_status bd_gpu_conv2d_tma (const bd_gpu_conv2d_params *p, cudaStream_t stream, bool *pooled, bool *headed,
                             bd_error *error);   /* *pooled, *headed: whether it fused them */
