/* SPDX-License-Identifier: Apache-2.0 */
/* The 3x3 convolution (padding 1) + bias + optional ReLU whose instruction multiplies a group
 * of input channels by their weights and adds the products into one 32-bit lane, and for the
 * integers the 1x1 one (an up-convolution's tap, bd_conv_transpose2x2_int8), built three
 * times: bd_conv2d_bf16 (-DBD_DOT_BF16: vdpbf16ps, pairs of bf16, fp32 sums; weights from
 * conv-bf16.c), bd_conv_run_int16 (-DBD_DOT_INT16: vpdpwssd, pairs of 16-bit integers;
 * conv-int16.c) and bd_conv_run_int8 (-DBD_DOT_INT8: vpdpbusd, quads of 8-bit integers;
 * conv-int8.c). The integers' 32-bit sums turn to fp32 once a chunk of input planes (the
 * 8-bit kernel's chunk spans every input of the shipped model), are stored as floats or as
 * halves (an integer session's activations, ops.h), and their range is found as they are
 * written, for the next layer's copy. A tile takes a half or a quarter of the fp32 kernel's
 * instructions (conv-kernel.c).
 *
 * Weights are packed [out block][input group][tap][16 outputs][group], so one 512-bit load
 * is the tap's weights of 16 outputs for a group of inputs; inputs lie in the fp32 planes'
 * order, so an input group is one 32-bit broadcast. */
#include "ops.h"

#include <immintrin.h>
#include <string.h>

#define VL BD_LANES
#define MAX_P 26

#if defined(BD_DOT_BF16)
#define GROUP            2     /* input channels a 32-bit lane */
typedef uint16_t         in_t;
typedef uint16_t         w_t;
typedef bd_cpu_view_bf16 view_t;
typedef __m512           acc_t;
#define WEIGHTS(conv)    ((conv)->weights_bf16)
#define DOT(acc, v, w)   _mm512_dpbf16_ps ((acc), (__m512bh) (v), (__m512bh) (w))
#define RUN_NAME         bd_conv_run_bf16
#elif defined(BD_DOT_INT16)
#define GROUP             2
typedef int16_t           in_t;
typedef int16_t           w_t;
typedef bd_cpu_view_int16 view_t;
typedef __m512i           acc_t;
#define WEIGHTS(conv)     ((conv)->weights_int16)
#define DOT(acc, v, w)    _mm512_dpwssd_epi32 ((acc), (v), (w))
#define RUN_NAME          bd_conv_run_int16
#elif defined(BD_DOT_INT8)
#define GROUP             4
typedef uint8_t           in_t;
typedef int8_t            w_t;
typedef bd_cpu_view_int8  view_t;
typedef __m512i           acc_t;
#define WEIGHTS(conv)     ((conv)->weights_int8)
#define DOT(acc, v, w)    _mm512_dpbusd_epi32 ((acc), (v), (w))
#define RUN_NAME          bd_conv_run_int8
#define CHUNK             BD_INT8_CHUNK
#else
#error "build with BD_DOT_BF16, BD_DOT_INT16 or BD_DOT_INT8"
#endif
#if !defined(CHUNK)
#define CHUNK BD_DOT_CHUNK   /* input planes a chunk */
#endif

typedef struct {
	const in_t *in;         /* input pixel (y, 0) of the chunk's first plane */
	size_t        in_row, in_plane;
	uint32_t      groups_last, planes;
	const w_t    *w;          /* the task's first block, at the chunk's first group */
	size_t        wblock;     /* elements from one output block's weights to the next */
	const float  *bias;
	const float  *scale;      /* integers: the task's first block's weight scales */
	float         in_scale;   /* integers: the input's */
	const int32_t *sums;      /* int8: the chunk's weight sums of the task's first block */
	int32_t       offset;     /* int8: the input's zero */
	float        *out;        /* the output row's pixel 0, */
	uint16_t     *halves;     /* or its halves (integers) */
	size_t        out_plane;
	bool          first, last, relu;
	bool          track;      /* integers: find the outputs' range (found) */
} dot_job;

