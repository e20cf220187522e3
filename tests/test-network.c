/* SPDX-License-Identifier: Apache-2.0 */
/* The whole U-Net: the CPU engine against the naive reference on random models of many
 * shapes, and against PyTorch's own output for the shipped model (tests/golden, written by
 * training/export.py). */
#include "backdrop-private.h"
#include "reference.h"
#include "synthetic-model.h"

#include <glib.h>
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

typedef struct { uint32_t depth, widths[4], h, w; } net_case;

/* Fast precision runs the convolutions in bf16 on CPUs with AMX (ops/conv-amx.c) or, on AMD,
 * AVX-512 BF16 (ops/conv-bf16.c), and in integers on other Intel CPUs with AVX-512 VNNI
 * (ops/conv-int16.c, ops/conv-int8.c); exact precision is fp32 everywhere. */
static bd_session *
open_cpu_session (const char *path, bd_model **model, bd_precision precision)
{
	bd_session *s = NULL;
	bd_error err = { 0 };
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.precision = precision;
	if (bd_model_open (path, model, &err) != BD_OK || bd_session_new (*model, &o, &s, &err) != BD_OK)
		g_error ("%s: %s", path, err.message);
	return s;
}

static const net_case net_cases[] = {
	{ 1, { 4 }, 5, 7 },                    /* no pooling at all */
	{ 2, { 8, 16 }, 6, 10 },
	{ 3, { 5, 12, 20 }, 12, 20 },          /* widths that are not multiples of 16 */
	{ 3, { 16, 32, 64 }, 16, 36 },
	{ 4, { 24, 17, 40, 33 }, 24, 16 },     /* widths that shrink and grow */
};

/* A CPU session on a random model of @c's shape; *bytes: the model file, for the reference. */
static bd_session *
case_session (const net_case *c, uint64_t seed, uint8_t **bytes, bd_model **model, bd_precision precision)
{
	bd_synthetic_spec spec = { .depth = c->depth, .input_size = 64, .seed = seed };
	memcpy (spec.widths, c->widths, sizeof c->widths);
	size_t size;
	*bytes = bd_synthetic_model_bytes (&spec, &size);
	/* Named for this process: two runs of the test at once must not share it. */
	g_autofree char *name = g_strdup_printf ("backdrop-test-network-%d.bdm", (int) getpid ());
	g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
	g_assert_true (g_file_set_contents (path, (const char *) *bytes, (gssize) size, NULL));
	bd_session *s = open_cpu_session (path, model, precision);
	g_unlink (path);
	return s;
}

/* Relative error allowed: fp32 sums in another order, or bf16 inputs and weights (8
 * significant bits) through a few layers, or 8-bit integers (255 levels of an input's range,
 * 127 of a weight's, the up-convolutions too): on these random nets a median of 0.006, the
 * largest of 1,500 runs 0.043, where a wrong kernel gives about 1. */
#define EXACT_TOLERANCE 1e-5
#define BF16_TOLERANCE  3e-2
#define INT8_TOLERANCE  0.1

static void
run_case (const net_case *c, uint64_t seed, bd_precision precision)
{
	g_autofree uint8_t *bytes = NULL;
	bd_model *m = NULL;
	bd_session *s = case_session (c, seed, &bytes, &m, precision);
	bool int8 = strstr (bd_session_device_description (s), "int8") != NULL;
	double tolerance = precision == BD_PRECISION_EXACT ? EXACT_TOLERANCE : int8 ? INT8_TOLERANCE : BF16_TOLERANCE;
	bd_error err = { 0 };

	size_t n = (size_t) c->h * c->w;
	g_autofree float *in = g_new (float, 3 * n), *got = g_new (float, n), *want = g_new (float, n);
	bd_rng rng = { seed + 1 };
	for (size_t i = 0; i < 3 * n; i++)
		in[i] = bd_rng_uniform (&rng, -2, 2);
	for (size_t i = 0; i < n; i++)
		got[i] = NAN;
	g_assert_cmpint (ref_unet_forward (bytes, in, c->h, c->w, want), ==, 0);
	/* Twice: the second run reuses the session's plan and buffers. */
	for (int run = 0; run < 2; run++) {
		g_assert_cmpint (bd_session_forward (s, in, c->h, c->w, got, &err), ==, BD_OK);
		double e = ref_relative_error (got, want, n);
		g_test_message ("%s depth %u widths %u.. at %ux%u: relative error %g",
		                precision == BD_PRECISION_EXACT ? "exact" : "fast", c->depth, c->widths[0], c->w, c->h, e);
		if (!(e < tolerance))
			g_error ("depth %u widths %u.. at %ux%u: relative error %g", c->depth, c->widths[0], c->w, c->h, e);
	}
	bd_session_free (s);
	bd_model_free (m);
}

