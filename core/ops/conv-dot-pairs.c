/* SPDX-License-Identifier: Apache-2.0 */
/* The 3x3 convolution (padding 1) + bias + optional ReLU whose instruction multiplies two input
 * channels by their weights and adds both products into one 32-bit lane: built twice, as
 * bd_conv2d_bf16 (-DBD_DOT_BF16: vdpbf16ps, bf16 inputs and weights, fp32 sums; conv-bf16.c
 * packs its weights) and as bd_conv2d_int16 (-DBD_DOT_INT16: vpdpwssd, 16-bit integers, 32-bit
 * integer sums turned to fp32 once a chunk; conv-int16.c). Either way a tile takes half the
 * instructions of the fp32 kernel (conv-kernel.c).
 *
 * Weights are packed [out block][input pair][tap][16 outputs][2 inputs], so one 512-bit load
 * is the tap's weights of 16 outputs for two inputs; inputs lie in the fp32 planes' order, so
 * an input pair is one 32-bit broadcast. */
#include "ops.h"

#include <immintrin.h>
#include <string.h>

#define VL BD_LANES
#define PAIRS (VL / 2)      /* input pairs in a plane of 16 channels */
#define CHUNK BD_DOT_CHUNK
#define MAX_P 26

#if defined(BD_DOT_BF16)
typedef uint16_t         pair_t;
typedef bd_cpu_view_bf16 view_t;
typedef __m512           acc_t;
#define WEIGHTS(conv)    ((conv)->weights_bf16)
#define DOT(acc, v, w)   _mm512_dpbf16_ps ((acc), (__m512bh) (v), (__m512bh) (w))
#define CONV_NAME        bd_conv2d_bf16
#elif defined(BD_DOT_INT16)
typedef int16_t           pair_t;
typedef bd_cpu_view_int16 view_t;
typedef __m512i           acc_t;
#define WEIGHTS(conv)     ((conv)->weights_int16)
#define DOT(acc, v, w)    _mm512_dpwssd_epi32 ((acc), (v), (w))
#define CONV_NAME         bd_conv2d_int16
#else
#error "build with BD_DOT_BF16 or BD_DOT_INT16"
#endif

typedef struct {
	const pair_t *in;         /* input pixel (y, 0) of the chunk's first plane */
	size_t        in_row, in_plane;
	uint32_t      pairs_last, planes;
	const pair_t *w;          /* the group's first block, at the chunk's first pair */
	size_t        wblock;     /* elements from one output block's weights to the next */
	const float  *bias;
	const float  *scale;      /* int16: the group's first block's weight scales */
	float         in_scale;   /* int16: the input's */
	float        *out;
	size_t        out_plane;
	bool          first, last, relu;
} dot_job;

static inline __m512i load_pairs (const pair_t *p) { return _mm512_loadu_si512 (p); }
static inline __m512i splat_pair (const pair_t *p)
{
	int32_t v;
	memcpy (&v, p, sizeof v);
	return _mm512_set1_epi32 (v);
}

static inline __attribute__ ((always_inline)) void
tile (const dot_job *job, uint32_t x, const int P, const int NB)
{
	acc_t acc[MAX_P][2];
	float *out = job->out + (size_t) x * VL;

	/* bf16 sums onto the bias or the chunks before; integers from zero, a chunk at a time. */
#pragma GCC unroll 26
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++)
#if defined(BD_DOT_BF16)
			acc[p][j] = job->first ? _mm512_loadu_ps (job->bias + VL * j) : _mm512_loadu_ps (out + j * job->out_plane + p * VL);
#else
			acc[p][j] = _mm512_setzero_si512 ();
