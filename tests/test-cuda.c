/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA backend against the CPU backend, through the public API: the network on random
 * U-Nets (exact and fast precision), a batch, and whole photos through bd_session_run. Skipped, with
 * the reason, where no usable GPU is there (as in CI); tests/gpu-parity.py runs the same
 * checks on the GPU machine, which has no GLib. */
#include "backdrop-testing.h"
#include "reference.h"
#include "synthetic-model.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bd_model *
synthetic (uint32_t depth, uint32_t width, uint64_t seed)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, depth, width, 64, seed);
	/* Named for this process: two runs of the test at once must not share it. */
	g_autofree char *name = g_strdup_printf ("backdrop-test-cuda-%d.bdm", (int) getpid ());
	g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
	g_assert_true (bd_synthetic_model_write (&spec, path));
	bd_model *m = NULL;
	g_assert_cmpint (bd_model_open (path, &m, NULL), ==, BD_OK);
	g_unlink (path);
	return m;
}

static bd_session *
open_session (const bd_model *m, bd_device device, bd_precision precision, bd_error *err)
{
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = device;
	o.precision = precision;
	bd_session *s = NULL;
	return bd_session_new (m, &o, &s, err) == BD_OK ? s : NULL;
}

/* True when a CUDA session can be made; else skips the test with the library's reason. */
static gboolean
have_gpu (const bd_model *m)
{
	bd_error err = { 0 };
	bd_session *s = open_session (m, BD_DEVICE_CUDA, BD_PRECISION_FAST, &err);
	if (!s) {
		g_autofree char *why = g_strdup_printf ("no usable GPU: %s", err.message);
		g_test_skip (why);
		return FALSE;
	}
	bd_session_free (s);
	return TRUE;
}

/* A GPU by number: the one CUDA numbers last works, the one after it is refused by name. */
static void
test_device_index (void)
{
	bd_model *m = synthetic (2, 8, 5);
	if (!have_gpu (m)) {
		/* No session on any GPU: none is offered either. */
		g_assert_cmpint (bd_device_count (BD_DEVICE_CUDA), ==, 0);
		bd_model_free (m);
		return;
	}
	int count = 0;
	for (;; count++) {
		bd_session_options o;
		bd_session_options_init (&o);
		o.device = BD_DEVICE_CUDA;
		o.device_index = count;
		bd_session *s = NULL;
		bd_error err = { 0 };
		if (bd_session_new (m, &o, &s, &err) != BD_OK) {
			g_assert_cmpint (err.status, ==, BD_ERR_DEVICE);
			g_assert_nonnull (strstr (err.message, "there is no GPU"));
			break;
		}
		g_assert_cmpint (bd_session_device (s), ==, BD_DEVICE_CUDA);
		bd_session_free (s);
		g_assert_cmpint (count, <, 64);
	}
	/* Every GPU a session opens on is counted, and only those. */
	g_assert_cmpint (bd_device_count (BD_DEVICE_CUDA), ==, count);
	g_assert_cmpint (count, >=, 1);
	g_test_message ("%d GPU(s)", count);
	bd_model_free (m);
}

