/* SPDX-License-Identifier: Apache-2.0 */
/* The operations of an AMX pass besides its 3x3 convolutions (conv-amx-layers times those),
 * at the shipped model's shape (depth 5, widths 32..512) for a 512x352 pass: the four
 * up-convolutions, bf16 pairs in and out as forward_amx runs them, and the head over the last
 * block's fp32 output. Prints each one's median ms and the total; then the last 3x3
 * convolution (32->32) with the head both ways: writing its fp32 planes for the head's own
 * pass, and feeding the head its sums (bd_conv2d_amx_head, as forward_amx runs it). Built
 * where the AMX kernels are; needs a CPU that runs them (docs/PERFORMANCE.md, "AMX").
 *
 *   amx-pass-ops [THREADS] [RUNS]     (defaults: one thread per core, 15 runs) */
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench-clock.h"

typedef struct {
	bd_thread_pool         *pool;
	const bd_cpu_conv      *taps;       /* an up-convolution's four, or NULL for the head */
	const bd_cpu_conv      *last;       /* with the head: the 3x3 convolution before it */
	bool                    fused;      /* ... feeding it its sums */
	const bd_cpu_view_bf16 *in, *out;
	const float            *head_weight;
	const bd_cpu_view      *head_in;
	float                  *head_out;
} job;

static void
run_job (void *arg)
{
	const job *j = arg;
	if (j->taps)
		bd_conv_transpose2x2_amx (j->pool, j->taps, j->in, NULL, j->out);
	else if (j->last && j->fused)
		bd_conv2d_amx_head (j->pool, j->last, j->in, j->head_weight, 0.1f, j->head_out);
	else {
		if (j->last)
			bd_conv2d_amx (j->pool, j->last, j->in, j->head_in, true);
		bd_head_sigmoid (j->pool, j->head_weight, 0.1f, 32, j->head_in, j->head_out);
	}
}

/* A buffer of @planes planes for @h x @w with the engine's one-pixel border; never zeros
 * inside (values in [0, 1) as after a ReLU). */
static float *
planes_new (uint32_t planes, uint32_t h, uint32_t w, bd_cpu_view *v)
{
	size_t row = ((size_t) w + 2) * BD_LANES, plane = row * (h + 2);
	float *base = bd_alloc_zeroed (plane * planes, sizeof (float));
	if (!base)
		return NULL;
	*v = (bd_cpu_view) { base + row + BD_LANES, h, w, row, plane, NULL };
	for (uint32_t p = 0; p < planes; p++)
		for (uint32_t y = 0; y < h; y++)
			for (uint32_t x = 0; x < w * BD_LANES; x++)
				v->data[p * plane + y * row + x] = (float) ((p * 7 + y * 3 + x) % 101) / 101.0f;
	return base;
}

