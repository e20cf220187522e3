/* SPDX-License-Identifier: Apache-2.0 */
/* The thread pool (core/thread-pool.c): every task of a job runs once, all of them before
 * bd_thread_pool_run returns, and a worker that wakes late never runs a task of a job that
 * is over. More workers than this machine has cores, and pauses longer than the pool's spin,
 * so that workers sleep and wake late. */
#include "backdrop-private.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	atomic_int *runs;      /* per task: how often it ran */
	size_t      slow;      /* the task that sleeps before it counts */
} job;

static atomic_long calls;  /* tasks run, over every job */

static void
count_task (void *data, size_t i)
{
	job *j = data;
	if (i == j->slow)
		g_usleep (300);
	atomic_fetch_add (&j->runs[i], 1);
	atomic_fetch_add (&calls, 1);
}

/* @jobs jobs of 1 to 96 tasks each on a pool of @threads; the job and its counts are freed
 * as the call returns, so that a late worker touching them shows under the sanitizers. */
static void
run_jobs (bd_thread_pool *pool, int jobs)
{
	GRand *rng = g_rand_new_with_seed (7);
	long expected = 0;
	atomic_store (&calls, 0);
	for (int n = 0; n < jobs; n++) {
		size_t count = (size_t) g_rand_int_range (rng, 1, 97);
		job *j = g_new0 (job, 1);
		j->runs = g_new0 (atomic_int, count);
		j->slow = g_rand_int_range (rng, 0, 4) == 0 ? (size_t) g_rand_int_range (rng, 0, (gint32) count) : count;
		bd_thread_pool_run (pool, count, count_task, j);
		for (size_t i = 0; i < count; i++)
			g_assert_cmpint (atomic_load (&j->runs[i]), ==, 1);
		expected += (long) count;
		g_assert_cmpint (atomic_load (&calls), ==, expected);
		g_free (j->runs);
		g_free (j);
		/* Now and then a pause past the spin: the workers go to sleep, and the next job
		 * starts while they wake. */
		if (g_rand_int_range (rng, 0, 8) == 0)
			g_usleep (200);
	}
	g_rand_free (rng);
}

static void
test_every_task_once (void)
{
	for (int threads = 1; threads <= 8; threads *= 2) {
		bd_thread_pool *pool = bd_thread_pool_new (threads);
		g_assert_nonnull (pool);
		g_assert_cmpint (bd_thread_pool_size (pool), ==, threads);
		run_jobs (pool, 1500);
		bd_thread_pool_free (pool);
	}
	run_jobs (NULL, 50);   /* no pool: the caller runs every task */
}

/* Two callers, each with a pool of its own, at once: the pools share nothing. */
static gpointer
caller_main (gpointer data)
{
	(void) data;
	bd_thread_pool *pool = bd_thread_pool_new (4);
	GRand *rng = g_rand_new_with_seed (11);
	for (int n = 0; n < 500; n++) {
		size_t count = (size_t) g_rand_int_range (rng, 1, 64);
		atomic_int *runs = g_new0 (atomic_int, count);
		job j = { runs, count };
		bd_thread_pool_run (pool, count, count_task, &j);
		for (size_t i = 0; i < count; i++)
			g_assert_cmpint (atomic_load (&runs[i]), ==, 1);
		g_free (runs);
	}
	g_rand_free (rng);
	bd_thread_pool_free (pool);
	return NULL;
}

static void
test_two_pools (void)
{
	GThread *a = g_thread_new ("caller-a", caller_main, NULL);
	GThread *b = g_thread_new ("caller-b", caller_main, NULL);
	g_thread_join (a);
	g_thread_join (b);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	g_test_add_func ("/core/thread-pool/every-task-once", test_every_task_once);
	g_test_add_func ("/core/thread-pool/two-pools", test_two_pools);
	return g_test_run ();
}