/* The least and largest output a task has written, lane by lane: carried through its tiles
 * as values (written through a pointer, they made every tile reload the job's fields). */
typedef struct {
	__m512 least, largest;
} found;

static inline __m512i load_weights (const w_t *p) { return _mm512_loadu_si512 (p); }
static inline __m512i splat_group (const in_t *p)
{
	int32_t v;
	memcpy (&v, p, sizeof v);
	return _mm512_set1_epi32 (v);
}

/* K = 3: a 3x3 convolution; K = 1: a 1x1 one, its outputs @STEP pixels apart (an
 * up-convolution's tap, bd_conv_transpose2x2_int8). */
static inline __attribute__ ((always_inline)) found
tile (const dot_job *job, uint32_t x, const int P, const int NB, const int K, const int STEP, found range)
{
	acc_t acc[MAX_P][2];
	size_t at = (size_t) x * STEP * VL;   /* elements from the output row's pixel 0 */
#if defined(BD_DOT_BF16)
	float *out = job->out + at;
#else
	bool halves = job->halves != NULL;
#endif

	/* bf16 sums onto the bias or the chunks before; integers from zero, a chunk at a time. */
#pragma GCC unroll 26
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++)
#if defined(BD_DOT_BF16)
			acc[p][j] = job->first ? _mm512_loadu_ps (job->bias + VL * j) : _mm512_loadu_ps (out + j * job->out_plane + p * STEP * VL);
#else
			acc[p][j] = _mm512_setzero_si512 ();
