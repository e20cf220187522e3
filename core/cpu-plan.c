/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU backend's memory: plans of blocked activation buffers laid out once per input size
 * (six kept: a photo's pass and its mirror pass run at two sizes, upright.c's quick passes at
 * two more, and a photo lying down turned at one more) in one arena they share. Within a
 * plan, buffers whose lives do not overlap share memory (plan_layout); concatenation costs no
 * copy: the encoder's output and the up-convolution write the two plane ranges of one
 * buffer. */
#include "cpu-backend-private.h"

#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* The floats' room that @elements values take as halves or floats (an even count: planes
 * hold whole pixels of 16). */
static size_t
floats_for (size_t elements, bool halves)
{
	return halves ? elements / 2 : elements;
}

/* Places a buffer of @channels at @height x @width after the plan's others, its rows and
 * planes those of @geo_height x @geo_width (at least as large), its values @halves or
 * floats. */
static bd_status
buffer_layout (cpu_plan *p, cpu_buffer *b, uint32_t channels, uint32_t height, uint32_t width,
               uint32_t geo_height, uint32_t geo_width, bool halves, bd_error *error)
{
	uint32_t planes = PLANES (channels);
	size_t row = ((size_t) geo_width + 2) * BD_LANES, plane, elements;
	if (!bd_size_mul (row, (size_t) geo_height + 2, &plane) || !bd_size_mul (plane, planes, &elements) ||
	    elements > SIZE_MAX / 2 - p->floats)
		return bd_error_set (error, BD_ERR_TOO_LARGE, "activation buffer too large");
	size_t floats = (floats_for (elements, halves) + 15) & ~(size_t) 15;   /* each buffer on a 64-byte line */
	b->offset = p->floats;
	b->floats = floats;
	b->planes = planes;
	b->halves = halves;
	b->view = (bd_cpu_view) {
		.data = NULL,
		.height = height, .width = width,
		.row_stride = row, .plane_stride = plane,
	};
	p->floats += floats;
	return BD_OK;
}

/* Points @b into @arena and, unless the arena is @fresh (all zero), zeroes the borders of its
 * first @planes planes, which another size's buffers may have written: kernels read them as
 * padding and write only inside. Planes a pass never touches are left alone, untouched pages
 * being free. */
static void
buffer_bind (cpu_buffer *b, float *arena, bool fresh, uint32_t planes)
{
	if (!b->floats)
		return;
	bd_cpu_view *v = &b->view;
	size_t origin = v->row_stride + BD_LANES, size = b->halves ? sizeof (uint16_t) : sizeof (float);
	v->data = b->halves ? NULL : arena + b->offset + origin;
	v->halves = b->halves ? (uint16_t *) (arena + b->offset) + origin : NULL;
	/* Zero is zero in both: the borders as bytes, an element @size of them. */
	uint8_t *start = (uint8_t *) (arena + b->offset);
	for (uint32_t pl = 0; !fresh && pl < planes && pl < b->planes; pl++) {
		uint8_t *top = start + pl * v->plane_stride * size;
		memset (top, 0, v->row_stride * size);
		memset (top + (size_t) (v->height + 1) * v->row_stride * size, 0, v->row_stride * size);
		for (uint32_t y = 0; y < v->height; y++) {
			uint8_t *left = top + (size_t) (y + 1) * v->row_stride * size;
			memset (left, 0, BD_LANES * size);
			memset (left + (size_t) (v->width + 1) * BD_LANES * size, 0, BD_LANES * size);
		}
	}
}

/* With @pairs (AMX sessions, forward_amx) the level's buffers are bf16 pairs of planes, a
 * pair in the bytes of one fp32 plane: cat and tmp use their first halves, and the input and
 * pooled buffers that lie over cat are not used (their pairs lie within that half). */
static void
plan_bind (cpu_plan *p, float *arena, uint32_t depth, bool fresh, bool pairs)
{
	uint32_t all = UINT32_MAX;
	buffer_bind (&p->input, arena, fresh, pairs && p->input.alias ? 0 : all);
	for (uint32_t l = 0; l < depth; l++) {
		buffer_bind (&p->pooled[l], arena, fresh, pairs && p->pooled[l].alias ? 0 : all);
		buffer_bind (&p->tmp[l], arena, fresh, pairs ? HALF (p->tmp[l].planes) : all);
		buffer_bind (&p->cat[l], arena, fresh, pairs ? 2 * HALF (p->cat[l].planes / 2) : all);
		/* Read only by 1x1 operations (the up-convolution, the head): no padding to zero. */
		buffer_bind (&p->out[l], arena, true, 0);
	}
}