static void
test_random_unets (void)
{
	for (size_t i = 0; i < G_N_ELEMENTS (net_cases); i++) {
		uint64_t seed = g_test_rand_int ();
		run_case (&net_cases[i], seed, BD_PRECISION_EXACT);
		run_case (&net_cases[i], seed, BD_PRECISION_FAST);
	}
}

/* The two kept sizes share one arena: sizes in turn (a photo's pass and its mirror pass),
 * a third size that takes the place of the older, growing and shrinking, each exactly as a
 * fresh session computes it. Stale padding or spare lanes left by another size would show.
 * From { 16, 32 } on, the smaller sizes lie in the rows and planes of { 24, 40 }: their
 * right and bottom padding is where the larger size wrote. */
static void
test_sizes_share_buffers (void)
{
	const net_case *c = &net_cases[4];   /* widths not multiples of 16 */
	static const uint32_t sizes[][2] = { { 24, 40 }, { 16, 16 }, { 24, 40 }, { 32, 24 }, { 16, 16 },
	                                     { 40, 48 }, { 16, 16 }, { 24, 40 }, { 16, 32 }, { 24, 40 },
	                                     { 16, 32 }, { 24, 32 }, { 16, 32 } };
	for (int precision = 0; precision < 2; precision++) {
		bd_precision pr = precision ? BD_PRECISION_FAST : BD_PRECISION_EXACT;
		g_autofree uint8_t *bytes = NULL;
		bd_model *m = NULL;
		bd_session *s = case_session (c, 31, &bytes, &m, pr);
		for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++) {
			uint32_t h = sizes[i][0], w = sizes[i][1];
			size_t n = (size_t) h * w;
			g_autofree float *in = g_new (float, 3 * n), *got = g_new (float, n), *fresh = g_new (float, n);
			bd_rng rng = { 100 + i };
			for (size_t k = 0; k < 3 * n; k++)
				in[k] = bd_rng_uniform (&rng, -2, 2);
			bd_error err = { 0 };
			g_assert_cmpint (bd_session_forward (s, in, h, w, got, &err), ==, BD_OK);
			g_autofree uint8_t *bytes2 = NULL;
			bd_model *m2 = NULL;
			bd_session *s2 = case_session (c, 31, &bytes2, &m2, pr);
			g_assert_cmpint (bd_session_forward (s2, in, h, w, fresh, &err), ==, BD_OK);
			g_assert_cmpmem (got, n * sizeof *got, fresh, n * sizeof *fresh);
			bd_session_free (s2);
			bd_model_free (m2);
		}
		bd_session_free (s);
		bd_model_free (m);
	}
}

/* bd_session_forward_batch: each of a batch of different inputs as the reference gives it. */
static void
test_batch (void)
{
	const net_case *c = &net_cases[3];
	g_autofree uint8_t *bytes = NULL;
	bd_model *m = NULL;
	bd_session *s = case_session (c, 17, &bytes, &m, BD_PRECISION_EXACT);

	enum { B = 3 };
	size_t n = (size_t) c->h * c->w;
	g_autofree float *in = g_new (float, B * 3 * n), *got = g_new (float, B * n), *want = g_new (float, n);
	bd_rng rng = { 23 };
	for (size_t i = 0; i < B * 3 * n; i++)
		in[i] = bd_rng_uniform (&rng, -2, 2);
	for (size_t i = 0; i < B * n; i++)
		got[i] = NAN;
	bd_error err = { 0 };
	g_assert_cmpint (bd_session_forward_batch (s, in, B, c->h, c->w, got, &err), ==, BD_OK);
	for (int b = 0; b < B; b++) {
		g_assert_cmpint (ref_unet_forward (bytes, in + b * 3 * n, c->h, c->w, want), ==, 0);
		g_assert_cmpfloat (ref_relative_error (got + b * n, want, n), <, 1e-5);
	}
	g_assert_cmpint (bd_session_forward_batch (s, in, 0, c->h, c->w, got, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_session_forward_batch (s, in, BD_MAX_BATCH + 1, c->h, c->w, got, &err), ==,
	                 BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "batch"));
	bd_session_free (s);
	bd_model_free (m);
}

