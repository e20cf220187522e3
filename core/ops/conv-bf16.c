/* SPDX-License-Identifier: Apache-2.0 */
/* 3x3 convolution (padding 1) + bias + optional ReLU in bfloat16 with fp32 sums, for CPUs with
 * AVX-512 BF16 (Zen 4 and later, Sapphire Rapids and later). vdpbf16ps multiplies two input
 * channels by their weights and adds both products into one fp32 lane: half the instructions of
 * the fp32 kernel (conv-kernel.c) for the same tile. Inputs and weights are rounded to bf16
 * (8 significant bits); sums, bias and outputs stay fp32. Meson builds this file with
 * -mavx512bf16 only; conv2d-bf16's callers check bd_cpu_bf16_usable () first.
 *
 * Weights are packed [out block][input pair][tap][16 outputs][2 inputs], so one 512-bit load
 * is the tap's weights of 16 outputs for two inputs; each input pair is one 32-bit broadcast. */
#include "ops.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#define VL BD_LANES
#define PAIRS (VL / 2)      /* input pairs in a plane of 16 channels */
#define CHUNK 8             /* input planes reduced per pass, as in conv2d.c */
#define MAX_P 26

bool
bd_cpu_bf16_usable (void)
{
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && (!strcmp (force, "generic") || !strcmp (force, "v3") || !strcmp (force, "fp32")))
		return false;
	__builtin_cpu_init ();
	return __builtin_cpu_supports ("avx512bf16") && __builtin_cpu_supports ("x86-64-v4");
}

/* AMD's Zen 4 and 5 issue vdpbf16ps on both FMA pipes: twice the multiply-adds of fp32
 * (1.76x faster end to end on Zen 5). Intel's Sapphire Rapids issues it on one port only,
 * so with the copy to bf16 it is 1.5-1.7x slower than fp32 there (bench/cpu-vs-pytorch.sh,
 * 16 cores): use it by default on AMD alone; BACKDROP_CPU_KERNEL=bf16 forces it. */
bool
bd_cpu_bf16_pays (void)
{
	if (!bd_cpu_bf16_usable ())
		return false;
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && !strcmp (force, "bf16"))
		return true;
	return __builtin_cpu_is ("amd");
}

bd_status
bd_cpu_conv_pack_bf16 (bd_cpu_conv *conv, bd_error *error)
{
	if (conv->taps != 9)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bf16 convolutions are 3x3 only");
	uint32_t pairs = (conv->in_channels + 1) / 2;
	size_t per_block = (size_t) pairs * 9 * 2 * VL, n;
	if (!bd_size_mul (per_block, conv->cout_blocks, &n))
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	uint16_t *w = bd_alloc_zeroed (n, sizeof *w);
	if (!w)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	size_t fp32_block = (size_t) conv->in_channels * 9 * VL;
	for (uint32_t b = 0; b < conv->cout_blocks; b++)
		for (uint32_t ci = 0; ci < conv->in_channels; ci++)
			for (uint32_t t = 0; t < 9; t++)
				for (uint32_t o = 0; o < VL; o++) {
					float f = conv->weights[b * fp32_block + ((size_t) ci * 9 + t) * VL + o];
					w[b * per_block + (((size_t) (ci / 2) * 9 + t) * VL + o) * 2 + ci % 2] = bd_bf16_from_float (f);
				}
	conv->weights_bf16 = w;
	return BD_OK;
}

typedef struct {
	const uint16_t *in;       /* input pixel (y, 0) of the chunk's first plane */
	size_t          in_row, in_plane;
	uint32_t        pairs_last, planes;
	const uint16_t *w;        /* the group's first block, at the chunk's first pair */
	size_t          wblock;   /* elements from one output block's weights to the next */
	const float    *bias;
	float          *out;
	size_t          out_plane;
	bool            first, last, relu;
} bf16_job;

static inline __m512 load_ps (const float *p)             { return _mm512_loadu_ps (p); }
static inline __m512bh load_bh (const uint16_t *p)       { return (__m512bh) _mm512_loadu_si512 (p); }
static inline __m512bh splat_pair (const uint16_t *p)
{
	int32_t v;
	memcpy (&v, p, sizeof v);
	return (__m512bh) _mm512_set1_epi32 (v);
}