#endif

	const w_t *wp = job->w;
	for (uint32_t b = 0; b < job->planes; b++) {
		const in_t *row = job->in + b * job->in_plane + (size_t) x * VL - (K / 2) * (job->in_row + VL);
		uint32_t groups = b + 1 == job->planes ? job->groups_last : VL / GROUP;
		for (uint32_t q = 0; q < groups; q++, row += GROUP) {
			if (K == 1) {
				__m512i w0 = load_weights (wp), w1 = NB > 1 ? load_weights (wp + job->wblock) : w0;
				wp += GROUP * VL;
#pragma GCC unroll 26
				for (int p = 0; p < P; p++) {
					__m512i v = splat_group (row + p * VL);
					acc[p][0] = DOT (acc[p][0], v, w0);
					if (NB > 1)
						acc[p][1] = DOT (acc[p][1], v, w1);
				}
				continue;
			}
			/* As the fp32 kernel: a row of taps at a time, each broadcast input group feeding
			 * the three outputs it touches. */
#pragma GCC unroll 1
			for (int ky = 0; ky < 3; ky++, wp += 3 * GROUP * VL) {
				__m512i w0[3], w1[3];
#pragma GCC unroll 3
				for (int kx = 0; kx < 3; kx++) {
					w0[kx] = load_weights (wp + kx * GROUP * VL);
					w1[kx] = NB > 1 ? load_weights (wp + job->wblock + kx * GROUP * VL) : w0[kx];
				}
				const in_t *src = row + ky * job->in_row;
#pragma GCC unroll 28
				for (int j = 0; j < P + 2; j++) {
					__m512i v = splat_group (src + j * VL);
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

#if !defined(BD_DOT_BF16)
	__m512 scale[2];
#pragma GCC unroll 2
	for (int j = 0; j < NB; j++)
		scale[j] = _mm512_mul_ps (_mm512_loadu_ps (job->scale + VL * j), _mm512_set1_ps (job->in_scale));
#endif
#pragma GCC unroll 26
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++) {
#if defined(BD_DOT_BF16)
			float *o = out + j * job->out_plane + p * STEP * VL;
			__m512 v = acc[p][j];
			if (job->last && job->relu)
				v = _mm512_max_ps (v, _mm512_setzero_ps ());
			_mm512_storeu_ps (o, v);
#else
			size_t o = at + j * job->out_plane + p * STEP * VL;
			__m512 base = job->first ? _mm512_loadu_ps (job->bias + VL * j)
			            : halves ? _mm512_cvtph_ps (_mm256_loadu_si256 ((const __m256i *) (job->halves + o)))
			                     : _mm512_loadu_ps (job->out + o);
#if defined(BD_DOT_INT8)
			acc[p][j] = _mm512_sub_epi32 (acc[p][j], _mm512_mullo_epi32 (_mm512_loadu_si512 (job->sums + VL * j), _mm512_set1_epi32 (job->offset)));
#endif
			__m512 v = _mm512_fmadd_ps (_mm512_cvtepi32_ps (acc[p][j]), scale[j], base);
			if (job->last && job->relu)
				v = _mm512_max_ps (v, _mm512_setzero_ps ());
			if (halves) {
				__m256i h = _mm512_cvtps_ph (v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
				_mm256_storeu_si256 ((__m256i *) (job->halves + o), h);
			} else {
				_mm512_storeu_ps (job->out + o, v);
			}
#endif
			if (job->last && job->track) {
				range.least = _mm512_min_ps (range.least, v);
				range.largest = _mm512_max_ps (range.largest, v);
			}
		}
	return range;
}

static inline __attribute__ ((always_inline)) found
row_tiles (const dot_job *job, uint32_t width, const int P, const int NB, const int K, const int STEP, found range)
{
	uint32_t x = 0;
	for (; x + P <= width; x += P)
		range = tile (job, x, P, NB, K, STEP, range);
	for (; x + 8 <= width; x += 8)
		range = tile (job, x, 8, NB, K, STEP, range);
	for (; x + 4 <= width; x += 4)
		range = tile (job, x, 4, NB, K, STEP, range);
	for (; x + 2 <= width; x += 2)
		range = tile (job, x, 2, NB, K, STEP, range);
	for (; x < width; x++)
		range = tile (job, x, 1, NB, K, STEP, range);
	return range;
}

typedef struct {
	const bd_cpu_conv *conv;
	const view_t      *in;
	const bd_cpu_view *out;
	int                step;
	bool               relu;
	uint32_t           groups;
	bd_range          *range;
} conv_ctx;

#if !defined(BD_DOT_BF16)
/* @range widened to take @least and @largest, by tasks on any thread. */
static void
widen_range (bd_range *range, float least, float largest)
{
	float seen;
	__atomic_load (&range->least, &seen, __ATOMIC_RELAXED);
	while (least < seen && !__atomic_compare_exchange (&range->least, &seen, &least, true, __ATOMIC_RELAXED,
	                                                   __ATOMIC_RELAXED))
		;
	__atomic_load (&range->largest, &seen, __ATOMIC_RELAXED);
	while (largest > seen && !__atomic_compare_exchange (&range->largest, &seen, &largest, true, __ATOMIC_RELAXED,
	                                                     __ATOMIC_RELAXED))
		;
}
#endif

static void
conv_task (void *data, size_t index)
{
	const conv_ctx *c = data;
	const bd_cpu_conv *conv = c->conv;
	uint32_t y = (uint32_t) (index / c->groups), block = 2 * (uint32_t) (index % c->groups);
	int nb = block + 1 < conv->cout_blocks ? 2 : 1;
	uint32_t in_planes = (conv->in_channels + VL - 1) / VL;
	uint32_t groups = (conv->in_channels + GROUP - 1) / GROUP, taps = conv->taps;
	size_t out_at = (size_t) block * c->out->plane_stride + (size_t) y * c->step * c->out->row_stride;
	dot_job job = {
		.in_row = c->in->row_stride,
		.in_plane = c->in->plane_stride,
		.wblock = (size_t) groups * taps * GROUP * VL,
		.bias = conv->bias + (size_t) block * VL,
#if defined(BD_DOT_INT16)
		.scale = conv->int16_scale + (size_t) block * VL,
		.in_scale = c->in->scale,
#elif defined(BD_DOT_INT8)
		.scale = conv->int8_scale + (size_t) block * VL,
		.in_scale = c->in->scale,
		.offset = c->in->offset,
#endif
		.out = c->out->data ? c->out->data + out_at : NULL,
		.halves = c->out->halves ? c->out->halves + out_at : NULL,
		.out_plane = c->out->plane_stride,
		.relu = c->relu,
	};
	/* The range of the outputs as they are written, zero included (as bd_to_int8 measures it). */
	found range = { _mm512_setzero_ps (), _mm512_setzero_ps () };
	job.track = c->range != NULL;
	for (uint32_t b0 = 0; b0 < in_planes; b0 += CHUNK) {
		uint32_t b1 = b0 + CHUNK < in_planes ? b0 + CHUNK : in_planes;
		job.in = (const in_t *) c->in->data + (size_t) b0 * c->in->plane_stride + (size_t) y * c->in->row_stride;
		job.planes = b1 - b0;
		job.groups_last = b1 == in_planes ? groups - (in_planes - 1) * (VL / GROUP) : VL / GROUP;
		job.w = WEIGHTS (conv) + (size_t) block * job.wblock + (size_t) b0 * VL * taps * VL;
#if defined(BD_DOT_INT8)
		job.sums = conv->int8_sums + (size_t) (b0 / CHUNK) * conv->cout_blocks * VL + (size_t) block * VL;
#endif
		job.first = b0 == 0;
		job.last = b1 == in_planes;
		/* 26 (or 2 x 12) accumulators beside the three (six) weight vectors and a broadcast;
		 * a 1x1 convolution's two weight vectors leave room for 2 x 14. bf16 weights are
		 * 3x3 only (conv-bf16.c). */
#if !defined(BD_DOT_BF16)
		if (taps == 1) {
			if (nb == 2 && c->step == 2)
				range = row_tiles (&job, c->in->width, 14, 2, 1, 2, range);
			else if (c->step == 2)
				range = row_tiles (&job, c->in->width, 26, 1, 1, 2, range);
			else if (nb == 2)
				range = row_tiles (&job, c->in->width, 14, 2, 1, 1, range);
			else
				range = row_tiles (&job, c->in->width, 26, 1, 1, 1, range);
			continue;
		}
#endif
		if (nb == 2)
			range = row_tiles (&job, c->in->width, 12, 2, 3, 1, range);
		else
			range = row_tiles (&job, c->in->width, 26, 1, 3, 1, range);
	}
#if !defined(BD_DOT_BF16)
	if (c->range)
		widen_range (c->range, _mm512_reduce_min_ps (range.least), _mm512_reduce_max_ps (range.largest));
#endif
}

#if defined(BD_DOT_BF16)
static
#endif
void
RUN_NAME (bd_thread_pool *pool, const bd_cpu_conv *conv, const view_t *in, const bd_cpu_view *out, int out_step,
          bool relu, bd_range *range)
{
	if (in->height == 0 || in->width == 0 || conv->out_channels == 0)
		return;
	conv_ctx c = { .conv = conv, .in = in, .out = out, .step = out_step, .relu = relu,
	               .groups = (conv->cout_blocks + 1) / 2, .range = range };
	bd_thread_pool_run (pool, (size_t) in->height * c.groups, conv_task, &c);
}

#if defined(BD_DOT_BF16)
void
bd_conv2d_bf16 (bd_thread_pool *pool, const bd_cpu_conv *conv, const view_t *in, const bd_cpu_view *out, bool relu)
{
	RUN_NAME (pool, conv, in, out, 1, relu, NULL);
}
#endif
