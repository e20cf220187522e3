/* SPDX-License-Identifier: Apache-2.0 */
/* bd_temporal_blend, the video mask's temporal filter: against a naive reference on random
 * frames (and on luma planes, the same bytes), and its two promises: a still photo's mask moves towards the other frame's, and a
 * moving part's mask does not (no lag). */
#include "backdrop.h"
#include "backdrop-private.h"
#include "image/image.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The definition: mean |luma difference| over a 5x5 window, edges repeated; full blend below
 * 3 levels, none above 10, linear between; the same for masks 64 and 160 levels apart;
 * rounded towards the other frame's mask. */
static void
naive_blend (const bd_image *a, const bd_image *b, const uint8_t *other, uint8_t *alpha, float strength)
{
	int w = (int) a->width, h = (int) a->height, ca = a->format == BD_PIXEL_RGBA8 ? 4 : 3,
	    cb = b->format == BD_PIXEL_RGBA8 ? 4 : 3;
	uint8_t *out = g_malloc ((gsize) w * h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double s = 0;
			for (int dy = -2; dy <= 2; dy++)
				for (int dx = -2; dx <= 2; dx++) {
					int yy = CLAMP (y + dy, 0, h - 1), xx = CLAMP (x + dx, 0, w - 1);
					const uint8_t *p = a->pixels + yy * a->stride + xx * ca;
					const uint8_t *q = b->pixels + yy * b->stride + xx * cb;
					int la = (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8;
					int lb = (77 * q[0] + 150 * q[1] + 29 * q[2] + 128) >> 8;
					s += abs (la - lb);
				}
			double g = CLAMP ((10.0 - s / 25) / 7.0, 0, 1);
			g *= CLAMP ((160.0 - abs (alpha[y * w + x] - other[y * w + x])) / 96.0, 0, 1);
			/* From the other frame's value, rounded towards it. */
			double step = (1 - strength * g) * (alpha[y * w + x] - other[y * w + x]);
			out[y * w + x] = (uint8_t) (other[y * w + x] + (int) step);
		}
	memcpy (alpha, out, (gsize) w * h);
	g_free (out);
}

static void
test_random (void)
{
	static const struct { int w, h, ca, cb; float strength; } cases[] = {
		{ 37, 23, 4, 4, 0.7f }, { 5, 3, 3, 4, 1.0f }, { 1, 1, 4, 3, 0.5f }, { 64, 2, 3, 3, 0.25f },
		{ 41, 150, 3, 4, 0.8f },   /* several bands of rows */
	};
	for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
		int w = cases[i].w, h = cases[i].h;
		gsize sa = (gsize) w * cases[i].ca + 3, sb = (gsize) w * cases[i].cb + 1;
		uint8_t *pa = g_malloc (sa * h), *pb = g_malloc (sb * h);
		uint8_t *other = g_malloc ((gsize) w * h), *alpha = g_malloc ((gsize) w * h), *want;
		for (gsize k = 0; k < sa * h; k++)
			pa[k] = (uint8_t) g_random_int_range (100, 120);
		/* Half the second frame close to the first (noise), half far (motion). */
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w * cases[i].cb; x++)
				pb[y * sb + x] = (uint8_t) (x < w * cases[i].cb / 2 ? g_random_int_range (100, 120)
				                                                    : g_random_int_range (0, 256));
		for (int k = 0; k < w * h; k++) {
			other[k] = (uint8_t) g_random_int_range (0, 256);
			alpha[k] = (uint8_t) g_random_int_range (0, 256);
		}
		want = g_memdup2 (alpha, (gsize) w * h);
		uint8_t *start = g_memdup2 (alpha, (gsize) w * h), *start_copy = g_memdup2 (alpha, (gsize) w * h);
		bd_image a = { pa, (uint32_t) w, (uint32_t) h, sa, cases[i].ca == 4 ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8 };
		bd_image b = { pb, (uint32_t) w, (uint32_t) h, sb, cases[i].cb == 4 ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8 };
		naive_blend (&a, &b, other, want, cases[i].strength);
		g_assert_cmpint (bd_temporal_blend (&a, &b, other, (size_t) w, alpha, (size_t) w, cases[i].strength, NULL),
		                 ==, BD_OK);
		/* float against double may differ by a level where the step is a whole number. */
		for (int k = 0; k < w * h; k++)
			g_assert_cmpint (abs ((int) alpha[k] - (int) want[k]), <=, 1);
		/* The bands side by side on a pool: the same bytes as in turn. */
		bd_thread_pool *pool = bd_thread_pool_new (3);
		g_assert_cmpint (bd_temporal_blend_on_pool (pool, &a, &b, other, (size_t) w, start, (size_t) w,
		                                            cases[i].strength, NULL), ==, BD_OK);
		g_assert_cmpmem (start, (gsize) w * h, alpha, (gsize) w * h);
		/* On luma planes made once (with padding in their rows): the same bytes again. */
		gsize ls = (gsize) w + 5;
		uint8_t *la = g_malloc (ls * h), *lb = g_malloc (ls * h), *via_luma = g_memdup2 (start_copy, (gsize) w * h);
		g_assert_cmpint (bd_luma_on_pool (pool, &a, la, ls, NULL), ==, BD_OK);
		g_assert_cmpint (bd_luma_on_pool (NULL, &b, lb, ls, NULL), ==, BD_OK);
		g_assert_cmpint (bd_temporal_blend_luma_on_pool (pool, la, lb, ls, (uint32_t) w, (uint32_t) h, other, (size_t) w,
		                                                 via_luma, (size_t) w, cases[i].strength, NULL), ==, BD_OK);
		g_assert_cmpmem (via_luma, (gsize) w * h, alpha, (gsize) w * h);
		/* In two steps, the map made in either order of the frames (the second with padding
		 * in its rows): the same bytes again. */
		gsize cs = (gsize) w + 2;
		uint16_t *change = g_new (uint16_t, (gsize) w * h), *swapped = g_new0 (uint16_t, cs * h);
		uint8_t *via_change = g_memdup2 (start_copy, (gsize) w * h);
		g_assert_cmpint (bd_temporal_change_luma_on_pool (pool, la, lb, ls, (uint32_t) w, (uint32_t) h, change,
		                                                  (size_t) w, NULL), ==, BD_OK);
		g_assert_cmpint (bd_temporal_change_luma_on_pool (NULL, lb, la, ls, (uint32_t) w, (uint32_t) h, swapped, cs,
		                                                  NULL), ==, BD_OK);
		for (int y = 0; y < h; y++)
			g_assert_cmpmem (swapped + y * cs, (gsize) w * 2, change + y * w, (gsize) w * 2);
		g_assert_cmpint (bd_temporal_blend_change_on_pool (pool, swapped, cs, (uint32_t) w, (uint32_t) h, other,
		                                                   (size_t) w, via_change, (size_t) w, cases[i].strength,
		                                                   NULL), ==, BD_OK);
		g_assert_cmpmem (via_change, (gsize) w * h, alpha, (gsize) w * h);
		g_assert_cmpint (bd_temporal_change_luma_on_pool (NULL, la, lb, ls, (uint32_t) w, (uint32_t) h, change,
		                                                  (size_t) w - 1, NULL), ==, BD_ERR_INVALID_ARGUMENT);
		/* Every build of the rows (one per x86-64 level) gives the same bytes. */
		static const char *const builds[] = { "generic", "v3" };
		for (gsize k = 0; k < G_N_ELEMENTS (builds); k++) {
			g_setenv ("BACKDROP_CPU_KERNEL", builds[k], TRUE);
			memcpy (via_change, start_copy, (gsize) w * h);
			g_assert_cmpint (bd_temporal_blend_on_pool (pool, &a, &b, other, (size_t) w, via_change, (size_t) w,
			                                            cases[i].strength, NULL), ==, BD_OK);
			g_assert_cmpmem (via_change, (gsize) w * h, alpha, (gsize) w * h);
			memset (swapped, 0, cs * h * sizeof *swapped);
			g_assert_cmpint (bd_temporal_change_luma_on_pool (pool, la, lb, ls, (uint32_t) w, (uint32_t) h, swapped,
			                                                  cs, NULL), ==, BD_OK);
			for (int y = 0; y < h; y++)
				g_assert_cmpmem (swapped + y * cs, (gsize) w * 2, change + y * w, (gsize) w * 2);
		}
		g_unsetenv ("BACKDROP_CPU_KERNEL");
		g_free (change); g_free (swapped); g_free (via_change);
		g_free (la); g_free (lb); g_free (via_luma); g_free (start_copy);
		bd_thread_pool_free (pool);
		g_free (pa); g_free (pb); g_free (other); g_free (alpha); g_free (want); g_free (start);
	}
}

