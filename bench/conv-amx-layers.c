/* SPDX-License-Identifier: Apache-2.0 */
/* Every 3x3 convolution of the shipped model's shape (depth 5, widths 32..512) at 512x352 on
 * the CPU, the fp32 kernel against the AMX one (its input in bf16 pairs, its output written as
 * pairs, as forward_amx runs most of them; there the encoders' second convolutions also pool
 * their output and the last one feeds the head, which amx-pass-ops times): where a pass's
 * time goes, layer by layer. Prints each layer's median ms and GFLOP/s and the totals. Built
 * where the AMX kernels are; needs a CPU that runs them (docs/PERFORMANCE.md, "AMX").
 *
 *   conv-amx-layers [THREADS] [RUNS]     (defaults: one thread per core, 7 runs) */
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench-clock.h"

typedef struct { const char *name; uint32_t cin, cout, level; } layer;

static const layer layers[] = {
	{ "enc0.conv2", 32, 32, 0 },   { "enc1.conv1", 32, 64, 1 },   { "enc1.conv2", 64, 64, 1 },
	{ "enc2.conv1", 64, 128, 2 },  { "enc2.conv2", 128, 128, 2 }, { "enc3.conv1", 128, 256, 3 },
	{ "enc3.conv2", 256, 256, 3 }, { "enc4.conv1", 256, 512, 4 }, { "enc4.conv2", 512, 512, 4 },
	{ "dec3.conv1", 512, 256, 3 }, { "dec3.conv2", 256, 256, 3 }, { "dec2.conv1", 256, 128, 2 },
	{ "dec2.conv2", 128, 128, 2 }, { "dec1.conv1", 128, 64, 1 },  { "dec1.conv2", 64, 64, 1 },
	{ "dec0.conv1", 64, 32, 0 },   { "dec0.conv2", 32, 32, 0 },
};

typedef struct {
	bd_thread_pool         *pool;
	const bd_cpu_conv      *fp32, *amx;
	const bd_cpu_view      *in, *out;
	const bd_cpu_view_bf16 *in_pairs, *out_pairs;
} job;

static void run_fp32 (void *arg) { const job *j = arg; bd_conv2d (j->pool, j->fp32, j->in, j->out, true); }
static void run_amx (void *arg)  { const job *j = arg; bd_conv2d_amx_pairs (j->pool, j->amx, j->in_pairs, j->out_pairs, true); }

int
main (int argc, char **argv)
{
	int threads = argc > 1 ? atoi (argv[1]) : 0, runs = argc > 2 ? atoi (argv[2]) : 7;
	if (runs < 1 || !bd_cpu_amx_usable ()) {
		fprintf (stderr, "conv-amx-layers: %s\n", runs < 1 ? "RUNS must be at least 1" : "this CPU or system runs no AMX");
		return 1;
	}
	bd_thread_pool *pool = bd_thread_pool_new (threads);
	double total_fp32 = 0, total_amx = 0, total_gflop = 0;
	printf ("%-11s %10s %8s %16s %16s\n", "layer", "in->out", "size", "fp32 ms (GF/s)", "AMX ms (GF/s)");
	for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
		const layer *l = &layers[i];
		uint32_t h = 352 >> l->level, w = 512 >> l->level;
		size_t nw = (size_t) l->cout * l->cin * 9, row = ((size_t) w + 2) * BD_LANES, plane = row * (h + 2);
		uint32_t in_planes = (l->cin + 15) / 16, out_planes = (l->cout + 15) / 16;
		float *wt = malloc (nw * sizeof *wt), *bias = malloc (l->cout * sizeof *bias);
		float *in = bd_alloc_zeroed (plane * in_planes, sizeof (float));
		float *out = bd_alloc_zeroed (plane * out_planes, sizeof (float));
		uint16_t *pairs_in = bd_alloc_zeroed ((in_planes + 1) / 2 * 2 * plane, sizeof (uint16_t));
		uint16_t *pairs_out = bd_alloc_zeroed ((out_planes + 1) / 2 * 2 * plane, sizeof (uint16_t));
		if (!wt || !bias || !in || !out || !pairs_in || !pairs_out)
			return 1;
		/* Never zeros: small weights of both signs, inputs in [0, 1) as after a ReLU. */
		for (size_t k = 0; k < nw; k++)
			wt[k] = (float) ((int) (k % 17) - 8) * 0.01f;
		for (uint32_t k = 0; k < l->cout; k++)
			bias[k] = (float) (k % 5) * 0.1f;
		bd_cpu_view vin = { in + row + BD_LANES, h, w, row, plane, NULL },
		            vout = { out + row + BD_LANES, h, w, row, plane, NULL };
		for (uint32_t p = 0; p < in_planes; p++)
			for (uint32_t y = 0; y < h; y++)
				for (uint32_t x = 0; x < w * BD_LANES; x++)
					vin.data[p * plane + y * row + x] = (float) ((p * 7 + y * 3 + x) % 101) / 101.0f;
		bd_cpu_conv fp32, amx;
		if (bd_cpu_conv_pack (&fp32, wt, bias, l->cout, l->cin, 9, (size_t) l->cin * 9, 9, 1, NULL, l->cin, NULL) ||
		    bd_cpu_conv_pack_amx (pool, &amx, wt, bias, l->cout, l->cin, 9, (size_t) l->cin * 9, 9, 1, NULL, l->cin,
		                          NULL))
			return 1;
		bd_cpu_view_bf16 vpin = bd_to_bf16_pairs (pool, &vin, in_planes, pairs_in);
		bd_cpu_view_bf16 vpout = { pairs_out + 2 * (row + BD_LANES), h, w, 2 * row, 2 * plane };
		job j = { pool, &fp32, &amx, &vin, &vout, &vpin, &vpout };
		double gflop = 2.0 * l->cin * l->cout * 9 * h * w / 1e9;
		double f = median_ms_of (runs, run_fp32, &j), a = median_ms_of (runs, run_amx, &j);
		printf ("%-11s %4u->%-4u %4ux%-3u %7.2f (%5.0f) %7.2f (%5.0f)\n", l->name, l->cin, l->cout, w, h, f,
		        gflop / f * 1e3, a, gflop / a * 1e3);
		total_fp32 += f;
		total_amx += a;
		total_gflop += gflop;
		bd_cpu_conv_clear (&fp32);
		bd_cpu_conv_clear (&amx);
		free (wt);
		free (bias);
		bd_free_aligned (in);
		bd_free_aligned (out);
		bd_free_aligned (pairs_in);
		bd_free_aligned (pairs_out);
	}
	printf ("%-11s %10s %8s %7.2f (%5.0f) %7.2f (%5.0f)\n", "total", "", "", total_fp32,
	        total_gflop / total_fp32 * 1e3, total_amx, total_gflop / total_amx * 1e3);
	printf ("threads=%d runs=%d\n", bd_thread_pool_size (pool), runs);
	bd_thread_pool_free (pool);
	return 0;
}