static void
test_bad_sizes (void)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 3, 4, 64, 3);
	size_t size;
	g_autofree uint8_t *bytes = bd_synthetic_model_bytes (&spec, &size);
	/* Named for this process: two runs of the test at once must not share it. */
	g_autofree char *name = g_strdup_printf ("backdrop-test-network2-%d.bdm", (int) getpid ());
	g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
	g_assert_true (g_file_set_contents (path, (const char *) bytes, (gssize) size, NULL));
	bd_model *m = NULL;
	bd_session *s = NULL;
	g_assert_cmpint (bd_model_open (path, &m, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (m, NULL, &s, NULL), ==, BD_OK);
	float in[3 * 8 * 8], out[8 * 8];
	memset (in, 0, sizeof in);
	bd_error err = { 0 };
	g_assert_cmpint (bd_session_forward (s, in, 6, 8, out, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "multiples of 4"));
	g_assert_cmpint (bd_session_forward (s, in, 0, 8, out, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_session_forward (s, NULL, 8, 8, out, &err), ==, BD_ERR_INVALID_ARGUMENT);
	bd_session_free (s);
	bd_model_free (m);
	g_unlink (path);
}

/* Where a photo goes on the canvas: a larger photo is scaled to the input size, a smaller one
 * keeps its size (enlarging only blurs it, docs/MODEL.md), both padded to the multiple. */
static void
test_letterbox (void)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 3, 4, 64, 3);   /* depth 3: multiples of 4; input 64 */
	size_t size;
	g_autofree uint8_t *bytes = bd_synthetic_model_bytes (&spec, &size);
	/* Named for this process: two runs of the test at once must not share it. */
	g_autofree char *name = g_strdup_printf ("backdrop-test-network3-%d.bdm", (int) getpid ());
	g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
	g_assert_true (g_file_set_contents (path, (const char *) bytes, (gssize) size, NULL));
	bd_model *m = NULL;
	bd_session *s = open_cpu_session (path, &m, BD_PRECISION_FAST), *s32 = NULL;
	g_unlink (path);
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.input_size = 32;
	g_assert_cmpint (bd_session_new (m, &o, &s32, NULL), ==, BD_OK);
	/* mirror: the mirror pass's letterbox, at 9/8 of the photo's scale (rounded), which
	 * enlarges small photos too. */
	static const struct { int input32, mirror; uint32_t w, h, sw, sh, pw, ph, ox, oy; } cases[] = {
		{ 0, 0, 200, 100, 64, 32, 64, 32, 0, 0 },    /* shrunk to the input size */
		{ 0, 0, 63, 200, 20, 64, 20, 64, 0, 0 },     /* 20.16 rounds to 20 */
		{ 0, 0, 40, 30, 40, 30, 40, 32, 0, 1 },      /* smaller: kept, padded evenly */
		{ 0, 0, 64, 10, 64, 10, 64, 12, 0, 1 },      /* exactly the input size */
		{ 0, 0, 3, 2, 3, 2, 4, 4, 0, 1 },            /* odd padding to the right and bottom */
		{ 1, 0, 40, 30, 32, 24, 32, 24, 0, 0 },      /* a session whose input size is 32 */
		{ 1, 0, 20, 10, 20, 10, 20, 12, 0, 1 },
		{ 0, 1, 200, 100, 72, 36, 72, 36, 0, 0 },    /* 64 -> 72 */
		{ 0, 1, 40, 30, 45, 34, 48, 36, 1, 1 },      /* 40 -> 45, 33.75 -> 34 */
		{ 0, 1, 3, 2, 3, 2, 4, 4, 0, 1 },            /* 3 -> 3.375 -> 3 */
		{ 0, 1, 1, 1, 1, 1, 4, 4, 1, 1 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		const bd_session *cs = cases[i].input32 ? s32 : s;
		bd_letterbox lb = cases[i].mirror ? bd_letterbox_mirror_for (cs, cases[i].w, cases[i].h)
		                                  : bd_letterbox_for (cs, cases[i].w, cases[i].h);
		g_assert_cmpuint (lb.sw, ==, cases[i].sw);
		g_assert_cmpuint (lb.sh, ==, cases[i].sh);
		g_assert_cmpuint (lb.pw, ==, cases[i].pw);
		g_assert_cmpuint (lb.ph, ==, cases[i].ph);
		g_assert_cmpuint (lb.ox, ==, cases[i].ox);
		g_assert_cmpuint (lb.oy, ==, cases[i].oy);
	}
	bd_session_free (s32);
	bd_session_free (s);
	bd_model_free (m);
}