/* Places a buffer of @channels, its values @halves or floats, over planes @first.. of @host
 * (same level, so the same geometry), where the two are never needed at once. */
static void
buffer_alias (cpu_buffer *b, const cpu_buffer *host, uint32_t first, uint32_t channels, bool halves)
{
	*b = *host;
	b->planes = PLANES (channels);
	b->offset = host->offset + floats_for ((size_t) first * host->view.plane_stride, host->halves);
	b->floats = floats_for ((size_t) b->planes * host->view.plane_stride, halves);
	b->halves = halves;
	b->alias = true;
}

/* Whether @channels in @halves or floats fit into planes @first.. of @host. */
static bool
alias_fits (const cpu_buffer *host, uint32_t first, uint32_t channels, bool halves)
{
	size_t plane = host->view.plane_stride;
	return floats_for ((size_t) PLANES (channels) * plane, halves) <=
	       floats_for ((size_t) (host->planes - first) * plane, host->halves);
}

/* Whether the buffers of levels @level and deeper can hold @bytes. A convolution at level
 * @level - 1 (or the up-convolution into it, which reads level @level) may put its integer
 * copy there: while it is read they are dead, written later in the encoder and read before
 * in the decoder, and the copy writes its own borders (to-integers.c), so what it leaves
 * there is never read as theirs. */
static bool
copy_room (const cpu_plan *p, uint32_t level, size_t bytes)
{
	return level <= BD_MAX_DEPTH && (p->floats - p->level_start[level]) * sizeof (float) >= bytes;
}

/* Buffers share memory where their lives do not overlap (the forward passes, cpu-backend.c):
 * a decoder block's output lies over its level's skip half of cat, which the block's first
 * convolution has consumed; the network's input and a level's pooled input lie over the up
 * half of cat, which the up-convolution writes only later in the decoder. A third less
 * memory for a photo to touch. */
