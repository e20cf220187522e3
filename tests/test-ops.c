/* SPDX-License-Identifier: Apache-2.0 */
/* Each CPU operator against the naive reference on random data: odd sizes, channel counts
 * that are not multiples of 16, more channels than one reduction chunk. Outputs are poisoned
 * first, and the buffers' zero borders and spare lanes are checked to stay zero. */
#include "ops/ops.h"
#include "reference.h"
#include "synthetic-model.h"

#include <glib.h>
#include <math.h>
#include <string.h>

typedef struct {
	float      *base;
	size_t      floats;
	bd_cpu_view view;
	uint32_t    channels, planes;
} blocked;

static blocked
blocked_new (uint32_t channels, uint32_t h, uint32_t w)
{
	blocked b = { 0 };
	b.channels = channels;
	b.planes = (channels + BD_LANES - 1) / BD_LANES;
	size_t row = ((size_t) w + 2) * BD_LANES, plane = row * (h + 2);
	b.floats = plane * b.planes;
	b.base = bd_alloc_zeroed (b.floats, sizeof (float));
	g_assert_nonnull (b.base);
	b.view = (bd_cpu_view) { b.base + row + BD_LANES, h, w, row, plane, NULL };
	return b;
}

static float *
at (const blocked *b, uint32_t c, uint32_t y, uint32_t x)
{
	return b->view.data + (size_t) (c / BD_LANES) * b->view.plane_stride + (size_t) y * b->view.row_stride +
	       (size_t) x * BD_LANES + c % BD_LANES;
}

static void
blocked_from_dense (blocked *b, const float *dense)
{
	for (uint32_t c = 0; c < b->channels; c++)
		for (uint32_t y = 0; y < b->view.height; y++)
			for (uint32_t x = 0; x < b->view.width; x++)
				*at (b, c, y, x) = dense[((size_t) c * b->view.height + y) * b->view.width + x];
}

/* NaN in every interior lane, real or spare: the op must overwrite all of them. */
static void
blocked_poison (blocked *b)
{
	for (uint32_t c = 0; c < b->planes * BD_LANES; c++)
		for (uint32_t y = 0; y < b->view.height; y++)
			for (uint32_t x = 0; x < b->view.width; x++)
				*at (b, c, y, x) = NAN;
}

/* The dense channels out, and every spare lane and border float checked to be zero. */
static float *
blocked_to_dense (const blocked *b)
{
	uint32_t h = b->view.height, w = b->view.width;
	float *d = g_new (float, (size_t) b->channels * h * w);
	for (uint32_t c = 0; c < b->planes * BD_LANES; c++)
		for (int64_t y = -1; y <= h; y++)
			for (int64_t x = -1; x <= w; x++) {
				float v = b->view.data[(size_t) (c / BD_LANES) * b->view.plane_stride +
				                       (ptrdiff_t) y * (ptrdiff_t) b->view.row_stride +
				                       (ptrdiff_t) x * BD_LANES + c % BD_LANES];
				bool inside = y >= 0 && x >= 0 && y < h && x < w && c < b->channels;
				if (inside)
					d[((size_t) c * h + (size_t) y) * w + (size_t) x] = v;
				else if (v != 0.0f)
					g_error ("channel %u pixel (%lld, %lld) outside the output is %g, not 0",
					         c, (long long) x, (long long) y, v);
			}
	return d;
}

static float *
random_array (bd_rng *rng, size_t n, float scale)
{
	float *a = g_new (float, n);
	for (size_t i = 0; i < n; i++)
		a[i] = bd_rng_uniform (rng, -scale, scale);
	return a;
}

static void
check_close (const float *got, const float *want, size_t n, double tolerance, const char *what)
{
	double e = ref_relative_error (got, want, n);
	if (!(e <= tolerance))
		g_error ("%s: relative error %g exceeds %g", what, e, tolerance);
	for (size_t i = 0; i < n; i++)
		if (!(fabsf (got[i] - want[i]) <= 1e-4f * (1.0f + fabsf (want[i]))))
			g_error ("%s: element %zu is %g, reference %g", what, i, got[i], want[i]);
}

#if defined(BD_HAVE_VNNI_KERNELS)
/* @f as the nearest half, ties to even (subnormals included), as vcvtps2ph rounds. */
static uint16_t
half_rounded (float f)
{
	uint32_t u;
	memcpy (&u, &f, sizeof u);
	uint32_t sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
	if (a >= 0x477ff000)   /* 65520 and over: infinity */
		return (uint16_t) (sign | 0x7c00);
	if (a < 0x38800000) {  /* under 2^-14: a multiple of 2^-24 */
		float m;
		memcpy (&m, &a, sizeof m);
		return (uint16_t) (sign | (uint32_t) nearbyintf (m * 16777216.0f));
	}
	a += 0xfff + ((a >> 13) & 1);
	return (uint16_t) (sign | (a - ((uint32_t) (127 - 15) << 23)) >> 13);
}

/* A halves buffer shaped as @like (zero, its inside NaN: a kernel must write all of it). */
static bd_cpu_view
halves_like (const blocked *like, uint16_t **base)
{
	size_t n = like->floats;
	*base = bd_alloc_zeroed (n, sizeof (uint16_t));
	g_assert_nonnull (*base);
	bd_cpu_view v = like->view;
	v.data = NULL;
	v.halves = *base + v.row_stride + BD_LANES;
	for (uint32_t c = 0; c < like->planes * BD_LANES; c++)
		for (uint32_t y = 0; y < v.height; y++)
			for (uint32_t x = 0; x < v.width; x++)
				v.halves[(size_t) (c / BD_LANES) * v.plane_stride + y * v.row_stride + x * BD_LANES + c % BD_LANES] =
					0x7e00;
	return v;
}

/* Each element of @base (borders and spare lanes included) against @like's floats rounded;
 * with @chunks, within a few halves' steps (the sums of each chunk but the last kept as
 * halves). */
static void
check_halves (const blocked *like, const uint16_t *base, bool chunks, const char *what)
{
	const float *f = like->view.data - like->view.row_stride - BD_LANES;
	for (size_t k = 0; k < like->floats; k++) {
		float got = bd_half_to_float (base[k]);
		if (chunks ? !(fabsf (got - f[k]) <= 4e-3f * (fabsf (f[k]) + 1)) : base[k] != half_rounded (f[k]))
			g_error ("%s: element %zu is half 0x%04x, want 0x%04x (%g)", what, k, base[k], half_rounded (f[k]), f[k]);
	}
}
#endif

typedef struct { uint32_t cin, cout, h, w, k; bool relu; } conv_case;

static const conv_case conv_cases[] = {
	{ 3, 16, 17, 23, 3, true },     /* the first layer */
	{ 3, 32, 3, 130, 3, true },     /* the shipped one's, rows longer than bd_conv2d_pairs' stretch */
	{ 16, 16, 8, 8, 3, true },
	{ 5, 7, 1, 1, 3, false },       /* one pixel, partial blocks */
	{ 17, 33, 9, 31, 3, true },     /* three output blocks: a pair and a single */
	{ 40, 24, 13, 5, 3, false },
	{ 64, 64, 7, 45, 3, true },     /* a full tile of 28 plus remainders */
	{ 150, 20, 6, 6, 3, true },     /* more input planes than one chunk */
	{ 16, 32, 4, 4, 1, false },
	{ 33, 5, 3, 29, 1, true },
};

#if defined(BD_HAVE_BF16_KERNELS)
/* Pairs of planes over @pout's memory (poisoned inside, zero borders). */
static bd_cpu_view_bf16
pairs_view (blocked *pout)
{
	blocked_poison (pout);
	return (bd_cpu_view_bf16) {
		.data = (uint16_t *) pout->view.data, .height = pout->view.height, .width = pout->view.width,
		.row_stride = 2 * pout->view.row_stride, .plane_stride = 2 * pout->view.plane_stride,
	};
}

/* Pairs written by a kernel into pairs_view (@pout): every value the fp32 output @dense
 * rounded to bf16, spare channels zero, the borders left zero. */
