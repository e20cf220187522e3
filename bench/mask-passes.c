/* SPDX-License-Identifier: Apache-2.0 */
/* What the passes after the network cost on the host: the main-subject pass (its grid kept
 * between calls, as a session keeps it) and the decisive pass, on masks of 1 MP and 12 MP
 * with a subject, a passer-by and soft haze, median of 30.
 *
 *     bench/mask-passes [--threads N]
 *
 * Prints one line a pass and size: median_ms=... (docs/MODEL.md, "Decisive masks"). */
#include "backdrop-private.h"
#include "image/image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-clock.h"

/* A soft disc of alpha @peak at (cx, cy), radius r, edge width soft, drawn with max. */
static void
disc (uint8_t *m, uint32_t w, uint32_t h, double cx, double cy, double r, double soft, double peak)
{
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			double t = (r - hypot (x - cx, y - cy)) / soft + 0.5;
			double v = peak * (t < 0 ? 0 : t > 1 ? 1 : t);
			if (v > m[(size_t) y * w + x])
				m[(size_t) y * w + x] = (uint8_t) v;
		}
}

int
main (int argc, char **argv)
{
	int threads = 0;
	if (argc == 3 && strcmp (argv[1], "--threads") == 0)
		threads = atoi (argv[2]);
	else if (argc != 1) {
		fprintf (stderr, "usage: %s [--threads N]\n", argv[0]);
		return 2;
	}
	bd_thread_pool *pool = bd_thread_pool_new (threads);
	bd_scratch scratch = { NULL, 0 };
	static const uint32_t sizes[][2] = { { 816, 1224 }, { 2832, 4248 } };
	for (int s = 0; s < 2; s++) {
		uint32_t w = sizes[s][0], h = sizes[s][1];
		uint8_t *mask = calloc ((size_t) w * h, 1), *work = malloc ((size_t) w * h);
		disc (mask, w, h, 0.45 * w, 0.55 * h, 0.3 * w, 0.01 * w, 255);   /* the subject */
		disc (mask, w, h, 0.85 * w, 0.4 * h, 0.08 * w, 0.01 * w, 255);  /* a passer-by */
		disc (mask, w, h, 0.2 * w, 0.15 * h, 0.1 * w, 0.05 * w, 90);    /* haze */
		for (int pass = 0; pass < 2; pass++) {
			double t[30];
			for (int i = -3; i < 30; i++) {
				memcpy (work, mask, (size_t) w * h);
				double t0 = now_ms ();
				bd_status st = pass == 0
					? bd_mask_keep_main_subject (pool, &scratch, work, w, h, w, BD_MAIN_SUBJECT_FRACTION,
					                             BD_MAIN_SUBJECT_MIN_HEIGHT, NULL)
					: bd_mask_decide (pool, work, w, h, w, bd_decide_radius (w, h), NULL);
				if (st != BD_OK) {
					fprintf (stderr, "pass failed: %d\n", st);
					return 1;
				}
				if (i >= 0)
					t[i] = now_ms () - t0;
			}
			qsort (t, 30, sizeof *t, cmp_double);
			printf ("%-13s %4ux%-4u %.1f MP  median_ms=%.3f\n", pass ? "decisive" : "main-subject", w, h,
			        w * (double) h / 1e6, t[15]);
		}
		free (mask);
		free (work);
	}
	bd_scratch_free (&scratch);
	bd_thread_pool_free (pool);
	return 0;
}
