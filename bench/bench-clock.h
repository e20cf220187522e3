/* SPDX-License-Identifier: Apache-2.0 */
/* The benchmarks' clock and their sort for medians. */
#pragma once

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
