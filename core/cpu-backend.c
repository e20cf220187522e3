/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU backend: plans of blocked activation buffers laid out once per input size (six
 * kept: a photo's pass and its mirror pass run at two sizes, upright.c's quick passes at two
 * more, and a photo lying down turned at one more) in one arena they share, and
 * the U-Net forward pass over the ops in core/ops/. Concatenation costs no copy: the
 * encoder's output and the up-convolution write the two plane ranges of one buffer. */
#include "ops/ops.h"

#include <stdlib.h>
#include <string.h>

#define PLANES(c) (((c) + BD_LANES - 1) / BD_LANES)
#define HALF(planes) (((planes) + 1) / 2)   /* bf16 pairs of that many planes */

/* What runs the 3x3 convolutions but the first: fp32 (exact precision, or fast where nothing
 * else pays), bf16 dot products (AVX-512 BF16 on AMD), bf16 tiles (AMX on Intel, which also
 * runs the up-convolutions), or integer dot products (AVX-512 VNNI on Intel without AMX: 16
 * bits at full resolution, 8 below and for the up-convolutions). */
typedef enum { CPU_FP32, CPU_BF16, CPU_AMX, CPU_VNNI } cpu_kernel;

typedef struct {
	size_t   offset;    /* floats from the arena's start */
	size_t   floats;
	bd_cpu_view view;   /* all planes; data points into the arena while the plan is bound */
	uint32_t planes;
	bool     alias;     /* lies over another buffer's planes (buffer_alias) */
} cpu_buffer;

/* Buffers for one input size (see plan_for), laid out for a geometry at least that size:
 * its own, or another plan's, so that both passes of a photo use the same memory. */
typedef struct {
	uint32_t    height, width;
	uint32_t    geo_height, geo_width;   /* the rows and planes are this size's */
	uint64_t    last_used;
	size_t      floats;                /* the arena it needs */
	size_t      half_floats;           /* bf16 and integer sessions: the copies that need the copy buffer */
	size_t      level_start[BD_MAX_DEPTH + 1];   /* where each level's buffers begin; the end */
	cpu_buffer  input;                 /* level 0, 3 channels */
	cpu_buffer  pooled[BD_MAX_DEPTH];  /* level l's input, l >= 1 */
	cpu_buffer  tmp[BD_MAX_DEPTH];     /* first conv of a block */
	cpu_buffer  cat[BD_MAX_DEPTH];     /* skip | up, levels 0..depth-2 */
	cpu_buffer  out[BD_MAX_DEPTH];     /* a block's output: decoder, or the bottleneck */
} cpu_plan;

typedef struct {
	/* Weights, packed once per session. */
	bd_cpu_conv enc[BD_MAX_DEPTH][2];
	bd_cpu_conv up[BD_MAX_DEPTH][4];
	bd_cpu_conv dec[BD_MAX_DEPTH][2];
	/* The six input sizes used last: a photo runs at two (mirror averaging), upright.c's
	 * quick looks at two more and, for a photo lying down, its run turned at one more (no
	 * mirror pass), which leaves one for a folder's other shape; fewer plans would be
	 * remade for every photo of a folder. Their buffers share one arena (a forward pass
	 * keeps nothing for the next): with plan_layout's sharing, about 165 MB instead of
	 * 480 MB for the shipped model in fp32 (110 MB on AMX, 113 MB beside the bf16 or
	 * integer copy), and half the page faults of a lone photo (docs/ARCHITECTURE.md). A smaller size is laid out in a larger one's rows and planes
	 * (plan_for), so a photo's second pass finds its pages already faulted in. */
	cpu_plan    plans[6];
	cpu_plan   *bound;      /* the plan whose views point into the arena, borders zeroed */
	bool        fresh;      /* the arena is all zero: no plan has been bound to it yet */
	float      *arena;
	size_t      arena_floats;
	uint16_t   *half;       /* bf16 and integer sessions: a convolution's input in 16 or 8 bits */
	size_t      half_floats;
	uint64_t    uses;
	cpu_kernel  kernel;     /* for the 3x3 convolutions but the first */
	float      *head_weight;   /* the head's, widened */
	float       head_bias;
} cpu_state;

/* Places a buffer of @channels at @height x @width after the plan's others, its rows and
 * planes those of @geo_height x @geo_width (at least as large). */
