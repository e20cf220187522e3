/* SPDX-License-Identifier: Apache-2.0 */
/* What a video frame's host steps cost at 1080p: the temporal filter (bd_temporal_blend, one
 * call per neighbouring frame; then on luma planes, as the video stream runs it: the plane
 * made once a frame, and the blend of two planes; then in two steps, the map of the photo's
 * change, which the stream makes on its lanes, and the blend by it, which is left to the thread
 * that puts frames in order) and the decisive pass, median of 30, on one
 * thread and on a pool. The frames are noise with a still part and a moving one, as a camera gives; the
 * checksum of the filtered mask shows that a faster build gives the same bytes.
 *
 *     bench/video-steps [--threads N]
 *
 * docs/PERFORMANCE.md, "Video", has the figures. */
#include "backdrop-private.h"
#include "image/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-clock.h"

#define RUNS 30

static double
median (double *t)
{
	qsort (t, RUNS, sizeof *t, cmp_double);
	return t[RUNS / 2];
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
	const uint32_t w = 1920, h = 1080;
	const size_t n = (size_t) w * h;
	uint8_t *a = malloc (n * 4), *b = malloc (n * 4), *mask = malloc (n), *other = malloc (n), *work = malloc (n);
	uint8_t *la = malloc (n), *lb = malloc (n);
	uint16_t *change = malloc (n * sizeof *change);
	if (!a || !b || !mask || !other || !work || !la || !lb || !change)
		return 1;
	srand (1);
	for (size_t i = 0; i < n; i++) {
		uint32_t x = (uint32_t) (i % w);
		for (int c = 0; c < 4; c++) {
			a[4 * i + c] = (uint8_t) (x / 8 + rand () % 6);
			/* The right third moves (a shift of the pattern); the rest is still but for noise. */
			b[4 * i + c] = (uint8_t) ((x > 2 * w / 3 ? x + 24 : x) / 8 + rand () % 6);
		}
		mask[i] = (uint8_t) (x < w / 3 ? 0 : x < w / 2 ? (x - w / 3) * 255 / (w / 6) : 255);
		other[i] = (uint8_t) (mask[i] + rand () % 9 - 4 < 0 ? 0 : mask[i] + rand () % 9 - 4 > 255 ? 255 : mask[i] + rand () % 9 - 4);
	}
	bd_image pa = { a, w, h, (size_t) w * 4, BD_PIXEL_RGBA8 }, pb = { b, w, h, (size_t) w * 4, BD_PIXEL_RGBA8 };
	bd_thread_pool *pools[2] = { NULL, bd_thread_pool_new (threads) };
	for (int p = 0; p < 2; p++) {
		double tb[RUNS], td[RUNS], tl[RUNS], tbl[RUNS], tc[RUNS], tbc[RUNS];
		uint32_t sum = 0, sum_luma = 0, sum_change = 0;
		for (int i = -3; i < RUNS; i++) {
			memcpy (work, mask, n);
			double t0 = now_ms ();
			bd_status st = bd_temporal_blend_on_pool (pools[p], &pa, &pb, other, w, work, w, 0.75f, NULL);
			double t1 = now_ms ();
			if (i == 0)
				for (size_t k = 0; k < n; k++)
					sum = sum * 31 + work[k];
			if (st == BD_OK)
				st = bd_mask_decide (pools[p], work, w, h, w, bd_decide_radius (w, h), NULL);
			double t2 = now_ms ();
			if (st != BD_OK) {
				fprintf (stderr, "a step failed: %d\n", st);
				return 1;
			}
			memcpy (work, mask, n);
			double t3 = now_ms ();
			st = bd_luma_on_pool (pools[p], &pa, la, w, NULL);
			double t4 = now_ms ();
			if (st == BD_OK)
				st = bd_luma_on_pool (pools[p], &pb, lb, w, NULL);
			double t5 = now_ms ();
			if (st == BD_OK)
				st = bd_temporal_blend_luma_on_pool (pools[p], la, lb, w, w, h, other, w, work, w, 0.75f, NULL);
			double t6 = now_ms ();
			if (st != BD_OK) {
				fprintf (stderr, "a luma step failed: %d\n", st);
				return 1;
			}
			if (i == 0)
				for (size_t k = 0; k < n; k++)
					sum_luma = sum_luma * 31 + work[k];
			memcpy (work, mask, n);
			double t7 = now_ms ();
			st = bd_temporal_change_luma_on_pool (pools[p], la, lb, w, w, h, change, w, NULL);
			double t8 = now_ms ();
			if (st == BD_OK)
				st = bd_temporal_blend_change_on_pool (pools[p], change, w, w, h, other, w, work, w, 0.75f, NULL);
			double t9 = now_ms ();
			if (st != BD_OK) {
				fprintf (stderr, "a two-step blend failed: %d\n", st);
				return 1;
			}
			if (i == 0)
				for (size_t k = 0; k < n; k++)
					sum_change = sum_change * 31 + work[k];
			if (i >= 0) {
				tc[i] = t8 - t7;
				tbc[i] = t9 - t8;
				tb[i] = t1 - t0;
				td[i] = t2 - t1;
				tl[i] = t4 - t3;
				tbl[i] = t6 - t5;
			}
		}
		printf ("1920x1080, %s: temporal blend median_ms=%.2f, decisive median_ms=%.2f, blend checksum %08x\n",
		        p ? "pool" : "one thread", median (tb), median (td), sum);
		printf ("1920x1080, %s: luma plane median_ms=%.2f, blend of two planes median_ms=%.2f, checksum %08x%s\n",
		        p ? "pool" : "one thread", median (tl), median (tbl), sum_luma, sum_luma == sum ? " (the same)" : " (DIFFERS)");
		printf ("1920x1080, %s: map of change median_ms=%.2f, blend by the map median_ms=%.2f, checksum %08x%s\n",
		        p ? "pool" : "one thread", median (tc), median (tbc), sum_change,
		        sum_change == sum ? " (the same)" : " (DIFFERS)");
	}
	bd_thread_pool_free (pools[1]);
	free (a); free (b); free (mask); free (other); free (work); free (la); free (lb); free (change);
	return 0;
}