static void
test_network (void)
{
	/* Depth, width, height, width of the input: the last two reach the Hopper kernels (64-channel
	 * layers swapped, 128 x 128 tiles) and exact's tf32 split; test_batch the larger tiles. */
	static const uint32_t cases[][4] = {
		{ 2, 8, 32, 48 }, { 3, 12, 64, 40 }, { 5, 16, 352, 512 }, { 4, 64, 160, 224 },
	};
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		bd_model *m = synthetic (cases[i][0], cases[i][1], g_test_rand_int ());
		if (!have_gpu (m)) {
			bd_model_free (m);
			return;
		}
		uint32_t h = cases[i][2], w = cases[i][3];
		size_t n = (size_t) h * w;
		g_autofree float *in = g_new (float, 3 * n), *ref = g_new (float, n), *got = g_new (float, n);
		bd_rng rng = { g_test_rand_int () };
		for (size_t k = 0; k < 3 * n; k++)
			in[k] = bd_rng_uniform (&rng, -2, 2);
		bd_session *cpu = open_session (m, BD_DEVICE_CPU, BD_PRECISION_EXACT, NULL);
		g_assert_cmpint (bd_session_forward (cpu, in, h, w, ref, NULL), ==, BD_OK);
		const struct { bd_precision p; double tol; } precisions[] = {
			{ BD_PRECISION_EXACT, 1e-4 }, { BD_PRECISION_FAST, 2e-2 },
		};
		for (size_t p = 0; p < G_N_ELEMENTS (precisions); p++) {
			bd_session *gpu = open_session (m, BD_DEVICE_CUDA, precisions[p].p, NULL);
			g_assert_nonnull (gpu);
			for (int run = 0; run < 2; run++) {   /* the second run replays the CUDA graph */
				for (size_t k = 0; k < n; k++)
					got[k] = NAN;
				g_assert_cmpint (bd_session_forward (gpu, in, h, w, got, NULL), ==, BD_OK);
				g_assert_cmpfloat (ref_relative_error (got, ref, n), <=, precisions[p].tol);
			}
			bd_session_free (gpu);
		}
		bd_session_free (cpu);
		bd_model_free (m);
	}
}

/* A batch of different inputs in one pass: each image as the CPU gives it alone (the 3x3
 * taps stop at each image's own edges, not the stacked neighbour's). Four 192x256 images of a
 * width-64 network make enough pixels for the Hopper tiles of large layers (128 x 128 two a
 * multiprocessor at 128 channels, 128 x 256 at 256). */
static void
test_batch (void)
{
	bd_model *m = synthetic (4, 64, 11);
	if (!have_gpu (m)) {
		bd_model_free (m);
		return;
	}
	enum { B = 4, H = 192, W = 256 };
	size_t n = (size_t) H * W;
	g_autofree float *in = g_new (float, B * 3 * n), *ref = g_new (float, B * n), *got = g_new (float, B * n);
	bd_rng rng = { 9 };
	for (size_t k = 0; k < B * 3 * n; k++)
		in[k] = bd_rng_uniform (&rng, -2, 2);
	bd_session *cpu = open_session (m, BD_DEVICE_CPU, BD_PRECISION_EXACT, NULL);
	for (int b = 0; b < B; b++)
		g_assert_cmpint (bd_session_forward (cpu, in + b * 3 * n, H, W, ref + b * n, NULL), ==, BD_OK);
	const struct { bd_precision p; double tol; } precisions[] = {
		{ BD_PRECISION_EXACT, 1e-4 }, { BD_PRECISION_FAST, 2e-2 },
	};
	for (size_t p = 0; p < G_N_ELEMENTS (precisions); p++) {
		bd_session *gpu = open_session (m, BD_DEVICE_CUDA, precisions[p].p, NULL);
		g_assert_nonnull (gpu);
		for (size_t k = 0; k < B * n; k++)
			got[k] = NAN;
		g_assert_cmpint (bd_session_forward_batch (gpu, in, B, H, W, got, NULL), ==, BD_OK);
		for (int b = 0; b < B; b++)
			g_assert_cmpfloat (ref_relative_error (got + b * n, ref + b * n, n), <=, precisions[p].tol);
		bd_session_free (gpu);
	}
	bd_session_free (cpu);
	bd_model_free (m);
}

