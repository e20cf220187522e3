/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU backend: the weights packed for the kernel this CPU runs best, and the U-Net
 * forward pass over the ops in core/ops/, on the buffers cpu-plan.c lays out. */
#include "cpu-backend-private.h"

#include <stdlib.h>
#include <string.h>

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
 * integer kernel alone, each from the model's values widened into @scratch, but the 8-bit
 * ones, packed from the model's values as they are. The network's first convolution (@first)
 * stays fp32 on bf16 and AMX: three input channels gain nothing from pairs, and the photo
 * itself keeps its 8 bits. With integers it takes 16 bits (the photo's 256 levels lie
 * dozens of 16-bit levels apart), as @sixteen ones do; the others 8 (sixteen_bits): there it
 * writes halves, as every integer kernel does and the fp32 kernel does not. */
static bd_status
pack_conv3x3 (bd_thread_pool *pool, cpu_kernel kernel, bool sixteen, bool first, bd_cpu_conv *c,
              const bd_conv_weights *w, const uint32_t *in_map, uint32_t in_storage, widened *scratch,
              bd_error *error)
{
	uint32_t cout = w->weight.dims[0], cin = w->weight.dims[1];
	const float *bias = widen_into (pool, &scratch[1], &w->bias);
	if (!bias)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
#if defined(BD_HAVE_VNNI_KERNELS)
	if (kernel == CPU_VNNI && !first && !sixteen)   /* straight from the model's values */
		return bd_cpu_conv_pack_int8 (pool, c, &w->weight, 0, bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map,
		                              in_storage, error);
#endif
	const float *weights = widen_into (pool, &scratch[0], &w->weight);
	if (!weights)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
#if defined(BD_HAVE_AMX_KERNELS)
	if (kernel == CPU_AMX && !first)
		return bd_cpu_conv_pack_amx (pool, c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map,
		                             in_storage, error);
#endif
#if defined(BD_HAVE_VNNI_KERNELS)
	if (kernel == CPU_VNNI)
		return bd_cpu_conv_pack_int16 (pool, c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map,
		                               in_storage, error);
#endif
	bd_status st = bd_cpu_conv_pack (c, weights, bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map, in_storage,
	                                 error);
#if defined(BD_HAVE_BF16_KERNELS)
	if (st == BD_OK && kernel == CPU_BF16 && !first)
		st = bd_cpu_conv_pack_bf16 (c, error);
#endif
	(void) first;
	(void) sixteen;
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

/* Whether a 3x3 convolution of level @l runs in 16-bit integers (@decoder: a decoder
 * block's, else an encoder block's). The encoder's at full resolution do: in 8 bits the
 * smallest people and the edges lost a little (its second convolution alone: CamVid
 * 0.3487 -> 0.3470, the hard web-like split 0.5656 -> 0.5651), its skip carrying them to the
 * decoder. The decoder's two are as good in 8 (every split within 0.0002, boundary IoU the
 * same or higher) and cost a photo less CPU time (docs/PERFORMANCE.md). */
static bool
sixteen_bits (uint32_t l, bool decoder)
{
	return l == 0 && !decoder;
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
	 * smallest first: grown for each, every one would fault in fresh memory). The 8-bit
	 * packer reads the model's values themselves: with integers only the first convolution
	 * and the 16-bit one are widened, and the buffer grows to theirs. */
	widened scratch[2] = { { NULL, 0 }, { NULL, 0 } };
	size_t largest = k == CPU_VNNI ? 0 : bd_model_largest_weight (m);
	scratch[0].data = bd_alloc_aligned (largest, sizeof (float));
	scratch[0].count = scratch[0].data ? largest : 0;
	for (uint32_t l = 0; l < m->depth && st == BD_OK; l++) {
		uint32_t cin = l == 0 ? 3 : m->widths[l - 1];
		st = pack_conv3x3 (pool, k, sixteen_bits (l, false), l == 0, &s->enc[l][0], &m->enc[l][0], NULL, cin,
		                   scratch, error);
		if (st == BD_OK)
			st = pack_conv3x3 (pool, k, sixteen_bits (l, false), false, &s->enc[l][1], &m->enc[l][1], NULL,
			                   m->widths[l], scratch, error);
	}
	for (uint32_t l = 0; l + 1 < m->depth && st == BD_OK; l++) {
		uint32_t c = m->widths[l], cn = m->widths[l + 1];
		/* Up-convolution weights are [cin, cout, 2, 2]: one 1x1 convolution per tap. The 8-bit
		 * packer reads them as the model holds them. */
		const float *up = k == CPU_VNNI ? NULL : widen_into (pool, &scratch[0], &m->up[l].weight);
		const float *bias = widen_into (pool, &scratch[1], &m->up[l].bias);
		if ((!up && k != CPU_VNNI) || !bias) {
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
				st = bd_cpu_conv_pack_int8 (pool, &s->up[l][t], &m->up[l].weight, (size_t) t, bias, c, cn, 1, 4,
				                            (size_t) c * 4, 0, NULL, cn, error);
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
			st = pack_conv3x3 (pool, k, sixteen_bits (l, true), false, &s->dec[l][0], &m->dec[l][0], map,
			                   up_start + c, scratch, error);
		if (st == BD_OK)
			st = pack_conv3x3 (pool, k, sixteen_bits (l, true), false, &s->dec[l][1], &m->dec[l][1], NULL, c,
			                   scratch, error);
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
	bd_cpu_arena_release (s, session->pool);
	bd_cpu_plans_free (s);
	free (s->head_weight);
	free (s);
	session->backend_data = NULL;
}

/* A 3x3 convolution at @level over the whole buffer @in: in bf16 or integers when its
 * weights are such. Integers copy @in at its range @in_range where the kernels that wrote it
 * found it (else measured), and widen @out_range to their outputs' range: true then. */
static bool
conv3x3 (bd_thread_pool *pool, cpu_state *s, uint32_t level, const bd_cpu_conv *conv, const cpu_buffer *in,
         const bd_range *in_range, const bd_cpu_view *out, bd_range *out_range)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (conv->weights_int8) {
		uint8_t *copy = bd_cpu_copy_space (s, level + 1, bd_cpu_copy_bytes (in, false));
		bd_cpu_view_int8 q = bd_to_int8 (pool, &in->view, in->planes, in_range, copy);
		bd_conv_run_int8 (pool, conv, &q, out, 1, true, out_range);
		return true;
	}
	if (conv->weights_int16) {
		int16_t *copy = bd_cpu_copy_space (s, level + 1, bd_cpu_copy_bytes (in, true));
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
		uint8_t *copy = bd_cpu_copy_space (s, level + 2, bd_cpu_copy_bytes (in, false));
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

/* Level @l's first convolution (l > 0) in 8-bit integers from a copy pooled straight from
 * the skip above (bd_to_int8_pooled, at its range @skip_range where found), without the fp32
 * pooled buffer: false where its weights are not 8-bit, and nothing is done. */
static bool
pooled_int8 (bd_thread_pool *pool, cpu_state *s, const cpu_plan *p, uint32_t l, const bd_range *skip_range,
             bd_range *out_range)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	const bd_cpu_conv *conv = &s->enc[l][0];
	if (conv->weights_int8) {
		const cpu_buffer *pooled = &p->pooled[l];
		bd_cpu_view skip = bd_cpu_planes_of (&p->cat[l - 1], 0);
		uint8_t *copy = bd_cpu_copy_space (s, l + 1, bd_cpu_copy_bytes (pooled, false));
		bd_cpu_view_int8 q = bd_to_int8_pooled (pool, &skip, &pooled->view, pooled->planes, skip_range, copy);
		bd_conv_run_int8 (pool, conv, &q, &p->tmp[l].view, 1, true, out_range);
		return true;
	}
#endif
	(void) pool;
	(void) s;
	(void) p;
	(void) l;
	(void) skip_range;
	(void) out_range;
	return false;
}

/* The first convolution on integer sessions, its 16-bit copy made from @photo itself
 * (bd_photo_to_int16): the blocked fp32 photo is never written. False where its weights are
 * not 16-bit, and nothing is done. */
static bool
photo_int16 (bd_thread_pool *pool, cpu_state *s, const cpu_plan *p, const float *photo, bd_range *out_range)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	const bd_cpu_conv *conv = &s->enc[0][0];
	if (conv->weights_int16) {
		int16_t *copy = bd_cpu_copy_space (s, 1, bd_cpu_copy_bytes (&p->input, true));
		bd_cpu_view_int16 q = bd_photo_to_int16 (pool, photo, &p->input.view, conv->int16_levels, copy);
		bd_conv_run_int16 (pool, conv, &q, &p->tmp[0].view, 1, true, out_range);
		return true;
	}
#endif
	(void) pool;
	(void) s;
	(void) p;
	(void) photo;
	(void) out_range;
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

/* The forward pass up to the head on @photo (three planes), in fp32 or with bf16 (AVX-512
 * BF16) or integer (AVX-512 VNNI) copies of the convolutions' inputs; false when cancelled.
 * The integer kernels find the range of what they write (a level's cat: its skip and up
 * halves together), so only the inputs that fp32 writes are measured before their copies; an
 * 8-bit level's input is copied pooled from the skip above at the skip's range
 * (pooled_int8), and the first convolution's copied from the photo itself (photo_int16). */
static bool
forward_blocked (cpu_state *state, const bd_model *m, cpu_plan *p, bd_thread_pool *pool, const float *photo,
                 const bd_run_options *opts, int *done, int total)
{
	uint32_t D = m->depth;
	bd_range cat[BD_MAX_DEPTH], out[BD_MAX_DEPTH], tmp;
	bool cat_found[BD_MAX_DEPTH], out_found[BD_MAX_DEPTH], tmp_found;
	const cpu_buffer *x = &p->input;
	for (uint32_t l = 0; l < D; l++) {
		bd_cpu_view dst = l + 1 < D ? bd_cpu_planes_of (&p->cat[l], 0) : p->out[l].view;
		bd_range *written = l + 1 < D ? &cat[l] : &out[l];
		tmp = *written = (bd_range) { 0, 0 };
		if (l > 0 ? pooled_int8 (pool, state, p, l, cat_found[l - 1] ? &cat[l - 1] : NULL, &tmp)
		          : photo_int16 (pool, state, p, photo, &tmp)) {
			tmp_found = true;
		} else {
			if (l == 0) {
				fill_input (pool, &p->input.view, photo);
			} else {
				bd_cpu_view skip = bd_cpu_planes_of (&p->cat[l - 1], 0);
				bd_maxpool2x2 (pool, p->pooled[l].planes, &skip, &p->pooled[l].view);
				x = &p->pooled[l];
			}
			tmp_found = conv3x3 (pool, state, l, &state->enc[l][0], x, NULL, &p->tmp[l].view, &tmp);
		}
		bool found = conv3x3 (pool, state, l, &state->enc[l][1], &p->tmp[l], tmp_found ? &tmp : NULL, &dst, written);
		*(l + 1 < D ? &cat_found[l] : &out_found[l]) = found;
		if (!step (opts, done, total) || !step (opts, done, total))
			return false;
	}
	for (uint32_t l = D - 1; l-- > 0;) {
		bd_cpu_view up = bd_cpu_planes_of (&p->cat[l], PLANES (m->widths[l]));
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
	bd_cpu_view in = D > 1 ? bd_cpu_planes_of (&p->cat[0], HALF (PLANES (m->widths[0]))) : p->input.view;
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
	bd_status st = bd_cpu_plan_for (state, m, height, width, true, &p, error);
	if (st != BD_OK)
		return st;
	bd_cpu_arena_fault_in (state, session->pool);
	/* Progress after each layer: two a level down, four a level up, the head. */
	int done = 0, total = (int) (2 * m->depth + 4 * (m->depth - 1) + 1);
	bool finished;
#if defined(BD_HAVE_AMX_KERNELS)
	if (state->kernel == CPU_AMX)
		finished = forward_amx (state, m, p, session->pool, input, output, opts, &done, total);
	else
#endif
	{
		finished = forward_blocked (state, m, p, session->pool, input, opts, &done, total);
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
	return bd_cpu_plan_for (session->backend_data, session->model, height, width, false, &p, error);
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
