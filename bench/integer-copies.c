/* SPDX-License-Identifier: Apache-2.0 */
/* What the integer path (Intel without AMX) does around its convolutions, at the shipped
 * model's shape: the copies to integers of a 576x384 pass (a portrait's mirror pass) at full
 * resolution, the decoder's first input (64 channels, 57 MB of fp32, 28 MB of halves as an
 * integer session holds it) to 8 bits and the encoder's second (32) to 16
 * (core/ops/to-integers.c), from floats and from halves, each after other data has filled
 * the caches, as a pass leaves them; then the packing of the model's largest 8-bit layer
 * (512 -> 512, 3x3) and of one tap of its largest up-convolution (512 -> 256), from
 * halves as a session starts (core/ops/conv-int8.c). Prints the median and the fastest of RUNS, in ms. Built where
 * the integer kernels are; needs a CPU with AVX-512 VNNI (docs/PERFORMANCE.md).
 *
 *   integer-copies [THREADS] [RUNS]     (defaults: one thread per core, 40 runs) */
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-clock.h"

#define H 384
#define W 576
#define OTHER_BYTES ((size_t) 64 << 20)   /* written between runs: more than a core's caches */

typedef enum { COPY_8, COPY_16, PACK_3X3, PACK_UP } step;
typedef enum { FLOATS, HALVES } source;

typedef struct {
	bd_thread_pool *pool;
	bd_cpu_view     in[2];     /* the same values as floats and as halves */
	uint32_t        planes;
	void           *dst;
	bd_weight       weights;   /* halves, as the shipped model holds them */
	const float    *bias;
	uint8_t        *other;
} bench;

static void
run_step (bench *b, step s, source from, int pass)
{
	bd_range known = { -1.0f, 4.0f };
	if (s == COPY_8)
		bd_to_int8 (b->pool, &b->in[from], b->planes, &known, b->dst);
	else if (s == COPY_16)
		bd_to_int16 (b->pool, &b->in[from], b->planes / 2, 4000.0f, &known, b->dst);
	else {
		bd_cpu_conv conv;
		bd_status st = s == PACK_3X3 ? bd_cpu_conv_pack_int8 (b->pool, &conv, &b->weights, 0, b->bias, 512, 512, 9,
		                                                      512 * 9, 9, 1, NULL, 512, NULL)
		                             : bd_cpu_conv_pack_int8 (b->pool, &conv, &b->weights, (size_t) (pass % 4), b->bias,
		                                                      256, 512, 1, 4, 256 * 4, 0, NULL, 512, NULL);
		if (st == BD_OK)
			bd_cpu_conv_clear (&conv);
	}
}

/* The median and fastest of @runs of @s, the caches filled with other data before each. */
static void
time_step (bench *b, step s, source from, int runs, const char *what)
{
	double *ms = malloc ((size_t) runs * sizeof *ms);
	if (!ms)
		return;
	run_step (b, s, from, 0);
	for (int r = 0; r < runs; r++) {
		memset (b->other, r & 0xff, OTHER_BYTES);
		double t0 = now_ms ();
		run_step (b, s, from, r);
		ms[r] = now_ms () - t0;
	}
	qsort (ms, (size_t) runs, sizeof *ms, cmp_double);
	printf ("%-44s %8.2f %8.2f\n", what, ms[runs / 2], ms[0]);
	free (ms);
}

int
main (int argc, char **argv)
{
	int threads = argc > 1 ? atoi (argv[1]) : 0, runs = argc > 2 ? atoi (argv[2]) : 40;
	if (runs < 1 || !bd_cpu_vnni_usable ()) {
		fprintf (stderr, "integer-copies: %s\n", runs < 1 ? "RUNS must be at least 1" : "this CPU has no AVX-512 VNNI");
		return 1;
	}
	bench b = { .pool = bd_thread_pool_new (threads), .planes = 4 };
	size_t row = ((size_t) W + 2) * BD_LANES, plane = row * (H + 2), n = plane * b.planes;
	float *base = bd_alloc_aligned (n, sizeof (float));
	uint16_t *halves = bd_alloc_aligned (n, sizeof (uint16_t));
	size_t weights = (size_t) 512 * 512 * 9;
	uint16_t *wt = malloc ((weights + 1) * sizeof *wt);   /* [0]: the two bytes read before the first */
	float *bias = calloc (512, sizeof *bias);
	b.dst = bd_alloc_aligned (n, sizeof (int16_t));
	b.other = malloc (OTHER_BYTES);
	if (!b.pool || !base || !halves || !wt || !bias || !b.dst || !b.other) {
		fprintf (stderr, "integer-copies: out of memory\n");
		return 1;
	}
	/* Never zeros; within the known range, as a ReLU's and an up-convolution's outputs: k/200
	 * - 1, each as a half too (the values need not be equal: only the time is taken). */
	for (size_t k = 0; k < n; k++) {
		uint32_t v = (uint32_t) ((k * 2654435761u) % 1000);
		base[k] = (float) v / 200.0f - 1.0f;
		halves[k] = (uint16_t) (0x3c00 + v);   /* 1 .. 1.98 */
	}
	/* Halves of either sign, 2^-5 .. 4. */
	wt[0] = 0;
	for (size_t k = 0; k < weights; k++) {
		uint32_t bits = (uint32_t) (k * 2654435761u);
		wt[1 + k] = (uint16_t) ((bits & 0x8000) | (10 + bits % 8) << 10 | (bits >> 7 & 0x3ff));
	}
	b.in[FLOATS] = (bd_cpu_view) { base + row + BD_LANES, H, W, row, plane, NULL };
	b.in[HALVES] = (bd_cpu_view) { NULL, H, W, row, plane, halves + row + BD_LANES };
	b.weights = (bd_weight) { .data = wt + 1, .half = true };
	b.bias = bias;
	printf ("%-44s %8s %8s\n", "step", "median", "fastest");
	time_step (&b, COPY_8, FLOATS, runs, "copy to 8 bits, 64 channels at 576x384");
	time_step (&b, COPY_8, HALVES, runs, "the same from halves");
	time_step (&b, COPY_16, FLOATS, runs, "copy to 16 bits, 32 channels at 576x384");
	time_step (&b, COPY_16, HALVES, runs, "the same from halves");
	time_step (&b, PACK_3X3, FLOATS, runs, "pack 8-bit weights, 3x3 512 -> 512");
	time_step (&b, PACK_UP, FLOATS, runs, "pack 8-bit weights, an up tap 512 -> 256");
	bd_free_aligned (base);
	bd_free_aligned (halves);
	bd_free_aligned (b.dst);
	free (wt);
	free (bias);
	free (b.other);
	bd_thread_pool_free (b.pool);
	return 0;
}