int
main (int argc, char **argv)
{
	int threads = argc > 1 ? atoi (argv[1]) : 0, runs = argc > 2 ? atoi (argv[2]) : 15;
	if (runs < 1 || !bd_cpu_amx_usable ()) {
		fprintf (stderr, "amx-pass-ops: %s\n", runs < 1 ? "RUNS must be at least 1" : "this CPU or system runs no AMX");
		return 1;
	}
	bd_thread_pool *pool = bd_thread_pool_new (threads);
	double total = 0;
	printf ("%-10s %10s %9s %8s\n", "op", "in->out", "out size", "ms");
	/* Up-convolution l: widths[l + 1] channels at level l + 1 to widths[l] at level l. */
	for (uint32_t l = 0; l < 4; l++) {
		uint32_t cin = 64u << l, cout = 32u << l, h = 352 >> (l + 1), w = 512 >> (l + 1);
		bd_cpu_view in, out;
		float *in_base = planes_new (cin / BD_LANES, h, w, &in), *out_base = planes_new (cout / BD_LANES, 2 * h, 2 * w, &out);
		uint16_t *in_pairs = bd_alloc_zeroed ((size_t) cin / BD_LANES * in.plane_stride, sizeof (uint16_t));
		float *wt = malloc ((size_t) cin * cout * 4 * sizeof *wt), *bias = malloc (cout * sizeof *bias);
		if (!in_base || !out_base || !in_pairs || !wt || !bias)
			return 1;
		for (size_t k = 0; k < (size_t) cin * cout * 4; k++)
			wt[k] = (float) ((int) (k % 17) - 8) * 0.01f;
		for (uint32_t k = 0; k < cout; k++)
			bias[k] = (float) (k % 5) * 0.1f;
		bd_cpu_conv taps[4];
		for (int t = 0; t < 4; t++)
			if (bd_cpu_conv_pack_amx (pool, &taps[t], wt + t, bias, cout, cin, 1, 4, (size_t) cout * 4, 0, NULL, cin,
			                          NULL))
				return 1;
		bd_cpu_view_bf16 pin = bd_to_bf16_pairs (pool, &in, cin / BD_LANES, in_pairs);
		/* The output pairs lie over the fp32 planes, as in the engine's arena. */
		bd_cpu_view_bf16 pout = { (uint16_t *) out.data, out.height, out.width, 2 * out.row_stride,
		                          2 * out.plane_stride };
		job j = { .pool = pool, .taps = taps, .in = &pin, .out = &pout };
		double ms = median_ms_of (runs, run_job, &j);
		char name[16], io[16], size[16];
		snprintf (name, sizeof name, "up%u", l);
		snprintf (io, sizeof io, "%u->%u", cin, cout);
		snprintf (size, sizeof size, "%ux%u", 2 * w, 2 * h);
		printf ("%-10s %10s %9s %8.2f\n", name, io, size, ms);
		total += ms;
		for (int t = 0; t < 4; t++)
			bd_cpu_conv_clear (&taps[t]);
		free (wt);
		free (bias);
		bd_free_aligned (in_base);
		bd_free_aligned (out_base);
		bd_free_aligned (in_pairs);
	}
	bd_cpu_view head_in;
	float *head_base = planes_new (2, 352, 512, &head_in), *head_out = malloc ((size_t) 512 * 352 * sizeof *head_out);
	float head_weight[32];
	for (int k = 0; k < 32; k++)
		head_weight[k] = (float) (k % 7 - 3) * 0.05f;
	if (!head_base || !head_out)
		return 1;
	job h = { .pool = pool, .head_weight = head_weight, .head_in = &head_in, .head_out = head_out };
	double ms = median_ms_of (runs, run_job, &h);
	printf ("%-10s %10s %9s %8.2f\n", "head", "32->1", "512x352", ms);
	total += ms;
	printf ("%-10s %10s %9s %8.2f\n", "total", "", "", total);

	/* dec0.conv2, 32->32 at 512x352, from pairs: fp32 planes and the head's pass, or fused. */
	bd_cpu_view last_in;
	float *last_base = planes_new (2, 352, 512, &last_in), *wt = malloc (32 * 32 * 9 * sizeof *wt);
	uint16_t *last_pairs = bd_alloc_zeroed ((size_t) 2 * last_in.plane_stride, sizeof (uint16_t));
	float bias[32];
	bd_cpu_conv last;
	if (!last_base || !wt || !last_pairs)
		return 1;
	for (size_t k = 0; k < 32 * 32 * 9; k++)
		wt[k] = (float) ((int) (k % 13) - 6) * 0.01f;
	for (int k = 0; k < 32; k++)
		bias[k] = (float) (k % 3) * 0.1f;
	if (bd_cpu_conv_pack_amx (pool, &last, wt, bias, 32, 32, 9, 32 * 9, 9, 1, NULL, 32, NULL))
		return 1;
	bd_cpu_view_bf16 last_pin = bd_to_bf16_pairs (pool, &last_in, 2, last_pairs);
	job planes = { .pool = pool, .last = &last, .in = &last_pin, .head_weight = head_weight, .head_in = &head_in,
	               .head_out = head_out };
	job fused = planes;
	fused.fused = true;
	printf ("%-10s %10s %9s %8.2f\n", "conv+head", "32->1", "512x352", median_ms_of (runs, run_job, &planes));
	printf ("%-10s %10s %9s %8.2f\n", "fused", "32->1", "512x352", median_ms_of (runs, run_job, &fused));
	printf ("threads=%d runs=%d\n", bd_thread_pool_size (pool), runs);
	bd_cpu_conv_clear (&last);
	bd_free_aligned (last_base);
	bd_free_aligned (last_pairs);
	free (wt);
	bd_free_aligned (head_base);
	free (head_out);
	bd_thread_pool_free (pool);
	return 0;
}
