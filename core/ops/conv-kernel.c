/* SPDX-License-Identifier: Apache-2.0 */
/* The inner loops of bd_conv2d (conv2d.c), built once per instruction set (meson compiles this
 * file with -march=x86-64-v4, -v3 and the baseline; conv2d.c picks one at run time).
 *
 * A tile of P output pixels x NB blocks of 16 output channels stays in vector registers while
 * the reduction runs over input channels and taps. Each weight vector feeds P multiply-adds;
 * each input value is broadcast once for NB blocks from a fixed offset of a row pointer, so
 * the loads fold into the multiply-adds. GCC vector extensions keep one source for every
 * target: a vector is one AVX-512 register, two AVX2 registers, or four SSE ones. */
#include "conv-kernel.h"

#include <string.h>

#define VL BD_LANES
#define MAX_P 28      /* AVX-512: 28 accumulators + one weight vector fill the 32 registers */

typedef float   vf __attribute__ ((vector_size (VL * sizeof (float))));
typedef int32_t vi __attribute__ ((vector_size (VL * sizeof (int32_t))));

static inline vf   vload (const float *p)  { vf v; memcpy (&v, p, sizeof v); return v; }
static inline void vstore (float *p, vf v) { memcpy (p, &v, sizeof v); }
static inline vf   vrelu (vf v)            { return (vf) ((vi) v & (vi) (v > (vf) {})); }
static inline vf   vsplat (float s)        { return (vf) { s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s }; }

static inline __attribute__ ((always_inline)) void
conv_tile (const bd_conv_row_job *job, uint32_t x, const int P, const int NB, const int K, const int STEP)
{
	vf acc[MAX_P][2];
	float *out = job->out + (size_t) x * STEP * VL;

#pragma GCC unroll 28
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++)
			acc[p][j] = job->first ? vload (job->bias + VL * j)
			                       : vload (out + j * job->out_plane + p * STEP * VL);

	const float *wp = job->w;
	for (uint32_t b = 0; b < job->planes; b++) {
		/* K = 3: rows y-1, y, y+1 and columns x-1 .. x+P; K = 1: row y only. */
		const float *row = job->in + b * job->in_plane + (size_t) x * VL - (K / 2) * (job->in_row + VL);
		uint32_t lanes = b + 1 == job->planes ? job->lanes_last : VL;
		for (uint32_t l = 0; l < lanes; l++, row++) {
			if (K == 3) {
				/* One row of taps at a time: each broadcast input value feeds the three
				 * outputs it touches (kx = 0, 1, 2), a third of the loads per multiply-add.
				 * The row loop stays rolled so the compiler keeps few broadcasts alive. */
#pragma GCC unroll 1
				for (int ky = 0; ky < 3; ky++, wp += 3 * VL) {
					vf w0[3], w1[3];
#pragma GCC unroll 3
					for (int kx = 0; kx < 3; kx++) {
						w0[kx] = vload (wp + kx * VL);
						w1[kx] = NB > 1 ? vload (wp + job->wblock + kx * VL) : w0[kx];
					}
					const float *src = row + ky * job->in_row;
#pragma GCC unroll 30
					for (int j = 0; j < P + 2; j++) {
						vf v = vsplat (src[j * VL]);
#pragma GCC unroll 3
						for (int kx = 0; kx < 3; kx++) {
							int p = j - kx;
							if (p < 0 || p >= P)
								continue;
							acc[p][0] += v * w0[kx];
							if (NB > 1)
								acc[p][1] += v * w1[kx];
						}
					}
				}
				continue;
			}
#pragma GCC unroll 1
			for (int t = 0; t < K * K; t++) {
				vf w0 = vload (wp);
				vf w1 = NB > 1 ? vload (wp + job->wblock) : w0;
				wp += VL;
				const float *src = row + (t / K) * job->in_row + (t % K) * VL;
#pragma GCC unroll 28
				for (int p = 0; p < P; p++) {
					vf v = vsplat (src[p * VL]);
					acc[p][0] += v * w0;
					if (NB > 1)
						acc[p][1] += v * w1;
				}
			}
		}
	}

#pragma GCC unroll 28
	for (int p = 0; p < P; p++)
#pragma GCC unroll 2
		for (int j = 0; j < NB; j++)
			vstore (out + j * job->out_plane + p * STEP * VL,
			        job->last && job->relu ? vrelu (acc[p][j]) : acc[p][j]);
}

/* A row in tiles of P, then the remainder in tiles of 16, 8, 4, 2 and 1. */
static inline __attribute__ ((always_inline)) void
conv_row (const bd_conv_row_job *job, uint32_t width, const int P, const int NB, const int K, const int STEP)
{
	uint32_t x = 0;
	for (; x + P <= width; x += P)
		conv_tile (job, x, P, NB, K, STEP);
	if (P > 16) for (; x + 16 <= width; x += 16) conv_tile (job, x, 16, NB, K, STEP);
	if (P > 8)  for (; x + 8 <= width; x += 8)   conv_tile (job, x, 8, NB, K, STEP);
	if (P > 4)  for (; x + 4 <= width; x += 4)   conv_tile (job, x, 4, NB, K, STEP);
	if (P > 2)  for (; x + 2 <= width; x += 2)   conv_tile (job, x, 2, NB, K, STEP);
	for (; x < width; x++)
		conv_tile (job, x, 1, NB, K, STEP);
}

/* Tile sizes for the registers at hand: AVX-512 has 32 vector registers of 16 floats;
 * narrower targets split each vector over two (AVX2) or four registers. */
#if defined(__AVX512F__)
#define P2 14
#define P1 28
#define P2_3X3 12
#define P1_3X3 26
#elif defined(__AVX2__)
#define P2 3
#define P1 6
#define P2_3X3 2
#define P1_3X3 5
#else
#define P2 1
#define P1 3
#define P2_3X3 1
#define P1_3X3 2
#endif

static inline __attribute__ ((always_inline)) void
conv_row_sized (const bd_conv_row_job *job, uint32_t width, int nb, const int K, const int STEP)
{
	/* 3x3 tiles hold three (or six) weight vectors besides the accumulators. */
	if (nb == 2)
		conv_row (job, width, K == 3 ? P2_3X3 : P2, 2, K, STEP);
	else
		conv_row (job, width, K == 3 ? P1_3X3 : P1, 1, K, STEP);
}

void
BD_CONV_ROW_NAME (const bd_conv_row_job *job, uint32_t width, int nb, int taps, int step)
{
	if (taps == 9)
		conv_row_sized (job, width, nb, 3, 1);
	else if (step == 1)
		conv_row_sized (job, width, nb, 1, 1);
	else
		conv_row_sized (job, width, nb, 1, 2);
}