static void
test_photo (void)
{
	bd_model *m = synthetic (4, 8, 3);
	if (!have_gpu (m)) {
		bd_model_free (m);
		return;
	}
	enum { W = 517, H = 333 };
	g_autofree uint8_t *px = g_malloc ((size_t) W * H * 4);
	bd_rng rng = { 5 };
	for (size_t i = 0; i < (size_t) W * H * 4; i++)
		px[i] = (uint8_t) bd_rng_uniform (&rng, 0, 256);
	bd_image photo = { px, W, H, (size_t) W * 4, BD_PIXEL_RGBA8 };
	g_autofree uint8_t *a_cpu = g_malloc ((size_t) W * H), *a_gpu = g_malloc ((size_t) W * H);
	bd_session *cpu = open_session (m, BD_DEVICE_CPU, BD_PRECISION_EXACT, NULL);
	bd_session *gpu = open_session (m, BD_DEVICE_CUDA, BD_PRECISION_EXACT, NULL);
	g_assert_cmpint (bd_session_run (cpu, &photo, NULL, a_cpu, W, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_run (gpu, &photo, NULL, a_gpu, W, NULL), ==, BD_OK);
	size_t close = 0;
	for (size_t i = 0; i < (size_t) W * H; i++)
		close += abs (a_cpu[i] - a_gpu[i]) <= 1;
	g_assert_cmpfloat ((double) close / (W * H), >=, 0.999);
	bd_session_free (cpu);
	bd_session_free (gpu);
	bd_model_free (m);
}

/* bd_session_host_alloc: plain memory on the CPU, page-locked on a GPU; a photo read from it
 * and a composite written into it give the bytes that ordinary memory gives. */
static void
test_host_memory (void)
{
	bd_model *m = synthetic (4, 8, 7);
	bd_session *cpu = open_session (m, BD_DEVICE_CPU, BD_PRECISION_EXACT, NULL);
	g_assert_null (bd_session_host_alloc (cpu, 0));
	uint8_t *plain = bd_session_host_alloc (cpu, 1000);
	g_assert_nonnull (plain);
	memset (plain, 7, 1000);
	bd_session_host_free (cpu, plain);
	bd_session_host_free (cpu, NULL);
	bd_session_free (cpu);
	if (!have_gpu (m)) {
		bd_model_free (m);
		return;
	}
	enum { W = 640, H = 360 };
	bd_session *gpu = open_session (m, BD_DEVICE_CUDA, BD_PRECISION_FAST, NULL);
	size_t n = (size_t) W * H;
	uint8_t *locked = bd_session_host_alloc (gpu, n * 4), *locked_out = bd_session_host_alloc (gpu, n * 4);
	g_assert_nonnull (locked);
	g_assert_nonnull (locked_out);
	g_autofree uint8_t *px = g_malloc (n * 4), *a1 = g_malloc (n), *a2 = g_malloc (n), *out = g_malloc (n * 4);
	bd_rng rng = { 9 };
	for (size_t i = 0; i < n * 4; i++)
		px[i] = (uint8_t) bd_rng_uniform (&rng, 0, 256);
	memcpy (locked, px, n * 4);
	bd_image a = { px, W, H, (size_t) W * 4, BD_PIXEL_RGBA8 }, b = { locked, W, H, (size_t) W * 4, BD_PIXEL_RGBA8 };
	g_assert_cmpint (bd_session_run (gpu, &a, NULL, a1, W, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_run (gpu, &b, NULL, a2, W, NULL), ==, BD_OK);
	g_assert_cmpmem (a1, n, a2, n);
	bd_background bg = { .kind = BD_BACKGROUND_TRANSPARENT };
	g_assert_cmpint (bd_session_composite (gpu, &a, a1, W, &bg, out, (size_t) W * 4, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_composite (gpu, &b, a1, W, &bg, locked_out, (size_t) W * 4, NULL), ==, BD_OK);
	g_assert_cmpmem (out, n * 4, locked_out, n * 4);
	bd_session_host_free (gpu, locked);
	bd_session_host_free (gpu, locked_out);
	bd_session_free (gpu);
	bd_model_free (m);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	g_test_add_func ("/cuda/device-index", test_device_index);
	g_test_add_func ("/cuda/network", test_network);
	g_test_add_func ("/cuda/batch", test_batch);
	g_test_add_func ("/cuda/photo", test_photo);
	g_test_add_func ("/cuda/host-memory", test_host_memory);
	return g_test_run ();
}
