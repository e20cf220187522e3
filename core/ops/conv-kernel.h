/* SPDX-License-Identifier: Apache-2.0 */
/* The row kernel of bd_conv2d, compiled once per instruction set (conv-kernel.c). */
#pragma once

#include "ops.h"

/* One output row of a group of NB output blocks, for one chunk of input planes. */
typedef struct {
	const float *in;          /* input pixel (y, 0) of the chunk's first plane */
	size_t       in_row, in_plane;
	uint32_t     lanes_last;  /* input channels used in the chunk's last plane */
	uint32_t     planes;      /* input planes in the chunk */
	const float *w;           /* weights of the group's first block, at the chunk's channel */
	size_t       wblock;      /* floats from one output block's weights to the next */
	const float *bias;
	float       *out;         /* output pixel (y, 0) of the group's first plane */
	size_t       out_plane;
	bool         first, last, relu;
} bd_conv_row_job;

typedef void (*bd_conv_row_fn) (const bd_conv_row_job *job, uint32_t width, int nb, int taps, int step);

void bd_conv_row_x86_64_v4 (const bd_conv_row_job *job, uint32_t width, int nb, int taps, int step);
void bd_conv_row_x86_64_v3 (const bd_conv_row_job *job, uint32_t width, int nb, int taps, int step);
void bd_conv_row_generic   (const bd_conv_row_job *job, uint32_t width, int nb, int taps, int step);

/* Pixels @x0 .. @x0 + @n - 1 of output row @y, blocks @block and (where there is one) the next,
 * through @row over every chunk of input planes: bias, sums and ReLU into @out (that row's
 * pixel @x0 of the first block, blocks @out_plane apart, every @step-th pixel) (conv2d.c). */
void bd_conv_row_run (bd_conv_row_fn row, const bd_cpu_conv *conv, const bd_cpu_view *in, uint32_t y, uint32_t x0,
                      uint32_t n, uint32_t block, float *out, size_t out_plane, int step, bool relu);