static void
test_still_and_moving (void)
{
	/* A 40x20 grey frame; in the second, the right half turns white (something moved in). */
	enum { W = 40, H = 20 };
	static uint8_t a[W * H * 3], b[W * H * 3], prev[W * H], alpha[W * H];
	memset (a, 90, sizeof a);
	memcpy (b, a, sizeof b);
	for (int y = 0; y < H; y++)
		memset (b + (y * W + W / 2) * 3, 250, W / 2 * 3);
	memset (prev, 160, sizeof prev);
	memset (alpha, 100, sizeof alpha);
	bd_image fa = { b, W, H, W * 3, BD_PIXEL_RGB8 }, fb = { a, W, H, W * 3, BD_PIXEL_RGB8 };
	g_assert_cmpint (bd_temporal_blend (&fa, &fb, prev, W, alpha, W, 0.75f, NULL), ==, BD_OK);
	for (int y = 0; y < H; y++) {
		/* Still, away from the moving half's window: 160 + 0.25 * (100 - 160). */
		for (int x = 0; x < W / 2 - 3; x++)
			g_assert_cmpuint (alpha[y * W + x], ==, 145);
		/* Moved: this frame's own mask, untouched. */
		for (int x = W / 2 + 2; x < W; x++)
			g_assert_cmpuint (alpha[y * W + x], ==, 100);
	}
	/* A still pixel whose mask jumps from background to person (160 levels or more) is
	 * taken as a person moving over a look-alike background: left alone. */
	memset (prev, 0, sizeof prev);
	memset (alpha, 200, sizeof alpha);
	g_assert_cmpint (bd_temporal_blend (&fa, &fa, prev, W, alpha, W, 1.0f, NULL), ==, BD_OK);
	for (int k = 0; k < W * H; k++)
		g_assert_cmpuint (alpha[k], ==, 200);
	/* Strength 0 leaves the mask as it was. */
	memset (alpha, 100, sizeof alpha);
	g_assert_cmpint (bd_temporal_blend (&fa, &fa, prev, W, alpha, W, 0, NULL), ==, BD_OK);
	for (int k = 0; k < W * H; k++)
		g_assert_cmpuint (alpha[k], ==, 100);
}

static void
test_bad_arguments (void)
{
	uint8_t px[4 * 4 * 3] = { 0 }, m[16] = { 0 };
	bd_image a = { px, 4, 4, 12, BD_PIXEL_RGB8 }, small = { px, 3, 4, 12, BD_PIXEL_RGB8 };
	bd_error err = { 0 };
	g_assert_cmpint (bd_temporal_blend (&a, &small, m, 4, m, 4, 0.5f, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "differ in size"));
	g_assert_cmpint (bd_temporal_blend (&a, &a, m, 4, m, 4, 1.5f, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_temporal_blend (&a, &a, NULL, 4, m, 4, 0.5f, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_temporal_blend (&a, &a, m, 2, m, 4, 0.5f, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_temporal_blend (NULL, &a, m, 4, m, 4, 0.5f, &err), ==, BD_ERR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	g_test_add_func ("/video/temporal/random", test_random);
	g_test_add_func ("/video/temporal/still-and-moving", test_still_and_moving);
	g_test_add_func ("/video/temporal/bad-arguments", test_bad_arguments);
	return g_test_run ();
}