static void
check_pairs (const blocked *pout, const bd_cpu_view_bf16 *pv, const conv_case *c, const float *dense,
             const char *what)
{
	for (uint32_t ch = 0; ch < (pout->planes + 1) / 2 * 2 * BD_LANES; ch++)
		for (int64_t y = -1; y <= c->h; y++)
			for (int64_t x = -1; x <= c->w; x++) {
				uint16_t v = pv->data[(size_t) (ch / 32) * pv->plane_stride + (ptrdiff_t) y * (ptrdiff_t) pv->row_stride +
				                      (ptrdiff_t) x * 32 + ch % 32];
				bool inside = y >= 0 && x >= 0 && y < c->h && x < c->w;
				uint16_t expect = inside && ch < c->cout
				                  ? bd_bf16_from_float (dense[((size_t) ch * c->h + (size_t) y) * c->w + (size_t) x])
				                  : 0;
				if (v != expect)
					g_error ("%s, bf16 pairs out: channel %u pixel (%lld, %lld) is 0x%04x, not 0x%04x", what, ch,
					         (long long) x, (long long) y, v, expect);
			}
}
#endif

static void
test_conv2d (void)
{
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	for (size_t i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
		const conv_case *c = &conv_cases[i];
		size_t nin = (size_t) c->cin * c->h * c->w, nout = (size_t) c->cout * c->h * c->w;
		float *in = random_array (&rng, nin, 1);
		float *w = random_array (&rng, (size_t) c->cout * c->cin * c->k * c->k, 0.5f);
		float *bias = random_array (&rng, c->cout, 0.5f);
		float *want = g_new (float, nout);
		ref_conv2d (in, c->cin, c->h, c->w, w, bias, c->cout, c->k, c->relu, want);

		bd_cpu_conv conv;
		g_assert_cmpint (bd_cpu_conv_pack (&conv, w, bias, c->cout, c->cin, c->k * c->k,
		                                   (size_t) c->cin * c->k * c->k, c->k * c->k, 1,
		                                   NULL, c->cin, NULL), ==, BD_OK);
		blocked bin = blocked_new (c->cin, c->h, c->w), bout = blocked_new (c->cout, c->h, c->w);
		blocked_from_dense (&bin, in);
		blocked_poison (&bout);
		bd_conv2d (pool, &conv, &bin.view, &bout.view, c->relu);
		float *got = blocked_to_dense (&bout);
		char *what = g_strdup_printf ("conv %ux%u %u->%u at %ux%u", c->k, c->k, c->cin, c->cout, c->w, c->h);
		check_close (got, want, nout, 1e-5, what);
#if defined(BD_HAVE_BF16_KERNELS)
		/* Into pairs (the AMX pass's first convolution): bd_conv2d's outputs rounded. */
		if (bd_cpu_bf16_usable ()) {
			blocked pout = blocked_new (c->cout, c->h, c->w);
			bd_cpu_view_bf16 pv = pairs_view (&pout);
			bd_conv2d_pairs (pool, &conv, &bin.view, &pv, c->relu);
			check_pairs (&pout, &pv, c, got, what);
			bd_free_aligned (pout.base);
		}
#endif
		g_free (what);
		bd_cpu_conv_clear (&conv);
		bd_free_aligned (bin.base);
		bd_free_aligned (bout.base);
		g_free (in); g_free (w); g_free (bias); g_free (want); g_free (got);
	}
	bd_thread_pool_free (pool);
}

#if defined(BD_HAVE_BF16_KERNELS)
/* bfloat16 by round-to-nearest-even, as the conversion instruction does. */
static float
round_bf16 (float f)
{
	uint32_t u;
	memcpy (&u, &f, sizeof u);
	u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
	memcpy (&f, &u, sizeof f);
	return f;
}
#endif

#if defined(BD_HAVE_BF16_KERNELS)
typedef enum { KERNEL_BF16, KERNEL_AMX } bf16_kernel;
#endif


#if defined(BD_HAVE_AMX_KERNELS)
/* bd_conv2d_amx_pairs on the input bd_conv2d_amx had (@bin, its pairs still in @half): its
 * fp32 output @dense rounded. Then bd_conv2d_amx_pairs_pool: the same pairs, and their 2x2
 * max-pool the max-pool of @dense rounded, borders untouched (one-row cases pool nothing). */
static void
check_amx_pairs_out (bd_thread_pool *pool, const bd_cpu_conv *conv, const blocked *bin, uint16_t *half,
                     const conv_case *c, const float *dense, const char *what)
{
	blocked pout = blocked_new (c->cout, c->h, c->w);
	bd_cpu_view_bf16 pv = pairs_view (&pout);
	bd_cpu_view_bf16 hv = bd_to_bf16_pairs (pool, &bin->view, bin->planes, half);
	bd_conv2d_amx_pairs (pool, conv, &hv, &pv, c->relu);
	check_pairs (&pout, &pv, c, dense, what);

	conv_case half_case = *c;
	half_case.h = c->h / 2;
	half_case.w = c->w / 2;
	blocked qout = blocked_new (c->cout, half_case.h, half_case.w);
	bd_cpu_view_bf16 qv = pairs_view (&qout);
	pv = pairs_view (&pout);
	bd_conv2d_amx_pairs_pool (pool, conv, &hv, &pv, &qv, c->relu);
	check_pairs (&pout, &pv, c, dense, what);
	float *pooled = g_new (float, (size_t) c->cout * half_case.h * half_case.w + 1);
	ref_maxpool2x2 (dense, c->cout, c->h, c->w, pooled);
	char *pooled_what = g_strdup_printf ("%s, max-pooled", what);
	check_pairs (&qout, &qv, &half_case, pooled, pooled_what);
	g_free (pooled_what);
	g_free (pooled);
	bd_free_aligned (qout.base);
	bd_free_aligned (pout.base);
}
#endif

#if defined(BD_HAVE_AMX_KERNELS)
/* bd_conv2d_amx_head against the convolution's ReLU'd fp32 outputs through bd_head_sigmoid,
 * bit for bit: the fused head adds the same products in the same order. */
static void
check_amx_head (bd_thread_pool *pool, bd_rng *rng, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                const conv_case *c)
{
	blocked relu = blocked_new (c->cout, c->h, c->w);
	bd_conv2d_amx (pool, conv, in, &relu.view, true);
	float *weight = random_array (rng, c->cout, 0.5f), bias = bd_rng_uniform (rng, -0.5f, 0.5f);
	size_t n = (size_t) c->h * c->w;
	float *want = g_new (float, n), *got = g_new (float, n);
	bd_head_sigmoid (pool, weight, bias, c->cout, &relu.view, want);
	for (size_t i = 0; i < n; i++)
		got[i] = NAN;
	bd_conv2d_amx_head (pool, conv, in, weight, bias, got);
	for (size_t i = 0; i < n; i++)
		if (memcmp (&got[i], &want[i], sizeof got[i]) != 0)
			g_error ("AMX conv 3x3 %u->%u at %ux%u with the head: pixel %zu is %.9g, not %.9g", c->cin, c->cout,
			         c->w, c->h, i, got[i], want[i]);
	bd_free_aligned (relu.base);
	g_free (weight); g_free (want); g_free (got);
}
#endif

#if defined(BD_HAVE_BF16_KERNELS)
/* One 3x3 case through a bf16 kernel, against the reference on the same inputs and weights
 * rounded to bf16 (so only the fp32 sums differ: as tight as fp32), and against the
 * unrounded reference within bf16's precision. */