static bd_status
buffer_layout (cpu_plan *p, cpu_buffer *b, uint32_t channels, uint32_t height, uint32_t width,
               uint32_t geo_height, uint32_t geo_width, bd_error *error)
{
	uint32_t planes = PLANES (channels);
	size_t row = ((size_t) geo_width + 2) * BD_LANES, plane, floats;
	if (!bd_size_mul (row, (size_t) geo_height + 2, &plane) || !bd_size_mul (plane, planes, &floats) ||
	    floats > SIZE_MAX / 2 - p->floats)
		return bd_error_set (error, BD_ERR_TOO_LARGE, "activation buffer too large");
	floats = (floats + 15) & ~(size_t) 15;   /* each buffer on a 64-byte line */
	b->offset = p->floats;
	b->floats = floats;
	b->planes = planes;
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
	v->data = arena + b->offset + v->row_stride + BD_LANES;
	for (uint32_t pl = 0; !fresh && pl < planes && pl < b->planes; pl++) {
		float *top = v->data + pl * v->plane_stride - v->row_stride - BD_LANES;
		memset (top, 0, v->row_stride * sizeof *top);
		memset (top + (size_t) (v->height + 1) * v->row_stride, 0, v->row_stride * sizeof *top);
		for (uint32_t y = 0; y < v->height; y++) {
			float *left = top + (size_t) (y + 1) * v->row_stride;
			memset (left, 0, BD_LANES * sizeof *left);
			memset (left + (size_t) (v->width + 1) * BD_LANES, 0, BD_LANES * sizeof *left);
		}
	}
}

