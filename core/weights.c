/* SPDX-License-Identifier: Apache-2.0 */
/* A model's weights as floats, for the backends that pack them so (core/model.c keeps them as
 * the file holds them, the shipped model in halves). */
#include "backdrop-private.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define WIDEN_F16C 1

/* Eight halves an instruction (F16C: every x86-64 processor since 2012), exact as
 * bd_half_to_float: the shipped model's 7.7 million in about 3 ms on one thread of the
 * 2-core Xeon, where the portable loop took 7. */
__attribute__ ((target ("f16c,avx"))) static void
widen_f16c (const uint16_t *h, float *dst, size_t n)
{
	size_t k = 0;
	for (; k + 8 <= n; k += 8)
		_mm256_storeu_ps (dst + k, _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) (h + k))));
	for (; k < n; k++)
		dst[k] = bd_half_to_float (h[k]);
}
#endif

size_t
bd_weight_count (const bd_weight *w)
{
	size_t n = 1;
	for (uint32_t d = 0; d < w->ndim; d++)
		n *= w->dims[d];   /* within the file, checked at load: no overflow */
	return n;
}

size_t
bd_model_largest_weight (const bd_model *m)
{
	size_t largest = 0;
	for (uint32_t l = 0; l < m->depth; l++) {
		/* The last level has no up-convolution or decoder: those are empty (rank 0). */
		const bd_weight *w[] = { &m->enc[l][0].weight, &m->enc[l][1].weight, &m->up[l].weight,
		                         &m->dec[l][0].weight, &m->dec[l][1].weight };
		for (size_t i = 0; i < BD_ARRAY_LEN (w); i++)
			if (w[i]->ndim && bd_weight_count (w[i]) > largest)
				largest = bd_weight_count (w[i]);
	}
	return largest;
}

/* Elements @from.. @to of @w into @dst + @from. */
static void
widen_range (const bd_weight *w, float *dst, size_t from, size_t to)
{
	if (!w->half) {
		const float *f = w->data;
		for (size_t k = from; k < to; k++)
			dst[k] = f[k];
		return;
	}
	const uint16_t *h = w->data;
#if defined(WIDEN_F16C)
	if (__builtin_cpu_supports ("f16c")) {
		widen_f16c (h + from, dst + from, to - from);
		return;
	}
#endif
	/* Without branches, so that it becomes vector code. */
	for (size_t k = from; k < to; k++)
		dst[k] = bd_half_to_float (h[k]);
}

#define PIECE ((size_t) 1 << 16)   /* elements a task widens */

typedef struct {
	const bd_weight *w;
	float           *dst;
	size_t           n;
} widen_job;

static void
widen_task (void *data, size_t index)
{
	const widen_job *j = data;
	size_t from = index * PIECE, to = from + PIECE < j->n ? from + PIECE : j->n;
	widen_range (j->w, j->dst, from, to);
}

void
bd_weight_widen (bd_thread_pool *pool, const bd_weight *w, float *dst)
{
	widen_job j = { w, dst, bd_weight_count (w) };
	bd_thread_pool_run (pool, (j.n + PIECE - 1) / PIECE, widen_task, &j);
}
