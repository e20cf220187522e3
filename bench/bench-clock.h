/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmarks' clock, their sort for medians, and the median of a repeated call. */
#pragma once

#include <stdlib.h>
#include <time.h>

/* Milliseconds of the monotonic clock. */
static inline double
now_ms (void)
{
	struct timespec ts;
	clock_gettime (CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qsort's comparison for doubles, ascending. */
static inline int
cmp_double (const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return (x > y) - (x < y);
}

/* The median of @runs timings (at least one) of @run (@arg), after one untimed call. */
static inline double
median_ms_of (int runs, void (*run) (void *), void *arg)
{
	double *ms = malloc ((size_t) runs * sizeof *ms), m;
	run (arg);
	for (int r = 0; r < runs; r++) {
		double t0 = now_ms ();
		run (arg);
		if (ms)
			ms[r] = now_ms () - t0;
	}
	if (!ms)
		return -1;
	qsort (ms, (size_t) runs, sizeof *ms, cmp_double);
	m = ms[runs / 2];
	free (ms);
	return m;
}
