/* SPDX-License-Identifier: Apache-2.0 */
/* Times the U-Net forward pass of libbackdrop on a synthetic model (random weights) of a
 * given depth, base width and input size, on random input, and prints the median. With
 * --batch N each call runs N inputs (bd_session_forward_batch) and the images per second are
 * printed too.
 *
 *   bench-forward [--depth 5] [--width 16] [--size 512] [--height H] [--batch 1] [--runs 10]
 *                 [--threads 0] [--device cpu|cuda|auto] [--exact]
 */
#include "backdrop-testing.h"
#include "backdrop-private.h"   /* the backend's network clock */
#include "synthetic-model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-clock.h"

static double
flops (const bd_synthetic_spec *s, uint32_t h, uint32_t w)
{
	double f = 0;
	const uint32_t *c = s->widths;
	for (uint32_t l = 0; l < s->depth; l++) {
		double px = (double) (h >> l) * (w >> l), cin = l ? c[l - 1] : 3;
		f += 2 * 9 * px * (cin * c[l] + (double) c[l] * c[l]);
		if (l + 1 < s->depth)
			f += 2 * px * (4.0 * c[l + 1] * c[l] / 4 + 9.0 * (2.0 * c[l] * c[l] + (double) c[l] * c[l]));
	}
	return f + 2.0 * h * w * c[0];
}

int
main (int argc, char **argv)
{
	uint32_t depth = 5, width = 16, size = 512, height = 0, batch = 1;
	int runs = 10, threads = 0;
	bd_device device = BD_DEVICE_CPU;
	bd_precision precision = BD_PRECISION_FAST;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp (a, "--depth") && v) { depth = (uint32_t) atoi (v); i++; }
		else if (!strcmp (a, "--width") && v) { width = (uint32_t) atoi (v); i++; }
		else if (!strcmp (a, "--size") && v) { size = (uint32_t) atoi (v); i++; }
		else if (!strcmp (a, "--height") && v) { height = (uint32_t) atoi (v); i++; }
		else if (!strcmp (a, "--batch") && v) { batch = (uint32_t) atoi (v); i++; }
		else if (!strcmp (a, "--runs") && v) { runs = atoi (v); i++; }
		else if (!strcmp (a, "--threads") && v) { threads = atoi (v); i++; }
		else if (!strcmp (a, "--exact")) precision = BD_PRECISION_EXACT;
		else if (!strcmp (a, "--device") && v) {
			device = !strcmp (v, "cuda") ? BD_DEVICE_CUDA : !strcmp (v, "auto") ? BD_DEVICE_AUTO : BD_DEVICE_CPU;
			i++;
		} else {
			fprintf (stderr, "usage: %s [--depth N] [--width N] [--size N] [--height N] [--batch N] "
			         "[--runs N] [--threads N] [--device cpu|cuda|auto] [--exact]\n", argv[0]);
			return 2;
		}
	}
	if (depth < 1 || depth > 8 || width < 1 || runs < 1 || size < 16 || batch < 1 || batch > BD_MAX_BATCH) {
		fprintf (stderr, "bench-forward: bad arguments\n");
		return 2;
	}
	height = height ? height : size;

	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, depth, width, size, 42);
	char path[] = "/tmp/bench-forward-XXXXXX";
	int fd = mkstemp (path);
	if (fd < 0 || !bd_synthetic_model_write (&spec, path)) {
		perror ("bench-forward: writing the synthetic model");
		return 1;
	}
	close (fd);

	bd_error err = { 0 };
	bd_model *model = NULL;
	bd_session *session = NULL;
	bd_session_options opts;
	bd_session_options_init (&opts);
	opts.device = device;
	opts.precision = precision;
	opts.threads = threads;
	if (bd_model_open (path, &model, &err) != BD_OK ||
	    bd_session_new (model, &opts, &session, &err) != BD_OK) {
		fprintf (stderr, "bench-forward: %s\n", err.message);
		unlink (path);
		return 1;
	}
	unlink (path);

	size_t n = (size_t) batch * size * height;
	float *in = malloc (3 * n * sizeof *in), *out = malloc (n * sizeof *out);
	double *times = malloc ((size_t) runs * sizeof *times), *net = malloc ((size_t) runs * sizeof *net);
	if (!in || !out || !times || !net)
		return 1;
	bd_rng rng = { 7 };
	for (size_t i = 0; i < 3 * n; i++)
		in[i] = bd_rng_uniform (&rng, -2, 2);
	/* Warm-up: the plan is made and the caches filled outside the timed runs. */
	if (bd_session_forward_batch (session, in, batch, height, size, out, &err) != BD_OK) {
		fprintf (stderr, "bench-forward: %s\n", err.message);
		return 1;
	}
	for (int r = 0; r < runs; r++) {
		double t0 = now_ms ();
		bd_session_forward_batch (session, in, batch, height, size, out, &err);
		times[r] = now_ms () - t0;
		net[r] = session->backend->network_ms ? session->backend->network_ms (session) : -1.0;
	}
	qsort (times, (size_t) runs, sizeof *times, cmp_double);
	qsort (net, (size_t) runs, sizeof *net, cmp_double);
	double med = times[runs / 2];
	/* median_ms: the whole call, transfers of the float input and output included;
	 * network_ms (GPU only): the network on the device alone, as PyTorch's figures are. */
	double gflop = batch * flops (&spec, height, size) / 1e9, net_med = net[runs / 2];
	printf ("backdrop depth=%u width=%u size=%ux%u batch=%u device=\"%s\" median_ms=%.3f min_ms=%.3f "
	        "network_ms=%.3f gflop=%.2f gflops=%.1f images_per_s=%.1f network_images_per_s=%.1f\n",
	        depth, width, size, height, batch, bd_session_device_description (session), med, times[0], net_med,
	        gflop, gflop * 1e3 / med, batch * 1e3 / med, net_med > 0 ? batch * 1e3 / net_med : -1.0);
	free (net);
	free (in);
	free (out);
	free (times);
	bd_session_free (session);
	bd_model_free (model);
	return 0;
}