static void
check_bf16_case (bd_thread_pool *pool, bd_rng *rng, const conv_case *c, bf16_kernel kernel)
{
	size_t nin = (size_t) c->cin * c->h * c->w, nout = (size_t) c->cout * c->h * c->w;
	uint32_t taps = c->k * c->k;
	size_t nw = (size_t) c->cout * c->cin * taps;
	float *in = random_array (rng, nin, 1), *w = random_array (rng, nw, 0.5f);
	float *bias = random_array (rng, c->cout, 0.5f);
	float *in_r = g_new (float, nin), *w_r = g_new (float, nw);
	for (size_t k = 0; k < nin; k++)
		in_r[k] = round_bf16 (in[k]);
	for (size_t k = 0; k < nw; k++)
		w_r[k] = round_bf16 (w[k]);
	float *want = g_new (float, nout), *want_rounded = g_new (float, nout);
	ref_conv2d (in, c->cin, c->h, c->w, w, bias, c->cout, 3, c->relu, want);
	ref_conv2d (in_r, c->cin, c->h, c->w, w_r, bias, c->cout, 3, c->relu, want_rounded);

	bd_cpu_conv conv;
	blocked bin = blocked_new (c->cin, c->h, c->w), bout = blocked_new (c->cout, c->h, c->w);
	blocked_from_dense (&bin, in);
	blocked_poison (&bout);
	/* Room for the pairs of planes; poisoned: the conversion must write every element,
	 * borders and a missing odd plane's half included. */
	size_t nhalf = (size_t) (bin.planes + 1) / 2 * 2 * bin.view.plane_stride;
	uint16_t *half = bd_alloc_zeroed (nhalf, sizeof *half);
	g_assert_nonnull (half);
	memset (half, 0xff, nhalf * sizeof *half);
	const char *name = "bf16";
	if (kernel == KERNEL_BF16) {
		g_assert_cmpint (bd_cpu_conv_pack (&conv, w, bias, c->cout, c->cin, 9, (size_t) c->cin * 9, 9, 1,
		                                   NULL, c->cin, NULL), ==, BD_OK);
		g_assert_cmpint (bd_cpu_conv_pack_bf16 (&conv, NULL), ==, BD_OK);
		bd_cpu_view_bf16 hv = bd_to_bf16 (pool, &bin.view, bin.planes, half);
		bd_conv2d_bf16 (pool, &conv, &hv, &bout.view, c->relu);
	} else {
#if defined(BD_HAVE_AMX_KERNELS)
		name = "AMX";
		g_assert_cmpint (bd_cpu_conv_pack_amx (pool, &conv, w, bias, c->cout, c->cin, 9, (size_t) c->cin * 9, 9,
		                                       1, NULL, c->cin, NULL), ==, BD_OK);
		g_assert_null (conv.weights);
		bd_cpu_view_bf16 hv = bd_to_bf16_pairs (pool, &bin.view, bin.planes, half);
		bd_conv2d_amx (pool, &conv, &hv, &bout.view, c->relu);
		check_amx_head (pool, rng, &conv, &hv, c);
#endif
	}
	float *got = blocked_to_dense (&bout);
	char *what = g_strdup_printf ("%s conv 3x3 %u->%u at %ux%u", name, c->cin, c->cout, c->w, c->h);
	check_close (got, want_rounded, nout, 1e-5, what);
	double e = ref_relative_error (got, want, nout);
	if (!(e <= 1e-2))
		g_error ("%s: relative error %g against the unrounded reference exceeds 1e-2", what, e);
#if defined(BD_HAVE_AMX_KERNELS)
	if (kernel == KERNEL_AMX)
		check_amx_pairs_out (pool, &conv, &bin, half, c, got, what);
#endif
	g_free (what);
	bd_cpu_conv_clear (&conv);
	bd_free_aligned (half);
	bd_free_aligned (bin.base);
	bd_free_aligned (bout.base);
	g_free (in); g_free (w); g_free (bias); g_free (in_r); g_free (w_r);
	g_free (want); g_free (want_rounded); g_free (got);
}
#endif