#endif

	const pair_t *wp = job->w;
	for (uint32_t b = 0; b < job->planes; b++) {
		const pair_t *row = job->in + b * job->in_plane + (size_t) x * VL - (job->in_row + VL);
		uint32_t pairs = b + 1 == job->planes ? job->pairs_last : PAIRS;
		for (uint32_t q = 0; q < pairs; q++, row += 2) {
			/* As the fp32 kernel: a row of taps at a time, each broadcast input pair feeding
			 * the three outputs it touches. */
#pragma GCC unroll 1
			for (int ky = 0; ky < 3; ky++, wp += 3 * 2 * VL) {
				__m512i w0[3], w1[3];
#pragma GCC unroll 3
				for (int kx = 0; kx < 3; kx++) {
					w0[kx] = load_pairs (wp + kx * 2 * VL);
					w1[kx] = NB > 1 ? load_pairs (wp + job->wblock + kx * 2 * VL) : w0[kx];
				}
				const pair_t *src = row + ky * job->in_row;
#pragma GCC unroll 28
				for (int j = 0; j < P + 2; j++) {
					__m512i v = splat_pair (src + j * VL);
#pragma GCC unroll 3
					for (int kx = 0; kx < 3; kx++) {
						int p = j - kx;
						if (p < 0 || p >= P)
							continue;
						acc[p][0] = DOT (acc[p][0], v, w0[kx]);
						if (NB > 1)
							acc[p][1] = DOT (acc[p][1], v, w1[kx]);
					}
				}
			}
		}
	}

#if defined(BD_DOT_INT16)
	__m512 scale[2];
#pragma GCC unroll 2
	for (int j = 0; j < NB; j++)
		scale[j] = _mm512_mul_ps (_mm512_loadu_ps (job->scale + VL * j), _mm512_set1_ps (job->in_scale));
#endif
#pragma GCC unroll 26
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++) {
			float *o = out + j * job->out_plane + p * VL;
#if defined(BD_DOT_BF16)
			__m512 v = acc[p][j];
#else
			__m512 base = job->first ? _mm512_loadu_ps (job->bias + VL * j) : _mm512_loadu_ps (o);
			__m512 v = _mm512_fmadd_ps (_mm512_cvtepi32_ps (acc[p][j]), scale[j], base);
#endif
			if (job->last && job->relu)
				v = _mm512_max_ps (v, _mm512_setzero_ps ());
			_mm512_storeu_ps (o, v);
		}
}

static inline __attribute__ ((always_inline)) void
row_tiles (const dot_job *job, uint32_t width, const int P, const int NB)
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
	const bd_cpu_conv *conv;
	const view_t      *in;
	const bd_cpu_view *out;
	bool               relu;
	uint32_t           groups;
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
	dot_job job = {
		.in_row = c->in->row_stride,
		.in_plane = c->in->plane_stride,
		.wblock = (size_t) pairs * 9 * 2 * VL,
		.bias = conv->bias + (size_t) block * VL,
#if defined(BD_DOT_INT16)
		.scale = conv->int16_scale + (size_t) block * VL,
		.in_scale = c->in->scale,
#endif
		.out = c->out->data + (size_t) block * c->out->plane_stride + (size_t) y * c->out->row_stride,
		.out_plane = c->out->plane_stride,
		.relu = c->relu,
	};
	for (uint32_t b0 = 0; b0 < in_planes; b0 += CHUNK) {
		uint32_t b1 = b0 + CHUNK < in_planes ? b0 + CHUNK : in_planes;
		job.in = (const pair_t *) c->in->data + (size_t) b0 * c->in->plane_stride + (size_t) y * c->in->row_stride;
		job.planes = b1 - b0;
		job.pairs_last = b1 == in_planes ? pairs - (in_planes - 1) * PAIRS : PAIRS;
		job.w = WEIGHTS (conv) + (size_t) block * job.wblock + (size_t) b0 * PAIRS * 9 * 2 * VL;
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
CONV_NAME (bd_thread_pool *pool, const bd_cpu_conv *conv, const view_t *in, const bd_cpu_view *out, bool relu)
{
	if (in->height == 0 || in->width == 0 || conv->out_channels == 0)
		return;
	conv_ctx c = { .conv = conv, .in = in, .out = out, .relu = relu, .groups = (conv->cout_blocks + 1) / 2 };
	bd_thread_pool_run (pool, (size_t) in->height * c.groups, conv_task, &c);
}