static bd_cpu_view
planes_of (const cpu_buffer *b, uint32_t first)
{
	bd_cpu_view v = b->view;
	v.data += (size_t) first * v.plane_stride;
	return v;
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

/* Places a buffer of @channels over planes @first.. of @host (same level, so the same
 * geometry), where the two are never needed at once. */
static void
buffer_alias (cpu_buffer *b, const cpu_buffer *host, uint32_t first, uint32_t channels)
{
	*b = *host;
	b->planes = PLANES (channels);
	b->offset = host->offset + (size_t) first * host->view.plane_stride;
	b->floats = (size_t) b->planes * host->view.plane_stride;
	b->alias = true;
}

/* The bytes of an integer copy of @b (to-integers.c): in 16 bits for the 3x3 convolutions
 * at full resolution, else in 8 (pack_conv3x3, cpu_init). */
static size_t
copy_bytes (const cpu_buffer *b, bool int16)
{
	return (size_t) b->planes * b->view.plane_stride * (int16 ? 2 : 1);
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

/* Buffers share memory where their lives do not overlap (the forward pass in cpu_forward_one):
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
	for (uint32_t l = 0; l < m->depth && st == BD_OK; l++) {
		s->level_start[l] = s->floats;
		uint32_t h = height >> l, w = width >> l, gh = geo_height >> l, gw = geo_width >> l, c = m->widths[l];
		bool has_cat = l + 1 < m->depth;
		uint32_t in_channels = l > 0 ? m->widths[l - 1] : 3;
		if (has_cat)
			st = buffer_layout (s, &s->cat[l], 2 * PLANES (c) * BD_LANES, h, w, gh, gw, error);
		/* On AMX, cat's pairs (skip | up) fill only its first half (forward_amx): a block's
		 * first convolution writes its pairs into the second, untouched otherwise, where
		 * the level's planes are even (the halves then end on a plane). The arena is a third
		 * smaller, and fewer of its large pages, faulted in whole for a byte, lie half used. */
		if (st == BD_OK && kernel == CPU_AMX && has_cat && PLANES (c) % 2 == 0)
			buffer_alias (&s->tmp[l], &s->cat[l], PLANES (c), c);
		/* Where every convolution but the first reads a bf16 or integer copy of its input
		 * (conv3x3), a block's fp32 buffers are dead once copied: tmp lies over the skip
		 * half, which the block's second convolution writes only after copying tmp, and
		 * which the decoder's first convolution has copied before writing tmp. The level
		 * 0 photo, read in fp32 by the first convolution, lies over the up half. */
		else if (st == BD_OK && (kernel == CPU_BF16 || kernel == CPU_VNNI) && has_cat)
			buffer_alias (&s->tmp[l], &s->cat[l], 0, c);
		else if (st == BD_OK)
			st = buffer_layout (s, &s->tmp[l], c, h, w, gh, gw, error);
		cpu_buffer *in = l > 0 ? &s->pooled[l] : &s->input;
		if (st == BD_OK && has_cat && PLANES (in_channels) <= PLANES (c))
			buffer_alias (in, &s->cat[l], PLANES (c), in_channels);
		else if (st == BD_OK)
			st = buffer_layout (s, in, in_channels, h, w, gh, gw, error);
		if (st == BD_OK && has_cat)
			buffer_alias (&s->out[l], &s->cat[l], 0, c);
		else if (st == BD_OK)
			st = buffer_layout (s, &s->out[l], c, h, w, gh, gw, error);
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
		 * level above reads (in 8 bits; the head reads out[0] as it is). */
		const cpu_buffer *in[] = { &s->pooled[l], &s->tmp[l], &s->cat[l], l > 0 ? &s->out[l] : NULL };
		for (int i = 0; i < 4; i++) {
			if (!in[i])
				continue;
			size_t floats = in[i]->floats, bytes = copy_bytes (in[i], l == 0 && i < 3);
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

/* The plan for this size: a kept one, or a new one in place of the one used longest ago;
 * the arena grown to hold it, and with @bind the plan bound to it. */
static bd_status
plan_for (cpu_state *s, const bd_model *m, uint32_t height, uint32_t width, bool bind, cpu_plan **out,
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
		 * zero and faulted in by the pool's threads as the first pass writes them. */
		bd_free_pages (s->arena, s->arena_floats * sizeof (float));
		bd_free_pages (s->half, s->half_floats * sizeof *s->half);
		size_t floats = p->floats > s->arena_floats ? p->floats : s->arena_floats;
		size_t half = p->half_floats > s->half_floats ? p->half_floats : s->half_floats;
		size_t bytes, half_bytes;
		bool sizes_ok = bd_size_mul (floats, sizeof (float), &bytes) && bd_size_mul (half, sizeof *s->half, &half_bytes);
		s->arena = sizes_ok ? bd_alloc_pages (bytes) : NULL;
		s->half = sizes_ok && half ? bd_alloc_pages (half_bytes) : NULL;
		s->arena_floats = s->arena ? floats : 0;
		s->half_floats = s->half ? half : 0;
		s->bound = NULL;
		if (!s->arena || (half && !s->half)) {
			bd_free_pages (s->arena, s->arena_floats * sizeof (float));
			bd_free_pages (s->half, s->half_floats * sizeof *s->half);
			s->arena = NULL;
			s->half = NULL;
			s->arena_floats = s->half_floats = 0;
			return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory for the network's %ux%u activations",
			                     width, height);
		}
		s->fresh = true;
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

/* A tensor's values as floats for bd_cpu_conv_pack, in memory kept across a session's
 * tensors: made once for the largest, not once for the whole model. */
typedef struct {
	float  *data;
	size_t  count;
} widened;

static const float *
widen_into (bd_thread_pool *pool, widened *into, const bd_weight *w)
{
	size_t n = bd_weight_count (w);
	if (n > into->count) {
		bd_free_aligned (into->data);
		into->data = bd_alloc_aligned (n, sizeof *into->data);
		into->count = into->data ? n : 0;
	}
	if (into->data)
		bd_weight_widen (pool, w, into->data);
	return into->data;
}

/* A 3x3 convolution's weights for @kernel: fp32, fp32 with a bf16 copy, or for AMX or an
 * integer kernel alone, each from the model's values widened into @scratch. The network's
 * first convolution stays fp32 (@first): three input channels gain nothing from pairs, and
 * the photo itself keeps its 8 bits. With integers, the convolutions at full resolution
 * (@level 0) take 16 bits, the others 8: at 8 bits the edges and the smallest people lost a
 * little (docs/PERFORMANCE.md). */
static bd_status
pack_conv3x3 (bd_thread_pool *pool, cpu_kernel kernel, uint32_t level, bool first, bd_cpu_conv *c,
              const bd_conv_weights *w, const uint32_t *in_map, uint32_t in_storage, widened *scratch,
              bd_error *error)
{
	uint32_t cout = w->weight.dims[0], cin = w->weight.dims[1];
	const float *weights = widen_into (pool, &scratch[0], &w->weight), *bias = widen_into (pool, &scratch[1], &w->bias);
	if (!weights || !bias)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
#if defined(BD_HAVE_AMX_KERNELS)
	if (kernel == CPU_AMX && !first)
		return bd_cpu_conv_pack_amx (pool, c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map,
		                             in_storage, error);
#endif
#if defined(BD_HAVE_VNNI_KERNELS)
	if (kernel == CPU_VNNI && !first)
		return level == 0 ? bd_cpu_conv_pack_int16 (pool, c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1,
		                                            in_map, in_storage, error)
		                  : bd_cpu_conv_pack_int8 (pool, c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1,
		                                           in_map, in_storage, error);
#endif
	bd_status st = bd_cpu_conv_pack (c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map, in_storage,
	                                 error);
#if defined(BD_HAVE_BF16_KERNELS)
	if (st == BD_OK && kernel == CPU_BF16 && !first)
		st = bd_cpu_conv_pack_bf16 (c, error);
#endif
	(void) first;
	(void) level;
	return st;
}

/* Fast precision in bf16 where the CPU runs it faster than fp32: on AMX first (Intel, where
 * AVX-512 BF16 alone is slower than fp32), else with AVX-512 BF16 on AMD; on Intel without
 * AMX in integers (AVX-512 VNNI). */
static cpu_kernel
pick_kernel (bd_precision precision)
{
	if (precision != BD_PRECISION_FAST)
		return CPU_FP32;
#if defined(BD_HAVE_AMX_KERNELS)
	if (bd_cpu_amx_usable ())
		return CPU_AMX;
#endif
#if defined(BD_HAVE_BF16_KERNELS)
	if (bd_cpu_bf16_pays ())
		return CPU_BF16;
#endif
#if defined(BD_HAVE_VNNI_KERNELS)
	if (bd_cpu_vnni_pays ())
		return CPU_VNNI;
#endif
	return CPU_FP32;
}

static void cpu_destroy (bd_session *session);

static bd_status
cpu_init (bd_session *session, bd_error *error)
{
	const bd_model *m = session->model;
	cpu_state *s = calloc (1, sizeof *s);
	if (!s)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	session->backend_data = s;

	bd_status st = BD_OK;
	bd_thread_pool *pool = session->pool;
	cpu_kernel k = s->kernel = pick_kernel (session->options.precision);
	uint32_t *map = NULL;
	/* A tensor's weights and bias as floats, made at once for the largest (the tensors come
	 * smallest first: grown for each, every one would fault in fresh memory). */
	widened scratch[2] = { { NULL, 0 }, { NULL, 0 } };
	size_t largest = bd_model_largest_weight (m);
	scratch[0].data = bd_alloc_aligned (largest, sizeof (float));
	scratch[0].count = scratch[0].data ? largest : 0;
	for (uint32_t l = 0; l < m->depth && st == BD_OK; l++) {
		uint32_t cin = l == 0 ? 3 : m->widths[l - 1];
		st = pack_conv3x3 (pool, k, l, l == 0, &s->enc[l][0], &m->enc[l][0], NULL, cin, scratch, error);
		if (st == BD_OK)
			st = pack_conv3x3 (pool, k, l, false, &s->enc[l][1], &m->enc[l][1], NULL, m->widths[l], scratch, error);
	}
	for (uint32_t l = 0; l + 1 < m->depth && st == BD_OK; l++) {
		uint32_t c = m->widths[l], cn = m->widths[l + 1];
		/* Up-convolution weights are [cin, cout, 2, 2]: one 1x1 convolution per tap. */
		const float *up = widen_into (pool, &scratch[0], &m->up[l].weight);
		const float *bias = widen_into (pool, &scratch[1], &m->up[l].bias);
		if (!up || !bias) {
			st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
			break;
		}
		for (int t = 0; t < 4 && st == BD_OK; t++) {
#if defined(BD_HAVE_AMX_KERNELS)
			if (k == CPU_AMX) {
				st = bd_cpu_conv_pack_amx (pool, &s->up[l][t], up + t, bias, c, cn, 1, 4, (size_t) c * 4, 0, NULL,
				                           cn, error);
				continue;
			}
#endif
#if defined(BD_HAVE_VNNI_KERNELS)
			/* In 8 bits at every level: their inputs are below full resolution. */
			if (k == CPU_VNNI) {
				st = bd_cpu_conv_pack_int8 (pool, &s->up[l][t], up + t, bias, c, cn, 1, 4, (size_t) c * 4, 0, NULL,
				                            cn, error);
				continue;
			}
#endif
			st = bd_cpu_conv_pack (&s->up[l][t], up + t, bias, c, cn, 1, 4, (size_t) c * 4, 0, NULL, cn, error);
		}
		/* The decoder reads skip | up, the up half starting on a fresh plane. */
		free (map);
		map = malloc (2 * (size_t) c * sizeof *map);
		if (!map) {
			st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
			break;
		}
		/* On AMX in pairs of planes: the up half starts on a fresh pair. */
		uint32_t up_start = k == CPU_AMX ? HALF (PLANES (c)) * 2 * BD_LANES : PLANES (c) * BD_LANES;
		for (uint32_t ci = 0; ci < 2 * c; ci++)
			map[ci] = ci < c ? ci : up_start + (ci - c);
		if (st == BD_OK)
			st = pack_conv3x3 (pool, k, l, false, &s->dec[l][0], &m->dec[l][0], map, up_start + c, scratch, error);
		if (st == BD_OK)
			st = pack_conv3x3 (pool, k, l, false, &s->dec[l][1], &m->dec[l][1], NULL, c, scratch, error);
	}
	/* The head's weights, read every run. */
	if (st == BD_OK && !(s->head_weight = malloc (m->widths[0] * sizeof *s->head_weight)))
		st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	if (st == BD_OK) {
		bd_weight_widen (NULL, &m->head.weight, s->head_weight);
		s->head_bias = bd_weight_at (&m->head.bias, 0);
	}
	bd_free_aligned (scratch[0].data);
	bd_free_aligned (scratch[1].data);
	free (map);
	if (st != BD_OK)
		cpu_destroy (session);
	return st;
}

const char *
bd_cpu_backend_low_precision (const bd_session *session)
{
	const cpu_state *s = session->backend_data;
	if (!s || s->kernel == CPU_FP32)
		return NULL;
	return s->kernel == CPU_AMX ? "AMX BF16" : s->kernel == CPU_VNNI ? "AVX-512 VNNI int8/int16" : "AVX-512 BF16";
}

static void
cpu_destroy (bd_session *session)
{
	cpu_state *s = session->backend_data;
	if (!s)
		return;
	for (int l = 0; l < BD_MAX_DEPTH; l++) {
		bd_cpu_conv_clear (&s->enc[l][0]);
		bd_cpu_conv_clear (&s->enc[l][1]);
		bd_cpu_conv_clear (&s->dec[l][0]);
		bd_cpu_conv_clear (&s->dec[l][1]);
		for (int t = 0; t < 4; t++)
			bd_cpu_conv_clear (&s->up[l][t]);
	}
	bd_free_pages (s->arena, s->arena_floats * sizeof (float));
	bd_free_pages (s->half, s->half_floats * sizeof *s->half);
	free (s->head_weight);
	free (s);
	session->backend_data = NULL;
}

#if defined(BD_HAVE_VNNI_KERNELS)
/* Where an integer copy of @bytes goes: over the bound plan's buffers of level @level and
 * deeper where they hold it (copy_room), else into the copy buffer. */
static void *
copy_space (const cpu_state *s, uint32_t level, size_t bytes)
{
	const cpu_plan *p = s->bound;
	return copy_room (p, level, bytes) ? (void *) (s->arena + p->level_start[level]) : (void *) s->half;
}
#endif

/* A 3x3 convolution at @level over the whole buffer @in: in bf16 or integers when its
 * weights are such. Integers copy @in at its range @in_range where the kernels that wrote it
 * found it (else measured), and widen @out_range to their outputs' range: true then. */
static bool
conv3x3 (bd_thread_pool *pool, cpu_state *s, uint32_t level, const bd_cpu_conv *conv, const cpu_buffer *in,
         const bd_range *in_range, const bd_cpu_view *out, bd_range *out_range)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (conv->weights_int8) {
		uint8_t *copy = copy_space (s, level + 1, copy_bytes (in, false));
		bd_cpu_view_int8 q = bd_to_int8 (pool, &in->view, in->planes, in_range, copy);
		bd_conv_run_int8 (pool, conv, &q, out, 1, true, out_range);
		return true;
	}
	if (conv->weights_int16) {
		int16_t *copy = copy_space (s, level + 1, copy_bytes (in, true));
		bd_cpu_view_int16 q = bd_to_int16 (pool, &in->view, in->planes, conv->int16_levels, in_range, copy);
		bd_conv_run_int16 (pool, conv, &q, out, 1, true, out_range);
		return true;
	}
#endif
#if defined(BD_HAVE_BF16_KERNELS)
	if (conv->weights_bf16) {
		bd_cpu_view_bf16 half = bd_to_bf16 (pool, &in->view, in->planes, s->half);
		bd_conv2d_bf16 (pool, conv, &half, out, true);
		return false;
	}
#endif
	(void) s;
	(void) level;
	(void) in_range;
	(void) out_range;
	bd_conv2d (pool, conv, &in->view, out, true);
	return false;
}

/* The up-convolution into @level from the whole buffer @in (level @level + 1): in 8-bit
 * integers when its taps are such, with the ranges as conv3x3's. */
static bool
up_conv (bd_thread_pool *pool, cpu_state *s, uint32_t level, const bd_cpu_conv taps[4], const cpu_buffer *in,
         const bd_range *in_range, const bd_cpu_view *out, bd_range *out_range)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (taps[0].weights_int8) {
		uint8_t *copy = copy_space (s, level + 2, copy_bytes (in, false));
		bd_cpu_view_int8 q = bd_to_int8 (pool, &in->view, in->planes, in_range, copy);
		bd_conv_transpose2x2_int8 (pool, taps, &q, out, out_range);
		return true;
	}
#endif
	(void) s;
	(void) level;
	(void) in_range;
	(void) out_range;
	bd_conv_transpose2x2 (pool, taps, &in->view, out);
	return false;
}

/* Reports progress after each layer; false when the caller asked to cancel. */
static bool
step (const bd_run_options *opts, int *done, int total)
{
	++*done;
	return !(opts && opts->progress && opts->progress ((float) *done / (float) total, opts->user_data));
}

typedef struct {
	const bd_cpu_view *in;
	const float       *input;
} fill_ctx;

static void
fill_row (void *data, size_t y)
{
	const fill_ctx *c = data;
	const bd_cpu_view *in = c->in;
	size_t hw = (size_t) in->height * in->width;
	const float *src = c->input + y * in->width;
	float *row = in->data + y * in->row_stride;
	for (uint32_t x = 0; x < in->width; x++) {
		float *px = row + (size_t) x * BD_LANES;
		for (int ch = 0; ch < 3; ch++)
			px[ch] = src[ch * hw + x];
		memset (px + 3, 0, (BD_LANES - 3) * sizeof *px);
	}
}

/* The photo's three channels go to lanes 0..2 of @in's first plane; the other lanes are set
 * to zero too, since the other size's buffers may have left data there. A row a task: the
 * rows are the first pages a fresh arena's pass touches. */
static void
fill_input (bd_thread_pool *pool, const bd_cpu_view *in, const float *input)
{
	fill_ctx c = { in, input };
	bd_thread_pool_run (pool, in->height, fill_row, &c);
}

/* The forward pass up to the head, in fp32 or with bf16 (AVX-512 BF16) or integer (AVX-512
 * VNNI) copies of the convolutions' inputs; false when cancelled. The integer kernels find
 * the range of what they write (a level's cat: its skip and up halves together), so only
 * the inputs that fp32 and the pooling write are measured before their copies. */
static bool
forward_blocked (cpu_state *state, const bd_model *m, cpu_plan *p, bd_thread_pool *pool,
                 const bd_run_options *opts, int *done, int total)
{
	uint32_t D = m->depth;
	bd_range cat[BD_MAX_DEPTH], out[BD_MAX_DEPTH], tmp;
	bool cat_found[BD_MAX_DEPTH], out_found[BD_MAX_DEPTH], tmp_found;
	const cpu_buffer *x = &p->input;
	for (uint32_t l = 0; l < D; l++) {
		if (l > 0) {
			bd_cpu_view skip = planes_of (&p->cat[l - 1], 0);
			bd_maxpool2x2 (pool, p->pooled[l].planes, &skip, &p->pooled[l].view);
			x = &p->pooled[l];
		}
		bd_cpu_view dst = l + 1 < D ? planes_of (&p->cat[l], 0) : p->out[l].view;
		bd_range *written = l + 1 < D ? &cat[l] : &out[l];
		tmp = *written = (bd_range) { 0, 0 };
		tmp_found = conv3x3 (pool, state, l, &state->enc[l][0], x, NULL, &p->tmp[l].view, &tmp);
		bool found = conv3x3 (pool, state, l, &state->enc[l][1], &p->tmp[l], tmp_found ? &tmp : NULL, &dst, written);
		*(l + 1 < D ? &cat_found[l] : &out_found[l]) = found;
		if (!step (opts, done, total) || !step (opts, done, total))
			return false;
	}
	for (uint32_t l = D - 1; l-- > 0;) {
		bd_cpu_view up = planes_of (&p->cat[l], PLANES (m->widths[l]));
		cat_found[l] &= up_conv (pool, state, l, state->up[l], &p->out[l + 1], out_found[l + 1] ? &out[l + 1] : NULL,
		                         &up, &cat[l]);
		tmp = out[l] = (bd_range) { 0, 0 };
		tmp_found = conv3x3 (pool, state, l, &state->dec[l][0], &p->cat[l], cat_found[l] ? &cat[l] : NULL,
		                     &p->tmp[l].view, &tmp);
		out_found[l] = conv3x3 (pool, state, l, &state->dec[l][1], &p->tmp[l], tmp_found ? &tmp : NULL,
		                        &p->out[l].view, &out[l]);
		for (int k = 0; k < 4; k++)
			if (!step (opts, done, total))
				return false;
	}
	return true;
}

#if defined(BD_HAVE_AMX_KERNELS)
/* A buffer's memory from plane @first on as bf16 pairs of planes (ops.h): a pair takes the
 * bytes of one fp32 plane pixel for pixel, borders included, so the pairs lie over the
 * buffer's planes and the zero borders of those planes are theirs. */
static bd_cpu_view_bf16
pairs_over (const cpu_buffer *b, uint32_t first)
{
	const bd_cpu_view *v = &b->view;
	return (bd_cpu_view_bf16) {
		.data = (uint16_t *) (v->data + (size_t) first * v->plane_stride),
		.height = v->height, .width = v->width,
		.row_stride = 2 * v->row_stride, .plane_stride = 2 * v->plane_stride,
	};
}

/* Level @l's input pairs (l > 0), pooled from the skip above: over this level's up half, or
 * in a buffer of their own where the level is narrower than the one above (plan_layout). */
static bd_cpu_view_bf16
pooled_pairs (const cpu_plan *p, const bd_model *m, uint32_t l)
{
	uint32_t below = PLANES (m->widths[l - 1]), here = PLANES (m->widths[l]);
	return l + 1 < m->depth && below <= here ? pairs_over (&p->cat[l], HALF (here)) : pairs_over (&p->pooled[l], 0);
}

/* The forward pass on AMX: activations pass between the tile kernels as bf16 pairs, in half
 * the bytes of fp32 and with no copies between. A level's cat holds the skip pairs from
 * pair 0 and the up-convolution's from pair HALF (planes), which the decoder's packed weights
 * expect (cpu_init); before the up-convolution writes them, that half holds the level's input
 * (the photo in fp32 at level 0, the pooled pairs below, which the block above pools from
 * its skip as it writes it). The first convolution computes in fp32 (three channels gain
 * nothing from tiles) and writes pairs. The last convolution gives its sums to the head, the
 * probabilities into @output. False when cancelled. */
static bool
forward_amx (cpu_state *state, const bd_model *m, cpu_plan *p, bd_thread_pool *pool, const float *input,
             float *output, const bd_run_options *opts, int *done, int total)
{
	uint32_t D = m->depth;
	/* The photo lies over cat[0]'s up half when there is one. */
	bd_cpu_view in = D > 1 ? planes_of (&p->cat[0], HALF (PLANES (m->widths[0]))) : p->input.view;
	fill_input (pool, &in, input);
	for (uint32_t l = 0; l < D; l++) {
		bd_cpu_view_bf16 t = pairs_over (&p->tmp[l], 0), x;
		if (l == 0) {
			bd_conv2d_pairs (pool, &state->enc[0][0], &in, &t, true);
		} else {
			bd_cpu_view_bf16 pooled = pooled_pairs (p, m, l);
			bd_conv2d_amx_pairs (pool, &state->enc[l][0], &pooled, &t, true);
		}
		x = t;
		if (l + 1 < D) {
			/* The skip, and the next level's input pooled from it as it is made. */
			bd_cpu_view_bf16 skip = pairs_over (&p->cat[l], 0), pooled = pooled_pairs (p, m, l + 1);
			bd_conv2d_amx_pairs_pool (pool, &state->enc[l][1], &x, &skip, &pooled, true);
		} else if (D > 1) {
			bd_cpu_view_bf16 bottom = pairs_over (&p->out[l], 0);
			bd_conv2d_amx_pairs (pool, &state->enc[l][1], &x, &bottom, true);
		} else {
			bd_conv2d_amx_head (pool, &state->enc[l][1], &x, state->head_weight, state->head_bias, output);
		}
		if (!step (opts, done, total) || !step (opts, done, total))
			return false;
	}
	for (uint32_t l = D - 1; l-- > 0;) {
		bd_cpu_view_bf16 below = pairs_over (&p->out[l + 1], 0), cat = pairs_over (&p->cat[l], 0);
		bd_cpu_view_bf16 up = pairs_over (&p->cat[l], HALF (PLANES (m->widths[l])));
		bd_cpu_view_bf16 t = pairs_over (&p->tmp[l], 0);
		bd_conv_transpose2x2_amx (pool, state->up[l], &below, NULL, &up);
		bd_conv2d_amx_pairs (pool, &state->dec[l][0], &cat, &t, true);
		if (l > 0) {
			bd_cpu_view_bf16 o = pairs_over (&p->out[l], 0);
			bd_conv2d_amx_pairs (pool, &state->dec[l][1], &t, &o, true);
		} else {
			/* The head on its outputs as they are made: their fp32 planes never written. */
			bd_conv2d_amx_head (pool, &state->dec[l][1], &t, state->head_weight, state->head_bias, output);
		}
		for (int k = 0; k < 4; k++)
			if (!step (opts, done, total))
				return false;
	}
	return true;
}
#endif

static bd_status
cpu_forward_one (bd_session *session, const float *input, uint32_t height, uint32_t width,
                 float *output, const bd_run_options *opts, bd_error *error)
{
	const bd_model *m = session->model;
	cpu_state *state = session->backend_data;
	cpu_plan *p = NULL;
	bd_status st = plan_for (state, m, height, width, true, &p, error);
	if (st != BD_OK)
		return st;
	/* Progress after each layer: two a level down, four a level up, the head. */
	int done = 0, total = (int) (2 * m->depth + 4 * (m->depth - 1) + 1);
	bool finished;
#if defined(BD_HAVE_AMX_KERNELS)
	if (state->kernel == CPU_AMX)
		finished = forward_amx (state, m, p, session->pool, input, output, opts, &done, total);
	else
#endif
	{
		fill_input (session->pool, &p->input.view, input);
		finished = forward_blocked (state, m, p, session->pool, opts, &done, total);
		if (finished)
			bd_head_sigmoid (session->pool, state->head_weight, state->head_bias, m->widths[0], &p->out[0].view,
			                 output);
	}
	if (!finished)
		return bd_error_set (error, BD_ERR_CANCELLED, "cancelled");
	step (opts, &done, total);
	return BD_OK;
}

static bd_status
cpu_reserve (bd_session *session, uint32_t height, uint32_t width, bd_error *error)
{
	cpu_plan *p;
	return plan_for (session->backend_data, session->model, height, width, false, &p, error);
}

/* The threads already share each layer: a batch gains nothing from running together. */
static bd_status
cpu_forward (bd_session *session, const float *input, uint32_t batch, uint32_t height, uint32_t width,
             float *output, const bd_run_options *opts, bd_error *error)
{
	size_t hw = (size_t) height * width;
	bd_status st = BD_OK;
	for (uint32_t i = 0; i < batch && st == BD_OK; i++)
		st = cpu_forward_one (session, input + i * 3 * hw, height, width, output + i * hw, opts, error);
	return st;
}

const bd_backend_ops bd_cpu_backend = {
	.init = cpu_init,
	.forward = cpu_forward,
	.destroy = cpu_destroy,
	.run = NULL,
	.reserve = cpu_reserve,
};