static inline __attribute__ ((always_inline)) void
tile (const bf16_job *job, uint32_t x, const int P, const int NB)
{
	__m512 acc[MAX_P][2];
	float *out = job->out + (size_t) x * VL;

#pragma GCC unroll 26
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++)
			acc[p][j] = job->first ? load_ps (job->bias + VL * j) : load_ps (out + j * job->out_plane + p * VL);

	const uint16_t *wp = job->w;
	for (uint32_t b = 0; b < job->planes; b++) {
		const uint16_t *row = job->in + b * job->in_plane + (size_t) x * VL - (job->in_row + VL);
		uint32_t pairs = b + 1 == job->planes ? job->pairs_last : PAIRS;
		for (uint32_t q = 0; q < pairs; q++, row += 2) {
			/* As the fp32 kernel: a row of taps at a time, each broadcast input pair feeding
			 * the three outputs it touches. */
#pragma GCC unroll 1
			for (int ky = 0; ky < 3; ky++, wp += 3 * 2 * VL) {
				__m512bh w0[3], w1[3];
#pragma GCC unroll 3
				for (int kx = 0; kx < 3; kx++) {
					w0[kx] = load_bh (wp + kx * 2 * VL);
					w1[kx] = NB > 1 ? load_bh (wp + job->wblock + kx * 2 * VL) : w0[kx];
				}
				const uint16_t *src = row + ky * job->in_row;
#pragma GCC unroll 28
				for (int j = 0; j < P + 2; j++) {
					__m512bh v = splat_pair (src + j * VL);
#pragma GCC unroll 3
					for (int kx = 0; kx < 3; kx++) {
						int p = j - kx;
						if (p < 0 || p >= P)
							continue;
						acc[p][0] = _mm512_dpbf16_ps (acc[p][0], v, w0[kx]);
						if (NB > 1)
							acc[p][1] = _mm512_dpbf16_ps (acc[p][1], v, w1[kx]);
					}
				}
			}
		}
	}

#pragma GCC unroll 26
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++) {
			__m512 v = acc[p][j];
			if (job->last && job->relu)
				v = _mm512_max_ps (v, _mm512_setzero_ps ());
			_mm512_storeu_ps (out + j * job->out_plane + p * VL, v);
		}
}

static inline __attribute__ ((always_inline)) void
row_tiles (const bf16_job *job, uint32_t width, const int P, const int NB)
{
	uint32_t x = 0;
	for (; x + P <= width; x += P)
		tile (job, x, P, NB);
	for (; x + 8 <= width; x += 8)
		tile (job, x, 8, NB);
	for (; x + 4 <= width; x += 4)
		tile (job, x, 4, NB);
	for (; x + 2 <= width; x += 2)
		tile (job, x, 2, NB);
	for (; x < width; x++)
		tile (job, x, 1, NB);
}

typedef struct {
	const bd_cpu_conv      *conv;
	const bd_cpu_view_bf16 *in;
	const bd_cpu_view      *out;
	bool                    relu;
	uint32_t                groups;
} conv_ctx;

static void
conv_task (void *data, size_t index)
{
	const conv_ctx *c = data;
	const bd_cpu_conv *conv = c->conv;
	uint32_t y = (uint32_t) (index / c->groups), block = 2 * (uint32_t) (index % c->groups);
	int nb = block + 1 < conv->cout_blocks ? 2 : 1;
	uint32_t in_planes = (conv->in_channels + VL - 1) / VL;
	uint32_t pairs = (conv->in_channels + 1) / 2;
	bf16_job job = {
		.in_row = c->in->row_stride,
		.in_plane = c->in->plane_stride,
		.wblock = (size_t) pairs * 9 * 2 * VL,
		.bias = conv->bias + (size_t) block * VL,
		.out = c->out->data + (size_t) block * c->out->plane_stride + (size_t) y * c->out->row_stride,
		.out_plane = c->out->plane_stride,
		.relu = c->relu,
	};
	for (uint32_t b0 = 0; b0 < in_planes; b0 += CHUNK) {
		uint32_t b1 = b0 + CHUNK < in_planes ? b0 + CHUNK : in_planes;
		job.in = c->in->data + (size_t) b0 * c->in->plane_stride + (size_t) y * c->in->row_stride;
		job.planes = b1 - b0;
		job.pairs_last = b1 == in_planes ? pairs - (in_planes - 1) * PAIRS : PAIRS;
		job.w = conv->weights_bf16 + (size_t) block * job.wblock + (size_t) b0 * PAIRS * 9 * 2 * VL;
		job.first = b0 == 0;
		job.last = b1 == in_planes;
		/* 26 (or 2 x 12) accumulators beside the three (six) weight vectors and a broadcast. */
		if (nb == 2)
			row_tiles (&job, c->in->width, 12, 2);
		else
			row_tiles (&job, c->in->width, 26, 1);
	}
}

void
bd_conv2d_bf16 (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                const bd_cpu_view *out, bool relu)
{
	if (in->height == 0 || in->width == 0 || conv->out_channels == 0)
		return;
	conv_ctx c = { .conv = conv, .in = in, .out = out, .relu = relu, .groups = (conv->cout_blocks + 1) / 2 };
	bd_thread_pool_run (pool, (size_t) in->height * c.groups, conv_task, &c);
}