static bd_status
plan_layout (cpu_plan *s, const bd_model *m, uint32_t height, uint32_t width, uint32_t geo_height,
             uint32_t geo_width, cpu_kernel kernel, bd_error *error)
{
	memset (s, 0, sizeof *s);
	bd_status st = BD_OK;
	/* Integer sessions keep activations as halves, all but the photo (ops.h). */
	bool halves = kernel == CPU_VNNI;
	for (uint32_t l = 0; l < m->depth && st == BD_OK; l++) {
		s->level_start[l] = s->floats;
		uint32_t h = height >> l, w = width >> l, gh = geo_height >> l, gw = geo_width >> l, c = m->widths[l];
		bool has_cat = l + 1 < m->depth;
		uint32_t in_channels = l > 0 ? m->widths[l - 1] : 3;
		if (has_cat)
			st = buffer_layout (s, &s->cat[l], 2 * PLANES (c) * BD_LANES, h, w, gh, gw, halves, error);
		/* On AMX, cat's pairs (skip | up) fill only its first half (forward_amx): a block's
		 * first convolution writes its pairs into the second, untouched otherwise, where
		 * the level's planes are even (the halves then end on a plane). The arena is a third
		 * smaller. */
		if (st == BD_OK && kernel == CPU_AMX && has_cat && PLANES (c) % 2 == 0)
			buffer_alias (&s->tmp[l], &s->cat[l], PLANES (c), c, false);
		/* Where every convolution reads a bf16 or integer copy of its input (conv3x3; on
		 * bf16 all but the first), a block's buffers are dead once copied: tmp lies over the
		 * skip half, which the block's second convolution writes only after copying tmp, and
		 * which the decoder's first convolution has copied before writing tmp. The level 0
		 * photo, in floats, lies over the up half (integer sessions use only its shape: their
		 * first convolution's copy is made from the photo itself). */
		else if (st == BD_OK && (kernel == CPU_BF16 || kernel == CPU_VNNI) && has_cat)
			buffer_alias (&s->tmp[l], &s->cat[l], 0, c, halves);
		else if (st == BD_OK)
			st = buffer_layout (s, &s->tmp[l], c, h, w, gh, gw, halves, error);
		cpu_buffer *in = l > 0 ? &s->pooled[l] : &s->input;
		bool in_halves = halves && l > 0;
		if (st == BD_OK && has_cat && alias_fits (&s->cat[l], PLANES (c), in_channels, in_halves))
			buffer_alias (in, &s->cat[l], PLANES (c), in_channels, in_halves);
		else if (st == BD_OK)
			st = buffer_layout (s, in, in_channels, h, w, gh, gw, in_halves, error);
		if (st == BD_OK && has_cat)
			buffer_alias (&s->out[l], &s->cat[l], 0, c, halves);
		else if (st == BD_OK)
			st = buffer_layout (s, &s->out[l], c, h, w, gh, gw, halves, error);
	}
	if (st != BD_OK) {
		memset (s, 0, sizeof *s);
		return st;
	}
	for (uint32_t l = m->depth; l <= BD_MAX_DEPTH; l++)
		s->level_start[l] = s->floats;
	/* Every convolution input is one whole buffer; the largest is cat[0] (or the
	 * bottleneck's at depth 1). With bf16 each is copied into the copy buffer; with
	 * integers, over the deeper levels' buffers where they hold it (integer_copy), so only
	 * the bottleneck's small copies need the copy buffer. On AMX the convolutions pass bf16
	 * pairs to each other (forward_amx) and nothing is copied. */
	for (uint32_t l = 0; (kernel == CPU_BF16 || kernel == CPU_VNNI) && l < m->depth; l++) {
		/* The level's 3x3 convolutions' inputs, and out[l], which the up-convolution of the
		 * level above reads (in 8 bits; the head reads out[0] as it is). Only the photo and
		 * tmp[0] are copied to 16 bits, for the encoder's two convolutions at full
		 * resolution (sixteen_bits, cpu-backend.c). */
		const cpu_buffer *in[] = { l > 0 ? &s->pooled[l] : kernel == CPU_VNNI ? &s->input : NULL, &s->tmp[l],
		                           &s->cat[l], l > 0 ? &s->out[l] : NULL };
		for (int i = 0; i < 4; i++) {
			if (!in[i])
				continue;
			size_t floats = in[i]->floats, bytes = bd_cpu_copy_bytes (in[i], l == 0 && i < 2);
			if (kernel == CPU_VNNI)
				floats = copy_room (s, l + 1, bytes) ? 0 : (bytes + 1) / 2;
			s->half_floats = floats > s->half_floats ? floats : s->half_floats;
		}
	}
	s->height = height;
	s->width = width;
	s->geo_height = geo_height;
	s->geo_width = geo_width;
	return BD_OK;
}

bd_status
bd_cpu_plan_for (cpu_state *s, const bd_model *m, uint32_t height, uint32_t width, bool bind, cpu_plan **out,
                 bd_error *error)
{
	const int n = (int) (sizeof s->plans / sizeof s->plans[0]);
	cpu_plan *p = NULL;
	for (int i = 0; i < n && !p; i++)
		if (s->plans[i].height == height && s->plans[i].width == width)
			p = &s->plans[i];
	if (!p) {
		p = &s->plans[0];
		for (int i = 1; i < n; i++)
			if (s->plans[i].last_used < p->last_used)
				p = &s->plans[i];
		if (s->bound == p)
			s->bound = NULL;
		/* Within another plan's geometry where that is not much larger (a photo's mirror
		 * pass, reserved first, is 9/8 of its size): the two passes then write the same
		 * pages, and the second touches almost none the first did not. */
		const cpu_plan *host = NULL;
		for (int i = 0; i < n; i++) {
			const cpu_plan *o = &s->plans[i];
			uint64_t area = (uint64_t) o->geo_height * o->geo_width;
			if (o != p && o->height && o->geo_height >= height && o->geo_width >= width &&
			    area <= 2 * (uint64_t) height * width &&
			    (!host || area < (uint64_t) host->geo_height * host->geo_width))
				host = o;
		}
		uint32_t gh = host ? host->geo_height : height, gw = host ? host->geo_width : width;
		bd_status st = plan_layout (p, m, height, width, gh, gw, s->kernel, error);
		if (st != BD_OK)
			return st;
	}
	if (p->floats > s->arena_floats || p->half_floats > s->half_floats) {
		/* Grown for the larger size; the other plans bind again when used. Fresh pages are
		 * zero, faulted in by the pool's threads before the first pass writes them
		 * (bd_cpu_arena_fault_in) or, where the kernel cannot, as it writes them. */
		size_t floats = p->floats > s->arena_floats ? p->floats : s->arena_floats;
		size_t half = p->half_floats > s->half_floats ? p->half_floats : s->half_floats;
		bd_cpu_plans_free (s);
		size_t bytes, half_bytes;
		bool sizes_ok = bd_size_mul (floats, sizeof (float), &bytes) && bd_size_mul (half, sizeof *s->half, &half_bytes);
		s->arena = sizes_ok ? bd_alloc_pages (bytes) : NULL;
		s->half = sizes_ok && half ? bd_alloc_pages (half_bytes) : NULL;
		s->arena_floats = s->arena ? floats : 0;
		s->half_floats = s->half ? half : 0;
		if (!s->arena || (half && !s->half)) {
			bd_cpu_plans_free (s);
			return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory for the network's %ux%u activations",
			                     width, height);
		}
		s->fresh = true;
		s->unfaulted = true;
	}
	if (bind && s->bound != p) {
		plan_bind (p, s->arena, m->depth, s->fresh, s->kernel == CPU_AMX);
		s->fresh = false;
		s->bound = p;
	}
	p->last_used = ++s->uses;
	*out = p;
	return BD_OK;
}

