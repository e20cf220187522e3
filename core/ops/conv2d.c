/* SPDX-License-Identifier: Apache-2.0 */
/* 3x3 (padding 1) and 1x1 convolution + bias + optional ReLU on blocked activations (ops.h):
 * weight packing, the split of the work over threads (one task per output row and pair of
 * output blocks), and the choice of row kernel (conv-kernel.c) for this CPU. */
#include "conv-kernel.h"

#include <stdlib.h>
#include <string.h>

#define VL BD_LANES
#define CHUNK 8       /* input planes reduced per pass, so a tile's weights stay in L2 */

bd_status
bd_cpu_conv_pack (bd_cpu_conv *conv, const float *w, const float *bias,
                  uint32_t out_channels, uint32_t in_channels, uint32_t taps,
                  size_t s_co, size_t s_ci, size_t s_tap,
                  const uint32_t *in_map, uint32_t in_storage, bd_error *error)
{
	memset (conv, 0, sizeof *conv);
	uint32_t blocks = (out_channels + VL - 1) / VL;
	size_t n;
	if (!bd_size_mul3 ((size_t) blocks * VL, taps, in_storage, &n))
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	conv->weights = bd_alloc_zeroed (n, sizeof (float));
	conv->bias = bd_alloc_zeroed ((size_t) blocks * VL, sizeof (float));
	if (!conv->weights || !conv->bias) {
		bd_cpu_conv_clear (conv);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	}
	conv->in_channels = in_storage;
	conv->out_channels = out_channels;
	conv->taps = taps;
	conv->cout_blocks = blocks;
	for (uint32_t co = 0; co < out_channels; co++) {
		conv->bias[co] = bias[co];
		float *dst = conv->weights + (size_t) (co / VL) * in_storage * taps * VL + co % VL;
		for (uint32_t ci = 0; ci < in_channels; ci++) {
			uint32_t s = in_map ? in_map[ci] : ci;
			for (uint32_t t = 0; t < taps; t++)
				dst[((size_t) s * taps + t) * VL] = w[co * s_co + ci * s_ci + t * s_tap];
		}
	}
	return BD_OK;
}

bool
bd_cpu_conv_begin (bd_cpu_conv *conv, const float *bias, uint32_t out_channels, uint32_t in_storage, uint32_t taps)
{
	memset (conv, 0, sizeof *conv);
	uint32_t blocks = (out_channels + VL - 1) / VL;
	conv->bias = bd_alloc_zeroed ((size_t) blocks * VL, sizeof (float));
	if (!conv->bias)
		return false;
	memcpy (conv->bias, bias, out_channels * sizeof (float));
	conv->in_channels = in_storage;
	conv->out_channels = out_channels;
	conv->taps = taps;
	conv->cout_blocks = blocks;
	return true;
}

int32_t *
bd_cpu_channel_of (const uint32_t *in_map, uint32_t in_channels, uint32_t in_storage)
{
	int32_t *channel_of = malloc ((in_storage ? in_storage : 1) * sizeof *channel_of);
	if (!channel_of)
		return NULL;
	for (uint32_t s = 0; s < in_storage; s++)
		channel_of[s] = -1;
	for (uint32_t ci = 0; ci < in_channels; ci++) {
		uint32_t s = in_map ? in_map[ci] : ci;
		if (s < in_storage)
			channel_of[s] = (int32_t) ci;
	}
	return channel_of;
}

void
bd_cpu_conv_clear (bd_cpu_conv *conv)
{
	bd_free_aligned (conv->weights);
	bd_free_aligned (conv->bias);
	bd_free_aligned (conv->weights_bf16);
	bd_free_aligned (conv->weights_amx);
	bd_free_aligned (conv->weights_int16);
	bd_free_aligned (conv->int16_scale);
	bd_free_aligned (conv->weights_int8);
	bd_free_aligned (conv->int8_scale);
	bd_free_aligned (conv->int8_sums);
	memset (conv, 0, sizeof *conv);
}

typedef struct {
	const bd_cpu_conv *conv;
	const bd_cpu_view *in;
	const bd_cpu_view *out;
	int                step;
	bool               relu;
	uint32_t           groups;
	bd_conv_row_fn     row;
} conv_ctx;

void
bd_conv_row_run (bd_conv_row_fn row, const bd_cpu_conv *conv, const bd_cpu_view *in, uint32_t y, uint32_t x0,
                 uint32_t n, uint32_t block, float *out, size_t out_plane, int step, bool relu)
{
	int nb = block + 1 < conv->cout_blocks ? 2 : 1;
	uint32_t in_planes = (conv->in_channels + VL - 1) / VL;
	size_t wblock = (size_t) conv->in_channels * conv->taps * VL;
	bd_conv_row_job job = {
		.in_row = in->row_stride,
		.in_plane = in->plane_stride,
		.wblock = wblock,
		.bias = conv->bias + (size_t) block * VL,
		.out = out,
		.out_plane = out_plane,
		.relu = relu,
	};
	for (uint32_t b0 = 0; b0 < in_planes; b0 += CHUNK) {
		uint32_t b1 = b0 + CHUNK < in_planes ? b0 + CHUNK : in_planes;
		job.in = in->data + (size_t) b0 * in->plane_stride + (size_t) y * in->row_stride + (size_t) x0 * VL;
		job.planes = b1 - b0;
		job.lanes_last = b1 == in_planes ? conv->in_channels - (in_planes - 1) * VL : VL;
		job.w = conv->weights + (size_t) block * wblock + (size_t) b0 * VL * conv->taps * VL;
		job.first = b0 == 0;
		job.last = b1 == in_planes;
		row (&job, n, nb, (int) conv->taps, step);
	}
}

static void
conv_task (void *data, size_t index)
{
	const conv_ctx *c = data;
	uint32_t y = (uint32_t) (index / c->groups), block = 2 * (uint32_t) (index % c->groups);
	float *out = c->out->data + (size_t) block * c->out->plane_stride + (size_t) y * c->step * c->out->row_stride;
	bd_conv_row_run (c->row, c->conv, c->in, y, 0, c->in->width, block, out, c->out->plane_stride, c->step, c->relu);
}

/* The build of the kernel for this CPU's level (bd_cpu_level_get). */
static bd_conv_row_fn
pick_row_kernel (void)
{
	switch (bd_cpu_level_get ()) {
#if defined(BD_HAVE_X86_KERNELS)
	case BD_CPU_X86_64_V4:
		return bd_conv_row_x86_64_v4;
	case BD_CPU_X86_64_V3:
		return bd_conv_row_x86_64_v3;
#endif
	default:
		return bd_conv_row_generic;
	}
}

void
bd_conv_run (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view *in,
             const bd_cpu_view *out, int out_step, bool relu)
{
	if (in->height == 0 || in->width == 0 || conv->out_channels == 0)
		return;
	conv_ctx c = {
		.conv = conv, .in = in, .out = out, .step = out_step, .relu = relu,
		.groups = (conv->cout_blocks + 1) / 2,
		.row = pick_row_kernel (),
	};
	bd_thread_pool_run (pool, (size_t) in->height * c.groups, conv_task, &c);
}

void
bd_conv2d (bd_thread_pool *pool, const bd_cpu_conv *conv,
           const bd_cpu_view *in, const bd_cpu_view *out, bool relu)
{
	bd_conv_run (pool, conv, in, out, 1, relu);
}