/* BDGOLD1: c, h, w, then the input (CHW) and PyTorch's probabilities (docs/model-format.md). */
static void
test_golden (void)
{
	const char *root = g_getenv ("BACKDROP_SOURCE_ROOT");
	g_autofree char *model = g_build_filename (root ? root : ".", "data", "backdrop-portrait.bdm", NULL);
	g_autofree char *golden = g_build_filename (root ? root : ".", "tests", "golden", "portrait.bdg", NULL);
	if (!g_file_test (model, G_FILE_TEST_EXISTS) || !g_file_test (golden, G_FILE_TEST_EXISTS)) {
		g_test_skip ("no shipped model or golden output (training/export.py makes them)");
		return;
	}
	g_autofree char *data = NULL;
	gsize len = 0;
	g_assert_true (g_file_get_contents (golden, &data, &len, NULL));
	g_assert_cmpuint (len, >=, 20);
	g_assert_cmpmem (data, 8, "BDGOLD1\0", 8);
	uint32_t dims[3];
	memcpy (dims, data + 8, sizeof dims);
	g_assert_cmpuint (dims[0], ==, 3);
	size_t n = (size_t) dims[1] * dims[2];
	g_assert_cmpuint (len, ==, 20 + 4 * 4 * n);
	const float *in = (const float *) (data + 20), *want = in + 3 * n;

	/* Exact against PyTorch's fp32; fast (bf16 where the CPU has it) within bf16's reach, or
	 * with 8-bit integers (Intel without AMX) within theirs: on this photo the largest
	 * difference 0.141 against bf16's 0.012, the mean 2.9e-4 against 4.1e-5 (the same
	 * integers on any such CPU: the sums are exact and their order fixed). */
	static const struct { bd_precision precision; const char *name; double worst, worst_int8, mean; } runs[] = {
		{ BD_PRECISION_EXACT, "exact", 1e-3, 1e-3, 1e-6 },
		{ BD_PRECISION_FAST, "fast", 0.03, 0.15, 5e-4 },
	};
	for (size_t r = 0; r < G_N_ELEMENTS (runs); r++) {
		bd_model *m = NULL;
		bd_session *s = open_cpu_session (model, &m, runs[r].precision);
		bd_error err = { 0 };
		g_autofree float *got = g_new (float, n);
		g_assert_cmpint (bd_session_forward (s, in, dims[1], dims[2], got, &err), ==, BD_OK);
		double worst = 0, sum = 0;
		size_t flipped = 0;
		for (size_t i = 0; i < n; i++) {
			worst = fmax (worst, fabs ((double) got[i] - want[i]));
			sum += fabs ((double) got[i] - want[i]);
			flipped += (got[i] >= 0.5f) != (want[i] >= 0.5f);
		}
		g_test_message ("%s (%s): largest difference from PyTorch %g, mean %g, %zu of %zu pixels on the "
		                "other side of 0.5", runs[r].name, bd_session_device_description (s), worst, sum / (double) n,
		                flipped, n);
		bool int8 = strstr (bd_session_device_description (s), "int8") != NULL;
		g_assert_cmpfloat (worst, <, int8 ? runs[r].worst_int8 : runs[r].worst);
		g_assert_cmpfloat (sum / (double) n, <, runs[r].mean);
		g_assert_cmpuint (flipped * 1000, <=, n);   /* at most 0.1% of pixels change side */
		bd_session_free (s);
		bd_model_free (m);
	}
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	g_test_add_func ("/core/network/random-unets", test_random_unets);
	g_test_add_func ("/core/network/batch", test_batch);
	g_test_add_func ("/core/network/sizes-share-buffers", test_sizes_share_buffers);
	g_test_add_func ("/core/network/bad-sizes", test_bad_sizes);
	g_test_add_func ("/core/network/letterbox", test_letterbox);
	g_test_add_func ("/core/network/golden", test_golden);
	return g_test_run ();
}
