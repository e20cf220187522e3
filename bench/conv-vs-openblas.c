/* SPDX-License-Identifier: Apache-2.0 */
/* One 3x3 convolution layer, ours against OpenBLAS (im2col + SGEMM, the usual way to use a
 * BLAS for convolution), on the U-Net's square shapes; prints ms and GFLOP/s for each.
 * Why the CPU backend has its own kernel rather than a BLAS: docs/ARCHITECTURE.md.
 *
 *   conv-vs-openblas [THREADS]     (OPENBLAS_NUM_THREADS follows THREADS) */
#include "ops/ops.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-clock.h"

/* im2col from a zero-bordered NHWC image [(h+2)][(w+2)][c], then out = col x w. */
static void
conv_blas (const float *in, int h, int w, int c, const float *wt, int co, float *col, float *out)
{
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			for (int t = 0; t < 9; t++)
				memcpy (col + ((size_t) y * w + x) * 9 * c + (size_t) t * c,
				        in + ((size_t) (y + t / 3) * (w + 2) + x + t % 3) * c, (size_t) c * sizeof (float));
	cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, h * w, co, 9 * c, 1.0f, col, 9 * c, wt, co,
	             0.0f, out, co);
}

int
main (int argc, char **argv)
{
	int threads = argc > 1 ? atoi (argv[1]) : 0;
	static const int shapes[][3] = { { 16, 16, 512 }, { 32, 32, 256 }, { 64, 64, 128 }, { 128, 128, 64 }, { 256, 256, 32 } };
	bd_thread_pool *pool = bd_thread_pool_new (threads);
	openblas_set_num_threads (bd_thread_pool_size (pool));
	printf ("%-16s %22s %22s\n", "layer", "OpenBLAS ms (GFLOP/s)", "backdrop ms (GFLOP/s)");
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		int c = shapes[i][0], co = shapes[i][1], s = shapes[i][2];
		size_t n_in = (size_t) (s + 2) * (s + 2) * c, n_w = (size_t) 9 * c * co;
		float *in = malloc (n_in * sizeof *in), *wt = malloc (n_w * sizeof *wt);
		float *col = malloc ((size_t) s * s * 9 * c * sizeof *col), *out = malloc ((size_t) s * s * co * sizeof *out);
		float *bias = calloc ((size_t) co, sizeof *bias);
		if (!in || !wt || !col || !out || !bias)
			return 1;
		for (size_t k = 0; k < n_in; k++)
			in[k] = (float) (k % 13) * 0.1f;
		for (size_t k = 0; k < n_w; k++)
			wt[k] = (float) (k % 7) * 0.01f;
		/* Ours reads the same weights: [ci * 9 + tap][co] is w[co * s_co + ci * s_ci + tap]. */
		bd_cpu_conv conv;
		if (bd_cpu_conv_pack (&conv, wt, bias, co, c, 9, 1, 9 * (size_t) co, co, NULL, c, NULL) != BD_OK)
			return 1;
		uint32_t planes = (c + 15) / 16, oplanes = (co + 15) / 16;
		size_t row = (size_t) (s + 2) * 16, plane = row * (s + 2);
		float *ib = bd_alloc_zeroed (plane * planes, sizeof (float)), *ob = bd_alloc_zeroed (plane * oplanes, sizeof (float));
		bd_cpu_view iv = { ib + row + 16, s, s, row, plane }, ov = { ob + row + 16, s, s, row, plane };
		for (size_t k = 0; k < plane * planes; k++)
			ib[k] = (float) (k % 11) * 0.1f;

		const int runs = 5;
		conv_blas (in, s, s, c, wt, co, col, out);
		double t0 = now_ms ();
		for (int r = 0; r < runs; r++)
			conv_blas (in, s, s, c, wt, co, col, out);
		double blas_ms = (now_ms () - t0) / runs;
		bd_conv2d (pool, &conv, &iv, &ov, true);
		t0 = now_ms ();
		for (int r = 0; r < runs; r++)
			bd_conv2d (pool, &conv, &iv, &ov, true);
		double ours_ms = (now_ms () - t0) / runs;
		double gflop = 2.0 * 9 * c * co * (double) s * s / 1e9;
		printf ("%4d->%4d @%4d %10.2f (%6.0f) %14.2f (%6.0f)\n", c, co, s, blas_ms, gflop / blas_ms * 1e3,
		        ours_ms, gflop / ours_ms * 1e3);
		bd_cpu_conv_clear (&conv);
		bd_free_aligned (ib);
		bd_free_aligned (ob);
		free (in); free (wt); free (col); free (out); free (bias);
	}
	bd_thread_pool_free (pool);
	return 0;
}