static void
test_conv2d_bf16 (void)
{
#if defined(BD_HAVE_BF16_KERNELS)
	if (!bd_cpu_bf16_usable ()) {
		g_test_skip ("this CPU has no AVX-512 BF16 (or BACKDROP_CPU_KERNEL asks for fp32)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	for (size_t i = 0; i < G_N_ELEMENTS (conv_cases); i++)
		if (conv_cases[i].k == 3)
			check_bf16_case (pool, &rng, &conv_cases[i], KERNEL_BF16);
	bd_thread_pool_free (pool);
#else
	g_test_skip ("built without the bf16 kernels (the compiler has no -mavx512bf16)");
#endif
}

#if defined(BD_HAVE_VNNI_KERNELS)
typedef enum {
	INPUTS_RANDOM,     /* in [-1, 1] */
	INPUTS_POSITIVE,   /* in [0, 3], a ReLU's output: 8 bits keep all 255 levels from zero */
	INPUTS_LARGEST,    /* every input 1 and every weight 0.5: each chunk's 32-bit sum at its
	                    * largest, which 16 bits' levels must keep from overflowing */
} int_inputs;

/* One 3x3 or 1x1 case through an integer kernel (16 or 8 @bits), against the reference on the
 * inputs and weights rounded as the kernel rounds them, so only the fp32 sums differ, and
 * against the unrounded reference within a few levels. 16 bits: inputs to multiples of
 * max |in| / levels, each output's weights to multiples of its max |w| / levels. 8 bits:
 * inputs to 255 levels over [min, max] with zero an integer level (the copy's offset), each
 * output's weights to 127 levels of its max |w|. Rows below the view, beyond its zero border,
 * hold 1000 and -1000: a larger pass's leftovers, which the scale must not count. */
static void
check_int_case (bd_thread_pool *pool, bd_rng *rng, const conv_case *c, int bits, int_inputs inputs)
{
	size_t nin = (size_t) c->cin * c->h * c->w, nout = (size_t) c->cout * c->h * c->w;
	uint32_t taps = c->k * c->k;
	size_t nw = (size_t) c->cout * c->cin * taps;
	float *in = random_array (rng, nin, 1), *w = random_array (rng, nw, 0.5f);
	float *bias = random_array (rng, c->cout, 0.5f);
	for (size_t k = 0; k < nin; k++)
		in[k] = inputs == INPUTS_LARGEST ? 1 : inputs == INPUTS_POSITIVE ? fabsf (in[k]) * 3 : in[k];
	for (size_t k = 0; inputs == INPUTS_LARGEST && k < nw; k++)
		w[k] = 0.5f;

	bd_cpu_conv conv;
	bd_status st = bits == 16 ? bd_cpu_conv_pack_int16 (pool, &conv, w, bias, c->cout, c->cin, taps,
	                                                    (size_t) c->cin * taps, taps, 1, NULL, c->cin, NULL)
	                          : bd_cpu_conv_pack_int8 (pool, &conv, &(bd_weight) { .data = w }, 0, bias, c->cout,
	                                                   c->cin, taps, (size_t) c->cin * taps, taps, 1, NULL, c->cin,
	                                                   NULL);
	g_assert_cmpint (st, ==, BD_OK);
	g_assert_null (conv.weights);
	float levels = bits == 16 ? conv.int16_levels : 127;
	g_assert_cmpfloat (levels, >=, 127);
	g_assert_cmpfloat (levels, <=, 32767);

	float hi = 0, lo = 0;
	for (size_t k = 0; k < nin; k++) {
		hi = fmaxf (hi, in[k]);
		lo = fminf (lo, in[k]);
	}
	/* As bd_to_int16 and bd_to_int8 round. */
	float scale = bits == 16 ? fmaxf (hi, -lo) / levels : (hi - lo) / 255.0f;
	float zero = bits == 16 ? 0 : nearbyintf (-lo / scale);
	float *in_r = g_new (float, nin), *w_r = g_new (float, nw);
	for (size_t k = 0; k < nin; k++) {
		float q = bits == 16 ? nearbyintf (in[k] * (levels / fmaxf (hi, -lo)))
		                     : fminf (fmaxf (nearbyintf (in[k] * (1.0f / scale)) + zero, 0), 255) - zero;
		in_r[k] = q * scale;
	}
	for (uint32_t co = 0; co < c->cout; co++) {
		float top = 0;
		for (size_t k = 0; k < (size_t) c->cin * taps; k++)
			top = fmaxf (top, fabsf (w[co * (size_t) c->cin * taps + k]));
		for (size_t k = 0; k < (size_t) c->cin * taps; k++) {
			size_t i = co * (size_t) c->cin * taps + k;
			w_r[i] = nearbyintf (w[i] / top * levels) * (top / levels);
		}
	}
	float *want = g_new (float, nout), *want_rounded = g_new (float, nout);
	ref_conv2d (in, c->cin, c->h, c->w, w, bias, c->cout, c->k, c->relu, want);
	ref_conv2d (in_r, c->cin, c->h, c->w, w_r, bias, c->cout, c->k, c->relu, want_rounded);

	blocked bin = blocked_new (c->cin, c->h + 2, c->w), bout = blocked_new (c->cout, c->h, c->w);
	bin.view.height = c->h;
	blocked_from_dense (&bin, in);
	for (uint32_t ch = 0; ch < c->cin; ch++)
		for (uint32_t x = 0; x < c->w; x++)
			*at (&bin, ch, c->h + 1, x) = x % 2 ? 1000 : -1000;
	blocked_poison (&bout);
	size_t nq = (size_t) bin.planes * bin.view.plane_stride * (size_t) bits / 8;
	uint8_t *q = bd_alloc_zeroed (nq, 1);
	g_assert_nonnull (q);
	memset (q, 0x55, nq);   /* the copy must write every element the kernels read, borders included */
	/* The same copy from the range the writer of the input found (bd_range) as measured. */
	uint8_t *q_known = bd_alloc_zeroed (nq, 1);
	g_assert_nonnull (q_known);
	memset (q_known, 0x55, nq);
	bd_range in_range = { lo, hi }, found = { 0, 0 }, found_halves = { 0, 0 };
	/* The same outputs as halves (an integer session's activations). */
	uint16_t *hbase;
	bd_cpu_view hout = halves_like (&bout, &hbase);
	float got_scale;
	if (bits == 16) {
		bd_cpu_view_int16 qv = bd_to_int16 (pool, &bin.view, bin.planes, levels, NULL, (int16_t *) q);
		bd_to_int16 (pool, &bin.view, bin.planes, levels, &in_range, (int16_t *) q_known);
		got_scale = qv.scale;
		bd_conv_run_int16 (pool, &conv, &qv, &bout.view, 1, c->relu, &found);
		bd_conv_run_int16 (pool, &conv, &qv, &hout, 1, c->relu, &found_halves);
	} else {
		bd_cpu_view_int8 qv = bd_to_int8 (pool, &bin.view, bin.planes, NULL, q);
		bd_to_int8 (pool, &bin.view, bin.planes, &in_range, q_known);
		got_scale = qv.scale;
		g_assert_cmpint (qv.offset, ==, (int32_t) zero);
		g_assert_true (inputs != INPUTS_POSITIVE || qv.offset == 0);
		bd_conv_run_int8 (pool, &conv, &qv, &bout.view, 1, c->relu, &found);
		bd_conv_run_int8 (pool, &conv, &qv, &hout, 1, c->relu, &found_halves);
	}
	g_assert_cmpfloat (fabsf (got_scale - scale), <=, 1e-6f * scale);
	g_assert_cmpmem (q_known, nq, q, nq);

	float *got = blocked_to_dense (&bout);
	char *what = g_strdup_printf ("int%d conv %ux%u %u->%u at %ux%u, inputs %d", bits, c->k, c->k, c->cin, c->cout,
	                              c->w, c->h, (int) inputs);
	check_close (got, want_rounded, nout, 1e-5, what);
	/* The range the kernel found as it wrote: its outputs' own, zero included. */
	float out_least = 0, out_largest = 0;
	for (size_t k = 0; k < nout; k++) {
		out_least = fminf (out_least, got[k]);
		out_largest = fmaxf (out_largest, got[k]);
	}
	g_assert_cmpfloat (found.least, ==, out_least);
	g_assert_cmpfloat (found.largest, ==, out_largest);
	/* As halves: each the float rounded, the range the floats' (the copies hold to it). */
	bool chunks = c->cin > (bits == 16 ? BD_DOT_CHUNK : BD_INT8_CHUNK) * BD_LANES;
	check_halves (&bout, hbase, chunks, what);
	g_assert_cmpfloat (fabsf (found_halves.least - out_least), <=, chunks ? 4e-3f * (1 - out_least) : 0);
	g_assert_cmpfloat (fabsf (found_halves.largest - out_largest), <=, chunks ? 4e-3f * (1 + out_largest) : 0);
	double e = ref_relative_error (got, want, nout), reach = bits == 16 ? 2e-3 : 2e-2;
	if (!(e <= reach))
		g_error ("%s: relative error %g against the unrounded reference exceeds %g", what, e, reach);
	g_free (what);
	bd_cpu_conv_clear (&conv);
	bd_free_aligned (hbase);
	bd_free_aligned (q);
	bd_free_aligned (q_known);
	bd_free_aligned (bin.base);
	bd_free_aligned (bout.base);
	g_free (in); g_free (w); g_free (bias); g_free (in_r); g_free (w_r);
	g_free (want); g_free (want_rounded); g_free (got);
}
#endif

/* The integer kernels: 16 bits (full resolution) and 8 (below), on every case. */
static void
test_conv2d_int (void)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (!bd_cpu_vnni_usable ()) {
		g_test_skip ("this CPU has no AVX-512 VNNI (or BACKDROP_CPU_KERNEL asks for another kernel)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	for (size_t i = 0; i < G_N_ELEMENTS (conv_cases); i++) {
		check_int_case (pool, &rng, &conv_cases[i], 16, INPUTS_RANDOM);
		check_int_case (pool, &rng, &conv_cases[i], 8, INPUTS_RANDOM);
		check_int_case (pool, &rng, &conv_cases[i], 8, INPUTS_POSITIVE);
	}
	/* A chunk of 128 inputs and a part of one, at their largest; the 8-bit kernel's chunk of
	 * 1024 and a part of one. */
	check_int_case (pool, &rng, &(conv_case) { 150, 20, 6, 6, 3, false }, 16, INPUTS_LARGEST);
	check_int_case (pool, &rng, &(conv_case) { 150, 20, 6, 6, 3, false }, 8, INPUTS_LARGEST);
	check_int_case (pool, &rng, &(conv_case) { 1100, 20, 3, 5, 3, true }, 8, INPUTS_RANDOM);
	check_int_case (pool, &rng, &(conv_case) { 1100, 20, 3, 5, 3, false }, 8, INPUTS_LARGEST);
	bd_thread_pool_free (pool);
#else
	g_test_skip ("built without the integer kernels (the compiler has no -mavx512vnni)");
#endif
}

#if defined(BD_HAVE_VNNI_KERNELS)
/* A half of @v's bits for one of the values test_int8_pack sets (exact in halves). */
static uint16_t
half_of (float v)
{
	return v == 0 ? 0 : v == 127.0f ? 0x57f0 : v == 63.5f ? 0x53f0 : v == -63.5f ? 0xd3f0 : 0x4000;   /* 2 */
}
#endif

/* bd_cpu_conv_pack_int8's bytes, scales and sums, element by element against their layout
 * ([quad][tap][16 outputs][4 inputs] an output block), nearbyintf's rounding to 127 levels of
 * each output's largest |w|, and each chunk's sum: a 3x3 convolution's weights and one tap
 * of an up-convolution's ([in][out][2][2]), each as floats and as halves (a model's own
 * values), a channel map that leaves stored channels empty over three chunks, an output
 * block with 4 outputs of 16, an output of zeros, exact ties. */
static void
test_int8_pack (void)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (!bd_cpu_vnni_usable ()) {
		g_test_skip ("this CPU has no AVX-512 VNNI (or BACKDROP_CPU_KERNEL asks for another kernel)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { 11 };
	const uint32_t cout = 20, cin = 150, storage = 2400, chunk = BD_INT8_CHUNK * BD_LANES;
	uint32_t in_map[150];
	for (uint32_t ci = 0; ci < cin; ci++)
		in_map[ci] = ci < 20 ? ci : 16 * ci - 2;   /* 20..149 to 318..2382, one stored channel in 16 */
	for (int kind = 0; kind < 4; kind++) {
		bool up = kind & 1, half = kind & 2;
		const char *what = up ? (half ? "up, halves" : "up, floats") : (half ? "3x3, halves" : "3x3, floats");
		uint32_t taps = up ? 1 : 9, tap = 2;   /* the up-convolution's tap packed */
		size_t n = (size_t) cout * cin * (up ? 4 : taps), first = up ? tap : 0;
		size_t s_co = up ? 4 : (size_t) cin * taps, s_ci = up ? (size_t) cout * 4 : taps, s_tap = up ? 0 : 1;
		/* The values (w, as floats); as halves, with the two bytes before them readable. */
		float *w = random_array (&rng, n, 4.0f);
		uint16_t *h = g_new (uint16_t, n + 1);
		h[0] = 0x7c00;   /* infinity, never a weight: read only as the bytes before */
		for (size_t k = 0; k < n; k++) {
			uint32_t bits = (uint32_t) (k * 2654435761u);
			h[1 + k] = (uint16_t) ((bits & 0x8000) | (10 + bits % 8) << 10 | (bits >> 7 & 0x3ff));
		}
		for (uint32_t ci = 0; ci < cin; ci++)
			for (uint32_t t = 0; t < taps; t++) {
				size_t at = first + ci * s_ci + t * s_tap;
				w[at + 3 * s_co] = 0;   /* output 3: all zero */
				/* Output 5: 127 levels of 127, 63.5 and -63.5 exact ties (to 64 and -64). */
				w[at + 5 * s_co] = ci == 0 && t == 0 ? 127.0f : ci % 3 == 0 ? 63.5f : ci % 3 == 1 ? -63.5f : 2.0f;
				h[1 + at + 3 * s_co] = half_of (w[at + 3 * s_co]);
				h[1 + at + 5 * s_co] = half_of (w[at + 5 * s_co]);
			}
		for (size_t k = 0; half && k < n; k++)
			w[k] = bd_half_to_float (h[1 + k]);
		bd_weight model = { .data = half ? (const void *) (h + 1) : (const void *) w, .half = half };
		float bias[20] = { 0 };
		bd_cpu_conv conv;
		g_assert_cmpint (bd_cpu_conv_pack_int8 (pool, &conv, &model, first, bias, cout, cin, taps, s_co, s_ci, s_tap,
		                                        in_map, storage, NULL), ==, BD_OK);
		const float *v = w + first;
		uint32_t quads = (storage + 3) / 4, blocks = (cout + BD_LANES - 1) / BD_LANES;
		uint32_t chunks = (quads * 4 + chunk - 1) / chunk;
		for (uint32_t co = 0; co < blocks * BD_LANES; co++) {
			float top = 0;
			for (uint32_t ci = 0; co < cout && ci < cin; ci++)
				for (uint32_t t = 0; t < taps; t++)
					top = fmaxf (top, fabsf (v[co * s_co + ci * s_ci + t * s_tap]));
			if (conv.int8_scale[co] != top / 127.0f)
				g_error ("%s: output %u's scale %g, want %g", what, co, conv.int8_scale[co], top / 127.0f);
			int32_t sums[3] = { 0, 0, 0 };
			for (uint32_t s = 0; s < quads * 4; s++) {
				int32_t ci = -1;
				for (uint32_t c = 0; c < cin; c++)
					ci = in_map[c] == s ? (int32_t) c : ci;
				for (uint32_t t = 0; t < taps; t++) {
					int8_t want = 0;
					if (ci >= 0 && co < cout && top > 0)
						want = (int8_t) nearbyintf (v[co * s_co + (uint32_t) ci * s_ci + t * s_tap] / top * 127.0f);
					sums[s / chunk] += want;
					size_t at = (((size_t) (co / BD_LANES) * quads + s / 4) * taps + t) * 4 * BD_LANES +
					            co % BD_LANES * 4 + s % 4;
					if (conv.weights_int8[at] != want)
						g_error ("%s: output %u, stored channel %u, tap %u: %d, want %d", what, co, s, t,
						         conv.weights_int8[at], want);
				}
			}
			for (uint32_t k = 0; k < chunks; k++)
				if (conv.int8_sums[(size_t) k * blocks * BD_LANES + co] != sums[k])
					g_error ("%s: output %u, chunk %u: sum %d, want %d", what, co, k,
					         conv.int8_sums[(size_t) k * blocks * BD_LANES + co], sums[k]);
		}
		bd_cpu_conv_clear (&conv);
		g_free (w);
		g_free (h);
	}
	bd_thread_pool_free (pool);
#else
	g_test_skip ("built without the integer kernels (the compiler has no -mavx512vnni)");
#endif
}

#if defined(BD_HAVE_AMX_KERNELS)
/* bf16 of @x rounded to nearest, ties to even, as bits: of the two bf16 around @x, the
 * nearer, by their distances in double (exact for two floats this close). */
static uint16_t
nearest_bf16 (float x)
{
	uint32_t u;
	memcpy (&u, &x, sizeof u);
	uint32_t down = u & 0xffff0000u, up = down + 0x10000u;
	float a, b;
	memcpy (&a, &down, sizeof a);
	memcpy (&b, &up, sizeof b);
	double da = fabs ((double) x - a), db = fabs ((double) x - b);
	if (da == db)
		return (uint16_t) ((down >> 16) & 1 ? up >> 16 : down >> 16);
	return (uint16_t) (da < db ? down >> 16 : up >> 16);
}

/* bd_cpu_conv_pack_amx's B tiles, element by element against their layout (row k of a tile:
 * channels 2k and 2k + 1 of its pair side by side for each output) and bf16's rounding:
 * weights with ties, denormals, signed zeros, a channel map that leaves stored channels
 * empty, and an output block with 4 outputs of 16. */
static void
test_amx_pack (void)
{
	if (!bd_cpu_amx_usable ()) {
		g_test_skip ("this CPU or system has no AMX (or BACKDROP_CPU_KERNEL asks for another kernel)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { 7 };
	const uint32_t cout = 20, cin = 37, storage = 70;
	const uint32_t pair = 2 * BD_LANES, tile = BD_LANES * pair;   /* a tile row, a tile: bf16 values */
	uint32_t in_map[37];
	for (uint32_t ci = 0; ci < cin; ci++)
		in_map[ci] = ci < 20 ? ci : 2 * ci - 6;   /* 20..36 to 34..66, every other stored channel */
	for (uint32_t taps = 1; taps <= 9; taps += 8) {
		size_t n = (size_t) cout * cin * taps;
		float *w = random_array (&rng, n, 4.0f);
		for (size_t k = 0; k < n; k += 5) {
			uint32_t bits = (uint32_t) k * 2654435761u, kind = (uint32_t) (k / 5) % 4;
			if (kind == 0)
				bits = (bits & 0x80ff0000u) | 0x3f008000u;   /* a tie: the low half 0x8000 */
			else if (kind == 1)
				bits &= 0x807fffffu;                         /* a denormal */
			else if (kind == 2)
				bits &= 0x80000000u;                         /* a signed zero */
			else
				bits = (bits & 0x80ff0000u) | 0x3f007fffu;   /* just under a tie */
			memcpy (&w[k], &bits, sizeof bits);
		}
		float bias[20] = { 0 };
		bd_cpu_conv conv;
		g_assert_cmpint (bd_cpu_conv_pack_amx (pool, &conv, w, bias, cout, cin, taps, (size_t) cin * taps, taps, 1,
		                                       in_map, storage, NULL), ==, BD_OK);
		uint32_t pairs = (storage + pair - 1) / pair, blocks = (cout + BD_LANES - 1) / BD_LANES;
		for (uint32_t ob = 0; ob < blocks; ob++)
			for (uint32_t p = 0; p < pairs; p++)
				for (uint32_t t = 0; t < taps; t++)
					for (uint32_t k = 0; k < pair; k++)
						for (uint32_t o = 0; o < BD_LANES; o++) {
							uint32_t s = p * pair + k, co = ob * BD_LANES + o;
							int32_t ci = -1;
							for (uint32_t c = 0; c < cin; c++)
								ci = in_map[c] == s ? (int32_t) c : ci;
							uint16_t want = ci >= 0 && co < cout
							                        ? nearest_bf16 (w[((size_t) co * cin + (size_t) ci) * taps + t])
							                        : 0;
							size_t at = ((size_t) (ob * pairs + p) * taps + t) * tile +
							            (k / 2) * pair + 2 * o + k % 2;
							if (conv.weights_amx[at] != want)
								g_error ("%u taps: output %u, stored channel %u, tap %u: 0x%04x, want 0x%04x", taps,
								         co, s, t, conv.weights_amx[at], want);
						}
		bd_cpu_conv_clear (&conv);
		g_free (w);
	}
	bd_thread_pool_free (pool);
}
#endif

/* Besides conv_cases' 3x3 ones, for the AMX kernel: widths that are and are not multiples of
 * 16 (the last tile overlaps the one before) or under 16 (short tiles), odd heights (the last
 * row pair overlaps) and one row, odd plane counts (a pair's second half empty), odd output
 * block counts. */
static const conv_case amx_cases[] = {
	{ 16, 16, 2, 16, 3, true },     /* one tile */
	{ 48, 40, 5, 33, 3, false },
	{ 150, 20, 3, 17, 3, true },
	{ 96, 64, 11, 64, 3, true },
	{ 512, 32, 4, 22, 3, true },    /* the bottleneck's depth */
	{ 32, 48, 1, 40, 3, true },     /* one row */
	{ 64, 32, 1, 3, 3, false },
};

static void
test_conv2d_amx (void)
{
#if defined(BD_HAVE_AMX_KERNELS)
	if (!bd_cpu_amx_usable ()) {
		g_test_skip ("this CPU or system has no AMX (or BACKDROP_CPU_KERNEL asks for another kernel)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	for (size_t i = 0; i < G_N_ELEMENTS (conv_cases); i++)
		if (conv_cases[i].k == 3)
			check_bf16_case (pool, &rng, &conv_cases[i], KERNEL_AMX);
	for (size_t i = 0; i < G_N_ELEMENTS (amx_cases); i++)
		check_bf16_case (pool, &rng, &amx_cases[i], KERNEL_AMX);
	bd_thread_pool_free (pool);
#else
	g_test_skip ("built without the AMX kernel (the compiler has no -mamx-bf16)");
#endif
}

static void
test_conv_transpose (void)
{
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	const uint32_t cases[][4] = { { 32, 16, 5, 7 }, { 20, 9, 1, 1 }, { 256, 128, 4, 3 }, { 17, 40, 6, 29 },
		                          { 64, 32, 3, 16 }, { 96, 48, 2, 37 } };
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		uint32_t cin = cases[i][0], cout = cases[i][1], h = cases[i][2], w = cases[i][3];
		float *in = random_array (&rng, (size_t) cin * h * w, 1);
		float *wt = random_array (&rng, (size_t) cin * cout * 4, 0.5f);
		float *bias = random_array (&rng, cout, 0.5f);
		float *want = g_new (float, (size_t) cout * 4 * h * w);
		ref_conv_transpose2x2 (in, cin, h, w, wt, bias, cout, want);
		bd_cpu_conv taps[4];
		for (int t = 0; t < 4; t++)
			g_assert_cmpint (bd_cpu_conv_pack (&taps[t], wt + t, bias, cout, cin, 1, 4, (size_t) cout * 4, 0,
			                                   NULL, cin, NULL), ==, BD_OK);
		blocked bin = blocked_new (cin, h, w), bout = blocked_new (cout, 2 * h, 2 * w);
		blocked_from_dense (&bin, in);
		blocked_poison (&bout);
		bd_conv_transpose2x2 (pool, taps, &bin.view, &bout.view);
		float *got = blocked_to_dense (&bout);
		check_close (got, want, (size_t) cout * 4 * h * w, 1e-5, "transposed conv");
		for (int t = 0; t < 4; t++)
			bd_cpu_conv_clear (&taps[t]);
#if defined(BD_HAVE_VNNI_KERNELS)
		/* In 8 bits: against the reference on inputs rounded to 255 levels over their range
		 * (zero a level) and each tap's weights to 127 levels of each output's largest. */
		if (bd_cpu_vnni_usable ()) {
			size_t nin = (size_t) cin * h * w, nw = (size_t) cin * cout * 4;
			float hi = 0, lo = 0;
			for (size_t k = 0; k < nin; k++) {
				hi = fmaxf (hi, in[k]);
				lo = fminf (lo, in[k]);
			}
			float scale = (hi - lo) / 255.0f, zero = nearbyintf (-lo / scale);
			float *in_r = g_new (float, nin), *wt_r = g_new (float, nw);
			for (size_t k = 0; k < nin; k++)
				in_r[k] = (fminf (fmaxf (nearbyintf (in[k] * (1.0f / scale)) + zero, 0), 255) - zero) * scale;
			for (uint32_t co = 0; co < cout; co++)
				for (int t = 0; t < 4; t++) {
					float top = 0;
					for (uint32_t ci = 0; ci < cin; ci++)
						top = fmaxf (top, fabsf (wt[((size_t) ci * cout + co) * 4 + t]));
					for (uint32_t ci = 0; ci < cin; ci++) {
						size_t k = ((size_t) ci * cout + co) * 4 + t;
						wt_r[k] = nearbyintf (wt[k] / top * 127) * (top / 127);
					}
				}
			ref_conv_transpose2x2 (in_r, cin, h, w, wt_r, bias, cout, want);
			for (int t = 0; t < 4; t++)
				g_assert_cmpint (bd_cpu_conv_pack_int8 (pool, &taps[t], &(bd_weight) { .data = wt }, (size_t) t, bias,
				                                        cout, cin, 1, 4, (size_t) cout * 4, 0, NULL, cin, NULL),
				                 ==, BD_OK);
			size_t nq = (size_t) bin.planes * bin.view.plane_stride;
			uint8_t *q = bd_alloc_zeroed (nq, 1);
			g_assert_nonnull (q);
			blocked_poison (&bout);
			bd_cpu_view_int8 qv = bd_to_int8 (pool, &bin.view, bin.planes, NULL, q);
			bd_range found = { 0, 0 };
			bd_conv_transpose2x2_int8 (pool, taps, &qv, &bout.view, &found);
			g_free (got);
			got = blocked_to_dense (&bout);
			check_close (got, want, (size_t) cout * 4 * h * w, 1e-5, "8-bit transposed conv");
			float out_least = 0, out_largest = 0;
			for (size_t k = 0; k < (size_t) cout * 4 * h * w; k++) {
				out_least = fminf (out_least, got[k]);
				out_largest = fmaxf (out_largest, got[k]);
			}
			g_assert_cmpfloat (found.least, ==, out_least);
			g_assert_cmpfloat (found.largest, ==, out_largest);
			for (int t = 0; t < 4; t++)
				bd_cpu_conv_clear (&taps[t]);
			bd_free_aligned (q);
			g_free (in_r);
			g_free (wt_r);
		}
#endif
#if defined(BD_HAVE_AMX_KERNELS)
		/* On AMX: against the reference on bf16-rounded inputs and weights. */
		if (bd_cpu_amx_usable ()) {
			size_t nin = (size_t) cin * h * w, nw = (size_t) cin * cout * 4;
			float *in_r = g_new (float, nin), *wt_r = g_new (float, nw);
			for (size_t k = 0; k < nin; k++)
				in_r[k] = round_bf16 (in[k]);
			for (size_t k = 0; k < nw; k++)
				wt_r[k] = round_bf16 (wt[k]);
			ref_conv_transpose2x2 (in_r, cin, h, w, wt_r, bias, cout, want);
			for (int t = 0; t < 4; t++)
				g_assert_cmpint (bd_cpu_conv_pack_amx (pool, &taps[t], wt + t, bias, cout, cin, 1, 4, (size_t) cout * 4,
				                                       0, NULL, cin, NULL), ==, BD_OK);
			size_t nhalf = (size_t) (bin.planes + 1) / 2 * 2 * bin.view.plane_stride;
			uint16_t *half = bd_alloc_zeroed (nhalf, sizeof *half);
			g_assert_nonnull (half);
			memset (half, 0xff, nhalf * sizeof *half);
			blocked_poison (&bout);
			bd_cpu_view_bf16 hv = bd_to_bf16_pairs (pool, &bin.view, bin.planes, half);
			bd_conv_transpose2x2_amx (pool, taps, &hv, &bout.view, NULL);
			g_free (got);
			got = blocked_to_dense (&bout);
			check_close (got, want, (size_t) cout * 4 * h * w, 1e-5, "AMX transposed conv");
			/* Into bf16 pairs: each output the fp32 one rounded, a last odd block's pair
			 * half zero, borders left. */
			uint32_t pairs = (bout.planes + 1) / 2;
			blocked pout = blocked_new (pairs * 2 * BD_LANES, 2 * h, 2 * w);
			blocked_poison (&pout);
			bd_cpu_view_bf16 pv = { (uint16_t *) pout.view.data, 2 * h, 2 * w, 2 * pout.view.row_stride,
			                        2 * pout.view.plane_stride };
			bd_conv_transpose2x2_amx (pool, taps, &hv, NULL, &pv);
			for (uint32_t ch = 0; ch < pairs * 32; ch++)
				for (int64_t y = -1; y <= 2 * h; y++)
					for (int64_t x = -1; x <= 2 * w; x++) {
						uint16_t v = pv.data[(size_t) (ch / 32) * pv.plane_stride + (ptrdiff_t) y * (ptrdiff_t) pv.row_stride +
						                     (ptrdiff_t) x * 32 + ch % 32];
						bool inside = y >= 0 && x >= 0 && y < 2 * h && x < 2 * w && ch < cout;
						uint16_t expect = inside ? bd_bf16_from_float (got[((size_t) ch * 2 * h + (size_t) y) * 2 * w + (size_t) x])
						                         : 0;
						if (v != expect)
							g_error ("AMX transposed conv into pairs: channel %u pixel (%lld, %lld) is 0x%04x, not 0x%04x",
							         ch, (long long) x, (long long) y, v, expect);
					}
			bd_free_aligned (pout.base);
			for (int t = 0; t < 4; t++)
				bd_cpu_conv_clear (&taps[t]);
			bd_free_aligned (half);
			g_free (in_r);
			g_free (wt_r);
		}
#endif
		bd_free_aligned (bin.base);
		bd_free_aligned (bout.base);
		g_free (in); g_free (wt); g_free (bias); g_free (want); g_free (got);
	}
	bd_thread_pool_free (pool);
}

static void
test_maxpool (void)
{
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	const uint32_t cases[][3] = { { 16, 8, 8 }, { 3, 2, 2 }, { 37, 14, 22 } };
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		uint32_t c = cases[i][0], h = cases[i][1], w = cases[i][2];
		float *in = random_array (&rng, (size_t) c * h * w, 1);
		float *want = g_new (float, (size_t) c * h * w / 4);
		ref_maxpool2x2 (in, c, h, w, want);
		blocked bin = blocked_new (c, h, w), bout = blocked_new (c, h / 2, w / 2);
		blocked_from_dense (&bin, in);
		blocked_poison (&bout);
		bd_maxpool2x2 (pool, bout.planes, &bin.view, &bout.view);
		float *got = blocked_to_dense (&bout);
		check_close (got, want, (size_t) c * h * w / 4, 0, "max-pool");
#if defined(BD_HAVE_VNNI_KERNELS)
		/* Of a ReLU's output, the 8-bit copy pooled straight from it is the copy of the
		 * pooled buffer, byte for byte: from the range its writer found, and measured. */
		if (bd_cpu_vnni_usable ()) {
			float largest = 0;
			for (size_t k = 0; k < (size_t) c * h * w; k++) {
				in[k] = k % 7 ? fabsf (in[k]) * 3 : 0;
				largest = fmaxf (largest, in[k]);
			}
			blocked_from_dense (&bin, in);
			bd_maxpool2x2 (pool, bout.planes, &bin.view, &bout.view);
			size_t nq = (size_t) bout.planes * bout.view.plane_stride;
			uint8_t *want_q = bd_alloc_zeroed (nq, 1), *got_q = bd_alloc_zeroed (nq, 1);
			g_assert_nonnull (want_q);
			g_assert_nonnull (got_q);
			memset (want_q, 0x55, nq);
			bd_cpu_view_int8 wq = bd_to_int8 (pool, &bout.view, bout.planes, NULL, want_q);
			blocked_poison (&bout);   /* the pooled buffer is never written: only its shape counts */
			bd_range found = { 0, largest };
			for (int known = 0; known < 2; known++) {
				memset (got_q, 0x55, nq);
				bd_cpu_view_int8 gq = bd_to_int8_pooled (pool, &bin.view, &bout.view, bout.planes,
				                                         known ? &found : NULL, got_q);
				g_assert_cmpfloat (gq.scale, ==, wq.scale);
				g_assert_cmpint (gq.offset, ==, wq.offset);
				g_assert_cmpmem (got_q, nq, want_q, nq);
			}
			bd_free_aligned (want_q);
			bd_free_aligned (got_q);
		}
#endif
		bd_free_aligned (bin.base);
		bd_free_aligned (bout.base);
		g_free (in); g_free (want); g_free (got);
	}
	bd_thread_pool_free (pool);
}

#if defined(BD_HAVE_VNNI_KERNELS)
/* @b's values (random halves, widened exactly into its floats) as a halves buffer; *base to free. */
static bd_cpu_view
halves_of (blocked *b, bd_rng *rng, bool positive, uint16_t **base)
{
	bd_cpu_view v = halves_like (b, base);
	for (uint32_t c = 0; c < b->planes * BD_LANES; c++)
		for (uint32_t y = 0; y < v.height; y++)
			for (uint32_t x = 0; x < v.width; x++) {
				size_t at = (size_t) (c / BD_LANES) * v.plane_stride + y * v.row_stride + x * BD_LANES + c % BD_LANES;
				float f = c < b->channels ? bd_rng_uniform (rng, positive ? 0 : -3, 3) : 0;
				v.halves[at] = half_rounded (f);
				b->view.data[at] = bd_half_to_float (v.halves[at]);
			}
	return v;
}
#endif

/* The copies to integers and the head read an integer session's halves as the floats they
 * stand for: the same bytes and the same floats as from those floats, plain and pooled, the
 * range measured or known; and a half that overflowed to infinity becomes the top level. */
static void
test_halves (void)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (!bd_cpu_vnni_usable ()) {
		g_test_skip ("this CPU has no AVX-512 VNNI (or BACKDROP_CPU_KERNEL asks for another kernel)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	const uint32_t cases[][3] = { { 21, 9, 37 }, { 32, 6, 16 }, { 3, 5, 5 } };
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		uint32_t c = cases[i][0], h = cases[i][1], w = cases[i][2];
		for (int positive = 0; positive < 2; positive++) {
			blocked f = blocked_new (c, h, w), shape = blocked_new (c, h / 2, w / 2);
			uint16_t *hbase;
			bd_cpu_view hv = halves_of (&f, &rng, positive, &hbase);
			size_t n8 = (size_t) f.planes * f.view.plane_stride, n16 = 2 * n8;
			uint8_t *a = bd_alloc_zeroed (n16, 1), *b = bd_alloc_zeroed (n16, 1);
			g_assert_nonnull (a);
			g_assert_nonnull (b);
			bd_range known = { 0, 0 };
			for (size_t k = 0; k < f.floats; k++) {
				known.least = fminf (known.least, f.base[k]);
				known.largest = fmaxf (known.largest, f.base[k]);
			}
			for (int k = 0; k < 2; k++) {
				const bd_range *r = k ? &known : NULL;
				memset (a, 0x55, n16);
				memset (b, 0x77, n16);
				bd_cpu_view_int8 qa = bd_to_int8 (pool, &f.view, f.planes, r, a);
				bd_cpu_view_int8 qb = bd_to_int8 (pool, &hv, f.planes, r, b);
				g_assert_cmpfloat (qa.scale, ==, qb.scale);
				g_assert_cmpint (qa.offset, ==, qb.offset);
				g_assert_cmpmem (a, n8, b, n8);
				memset (a, 0x55, n16);
				memset (b, 0x77, n16);
				bd_cpu_view_int16 sa = bd_to_int16 (pool, &f.view, f.planes, 4000, r, (int16_t *) a);
				bd_cpu_view_int16 sb = bd_to_int16 (pool, &hv, f.planes, 4000, r, (int16_t *) b);
				g_assert_cmpfloat (sa.scale, ==, sb.scale);
				g_assert_cmpmem (a, n16, b, n16);
				if (!positive)
					continue;   /* pooling reads a ReLU's output */
				size_t np = (size_t) shape.planes * shape.view.plane_stride;
				memset (a, 0x55, n16);
				memset (b, 0x77, n16);
				bd_to_int8_pooled (pool, &f.view, &shape.view, shape.planes, r, a);
				bd_to_int8_pooled (pool, &hv, &shape.view, shape.planes, r, b);
				g_assert_cmpmem (a, np, b, np);
			}
			/* The head: the same floats from either. */
			float *wt = random_array (&rng, c, 1), *want = g_new (float, (size_t) h * w), *got = g_new (float, (size_t) h * w);
			bd_head_sigmoid (pool, wt, 0.25f, c, &f.view, want);
			bd_head_sigmoid (pool, wt, 0.25f, c, &hv, got);
			g_assert_cmpmem (got, (gsize) h * w * sizeof *got, want, (gsize) h * w * sizeof *want);
			/* Infinity, where the writer's range (known) ends at a finite largest value. */
			hv.halves[0] = 0x7c00;
			known.largest = 70000;
			memset (b, 0x77, n16);
			bd_to_int8 (pool, &hv, f.planes, &known, b);
			g_assert_cmpint (b[(size_t) hv.row_stride + BD_LANES], ==, 255);   /* pixel (0, 0), lane 0 */
			g_assert_cmpint (b[(size_t) hv.row_stride + BD_LANES + 1], <, 255);
			bd_free_aligned (hbase);
			bd_free_aligned (a);
			bd_free_aligned (b);
			bd_free_aligned (f.base);
			bd_free_aligned (shape.base);
			g_free (wt); g_free (want); g_free (got);
		}
	}
	bd_thread_pool_free (pool);
#else
	g_test_skip ("built without the integer kernels (the compiler has no -mavx512vnni)");
#endif
}

/* The photo's 16-bit copy made from its three planes is the copy of the blocked photo (lanes
 * 0..2 of one plane, as the session's fill_input writes it), byte for byte: widths under,
 * at and over 16 pixels, a photo of zeros. */
static void
test_photo_int16 (void)
{
#if defined(BD_HAVE_VNNI_KERNELS)
	if (!bd_cpu_vnni_usable ()) {
		g_test_skip ("this CPU has no AVX-512 VNNI (or BACKDROP_CPU_KERNEL asks for another kernel)");
		return;
	}
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	const uint32_t cases[][3] = { { 7, 5, 0 }, { 16, 9, 0 }, { 37, 23, 0 }, { 4, 3, 1 } };
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		uint32_t w = cases[i][0], h = cases[i][1];
		size_t n = 3 * (size_t) h * w;
		float *photo = random_array (&rng, n, 2.5f);
		for (size_t k = 0; cases[i][2] && k < n; k++)
			photo[k] = 0;
		blocked b = blocked_new (3, h, w);
		blocked_from_dense (&b, photo);
		size_t bytes = (size_t) b.view.plane_stride * sizeof (int16_t);
		int16_t *want = bd_alloc_zeroed (bytes, 1), *got = bd_alloc_zeroed (bytes, 1);
		g_assert_nonnull (want);
		g_assert_nonnull (got);
		memset (want, 0x55, bytes);
		memset (got, 0x77, bytes);
		bd_cpu_view_int16 wq = bd_to_int16 (pool, &b.view, 1, 8191, NULL, want);
		bd_cpu_view_int16 gq = bd_photo_to_int16 (pool, photo, &b.view, 8191, got);
		g_assert_cmpfloat (gq.scale, ==, wq.scale);
		g_assert_true (gq.data == got + b.view.row_stride + BD_LANES);
		g_assert_cmpmem (got, bytes, want, bytes);
		bd_free_aligned (want);
		bd_free_aligned (got);
		bd_free_aligned (b.base);
		g_free (photo);
	}
	bd_thread_pool_free (pool);
#else
	g_test_skip ("built without the integer kernels (the compiler has no -mavx512vnni)");
#endif
}

static void
test_head (void)
{
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_rng rng = { g_test_rand_int () };
	/* Widths under, at and over the 16 pixels the AVX-512 rows take at a time, with a tail;
	 * channels filling their last plane or not. */
	const uint32_t cases[][3] = { { 21, 7, 19 }, { 32, 5, 53 }, { 16, 3, 16 }, { 3, 4, 9 } };
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		uint32_t c = cases[i][0], h = cases[i][1], w = cases[i][2];
		float *in = random_array (&rng, (size_t) c * h * w, 1);
		float *wt = random_array (&rng, c, 1);
		float bias = 0.25f;
		float *want = g_new (float, (size_t) h * w), *got = g_new (float, (size_t) h * w);
		float *again = g_new (float, (size_t) h * w);
		ref_conv2d (in, c, h, w, wt, &bias, 1, 1, 0, want);
		for (size_t k = 0; k < (size_t) h * w; k++) {
			want[k] = 1.0f / (1.0f + expf (-want[k]));
			got[k] = NAN;
		}
		blocked bin = blocked_new (c, h, w);
		blocked_from_dense (&bin, in);
		bd_head_sigmoid (pool, wt, bias, c, &bin.view, got);
		check_close (got, want, (size_t) h * w, 1e-6, "head");
		/* Every build of the rows (one per x86-64 level) gives the same floats. */
		static const char *const builds[] = { "generic", "v3" };
		for (gsize k = 0; k < G_N_ELEMENTS (builds); k++) {
			g_setenv ("BACKDROP_CPU_KERNEL", builds[k], TRUE);
			for (size_t j = 0; j < (size_t) h * w; j++)
				again[j] = NAN;
			bd_head_sigmoid (pool, wt, bias, c, &bin.view, again);
			g_assert_cmpmem (again, (gsize) h * w * sizeof *again, got, (gsize) h * w * sizeof *got);
		}
		g_unsetenv ("BACKDROP_CPU_KERNEL");
		bd_free_aligned (bin.base);
		g_free (in); g_free (wt); g_free (want); g_free (got); g_free (again);
	}
	bd_thread_pool_free (pool);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	g_test_add_func ("/core/ops/conv2d", test_conv2d);
	g_test_add_func ("/core/ops/conv2d-bf16", test_conv2d_bf16);
	g_test_add_func ("/core/ops/conv2d-int", test_conv2d_int);
	g_test_add_func ("/core/ops/conv2d-amx", test_conv2d_amx);
#if defined(BD_HAVE_AMX_KERNELS)
	g_test_add_func ("/core/ops/amx-pack", test_amx_pack);
#endif
	g_test_add_func ("/core/ops/int8-pack", test_int8_pack);
	g_test_add_func ("/core/ops/conv-transpose2x2", test_conv_transpose);
	g_test_add_func ("/core/ops/maxpool2x2", test_maxpool);
	g_test_add_func ("/core/ops/head-sigmoid", test_head);
	g_test_add_func ("/core/ops/halves", test_halves);
	g_test_add_func ("/core/ops/photo-int16", test_photo_int16);
	return g_test_run ();
}
