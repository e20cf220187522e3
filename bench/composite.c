/* SPDX-License-Identifier: Apache-2.0 */
/* What a cut-out's compositing costs on the host, and how it spreads over cores: one 1 MP
 * composite on a pool of 1, 2, 4 … threads (as bd_session_composite runs it), then P
 * composites side by side, one thread each (as a batch's encoders could run them).
 *
 *     bench/composite [--photos-at-once P]
 *
 * Prints one line per way: median_ms per composite and composites/s. */
#include "backdrop-private.h"
#include "image/image.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-clock.h"

#define W 1333
#define H 750
#define RUNS 21

static uint8_t photo_px[(size_t) W * H * 3];
static uint8_t alpha[(size_t) W * H];

/* A photo with texture everywhere (never zeros) and a mask with a soft-edged subject: the
 * colour estimate works on the soft pixels, as on hair. */
static void
make_inputs (void)
{
	uint32_t seed = 12345;
	for (size_t i = 0; i < sizeof photo_px; i++) {
		seed = seed * 1664525u + 1013904223u;
		photo_px[i] = (uint8_t) ((i / 3 % W) / 6 + (seed >> 26));
	}
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++) {
			float dx = (x - 0.5f * W) / (0.22f * W), dy = (y - 0.6f * H) / (0.5f * H);
			float d = (1.0f - (dx * dx + dy * dy)) * 12.0f;   /* soft over about 8% of the radius */
			alpha[(size_t) y * W + x] = (uint8_t) (d <= 0 ? 0 : d >= 1 ? 255 : d * 255);
		}
}

typedef struct {
	bd_thread_pool *pool;
	uint8_t        *out;
	int             count;
} worker;

static void *
composite_many (void *data)
{
	worker *w = data;
	bd_image photo = { photo_px, W, H, (size_t) W * 3, BD_PIXEL_RGB8 };
	bd_background transparent = { .kind = BD_BACKGROUND_TRANSPARENT };
	for (int i = 0; i < w->count; i++)
		if (bd_composite_on_pool (w->pool, &photo, alpha, W, &transparent, w->out, (size_t) W * 4, NULL) != BD_OK) {
			fprintf (stderr, "composite failed\n");
			exit (1);
		}
	return NULL;
}

int
main (int argc, char **argv)
{
	long cores = sysconf (_SC_NPROCESSORS_ONLN);
	int at_once = (int) (cores > 0 ? cores : 1);
	if (argc == 3 && strcmp (argv[1], "--photos-at-once") == 0)
		at_once = atoi (argv[2]);
	else if (argc != 1 || at_once < 1) {
		fprintf (stderr, "usage: %s [--photos-at-once P]\n", argv[0]);
		return 2;
	}
	make_inputs ();

	/* One composite at a time on a pool of n threads. */
	for (int n = 1; n <= cores; n *= 2) {
		worker w = { bd_thread_pool_new (n), malloc ((size_t) W * H * 4), 1 };
		double t[RUNS];
		for (int i = -2; i < RUNS; i++) {
			double t0 = now_ms ();
			composite_many (&w);
			if (i >= 0)
				t[i] = now_ms () - t0;
		}
		qsort (t, RUNS, sizeof *t, cmp_double);
		printf ("one at a time, pool of %2d threads  median_ms=%.2f  composites_per_s=%.1f\n", n,
		        t[RUNS / 2], 1000.0 / t[RUNS / 2]);
		bd_thread_pool_free (w.pool);
		free (w.out);
	}

	/* @at_once composites side by side, each on its own thread alone. */
	pthread_t *threads = calloc ((size_t) at_once, sizeof *threads);
	worker *workers = calloc ((size_t) at_once, sizeof *workers);
	for (int i = 0; i < at_once; i++)
		workers[i] = (worker) { NULL, malloc ((size_t) W * H * 4), RUNS };
	double t0 = now_ms ();
	for (int i = 0; i < at_once; i++)
		pthread_create (&threads[i], NULL, composite_many, &workers[i]);
	for (int i = 0; i < at_once; i++)
		pthread_join (threads[i], NULL);
	double ms = now_ms () - t0;
	printf ("%2d at once, one thread each         per_composite_ms=%.2f  composites_per_s=%.1f\n", at_once,
	        ms / RUNS, at_once * RUNS * 1000.0 / ms);
	for (int i = 0; i < at_once; i++)
		free (workers[i].out);
	free (workers);
	free (threads);
	return 0;
}