void *
bd_cpu_copy_space (const cpu_state *s, uint32_t level, size_t bytes)
{
	const cpu_plan *p = s->bound;
	return copy_room (p, level, bytes) ? (void *) (s->arena + p->level_start[level]) : (void *) s->half;
}

#if defined(__linux__)
/* The arena in 2 MB pieces for the pool's threads, each given the same advice. */
typedef struct {
	uint8_t *base;
	size_t   bytes;
	int      advice;
} arena_advice;

#define ADVICE_PIECE ((size_t) 2 << 20)

static void
advise_task (void *data, size_t piece)
{
	const arena_advice *c = data;
	size_t from = piece * ADVICE_PIECE, n = c->bytes - from < ADVICE_PIECE ? c->bytes - from : ADVICE_PIECE;
	madvise (c->base + from, n, c->advice);   /* refused: as if not asked (below) */
}

static void
advise_arena (const cpu_state *s, bd_thread_pool *pool, int advice)
{
	arena_advice c = { (uint8_t *) s->arena, s->arena_floats * sizeof (float), advice };
	bd_thread_pool_run (pool, (c.bytes + ADVICE_PIECE - 1) / ADVICE_PIECE, advise_task, &c);
}
#endif

/* The kernel takes a page for less in one call over 2 MB than at the page's own fault: a
 * lone photo's system time 116 -> 96 ms on two cores (docs/PERFORMANCE.md). Every page is
 * written by the pass that follows, except on AMX, which leaves a third of the arena
 * untouched (plan_layout) and is left to fault its pages as it writes them. Before Linux
 * 5.14 the kernel refuses, and the pages are faulted as written. */
void
bd_cpu_arena_fault_in (cpu_state *s, bd_thread_pool *pool)
{
	if (!s->unfaulted)
		return;
	s->unfaulted = false;
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
	if (s->kernel != CPU_AMX)
		advise_arena (s, pool, MADV_POPULATE_WRITE);
#else
	(void) pool;
#endif
}

/* The arena's pages given back by the pool's threads side by side, before the one thread
 * unmaps what is then empty: unmapping a portrait's 113 MB alone took 5-8 ms of a lone
 * call's end on the 2-core Xeon, given back on two threads 3-5 (docs/PERFORMANCE.md). */
void
bd_cpu_arena_release (cpu_state *s, bd_thread_pool *pool)
{
#if defined(__linux__)
	if (s->arena)
		advise_arena (s, pool, MADV_DONTNEED);
#else
	(void) s;
	(void) pool;
#endif
}

void
bd_cpu_plans_free (cpu_state *s)
{
	bd_free_pages (s->arena, s->arena_floats * sizeof (float));
	bd_free_pages (s->half, s->half_floats * sizeof *s->half);
	s->arena = NULL;
	s->half = NULL;
	s->arena_floats = s->half_floats = 0;
	s->bound = NULL;
}
