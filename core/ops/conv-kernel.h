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
