/* SPDX-License-Identifier: Apache-2.0 */
/* A small fixed pool: the caller and (threads - 1) workers share each job's indices
 * through one atomic counter, so uneven tasks balance themselves. */
#include "backdrop-private.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* How long a thread waits awake for the next job, or for the workers to finish one, before
 * it sleeps: a forward pass's ops follow one another within microseconds, and waking a
 * sleeping thread took tens of them on the 2-core virtual machine. Short, and without
 * yielding: with more threads than cores (a folder's lanes, two programs) every spin is
 * time taken from another thread, and a sched_yield loop there cost more than it saved
 * (docs/PERFORMANCE.md). */
#define SPIN_NS 50000

struct bd_thread_pool {
	int             n_threads;
	pthread_t      *workers;
	pthread_mutex_t lock;
	pthread_cond_t  wake;
	pthread_cond_t  done;
	/* The current job, guarded by lock except for the counters. */
	bd_task_fn      fn;
	void           *ctx;
	size_t          count;
	atomic_size_t   next;
	atomic_int      busy;        /* workers still inside the job */
	atomic_ulong    generation;  /* bumped for every job so sleepers know it is new */
	atomic_bool     stopping;
};

static uint64_t
now_ns (void)
{
	struct timespec t;
	clock_gettime (CLOCK_MONOTONIC, &t);
	return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static inline void
pause_briefly (void)
{
#if defined(__x86_64__) || defined(__i386__)
	_mm_pause ();
#endif
}

/* Spins until a job newer than @seen is posted, the pool stops, or SPIN_NS pass. */
static void
spin_for_job (bd_thread_pool *pool, unsigned long seen)
{
	uint64_t start = now_ns (), now = start;
	while (atomic_load (&pool->generation) == seen && !atomic_load (&pool->stopping) && now - start < SPIN_NS) {
		pause_briefly ();
		now = now_ns ();
	}
}

/* Spins until every worker has left the job, or SPIN_NS pass. */
static void
spin_for_workers (bd_thread_pool *pool)
{
	uint64_t start = now_ns (), now = start;
	while (atomic_load (&pool->busy) > 0 && now - start < SPIN_NS) {
		pause_briefly ();
		now = now_ns ();
	}
}

static void
run_tasks (bd_thread_pool *pool, bd_task_fn fn, void *ctx, size_t count)
{
	for (;;) {
		size_t i = atomic_fetch_add_explicit (&pool->next, 1, memory_order_relaxed);
		if (i >= count)
			break;
		fn (ctx, i);
	}
}

static void *
worker_main (void *data)
{
	bd_thread_pool *pool = data;
	unsigned long seen = 0;

	for (;;) {
		spin_for_job (pool, seen);
		pthread_mutex_lock (&pool->lock);
		while (!atomic_load (&pool->stopping) && atomic_load (&pool->generation) == seen)
			pthread_cond_wait (&pool->wake, &pool->lock);
		if (atomic_load (&pool->stopping)) {
			pthread_mutex_unlock (&pool->lock);
			break;
		}
		seen = atomic_load (&pool->generation);
		bd_task_fn fn = pool->fn;
		void *ctx = pool->ctx;
		size_t count = pool->count;
		pthread_mutex_unlock (&pool->lock);

		run_tasks (pool, fn, ctx, count);

		pthread_mutex_lock (&pool->lock);
		if (atomic_fetch_sub (&pool->busy, 1) == 1)
			pthread_cond_signal (&pool->done);
		pthread_mutex_unlock (&pool->lock);
	}
	return NULL;
}

bd_thread_pool *
bd_thread_pool_new (int threads)
{
	if (threads <= 0) {
		long n = sysconf (_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (int) n : 1;
	}
	if (threads > 256)
		threads = 256;

	bd_thread_pool *pool = calloc (1, sizeof *pool);
	if (!pool)
		return NULL;
	pool->n_threads = threads;
	pthread_mutex_init (&pool->lock, NULL);
	pthread_cond_init (&pool->wake, NULL);
	pthread_cond_init (&pool->done, NULL);
	pool->workers = calloc ((size_t) threads, sizeof *pool->workers);
	if (!pool->workers) {
		bd_thread_pool_free (pool);
		return NULL;
	}
	for (int i = 0; i < threads - 1; i++) {
		if (pthread_create (&pool->workers[i], NULL, worker_main, pool) != 0) {
			/* Fewer workers still work: the caller runs what they do not. */
			pool->n_threads = i + 1;
			break;
		}
	}
	return pool;
}

void
bd_thread_pool_free (bd_thread_pool *pool)
{
	if (!pool)
		return;
	if (pool->workers) {
		pthread_mutex_lock (&pool->lock);
		atomic_store (&pool->stopping, true);
		pthread_cond_broadcast (&pool->wake);
		pthread_mutex_unlock (&pool->lock);
		for (int i = 0; i < pool->n_threads - 1; i++)
			pthread_join (pool->workers[i], NULL);
	}
	pthread_cond_destroy (&pool->wake);
	pthread_cond_destroy (&pool->done);
	pthread_mutex_destroy (&pool->lock);
	free (pool->workers);
	free (pool);
}

int
bd_thread_pool_size (const bd_thread_pool *pool)
{
	return pool ? pool->n_threads : 1;
}

void
bd_thread_pool_run (bd_thread_pool *pool, size_t count, bd_task_fn fn, void *ctx)
{
	if (count == 0)
		return;
	if (!pool || pool->n_threads == 1 || count == 1) {
		for (size_t i = 0; i < count; i++)
			fn (ctx, i);
		return;
	}
	pthread_mutex_lock (&pool->lock);
	pool->fn = fn;
	pool->ctx = ctx;
	pool->count = count;
	atomic_store (&pool->next, 0);
	atomic_store (&pool->busy, pool->n_threads - 1);
	atomic_fetch_add (&pool->generation, 1);
	pthread_cond_broadcast (&pool->wake);
	pthread_mutex_unlock (&pool->lock);

	run_tasks (pool, fn, ctx, count);

	spin_for_workers (pool);
	pthread_mutex_lock (&pool->lock);
	while (atomic_load (&pool->busy) > 0)
		pthread_cond_wait (&pool->done, &pool->lock);
	pthread_mutex_unlock (&pool->lock);
}
