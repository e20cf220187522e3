/* SPDX-License-Identifier: Apache-2.0 */
/* Pre/post-processing and whole sessions: resampling, edge-aware mask upsampling,
 * compositing, mask edits, keeping the main subject, progress and cancel, and bad images. */
#include "image/image.h"
#include "synthetic-model.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static bd_thread_pool *pool;

static void
test_resample (void)
{
	/* A 4x4 image of 2x2 blocks shrinks to the blocks' means, exactly. */
	uint8_t px[4 * 4 * 3];
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < 4; x++)
			for (int c = 0; c < 3; c++)
				px[(y * 4 + x) * 3 + c] = (uint8_t) (((y / 2) * 2 + x / 2) * 60 + c + (x % 2) * 10);
	bd_image img = { px, 4, 4, 12, BD_PIXEL_RGB8 };
	float out[2 * 2 * 3];
	g_assert_cmpint (bd_resample_rgb (pool, &img, 2, 2, out, NULL, 0, 3, NULL), ==, BD_OK);
	for (int b = 0; b < 4; b++)
		for (int c = 0; c < 3; c++)
			g_assert_cmpfloat_with_epsilon (out[b * 3 + c] * 255.0f, b * 60 + c + 5, 1e-3);
	/* Enlarging a constant image keeps it constant; into RGBA bytes, alpha opaque. */
	uint8_t flat[3 * 3 * 4];
	memset (flat, 77, sizeof flat);
	bd_image f = { flat, 3, 3, 12, BD_PIXEL_RGBA8 };
	uint8_t big[7 * 5 * 4];
	memset (big, 0, sizeof big);
	g_assert_cmpint (bd_resample_rgb (pool, &f, 7, 5, NULL, big, 28, 4, NULL), ==, BD_OK);
	for (int i = 0; i < 7 * 5; i++) {
		g_assert_cmpuint (big[4 * i], ==, 77);
		g_assert_cmpuint (big[4 * i + 3], ==, 255);
	}
}

/* Exact area average of a 1-channel image over output pixel (i, j), in doubles: the
 * definition bd_resample must meet when shrinking. */
static double
area_mean (const uint8_t *px, int w, int h, int ow, int oh, int i, int j)
{
	double sx = (double) w / ow, sy = (double) h / oh, sum = 0, area = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double cx = fmin (x + 1, (i + 1) * sx) - fmax (x, i * sx);
			double cy = fmin (y + 1, (j + 1) * sy) - fmax (y, j * sy);
			if (cx > 0 && cy > 0) {
				sum += cx * cy * px[y * w + x];
				area += cx * cy;
			}
		}
	return sum / area;
}

static void
test_resample_public (void)
{
	/* Shrinking by an odd ratio (7x5 to 3x2): each pixel the exact mean of its area. */
	uint8_t mask[7 * 5];
	for (int i = 0; i < 7 * 5; i++)
		mask[i] = (uint8_t) (i * 37 % 251);
	uint8_t small[3 * 2];
	bd_error err = { 0 };
	g_assert_cmpint (bd_resample (mask, 7, 5, 7, 1, small, 3, 2, 3, &err), ==, BD_OK);
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 3; i++)
			g_assert_cmpfloat (fabs (small[j * 3 + i] - area_mean (mask, 7, 5, 3, 2, i, j)), <=, 0.5 + 1e-4);

	/* Enlarging repeats pixels (a view zoomed in shows them), every channel of RGBA alike,
	 * from a part of a wider image (its stride). */
	uint8_t rgba[2 * 3 * 4];   /* 3 wide in memory, the first 2 columns used */
	for (int i = 0; i < (int) sizeof rgba; i++)
		rgba[i] = (uint8_t) (i * 11);
	uint8_t big[4 * 2 * 4];
	g_assert_cmpint (bd_resample (rgba, 2, 2, 12, 4, big, 4, 2, 16, &err), ==, BD_OK);
	for (int y = 0; y < 2; y++)
		for (int x = 0; x < 4; x++)
			g_assert_cmpmem (big + y * 16 + x * 4, 4, rgba + y * 12 + (x / 2) * 4, 4);

	/* Same size: a copy. */
	uint8_t copy[7 * 5];
	g_assert_cmpint (bd_resample (mask, 7, 5, 7, 1, copy, 7, 5, 7, &err), ==, BD_OK);
	g_assert_cmpmem (copy, sizeof copy, mask, sizeof mask);

	/* Bad arguments: a status and a message, nothing written. */
	memset (small, 9, sizeof small);
	g_assert_cmpint (bd_resample (mask, 7, 5, 7, 5, small, 3, 2, 15, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "channels"));
	g_assert_cmpint (bd_resample (mask, 7, 5, 6, 1, small, 3, 2, 3, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "stride"));
	g_assert_cmpint (bd_resample (mask, 7, 5, 7, 1, small, 0, 2, 3, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_resample (NULL, 7, 5, 7, 1, small, 3, 2, 3, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_resample (mask, 70000, 70000, 70000, 1, small, 3, 2, 3, &err), ==, BD_ERR_TOO_LARGE);
	for (int i = 0; i < (int) sizeof small; i++)
		g_assert_cmpuint (small[i], ==, 9);
}

/* The network's input comes from the same resampler on the session's threads: a photo
 * shrunk by a ratio that is not whole matches the exact area means on every channel. */
static void
test_resample_threads (void)
{
	enum { W = 301, H = 203, OW = 64, OH = 45 };
	uint8_t *px = g_malloc (W * H * 3), *plane = g_malloc (W * H);
	for (int i = 0; i < W * H * 3; i++)
		px[i] = (uint8_t) ((i * 2654435761u) >> 24);
	bd_image img = { px, W, H, W * 3, BD_PIXEL_RGB8 };
	float *out = g_new (float, OW * OH * 3);
	g_assert_cmpint (bd_resample_rgb (pool, &img, OW, OH, out, NULL, 0, 3, NULL), ==, BD_OK);
	for (int c = 0; c < 3; c++) {
		for (int i = 0; i < W * H; i++)
			plane[i] = px[i * 3 + c];
		for (int j = 0; j < OH; j += 7)
			for (int i = 0; i < OW; i += 5)
				g_assert_cmpfloat (fabs (out[(j * OW + i) * 3 + c] * 255.0 - area_mean (plane, W, H, OW, OH, i, j)),
				                   <, 1e-3);
	}
	g_free (px);
	g_free (plane);
	g_free (out);
}

/* A photo dark on the left, bright on the right, and a blurry low-resolution mask of the
 * same edge: the refined mask must switch at the photo's edge, far more sharply. */
/* Three box passes of radius r along one line, border samples repeated: the definition
 * colour-means.c computes with running sums. */
static void
naive_box3 (double *v, int n, int r)
{
	double *t = g_new (double, n);
	for (int pass = 0; pass < 3; pass++) {
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int d = -r; d <= r; d++)
				s += v[CLAMP (j + d, 0, n - 1)];
			t[j] = s / (2 * r + 1);
		}
		memcpy (v, t, n * sizeof *v);
	}
	g_free (t);
}

/* One box pass, both edge rules, against their definitions: radii from 0 to far past the
 * line, two interleaved channels. */
static void
test_box_line (void)
{
	enum { N = 7, K = 2 };
	for (uint32_t r = 0; r <= 20; r += r < 4 ? 1 : 8)
		for (int edge = BD_BOX_REPEAT; edge <= BD_BOX_CLIP; edge++) {
			float line[N * K], scratch[N * K], v[N * K];
			for (int i = 0; i < N * K; i++)
				v[i] = line[i] = (float) ((i * 37) % 11);
			bd_box_line (line, N, K, r, (bd_box_edge) edge, scratch);
			for (int j = 0; j < N; j++)
				for (int c = 0; c < K; c++) {
					double sum = 0, held = 0;
					for (int d = -(int) r; d <= (int) r; d++) {
						if (edge == BD_BOX_CLIP && (j + d < 0 || j + d >= N))
							continue;
						sum += v[CLAMP (j + d, 0, N - 1) * K + c];
						held++;
					}
					g_assert_cmpfloat_with_epsilon (line[j * K + c], sum / held, 1e-4);
				}
		}
}

/* Local colour means with windows smaller and far larger than the image (a blurred
 * background on a small photo), against the definition: means of alpha-weighted colours. */
static void
test_colour_means (void)
{
	enum { W = 9, H = 6 };
	uint8_t px[W * H * 3], alpha[W * H];
	GRand *rand = g_rand_new_with_seed (7);
	for (int i = 0; i < W * H * 3; i++)
		px[i] = (uint8_t) g_rand_int_range (rand, 0, 256);
	for (int i = 0; i < W * H; i++)
		alpha[i] = (uint8_t) g_rand_int_range (rand, 0, 256);
	g_rand_free (rand);
	bd_image photo = { px, W, H, W * 3, BD_PIXEL_RGB8 };
	const uint32_t radii[] = { 1, 4, 8, 40 };
	for (size_t ri = 0; ri < G_N_ELEMENTS (radii); ri++) {
		bd_colour_means m = { 0 };
		g_assert_cmpint (bd_colour_means_make (pool, &photo, alpha, W, 1, &radii[ri], 1, &m, NULL), ==, BD_OK);
		/* Channels: F x a (3), a, B x (1 - a) (3), 1 - a, plain RGB (3); F = B = the photo. */
		double ch[11][W * H];
		for (int i = 0; i < W * H; i++) {
			double a = alpha[i] / 255.0;
			for (int c = 0; c < 3; c++) {
				ch[c][i] = px[3 * i + c] * a;
				ch[4 + c][i] = px[3 * i + c] * (1 - a);
				ch[8 + c][i] = px[3 * i + c];
			}
			ch[3][i] = a;
			ch[7][i] = 1 - a;
		}
		for (int k = 0; k < 11; k++) {
			double line[W > H ? W : H];
			for (int y = 0; y < H; y++) {
				for (int x = 0; x < W; x++)
					line[x] = ch[k][y * W + x];
				naive_box3 (line, W, (int) radii[ri]);
				for (int x = 0; x < W; x++)
					ch[k][y * W + x] = line[x];
			}
			for (int x = 0; x < W; x++) {
				for (int y = 0; y < H; y++)
					line[y] = ch[k][y * W + x];
				naive_box3 (line, H, (int) radii[ri]);
				for (int y = 0; y < H; y++)
					ch[k][y * W + x] = line[y];
			}
		}
		for (int i = 0; i < W * H; i++)
			for (int c = 0; c < 3; c++) {
				double fg = (ch[c][i] + 0.02 * ch[8 + c][i]) / (ch[3][i] + 0.02);
				double bg = (ch[4 + c][i] + 0.02 * ch[8 + c][i]) / (ch[7][i] + 0.02);
				g_assert_cmpfloat_with_epsilon (m.fg[3 * i + c], fg, 0.01);
				g_assert_cmpfloat_with_epsilon (m.bg[3 * i + c], bg, 0.01);
			}
		bd_colour_means_clear (&m);
	}
}

/* Down the columns a strip at a time: bit for bit what bd_box_line gives column by column,
 * for strips anywhere in the image, radii past its height, one to three passes. */
static void
test_box_columns (void)
{
	enum { W = 23, H = 17, K = 5 };
	static float img[H * W * K], want[H * W * K], line[2 * H * K], scratch[(H + 1) * W * K];
	guint32 seed = 3;
	const uint32_t radii[] = { 0, 1, 3, 16, 40 };
	const uint32_t strips[][2] = { { 0, W }, { 0, 1 }, { 5, 21 }, { 22, 23 } };
	for (size_t ri = 0; ri < G_N_ELEMENTS (radii); ri++)
		for (size_t si = 0; si < G_N_ELEMENTS (strips); si++)
			for (uint32_t passes = 1; passes <= 3; passes++) {
				for (size_t i = 0; i < G_N_ELEMENTS (img); i++) {
					seed = seed * 1664525u + 1013904223u;
					img[i] = want[i] = (float) (seed >> 8) / 65536.0f - 100.0f;
				}
				uint32_t x0 = strips[si][0], x1 = strips[si][1];
				for (uint32_t x = x0; x < x1; x++) {
					for (int y = 0; y < H; y++)
						memcpy (line + y * K, want + (y * W + x) * K, K * sizeof *line);
					for (uint32_t p = 0; p < passes; p++)
						bd_box_line (line, H, K, radii[ri], BD_BOX_REPEAT, line + H * K);
					for (int y = 0; y < H; y++)
						memcpy (want + (y * W + x) * K, line + y * K, K * sizeof *line);
				}
				bd_box_columns (img, W, H, K, x0, x1, radii[ri], passes, scratch);
				g_assert_cmpmem (img, sizeof img, want, sizeof want);
			}
}

static void
test_upsample_follows_edges (void)
{
	enum { W = 200, H = 100, LW = 50, LH = 25 };
	static uint8_t px[W * H * 3];
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			memset (px + (y * W + x) * 3, x < W / 2 ? 20 : 230, 3);
	bd_image photo = { px, W, H, W * 3, BD_PIXEL_RGB8 };
	static float rgb[LW * LH * 3], prob[LW * LH];
	g_assert_cmpint (bd_resample_rgb (pool, &photo, LW, LH, rgb, NULL, 0, 3, NULL), ==, BD_OK);
	for (int y = 0; y < LH; y++)
		for (int x = 0; x < LW; x++)
			prob[y * LW + x] = 1.0f / (1.0f + expf (-((float) x + 0.5f - LW / 2.0f) / 2.0f));
	static uint8_t plain[W * H], refined[W * H];
	memset (plain, 7, sizeof plain);
	memset (refined, 7, sizeof refined);
	g_assert_cmpint (bd_upsample_alpha (pool, prob, rgb, LW, LH, &photo, false, plain, W, NULL), ==, BD_OK);
	g_assert_cmpint (bd_upsample_alpha (pool, prob, rgb, LW, LH, &photo, true, refined, W, NULL), ==, BD_OK);
	int row = H / 2 * W;
	int jump_plain = plain[row + 101] - plain[row + 98], jump_refined = refined[row + 101] - refined[row + 98];
	g_test_message ("3-pixel jump across the edge: plain %d, refined %d", jump_plain, jump_refined);
	g_assert_cmpint (jump_refined, >, 2 * jump_plain);
	g_assert_cmpint (jump_refined, >, 40);
	/* Far from the edge both agree with the mask. */
	g_assert_cmpint (abs (refined[row + 5] - plain[row + 5]), <=, 3);
	g_assert_cmpint (abs (refined[row + 195] - plain[row + 195]), <=, 3);
	g_assert_cmpuint (plain[row + 5], <, 10);
	g_assert_cmpuint (plain[row + 195], >, 245);
}

static void
test_composite (void)
{
	enum { W = 40, H = 10 };
	static uint8_t px[W * H * 4], alpha[W * H], out[W * H * 4];
	for (int i = 0; i < W * H; i++) {
		px[4 * i] = 200; px[4 * i + 1] = 100; px[4 * i + 2] = 50; px[4 * i + 3] = 255;
		alpha[i] = (uint8_t) (i % W < 10 ? 0 : i % W < 20 ? 128 : 255);
	}
	px[3] = 0;   /* one pixel already transparent in the photo itself */
	bd_image photo = { px, W, H, W * 4, BD_PIXEL_RGBA8 };

	bd_background bg = { .kind = BD_BACKGROUND_TRANSPARENT };
	memset (out, 1, sizeof out);
	g_assert_cmpint (bd_composite (&photo, alpha, W, &bg, out, W * 4, NULL), ==, BD_OK);
	g_assert_cmpuint (out[4 * 25 + 3], ==, 255);
	g_assert_cmpuint (out[4 * 15 + 3], ==, 128);
	g_assert_cmpuint (out[4 * 25], ==, 200);
	g_assert_cmpuint (out[4 * (W + 25) + 3], ==, 255);

	bg = (bd_background) { .kind = BD_BACKGROUND_COLOR, .color = { 0, 0, 255, 255 } };
	g_assert_cmpint (bd_composite (&photo, alpha, W, &bg, out, W * 4, NULL), ==, BD_OK);
	const uint8_t *p0 = out + 4 * 5, *p1 = out + 4 * 15, *p2 = out + 4 * 25;
	g_assert_cmpuint (p0[0], ==, 0);   g_assert_cmpuint (p0[2], ==, 255); g_assert_cmpuint (p0[3], ==, 255);
	g_assert_cmpuint (p1[0], ==, 100); g_assert_cmpuint (p1[2], ==, 152);
	g_assert_cmpuint (p2[0], ==, 200); g_assert_cmpuint (p2[2], ==, 50);

	/* Another image, scaled to cover: a 10x40 picture, green in its middle rows. */
	static uint8_t other[10 * 40 * 3];
	for (int y = 0; y < 40; y++)
		for (int x = 0; x < 10; x++) {
			uint8_t *o = other + (y * 10 + x) * 3;
			o[0] = 0; o[1] = y >= 15 && y < 25 ? 255 : 0; o[2] = y < 15 ? 255 : 0;
		}
	bd_image oimg = { other, 10, 40, 30, BD_PIXEL_RGB8 };
	bg = (bd_background) { .kind = BD_BACKGROUND_IMAGE, .image = &oimg };
	g_assert_cmpint (bd_composite (&photo, alpha, W, &bg, out, W * 4, NULL), ==, BD_OK);
	for (int y = 0; y < H; y++)
		for (int x = 0; x < 10; x++) {
			const uint8_t *o = out + 4 * (y * W + x);
			g_assert_cmpuint (o[1], >, 200);   /* the middle of the other image fills the frame */
			g_assert_cmpuint (o[2], <, 40);
		}

	/* Blur: the background is the photo, smoothed; a flat photo stays flat. */
	bg = (bd_background) { .kind = BD_BACKGROUND_BLUR, .blur_radius = 30 };
	g_assert_cmpint (bd_composite (&photo, alpha, W, &bg, out, W * 4, NULL), ==, BD_OK);
	g_assert_cmpint (abs (out[4 * (W * 5 + 5)] - 200), <=, 2);

	/* No halo: beside a red person on grey, the blurred background stays grey. */
	static uint8_t split[60 * 20 * 3], split_alpha[60 * 20], split_out[60 * 20 * 4];
	for (int i = 0; i < 60 * 20; i++) {
		bool person = i % 60 < 30;
		split[3 * i] = person ? 255 : 128;
		split[3 * i + 1] = split[3 * i + 2] = person ? 0 : 128;
		split_alpha[i] = person ? 255 : 0;
	}
	bd_image split_photo = { split, 60, 20, 60 * 3, BD_PIXEL_RGB8 };
	bg.blur_radius = 20;
	g_assert_cmpint (bd_composite (&split_photo, split_alpha, 60, &bg, split_out, 60 * 4, NULL), ==, BD_OK);
	for (int x = 30; x < 40; x++)
		g_assert_cmpint (abs (split_out[4 * (10 * 60 + x)] - 128), <=, 4);

	/* Foreground colours: a red person on blue, with a soft edge where the photo is purple.
	 * Over green, the edge must not carry the old blue: the person's red is estimated. */
	enum { SW = 400, SH = 20 };
	static uint8_t soft[SW * SH * 3], soft_alpha[SW * SH], soft_out[SW * SH * 4];
	for (int i = 0; i < SW * SH; i++) {
		int x = i % SW;
		float a = x < 200 ? 1.0f : x >= 210 ? 0.0f : (210 - x) / 10.0f;
		soft[3 * i] = (uint8_t) (255 * a + 0.5f);
		soft[3 * i + 1] = 0;
		soft[3 * i + 2] = (uint8_t) (255 * (1 - a) + 0.5f);
		soft_alpha[i] = (uint8_t) (255 * a + 0.5f);
	}
	bd_image soft_photo = { soft, SW, SH, SW * 3, BD_PIXEL_RGB8 };
	bg = (bd_background) { .kind = BD_BACKGROUND_TRANSPARENT };
	g_assert_cmpint (bd_composite (&soft_photo, soft_alpha, SW, &bg, soft_out, SW * 4, NULL), ==, BD_OK);
	for (int x = 201; x < 210; x++) {
		const uint8_t *p = soft_out + 4 * (10 * SW + x);
		g_test_message ("edge pixel %d, alpha %u: photo %u %u %u, estimated %u %u %u", x, soft_alpha[10 * SW + x],
		                soft[3 * (10 * SW + x)], soft[3 * (10 * SW + x) + 1], soft[3 * (10 * SW + x) + 2], p[0], p[1], p[2]);
		if (p[0] < 200 || p[2] > 60)
			g_error ("edge pixel %d keeps the old background: rgb %u %u %u", x, p[0], p[1], p[2]);
		g_assert_cmpuint (p[3], ==, soft_alpha[10 * SW + x]);
	}

	bd_error err = { 0 };
	bg = (bd_background) { .kind = BD_BACKGROUND_BLUR, .blur_radius = -1 };
	g_assert_cmpint (bd_composite (&photo, alpha, W, &bg, out, W * 4, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_composite (&photo, alpha, W, &bg, out, W * 3, &err), ==, BD_ERR_INVALID_ARGUMENT);
}

/* One thread or a pool: the same bytes, for every kind of background, on a photo large enough
 * that the pool splits every step (the colour means' grid, the blur, the resampling). */
static void
test_composite_in_thread (void)
{
	enum { W = 900, H = 700 };
	uint8_t *px = g_malloc ((size_t) W * H * 3), *alpha = g_malloc ((size_t) W * H);
	uint8_t *pooled = g_malloc ((size_t) W * H * 4), *alone = g_malloc ((size_t) W * H * 4);
	guint32 seed = 7;
	for (size_t i = 0; i < (size_t) W * H * 3; i++) {
		seed = seed * 1664525u + 1013904223u;
		px[i] = (uint8_t) (seed >> 24);
	}
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			double d = (200.0 - hypot (x - 450.0, y - 380.0)) / 30.0 + 0.5;   /* a soft disc */
			alpha[(size_t) y * W + x] = (uint8_t) (255 * (d < 0 ? 0 : d > 1 ? 1 : d));
		}
	bd_image photo = { px, W, H, W * 3, BD_PIXEL_RGB8 };
	static uint8_t other[30 * 20 * 3];
	for (size_t i = 0; i < sizeof other; i++)
		other[i] = (uint8_t) (i * 37);
	bd_image oimg = { other, 30, 20, 90, BD_PIXEL_RGB8 };
	const bd_background bgs[] = {
		{ .kind = BD_BACKGROUND_TRANSPARENT },
		{ .kind = BD_BACKGROUND_COLOR, .color = { 10, 200, 30, 255 } },
		{ .kind = BD_BACKGROUND_BLUR, .blur_radius = 25 },
		{ .kind = BD_BACKGROUND_IMAGE, .image = &oimg },
	};
	for (size_t k = 0; k < G_N_ELEMENTS (bgs); k++) {
		memset (pooled, 1, (size_t) W * H * 4);
		memset (alone, 2, (size_t) W * H * 4);
		g_assert_cmpint (bd_composite (&photo, alpha, W, &bgs[k], pooled, W * 4, NULL), ==, BD_OK);
		g_assert_cmpint (bd_composite_in_thread (&photo, alpha, W, &bgs[k], alone, W * 4, NULL), ==, BD_OK);
		g_assert_cmpmem (alone, (size_t) W * H * 4, pooled, (size_t) W * H * 4);
	}
	bd_error err = { 0 };
	g_assert_cmpint (bd_composite_in_thread (&photo, NULL, W, &bgs[0], alone, W * 4, &err), ==,
	                 BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpstr (err.message, !=, "");
	g_free (px);
	g_free (alpha);
	g_free (pooled);
	g_free (alone);
}

static void
test_mask_adjust (void)
{
	enum { W = 32, H = 8 };
	uint8_t a[W * H];
	for (int i = 0; i < W * H; i++)
		a[i] = (uint8_t) ((i % W) * 8);
	g_assert_cmpint (bd_mask_adjust (a, W, H, W, 0.5f, 0, NULL), ==, BD_OK);
	for (int i = 0; i < W * H; i++)
		g_assert_cmpuint (a[i], ==, (i % W) * 8 >= 128 ? 255 : 0);
	g_assert_cmpint (bd_mask_adjust (a, W, H, W, -1, 6, NULL), ==, BD_OK);
	g_assert_cmpuint (a[W * 4 + 2], ==, 0);
	g_assert_cmpuint (a[W * 4 + 30], ==, 255);
	g_assert_cmpuint (a[W * 4 + 15], >, 20);
	g_assert_cmpuint (a[W * 4 + 15], <, 235);
	bd_error err = { 0 };
	g_assert_cmpint (bd_mask_adjust (a, W, H, W, 2, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_adjust (a, 0, H, W, 0, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
}

/* Naive reference for masks of at most 512 pixels a side (one block per pixel): 8-connected
 * regions of pixels >= 64, areas counted in pixels >= 128; nothing cleared unless a region of
 * the largest area spans @min_height of the rows (its first to its last); then every other
 * non-zero pixel reached takes the label of the first region to reach it (breadth-first from
 * all region pixels in index order); regions under @frac of the largest cleared, with what
 * they took. */
static void
keep_subject_reference (uint8_t *a, int w, int h, size_t stride, float frac, float min_height)
{
	g_autofree int *label = g_new0 (int, w * h), *queue = g_new (int, w * h);
	g_autofree long *area = g_new0 (long, w * h + 1);
	g_autofree int *top = g_new (int, w * h + 1), *bottom = g_new (int, w * h + 1);
	int n = 0, head, tail;
	long largest = 0;
	for (int i = 0; i < w * h; i++) {
		if (label[i] || a[(i / w) * stride + i % w] < 64)
			continue;
		head = tail = 0;
		label[i] = ++n;
		top[n] = h, bottom[n] = -1;
		queue[tail++] = i;
		while (head < tail) {
			int j = queue[head++], x = j % w, y = j / w;
			area[n] += a[y * stride + x] >= 128;
			top[n] = MIN (top[n], y), bottom[n] = MAX (bottom[n], y);
			for (int ny = y - 1; ny <= y + 1; ny++)
				for (int nx = x - 1; nx <= x + 1; nx++)
					if (nx >= 0 && ny >= 0 && nx < w && ny < h && !label[ny * w + nx] &&
					    a[ny * stride + nx] >= 64) {
						label[ny * w + nx] = n;
						queue[tail++] = ny * w + nx;
					}
		}
		largest = MAX (largest, area[n]);
	}
	gboolean subject = FALSE;
	for (int r = 1; r <= n; r++)
		subject |= area[r] == largest && bottom[r] - top[r] + 1 >= (double) min_height * h;
	if (n <= 1 || !subject)
		return;
	head = tail = 0;
	for (int i = 0; i < w * h; i++)
		if (label[i])
			queue[tail++] = i;
	while (head < tail) {
		int j = queue[head++], x = j % w, y = j / w;
		for (int ny = y - 1; ny <= y + 1; ny++)
			for (int nx = x - 1; nx <= x + 1; nx++)
				if (nx >= 0 && ny >= 0 && nx < w && ny < h && !label[ny * w + nx] && a[ny * stride + nx] > 0) {
					label[ny * w + nx] = label[j];
					queue[tail++] = ny * w + nx;
				}
	}
	for (int i = 0; i < w * h; i++)
		if (label[i] && area[label[i]] < frac * largest)
			a[(i / w) * stride + i % w] = 0;
}

static void
fill_rect (uint8_t *a, size_t stride, int x0, int y0, int x1, int y1, uint8_t v)
{
	for (int y = y0; y < y1; y++)
		memset (a + y * stride + x0, v, x1 - x0);
}

/* The decisive pass by its definition: a pixel with both sides of one half in its window. */
static void
decide_reference (uint8_t *a, int w, int h, size_t stride, int r)
{
	g_autofree uint8_t *src = g_memdup2 (a, stride * h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			gboolean person = FALSE, background = FALSE;
			for (int v = MAX (0, y - r); v <= MIN (h - 1, y + r); v++)
				for (int u = MAX (0, x - r); u <= MIN (w - 1, x + r); u++) {
					person |= src[v * stride + u] >= 128;
					background |= src[v * stride + u] < 128;
				}
			if (!(person && background))
				a[y * stride + x] = src[y * stride + x] >= 128 ? 255 : 0;
		}
}

static void
test_mask_decide (void)
{
	/* Random soft discs and noise on odd, padded masks, against the definition. */
	bd_rng rng = { 5 };
	for (int t = 0; t < 40; t++) {
		int w = 1 + (int) bd_rng_uniform (&rng, 0, 200), h = 1 + (int) bd_rng_uniform (&rng, 0, 200);
		int r = t == 0 ? 0 : (int) bd_rng_uniform (&rng, 0, 30);
		size_t stride = w + 5;
		g_autofree uint8_t *a = g_malloc (stride * h), *ref = NULL;
		memset (a, 0xEE, stride * h);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++)
				a[y * stride + x] = (uint8_t) bd_rng_uniform (&rng, 0, 40);
		int discs = (int) bd_rng_uniform (&rng, 0, 6);
		for (int d = 0; d < discs; d++) {
			float cx = bd_rng_uniform (&rng, 0, w), cy = bd_rng_uniform (&rng, 0, h);
			float rad = bd_rng_uniform (&rng, 1, 80), soft = bd_rng_uniform (&rng, 0.5f, 30);
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					float v = 255 * CLAMP ((rad - hypotf (x - cx, y - cy)) / soft + 0.5f, 0, 1);
					a[y * stride + x] = MAX (a[y * stride + x], (uint8_t) v);
				}
		}
		ref = g_memdup2 (a, stride * h);
		decide_reference (ref, w, h, stride, r);
		/* Into another buffer of other rows: the same pixels, the source and the padding
		 * left as they were. */
		size_t out_stride = w + 9;
		g_autofree uint8_t *src = g_memdup2 (a, stride * h), *out = g_malloc (out_stride * h);
		memset (out, 0x5A, out_stride * h);
		g_assert_cmpint (bd_mask_decide_to (pool, src, stride, out, out_stride, w, h, r, NULL), ==, BD_OK);
		g_assert_cmpmem (src, stride * h, a, stride * h);
		for (int y = 0; y < h; y++) {
			g_assert_cmpmem (out + y * out_stride, w, ref + y * stride, w);
			for (size_t x = w; x < out_stride; x++)
				g_assert_cmpuint (out[y * out_stride + x], ==, 0x5A);
		}
		g_assert_cmpint (bd_mask_decide (pool, a, w, h, stride, r, NULL), ==, BD_OK);
		g_assert_cmpmem (a, stride * h, ref, stride * h);
	}

	/* A photo of 300 x 200 (radius 1): a person with a soft edge, a passer-by at 25% far from
	 * any edge, a backlit arm at 60%. The passer-by goes, the arm is kept whole, the person's
	 * soft edge stays as it was. */
	enum { W = 300, H = 200 };
	g_autofree uint8_t *m = g_malloc0 (W * H);
	fill_rect (m, W, 50, 20, 150, 200, 255);
	fill_rect (m, W, 49, 20, 50, 200, 100);      /* soft edge, a pixel wide */
	fill_rect (m, W, 200, 50, 260, 180, 64);     /* passer-by at 25% */
	fill_rect (m, W, 150, 80, 190, 100, 153);    /* arm at 60%, joined to the person */
	g_assert_cmpuint (bd_decide_radius (W, H), ==, 1);
	g_assert_cmpuint (bd_decide_radius (4000, 3000), ==, 8);
	g_assert_cmpuint (bd_decide_radius (100, 100), ==, 1);
	g_assert_cmpint (bd_mask_decide (pool, m, W, H, W, bd_decide_radius (W, H), NULL), ==, BD_OK);
	g_assert_cmpuint (m[100 * W + 49], ==, 100);   /* the edge keeps its softness */
	g_assert_cmpuint (m[100 * W + 230], ==, 0);    /* the passer-by's middle is gone... */
	g_assert_cmpuint (m[50 * W + 200], ==, 0);     /* ...and so is her rim, far from any edge */
	g_assert_cmpuint (m[90 * W + 170], ==, 255);   /* the arm is opaque */
	g_assert_cmpuint (m[100 * W + 100], ==, 255);

	bd_error err = { 0 };
	g_assert_cmpint (bd_mask_decide (pool, m, W, H, W - 1, 4, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_decide (pool, NULL, W, H, W, 4, &err), ==, BD_ERR_INVALID_ARGUMENT);
	/* One buffer read and written with two strides is no pass in place: refused. */
	g_assert_cmpint (bd_mask_decide_to (pool, m, W, m, W + 1, W - 1, H - 1, 1, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_decide_to (pool, m, W, NULL, W, W, H, 1, &err), ==, BD_ERR_INVALID_ARGUMENT);
}

/* @discs random soft discs of radius up to @largest drawn into @a (@w x @h, rows @stride
 * apart) with max: opaque people, soft ones, and hazes that join nothing or only each other. */
static void
random_discs (bd_rng *rng, uint8_t *a, int w, int h, size_t stride, int discs, float largest)
{
	static const float peaks[] = { 255, 200, 100, 63, 40 };
	for (int d = 0; d < discs; d++) {
		float cx = bd_rng_uniform (rng, 0, w), cy = bd_rng_uniform (rng, 0, h);
		float r = bd_rng_uniform (rng, 1, largest), soft = bd_rng_uniform (rng, 0.5f, 25);
		float peak = peaks[(int) bd_rng_uniform (rng, 0, 5) % 5];
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				float v = peak * CLAMP ((r - hypotf (x - cx, y - cy)) / soft + 0.5f, 0, 1);
				a[y * stride + x] = MAX (a[y * stride + x], (uint8_t) v);
			}
	}
}

/* A main-subject case: a mask of @longest pixels on its long side (wide, or tall where @t % 4
 * is 2 or 3) with up to ten soft discs, and a fraction and a height to ask for (none every
 * third @t); g_free it. */
static uint8_t *
random_subject_case (bd_rng *rng, int t, int longest, int *w, int *h, float *frac, float *min_height)
{
	*w = longest, *h = 1 + (int) bd_rng_uniform (rng, 0, (float) longest);
	if (t % 4 >= 2) {
		int swap = *w;
		*w = *h, *h = swap;
	}
	uint8_t *a = g_malloc0 ((size_t) *w * *h);
	random_discs (rng, a, *w, *h, *w, 1 + (int) bd_rng_uniform (rng, 0, 10), 0.3f * longest);
	*frac = bd_rng_uniform (rng, 0, 1);
	*min_height = t % 3 ? bd_rng_uniform (rng, 0, 0.8f) : 0;
	return a;
}

/* A session's grid kept between masks of other sizes (bd_scratch): each mask's result is the
 * one with memory of its own, though the block holds garbage from the call before. */
static void
test_keep_main_subject_scratch (void)
{
	bd_rng rng = { 23 };
	bd_scratch scratch = { NULL, 0 };
	for (int t = 0; t < 16; t++) {
		/* Small and large in turn: a large mask grows the block, a small one reuses it. */
		int longest = t % 2 ? 520 + (int) bd_rng_uniform (&rng, 0, 600) : 1 + (int) bd_rng_uniform (&rng, 0, 300);
		int w, h;
		float frac, min_height;
		g_autofree uint8_t *a = random_subject_case (&rng, t, longest, &w, &h, &frac, &min_height), *want = NULL;
		want = g_memdup2 (a, (size_t) w * h);
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, want, w, h, w, frac, min_height, NULL), ==, BD_OK);
		void *before = scratch.block;
		size_t had = scratch.bytes;
		g_assert_cmpint (bd_mask_keep_main_subject (pool, &scratch, a, w, h, w, frac, min_height, NULL), ==, BD_OK);
		g_assert_cmpmem (a, (size_t) w * h, want, (size_t) w * h);
		g_assert_cmpuint (scratch.bytes, >=, had);
		if (had && scratch.bytes == had)
			g_assert_true (scratch.block == before);
		memset (scratch.block, t % 2 ? 0xFF : 0x3F, scratch.bytes);   /* labels, maxima: all garbage */
	}
	bd_scratch_free (&scratch);
	g_assert_null (scratch.block);
}

/* The pass's verdict on a grid made elsewhere, as the GPU makes it (bd_subject_blocks_to_drop):
 * each block's maximum and person count worked out here, the blocks it drops cleared here,
 * give the pass's own result, on masks below and above 512 pixels (blocks of one pixel and
 * of several, part blocks on the right and at the bottom). */
static void
test_subject_blocks_to_drop (void)
{
	bd_rng rng = { 29 };
	bd_scratch scratch = { NULL, 0 };
	int dropped = 0;
	for (int t = 0; t < 40; t++) {
		int longest = t % 2 ? 513 + (int) bd_rng_uniform (&rng, 0, 1200) : 1 + (int) bd_rng_uniform (&rng, 0, 400);
		int w, h;
		float frac, min_height;
		g_autofree uint8_t *a = random_subject_case (&rng, t, longest, &w, &h, &frac, &min_height), *want = NULL;
		want = g_memdup2 (a, (size_t) w * h);
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, want, w, h, w, frac, min_height, NULL), ==, BD_OK);

		uint32_t gw, gh, b;
		bd_subject_grid_size (w, h, &gw, &gh, &b);
		g_assert_cmpuint (MAX (gw, gh), <=, 512);
		g_assert_cmpuint ((gw - 1) * b, <, (uint32_t) w);
		g_assert_cmpuint (gw * b, >=, (uint32_t) w);
		size_t cells = (size_t) (gw + 2) * (gh + 2);
		g_autofree uint8_t *max = g_malloc0 (cells), *drop = g_malloc ((size_t) gw * gh);
		g_autofree uint32_t *core = g_malloc0 (cells * sizeof *core);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				size_t c = (size_t) (y / b + 1) * (gw + 2) + x / b + 1;
				max[c] = MAX (max[c], a[(size_t) y * w + x]);
				core[c] += a[(size_t) y * w + x] >= 128;
			}
		memset (drop, 0xAB, (size_t) gw * gh);
		bool any = true;
		g_assert_cmpint (bd_subject_blocks_to_drop (t % 5 ? &scratch : NULL, max, core, w, h, frac, min_height, drop,
		                                            &any, NULL),
		                 ==, BD_OK);
		for (int y = 0; y < h && any; y++)
			for (int x = 0; x < w; x++) {
				uint8_t d = drop[(size_t) (y / b) * gw + x / b];
				g_assert_cmpuint (d, <=, 1);
				if (d)
					a[(size_t) y * w + x] = 0;
			}
		if (!any)
			for (size_t c = 0; c < (size_t) gw * gh; c++)
				g_assert_cmpuint (drop[c], ==, 0xAB);
		dropped += any;
		g_assert_cmpmem (a, (size_t) w * h, want, (size_t) w * h);
		if (scratch.block)
			memset (scratch.block, 0x3F, scratch.bytes);   /* labels, queue: garbage next time */
	}
	/* Not every mask loses someone: both ways are checked. */
	g_assert_cmpint (dropped, >, 5);
	g_assert_cmpint (dropped, <, 35);
	bd_scratch_free (&scratch);
}

static void
test_keep_main_subject (void)
{
	/* Random soft discs on odd, padded masks, against the naive reference. */
	bd_rng rng = { 11 };
	for (int t = 0; t < 60; t++) {
		int w = 1 + (int) bd_rng_uniform (&rng, 0, 300), h = 1 + (int) bd_rng_uniform (&rng, 0, 300);
		size_t stride = w + 7;
		g_autofree uint8_t *a = g_malloc (stride * h), *ref = NULL;
		memset (a, 0xEE, stride * h);  /* poison in the row padding must survive */
		for (int y = 0; y < h; y++)
			memset (a + y * stride, 0, w);
		random_discs (&rng, a, w, h, stride, (int) bd_rng_uniform (&rng, 0, 12), 60);
		float frac = t == 0 ? 0 : bd_rng_uniform (&rng, 0, 1);
		/* Half the cases with no height asked, half with one that some masks miss. */
		float min_height = t % 2 ? bd_rng_uniform (&rng, 0, 0.8f) : 0;
		ref = g_memdup2 (a, stride * h);
		keep_subject_reference (ref, w, h, stride, frac, min_height);
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, a, w, h, stride, frac, min_height, NULL), ==, BD_OK);
		g_assert_cmpmem (a, stride * h, ref, stride * h);
	}

	/* Masks past 512 pixels go by blocks of b x b. A random mask of 400 to 511 pixels on its
	 * long side, each pixel made a block of 2 x 2 or 3 x 3 that holds the pixel's value once,
	 * at a random place, and less elsewhere (under 128 where it is 128 or more), gives the
	 * pass a grid of the small mask's maxima and person counts: the blocks it clears are the
	 * pixels the reference clears on the small mask. Up to b - 1 empty columns on the right
	 * leave a last column of part blocks. */
	for (int t = 0; t < 24; t++) {
		int b = 2 + t % 2, sw = 400 + (int) bd_rng_uniform (&rng, 0, 111);
		int sh = 1 + (int) bd_rng_uniform (&rng, 0, (float) sw);
		if (t % 4 >= 2) {
			int swap = sw;
			sw = sh, sh = swap;
		}
		int pad = (int) bd_rng_uniform (&rng, 0, (float) b), w = sw * b + pad, h = sh * b;
		g_autofree uint8_t *small = g_malloc0 ((size_t) sw * sh), *big = g_malloc0 ((size_t) w * h),
		                   *want = g_malloc0 ((size_t) w * h);
		random_discs (&rng, small, sw, sh, sw, 1 + (int) bd_rng_uniform (&rng, 0, 10), 80);
		for (int sy = 0; sy < sh; sy++)
			for (int sx = 0; sx < sw; sx++) {
				int v = small[sy * sw + sx], below = MIN (v, 128);
				int at = (int) bd_rng_uniform (&rng, 0, (float) (b * b)) % (b * b);
				for (int k = 0; k < b * b; k++)
					big[(size_t) (sy * b + k / b) * w + sx * b + k % b] =
						k == at ? (uint8_t) v : (uint8_t) (below ? (int) bd_rng_uniform (&rng, 0, (float) below) % below : 0);
			}
		g_autofree uint8_t *kept = g_memdup2 (small, (size_t) sw * sh);
		float frac = bd_rng_uniform (&rng, 0, 1), min_height = t % 3 ? bd_rng_uniform (&rng, 0, 0.8f) : 0;
		keep_subject_reference (kept, sw, sh, sw, frac, min_height);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				bool cleared = x < sw * b && kept[(y / b) * sw + x / b] != small[(y / b) * sw + x / b];
				want[(size_t) y * w + x] = cleared ? 0 : big[(size_t) y * w + x];
			}
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, big, w, h, w, frac, min_height, NULL), ==, BD_OK);
		g_assert_cmpmem (big, (size_t) w * h, want, (size_t) w * h);
	}

	/* A 1500 x 1000 photo (blocks of 3 x 3 pixels): the subject, a second person of about its
	 * size, a passer-by with a faint edge, a haze on its own, a hand joined to the subject by
	 * a soft but not faint wrist, which stays, and a small person joined to the subject by a
	 * faint haze only, which goes, with the half of the haze nearer to it. */
	enum { W = 1500, H = 1000 };
	g_autofree uint8_t *m = g_malloc0 ((size_t) W * H), *before = NULL;
	fill_rect (m, W, 100, 100, 400, 900, 255);   /* subject: 240,000 */
	fill_rect (m, W, 500, 200, 760, 900, 230);   /* companion: 182,000 */
	fill_rect (m, W, 1200, 500, 1260, 620, 255); /* passer-by: 7,200... */
	fill_rect (m, W, 1190, 490, 1200, 630, 30);  /* ...and its faint edge */
	fill_rect (m, W, 900, 50, 1100, 150, 90);    /* haze: no pixel counts as person */
	fill_rect (m, W, 30, 700, 60, 760, 255);     /* a hand beyond a wrist... */
	fill_rect (m, W, 60, 720, 100, 740, 80);     /* ...of alpha 80 */
	fill_rect (m, W, 130, 920, 160, 990, 255);   /* a small person below the subject... */
	fill_rect (m, W, 130, 900, 160, 920, 20);    /* ...joined by 20 rows of alpha 20 */
	fill_rect (m, W, 1300, 900, 1500, 1000, 10); /* alone and faint: in no region, untouched */
	before = g_memdup2 (m, (size_t) W * H);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, BD_MAIN_SUBJECT_FRACTION,
	                                            BD_MAIN_SUBJECT_MIN_HEIGHT, NULL), ==, BD_OK);
	for (size_t i = 0; i < (size_t) W * H; i++) {
		int x = (int) (i % W), y = (int) (i / W);
		gboolean dropped = (x >= 1190 && x < 1260 && y >= 490 && y < 630) ||
		                   (x >= 900 && x < 1100 && y >= 50 && y < 150) ||
		                   (x >= 130 && x < 160 && y >= 911 && y < 990);
		gboolean either = x >= 130 && x < 160 && y >= 900 && y < 911;  /* the haze's middle */
		if (either ? m[i] != 0 && m[i] != before[i] : m[i] != (dropped ? 0 : before[i]))
			g_error ("pixel %d,%d: %u, was %u", x, y, m[i], before[i]);
	}
	/* Fraction 0 keeps everything; one region alone is never touched. */
	memcpy (m, before, (size_t) W * H);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, 0, 0, NULL), ==, BD_OK);
	g_assert_cmpmem (m, (size_t) W * H, before, (size_t) W * H);
	memset (m, 0, (size_t) W * H);
	fill_rect (m, W, 1200, 500, 1201, 501, 255);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, 1, 0, NULL), ==, BD_OK);
	g_assert_cmpuint (m[500 * W + 1200], ==, 255);

	/* A street seen from afar (600 x 400): its tallest person spans a quarter of the rows, a
	 * smaller one further back under a fifth of her area. No subject: both stay. The same
	 * scene with the first person half the photo's height: the small one goes. */
	{
		enum { SW = 600, SH = 400 };
		g_autofree uint8_t *street = g_malloc0 (SW * SH), *kept = NULL;
		fill_rect (street, SW, 100, 250, 130, 350, 255);   /* 30 x 100 */
		fill_rect (street, SW, 400, 200, 410, 230, 255);   /* 10 x 30: a tenth of her area */
		kept = g_memdup2 (street, SW * SH);
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, street, SW, SH, SW, BD_MAIN_SUBJECT_FRACTION,
		                                            BD_MAIN_SUBJECT_MIN_HEIGHT, NULL), ==, BD_OK);
		g_assert_cmpmem (street, SW * SH, kept, SW * SH);
		fill_rect (street, SW, 100, 150, 130, 350, 255);   /* now 30 x 200 */
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, street, SW, SH, SW, BD_MAIN_SUBJECT_FRACTION,
		                                            BD_MAIN_SUBJECT_MIN_HEIGHT, NULL), ==, BD_OK);
		g_assert_cmpuint (street[215 * SW + 405], ==, 0);
		g_assert_cmpuint (street[300 * SW + 115], ==, 255);
	}

	/* The public pass on the calling thread does what the session's pool does. */
	g_autofree uint8_t *alone = g_memdup2 (before, (size_t) W * H);
	memcpy (m, before, (size_t) W * H);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, BD_MAIN_SUBJECT_FRACTION,
	                                            BD_MAIN_SUBJECT_MIN_HEIGHT, NULL), ==, BD_OK);
	g_assert_cmpint (bd_mask_drop_passers_by (alone, W, H, W, NULL), ==, BD_OK);
	g_assert_cmpmem (alone, (size_t) W * H, m, (size_t) W * H);
	g_assert_true (memcmp (alone, before, (size_t) W * H) != 0);

	bd_error err = { 0 };
	g_assert_cmpint (bd_mask_drop_passers_by (NULL, W, H, W, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, 1.5f, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, 0.2f, -0.5f, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W, 0.2f, NAN, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, W, H, W - 1, 0.2f, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, NULL, W, H, W, 0.2f, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
}

typedef struct {
	float first, last;
	int   calls;
	int   cancel_after;
} progress_log;

static int
on_progress (float fraction, void *data)
{
	progress_log *log = data;
	g_assert_cmpfloat (fraction, >=, log->last);
	g_assert_cmpfloat (fraction, <=, 1.0f);
	if (!log->calls)
		log->first = fraction;
	log->last = fraction;
	log->calls++;
	return log->cancel_after && log->calls >= log->cancel_after;
}

/* A bd_between_passes_fn that keeps what it is shown and says whether to go on. */
typedef struct {
	float   *first;
	uint32_t width, height;
	int      calls;
	bool     go_on;
} first_pass_seen;

static bd_status
on_first_pass (bd_session *session, const float *prob, uint32_t width, uint32_t height, size_t stride, bool *go_on,
               bd_error *error)
{
	(void) error;
	first_pass_seen *seen = session->between_passes_data;
	seen->calls++;
	seen->width = width;
	seen->height = height;
	seen->first = g_realloc (seen->first, (size_t) width * height * sizeof (float));
	for (uint32_t y = 0; y < height; y++)
		memcpy (seen->first + (size_t) y * width, prob + y * stride, width * sizeof (float));
	*go_on = seen->go_on;
	return BD_OK;
}

/* bd_mirror_average against what it must give: with both passes at one scale, the plain
 * mean of a pixel and its mirror image's; at another scale, a linear ramp is sampled exactly
 * (bilinear), clamped at the photo's edges; pixels outside the photo are left alone. */
static void
test_mirror_average (void)
{
	bd_rng rng = { 11 };
	bd_letterbox same = { 37, 23, 40, 24, 1, 0 };
	float p[40 * 24], m[40 * 24], orig[40 * 24];
	for (int i = 0; i < 40 * 24; i++) {
		p[i] = orig[i] = (float) bd_rng_uniform (&rng, 0, 1000) / 1000.0f;
		m[i] = (float) bd_rng_uniform (&rng, 0, 1000) / 1000.0f;
	}
	bd_mirror_average (p, &same, m, &same);
	for (uint32_t y = 0; y < 24; y++)
		for (uint32_t x = 0; x < 40; x++) {
			size_t i = y * 40 + x;
			bool inside = x >= 1 && x < 38 && y < 23;
			g_assert_cmpfloat (p[i], ==, inside ? 0.5f * (orig[i] + m[y * 40 + 39 - x]) : orig[i]);
		}

	bd_letterbox lb = { 50, 30, 52, 32, 1, 1 }, lb2 = { 56, 34, 56, 36, 0, 1 };
	float q[52 * 32], big[56 * 36];
	for (int i = 0; i < 56 * 36; i++)
		big[i] = 99.0f;   /* padding: never read */
	for (uint32_t y = 0; y < lb2.sh; y++)
		for (uint32_t x = 0; x < lb2.sw; x++)
			big[(y + lb2.oy) * 56 + 55 - (x + lb2.ox)] = 0.01f * x + 0.02f * y + 0.1f;
	for (int i = 0; i < 52 * 32; i++)
		q[i] = 0.25f;
	bd_mirror_average (q, &lb, big, &lb2);
	for (uint32_t y = 0; y < 32; y++)
		for (uint32_t x = 0; x < 52; x++) {
			float v = q[y * 52 + x];
			if (x < 1 || x > 50 || y < 1 || y > 30) {
				g_assert_cmpfloat (v, ==, 0.25f);
				continue;
			}
			double u = CLAMP ((x - 1 + 0.5) * 56.0 / 50.0 - 0.5, 0.0, 55.0);
			double w = CLAMP ((y - 1 + 0.5) * 34.0 / 30.0 - 0.5, 0.0, 33.0);
			g_assert_cmpfloat_with_epsilon (v, 0.5 * (0.25 + 0.01 * u + 0.02 * w + 0.1), 1e-5);
		}
}

/* The run turned's second view: at the looks' own scale each pixel is the mean of its pass
 * and whichever is nearer to the pass, the standing look's same pixel or the other look's
 * pixel half a turn away, where that is lower than the pass, else the pass; at half the
 * scale, ramps sampled bilinearly, the look on her head read turned; outside the photo
 * nothing moves. */
static void
test_look_average (void)
{
	bd_letterbox lb = { 6, 4, 8, 6, 1, 2 };
	uint8_t standing[6 * 4], on_head[6 * 4];
	for (int i = 0; i < 6 * 4; i++) {
		standing[i] = (uint8_t) (i * 10);
		on_head[i] = (uint8_t) (250 - i * 7);
	}
	bd_turned_looks looks = { standing, on_head, 6, 4 };
	float p[8 * 6];
	for (int i = 0; i < 8 * 6; i++)
		p[i] = 0.125f * (float) (i % 8);
	bd_look_average (p, &lb, &looks);
	int from_each[3] = { 0, 0, 0 };
	for (uint32_t y = 0; y < 6; y++)
		for (uint32_t x = 0; x < 8; x++) {
			double was = 0.125 * (double) ((y * 8 + x) % 8);
			if (x < 1 || x > 6 || y < 2) {
				g_assert_cmpfloat (p[y * 8 + x], ==, was);
				continue;
			}
			uint32_t u = x - 1, v = y - 2;
			double up = standing[v * 6 + u] / 255.0, down = on_head[(3 - v) * 6 + 5 - u] / 255.0;
			bool standing_nearer = fabs (up - was) <= fabs (down - was);
			double nearer = standing_nearer ? up : down;
			if (nearer < was)
				from_each[standing_nearer]++;
			else
				from_each[2]++;
			g_assert_cmpfloat_with_epsilon (p[y * 8 + x], nearer < was ? 0.5 * (was + nearer) : was, 1e-6);
		}
	/* Both looks lowered the pass somewhere, and somewhere the pass stayed. */
	g_assert_cmpint (from_each[0], >, 0);
	g_assert_cmpint (from_each[1], >, 0);
	g_assert_cmpint (from_each[2], >, 0);

	/* Looks of 5 x 3 for a photo of 10 x 6, read at (x + 0.5) / 2 - 0.5, clamped; the pass
	 * says 1 and the standing look, a steeper ramp, is always nearer (and lower). */
	bd_letterbox big = { 10, 6, 10, 6, 0, 0 };
	uint8_t up[5 * 3], down[5 * 3];
	for (uint32_t y = 0; y < 3; y++)
		for (uint32_t x = 0; x < 5; x++) {
			up[y * 5 + x] = (uint8_t) (40 * x + 10 * y + 5);
			down[(2 - y) * 5 + 4 - x] = (uint8_t) (20 * x);   /* half a turn */
		}
	bd_turned_looks small = { up, down, 5, 3 };
	float q[10 * 6];
	for (int i = 0; i < 10 * 6; i++)
		q[i] = 1.0f;
	bd_look_average (q, &big, &small);
	for (uint32_t y = 0; y < 6; y++)
		for (uint32_t x = 0; x < 10; x++) {
			double u = CLAMP ((x + 0.5) / 2.0 - 0.5, 0.0, 4.0), v = CLAMP ((y + 0.5) / 2.0 - 0.5, 0.0, 2.0);
			g_assert_cmpfloat_with_epsilon (q[y * 10 + x], 0.5 * (1.0 + (40 * u + 10 * v + 5) / 255.0), 1e-6);
		}
}

/* A small random U-Net (depth 3, width 8, input 64) opened from a file removed at once. */
static bd_model *
synthetic_model (void)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 3, 8, 64, 9);
	/* Named for this process: two runs of the test at once must not share it. */
	g_autofree char *name = g_strdup_printf ("backdrop-test-image-%d.bdm", (int) getpid ());
	g_autofree char *path = g_build_filename (g_get_tmp_dir (), name, NULL);
	g_assert_true (bd_synthetic_model_write (&spec, path));
	bd_model *m = NULL;
	bd_error err = { 0 };
	g_assert_cmpint (bd_model_open (path, &m, &err), ==, BD_OK);
	g_unlink (path);
	return m;
}

/* A session run on photos of other shapes in turn (each photo's two passes at two sizes, the
 * larger made room for first) gives what a fresh session gives: the sizes' shared memory
 * leaves nothing behind. */
static void
test_session_run_shapes (void)
{
	bd_model *m = synthetic_model ();
	bd_session *s = NULL;
	bd_error err = { 0 };
	g_assert_cmpint (bd_session_new (m, NULL, &s, &err), ==, BD_OK);
	static const uint32_t shapes[][2] = { { 333, 517 }, { 200, 150 }, { 333, 517 }, { 90, 300 }, { 200, 150 } };
	for (size_t i = 0; i < G_N_ELEMENTS (shapes); i++) {
		uint32_t w = shapes[i][0], h = shapes[i][1];
		g_autofree uint8_t *px = g_malloc ((size_t) w * h * 3);
		bd_rng rng = { 40 + w };
		for (size_t k = 0; k < (size_t) w * h * 3; k++)
			px[k] = (uint8_t) bd_rng_uniform (&rng, 0, 256);
		bd_image photo = { px, w, h, (size_t) w * 3, BD_PIXEL_RGB8 };
		g_autofree uint8_t *got = g_malloc ((size_t) w * h), *want = g_malloc ((size_t) w * h);
		g_assert_cmpint (bd_session_run (s, &photo, NULL, got, w, &err), ==, BD_OK);
		bd_session *fresh = NULL;
		g_assert_cmpint (bd_session_new (m, NULL, &fresh, &err), ==, BD_OK);
		g_assert_cmpint (bd_session_run (fresh, &photo, NULL, want, w, &err), ==, BD_OK);
		bd_session_free (fresh);
		g_assert_cmpmem (got, (size_t) w * h, want, (size_t) w * h);
	}
	bd_session_free (s);
	bd_model_free (m);
}

static void
test_session_run (void)
{
	bd_model *m = synthetic_model ();
	bd_session *s = NULL;
	bd_error err = { 0 };
	g_assert_cmpint (bd_session_new (m, NULL, &s, &err), ==, BD_OK);
	g_assert_cmpint (bd_session_device (s), ==, BD_DEVICE_CPU);
	g_assert_true (g_str_has_prefix (bd_session_device_description (s), "CPU ("));

	/* An odd-sized RGBA photo with padded rows. */
	enum { W = 333, H = 517, STRIDE = W * 4 + 12 };
	g_autofree uint8_t *px = g_malloc (STRIDE * H);
	bd_rng rng = { 3 };
	for (size_t i = 0; i < (size_t) STRIDE * H; i++)
		px[i] = (uint8_t) bd_rng_uniform (&rng, 0, 256);
	bd_image photo = { px, W, H, STRIDE, BD_PIXEL_RGBA8 };
	g_autofree uint8_t *a1 = g_malloc (W * H), *a2 = g_malloc (W * H);
	memset (a1, 0xAB, W * H);
	progress_log log = { 0 };
	bd_run_options run;
	bd_run_options_init (&run);
	run.progress = on_progress;
	run.user_data = &log;
	g_assert_cmpint (bd_session_run (s, &photo, &run, a1, W, &err), ==, BD_OK);
	g_assert_cmpfloat (log.last, ==, 1.0f);
	g_assert_cmpint (bd_session_run (s, &photo, NULL, a2, W, &err), ==, BD_OK);
	g_assert_cmpmem (a1, W * H, a2, W * H);
	int distinct = 0;
	for (int i = 1; i < W * H; i++)
		distinct += a1[i] != a1[0];
	g_assert_cmpint (distinct, >, 0);

	/* Mirror averaging: the mask is the photo's pass averaged with its mirror image's pass at
	 * 9/8 of the scale (bd_mirror_average), brought to full size; here rebuilt step by step
	 * from the session's own forward pass. */
	{
		bd_letterbox lb = bd_letterbox_for (s, W, H), lb2 = bd_letterbox_mirror_for (s, W, H);
		g_assert_cmpuint (lb2.sh, >, lb.sh);
		const bd_letterbox *lbs[2] = { &lb, &lb2 };
		float *prob[2], *rgb[2];
		for (int pass = 0; pass < 2; pass++) {
			const bd_letterbox *l = lbs[pass];
			size_t plane = (size_t) l->pw * l->ph;
			rgb[pass] = g_malloc0 ((size_t) l->sw * l->sh * 3 * sizeof (float));
			prob[pass] = g_malloc0 (plane * sizeof (float));
			g_autofree float *canvas = g_malloc0 (plane * 3 * sizeof (float));
			g_assert_cmpint (bd_resample_rgb (pool, &photo, l->sw, l->sh, rgb[pass], NULL, 0, 3, NULL), ==, BD_OK);
			for (uint32_t y = 0; y < l->sh; y++)
				for (uint32_t x = 0; x < l->sw; x++)
					for (int c = 0; c < 3; c++) {
						uint32_t cx = pass ? l->pw - 1 - (x + l->ox) : x + l->ox;
						canvas[c * plane + (y + l->oy) * l->pw + cx] =
							(rgb[pass][(y * l->sw + x) * 3 + c] - m->mean[c]) / m->std[c];
					}
			g_assert_cmpint (bd_session_forward (s, canvas, l->ph, l->pw, prob[pass], &err), ==, BD_OK);
		}
		/* Between the two passes a run shows the first, cropped to the photo, to the session's
		 * between_passes (run-looking.c's), once; told to stop, it leaves the mask alone. */
		first_pass_seen seen = { .go_on = true };
		s->between_passes = on_first_pass;
		s->between_passes_data = &seen;
		bd_run_options plain;
		bd_run_options_init (&plain);
		plain.upright = 0;
		plain.close_ups = 0;
		plain.main_subject_only = 0;
		plain.decisive = 0;
		g_assert_cmpint (bd_session_run (s, &photo, &plain, a2, W, &err), ==, BD_OK);
		g_assert_cmpint (seen.calls, ==, 1);
		g_assert_null (s->between_passes);
		g_assert_cmpuint (seen.width, ==, lb.sw);
		g_assert_cmpuint (seen.height, ==, lb.sh);
		for (uint32_t y = 0; y < lb.sh; y++)
			g_assert_cmpmem (seen.first + y * lb.sw, lb.sw * sizeof (float),
			                 prob[0] + (y + lb.oy) * lb.pw + lb.ox, lb.sw * sizeof (float));
		g_assert_cmpint (bd_session_run (s, &photo, &plain, a2, W, &err), ==, BD_OK);
		g_assert_cmpint (seen.calls, ==, 1);
		memset (a2, 0xAB, W * H);
		seen.go_on = false;
		s->between_passes = on_first_pass;
		g_assert_cmpint (bd_session_run (s, &photo, &plain, a2, W, &err), ==, BD_OK);
		g_assert_cmpint (seen.calls, ==, 2);
		for (int i = 0; i < W * H; i++)
			g_assert_cmpuint (a2[i], ==, 0xAB);
		s->between_passes_data = NULL;
		g_free (seen.first);
		bd_mirror_average (prob[0], &lb, prob[1], &lb2);
		g_autofree float *crop = g_malloc ((size_t) lb.sw * lb.sh * sizeof (float));
		for (uint32_t y = 0; y < lb.sh; y++)
			memcpy (crop + y * lb.sw, prob[0] + (y + lb.oy) * lb.pw + lb.ox, lb.sw * sizeof (float));
		g_autofree uint8_t *expect = g_malloc (W * H);
		g_assert_cmpint (bd_upsample_alpha (pool, crop, rgb[0], lb.sw, lb.sh, &photo, true, expect, W, NULL), ==, BD_OK);
		bd_run_options o;
		bd_run_options_init (&o);
		g_assert_cmpint (o.mirror_average, ==, 1);
		o.main_subject_only = 0;
		g_assert_cmpint (o.decisive, ==, 1);
		o.decisive = 0;
		g_assert_cmpint (bd_session_run (s, &photo, &o, a2, W, &err), ==, BD_OK);
		g_assert_cmpmem (a2, W * H, expect, W * H);
		/* The decisive pass comes last, on the whole mask. */
		o.decisive = 1;
		g_assert_cmpint (bd_session_run (s, &photo, &o, a2, W, &err), ==, BD_OK);
		g_assert_cmpint (bd_mask_decide (pool, expect, W, H, W, bd_decide_radius (W, H), NULL), ==, BD_OK);
		g_assert_cmpmem (a2, W * H, expect, W * H);
		o.decisive = 0;
		g_assert_cmpint (bd_session_run (s, &photo, &o, expect, W, &err), ==, BD_OK);
		/* Without it, another mask. */
		o.mirror_average = 0;
		g_assert_cmpint (bd_session_run (s, &photo, &o, a2, W, &err), ==, BD_OK);
		int differ = 0;
		for (int i = 0; i < W * H; i++)
			differ += a2[i] != expect[i];
		g_assert_cmpint (differ, >, W * H / 10);
		for (int pass = 0; pass < 2; pass++) {
			g_free (prob[pass]);
			g_free (rgb[pass]);
		}
	}

	log = (progress_log) { .cancel_after = 2 };
	g_assert_cmpint (bd_session_run (s, &photo, &run, a1, W, &err), ==, BD_ERR_CANCELLED);

	/* Bad photos: a clear status, and the mask left alone. */
	bd_image bad = photo;
	bad.width = 0;
	g_assert_cmpint (bd_session_run (s, &bad, NULL, a1, W, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "empty"));
	bad = photo;
	bad.width = 30000;
	bad.height = 30000;
	g_assert_cmpint (bd_session_run (s, &bad, NULL, a1, W, &err), ==, BD_ERR_TOO_LARGE);
	g_assert_nonnull (strstr (err.message, "30000x30000"));
	bad = photo;
	bad.stride = W;
	g_assert_cmpint (bd_session_run (s, &bad, NULL, a1, W, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_session_run (s, &photo, NULL, NULL, W, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_session_run (s, NULL, NULL, a1, W, &err), ==, BD_ERR_INVALID_ARGUMENT);

	/* A CUDA session fails loudly here when no GPU or no CUDA build is present. */
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CUDA;
	bd_session *gpu = NULL;
	bd_status st = bd_session_new (m, &o, &gpu, &err);
	if (st == BD_OK) {
		g_test_message ("a GPU is present: %s", bd_session_device_description (gpu));
		bd_session_free (gpu);
	} else {
		g_assert_cmpint (st, ==, BD_ERR_DEVICE);
		g_assert_null (gpu);
		g_assert_cmpuint (strlen (err.message), >, 10);
	}
	bd_session_free (s);
	bd_model_free (m);
}

/* A mask taller than 65535 x 512 rows has blocks of over 65535 rows: their person counts
 * must not wrap. 40M x 1: blocks of 78125 rows. The subject, 20 blocks each 65000 rows
 * opaque (1.3M pixels); a neighbour of 6 whole blocks (468750 pixels, 36% of it) stays under
 * a 20% cut-off. Counted in 16 bits, a whole block was 12589 and the neighbour was erased. */
static void
test_keep_subject_tall (void)
{
	const uint32_t H = 40000000, b = 78125;
	g_autofree uint8_t *m = g_malloc0 (H);
	for (uint32_t k = 0; k < 20; k++)
		memset (m + (size_t) k * b, 255, 65000);
	for (uint32_t k = 100; k < 106; k++)
		memset (m + (size_t) k * b, 255, b);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, 1, H, 1, 0.2f, 0, NULL), ==, BD_OK);
	g_assert_cmpuint (m[0], ==, 255);
	g_assert_cmpuint (m[(size_t) 100 * b], ==, 255);
	g_assert_cmpuint (m[(size_t) 106 * b - 1], ==, 255);
	/* And a neighbour of 3 blocks (18%) still goes. */
	memset (m + (size_t) 103 * b, 0, (size_t) 3 * b);
	g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, m, 1, H, 1, 0.2f, 0, NULL), ==, BD_OK);
	g_assert_cmpuint (m[(size_t) 100 * b], ==, 0);
	g_assert_cmpuint (m[0], ==, 255);
}

/* The session's own threads give what the per-call pool gives, byte for byte. */
static void
test_session_image_functions (void)
{
	enum { W = 37, H = 23 };
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 2, 4, 32, 1);
	size_t size;
	g_autofree uint8_t *bytes = bd_synthetic_model_bytes (&spec, &size);
	bd_model *m = NULL;
	bd_session *s = NULL;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.threads = 3;
	g_assert_cmpint (bd_model_load_bytes (bytes, size, "session-image", &m, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (m, &o, &s, NULL), ==, BD_OK);

	uint8_t px[W * H * 3], a1[W * H], a2[W * H], out1[W * H * 4], out2[W * H * 4];
	for (int i = 0; i < W * H * 3; i++)
		px[i] = (uint8_t) (i * 7919 % 251);
	for (int i = 0; i < W * H; i++)
		a1[i] = a2[i] = (uint8_t) ((i % W) * 255 / (W - 1));
	bd_image photo = { px, W, H, W * 3, BD_PIXEL_RGB8 };
	g_assert_cmpint (bd_mask_adjust (a1, W, H, W, 0.4f, 3, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_mask_adjust (s, a2, W, H, W, 0.4f, 3, NULL), ==, BD_OK);
	g_assert_cmpmem (a1, sizeof a1, a2, sizeof a2);
	bd_background bg = { .kind = BD_BACKGROUND_BLUR, .blur_radius = 5 };
	g_assert_cmpint (bd_composite (&photo, a1, W, &bg, out1, W * 4, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_composite (s, &photo, a1, W, &bg, out2, W * 4, NULL), ==, BD_OK);
	g_assert_cmpmem (out1, sizeof out1, out2, sizeof out2);
	bd_error err = { 0 };
	g_assert_cmpint (bd_session_composite (NULL, &photo, a1, W, &bg, out2, W * 4, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_session_mask_adjust (NULL, a2, W, H, W, 0.4f, 3, &err), ==, BD_ERR_INVALID_ARGUMENT);
	bd_session_free (s);
	bd_model_free (m);
}

/* Option structs carry their size: one never initialised is refused with a message that
 * says what to call; one from an older build (shorter) or a newer one (longer, with fields
 * this library does not know) works. */
static void
test_option_sizes (void)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 2, 4, 32, 1);
	size_t size;
	g_autofree uint8_t *bytes = bd_synthetic_model_bytes (&spec, &size);
	bd_model *m = NULL;
	g_assert_cmpint (bd_model_load_bytes (bytes, size, "option-sizes", &m, NULL), ==, BD_OK);
	bd_session *s = NULL;
	bd_error err = { 0 };

	bd_session_options zero;
	memset (&zero, 0, sizeof zero);
	zero.device = BD_DEVICE_CPU;
	g_assert_cmpint (bd_session_new (m, &zero, &s, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_null (s);
	g_assert_nonnull (strstr (err.message, "bd_session_options_init"));

	/* Older: the struct as version 0.1 had it, up to device_index (no padding after it). */
	struct { bd_session_options o; uint8_t more[32]; } bigger;
	memset (&bigger, 0x7f, sizeof bigger);
	bd_session_options_init (&bigger.o);
	bigger.o.device = BD_DEVICE_CPU;
	bigger.o.threads = 1;
	bigger.o.struct_size = offsetof (bd_session_options, device_index) + sizeof (int);
	g_assert_cmpint (bd_session_new (m, &bigger.o, &s, &err), ==, BD_OK);
	bd_session_free (s);
	s = NULL;
	bigger.o.struct_size--;
	g_assert_cmpint (bd_session_new (m, &bigger.o, &s, &err), ==, BD_ERR_INVALID_ARGUMENT);
	/* Newer: 32 bytes of fields unknown here, full of junk. */
	bigger.o.struct_size = sizeof bigger;
	g_assert_cmpint (bd_session_new (m, &bigger.o, &s, &err), ==, BD_OK);
	g_assert_cmpint (bd_session_device (s), ==, BD_DEVICE_CPU);

	uint8_t px[8 * 8 * 3] = { 0 }, alpha[64];
	bd_image photo = { px, 8, 8, 24, BD_PIXEL_RGB8 };
	bd_run_options ro;
	memset (&ro, 0, sizeof ro);
	g_assert_cmpint (bd_session_run (s, &photo, &ro, alpha, 8, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_nonnull (strstr (err.message, "bd_run_options_init"));
	bd_run_options_init (&ro);
	g_assert_cmpuint (ro.struct_size, ==, sizeof ro);
	g_assert_cmpint (bd_session_run (s, &photo, &ro, alpha, 8, &err), ==, BD_OK);
	bd_session_free (s);
	bd_model_free (m);
}

/* The API's edges: NULL options, strides that wrap or reach past memory, a NULL session. */
static void
test_api_edges (void)
{
	/* The header and the library agree on the version (meson.build's project version). */
	g_assert_cmpstr (bd_version (), ==, BD_VERSION_STRING);
	bd_session_options_init (NULL);
	bd_run_options_init (NULL);
	bd_session_options o;
	bd_session_options_init (&o);
	g_assert_cmpint (o.device_index, ==, 0);
	o.device_index = -1;
	bd_session *s = NULL;
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 2, 4, 32, 1);
	size_t size;
	g_autofree uint8_t *bytes = bd_synthetic_model_bytes (&spec, &size);
	bd_model *m = NULL;
	g_assert_cmpint (bd_model_load_bytes (bytes, size, "api-edges", &m, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (m, &o, &s, NULL), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_null (s);
	bd_model_free (m);
	g_assert_cmpint (bd_session_device (NULL), !=, BD_DEVICE_CUDA);
	/* The CPU is always there; a GPU count is never negative, and where there is none a CUDA
	 * session is refused. */
	g_assert_cmpint (bd_device_count (BD_DEVICE_CPU), ==, 1);
	g_assert_cmpint (bd_device_count (BD_DEVICE_AUTO), ==, 1);
	g_assert_cmpint (bd_device_count (BD_DEVICE_CUDA), >=, 0);
	g_assert_cmpint (bd_device_count ((bd_device) 99), ==, 0);
	g_assert_cmpint (bd_session_device (NULL), !=, BD_DEVICE_CPU);

	uint8_t px[4 * 4 * 3] = { 0 }, alpha[16] = { 0 }, out[4 * 4 * 4];
	bd_image photo = { px, 4, 4, 12, BD_PIXEL_RGB8 };
	bd_background bg = { .kind = BD_BACKGROUND_COLOR, .color = { 1, 2, 3, 255 } };
	bd_error err = { 0 };
	const size_t bad[] = { SIZE_MAX, SIZE_MAX / 2, SIZE_MAX / 3, (size_t) PTRDIFF_MAX };
	for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
		bd_image wild = photo;
		wild.stride = bad[i];
		g_assert_cmpint (bd_composite (&wild, alpha, 4, &bg, out, 16, &err), ==, BD_ERR_INVALID_ARGUMENT);
		g_assert_cmpint (bd_composite (&photo, alpha, bad[i], &bg, out, 16, &err), ==, BD_ERR_INVALID_ARGUMENT);
		g_assert_cmpint (bd_composite (&photo, alpha, 4, &bg, out, bad[i], &err), ==, BD_ERR_INVALID_ARGUMENT);
		g_assert_cmpint (bd_mask_adjust (alpha, 4, 4, bad[i], 0.5f, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
		g_assert_cmpint (bd_mask_keep_main_subject (pool, NULL, alpha, 4, 4, bad[i], 0.2f, 0, &err), ==,
		                 BD_ERR_INVALID_ARGUMENT);
	}
	/* One row: the stride is never stepped over, any value at least a row will do. */
	bd_image row = { px, 4, 1, SIZE_MAX, BD_PIXEL_RGB8 };
	g_assert_cmpint (bd_composite (&row, alpha, SIZE_MAX, &bg, out, SIZE_MAX, &err), ==, BD_OK);
	g_assert_cmpint (bd_composite (&photo, alpha, 4, &bg, out, 16, &err), ==, BD_OK);
	/* NaN threshold or feather are refused, not taken as "keep the soft mask". */
	g_assert_cmpint (bd_mask_adjust (alpha, 4, 4, 4, NAN, 0, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_adjust (alpha, 4, 4, 4, 0.5f, NAN, &err), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_cmpint (bd_mask_adjust (alpha, 4, 4, 4, -1, 0, &err), ==, BD_OK);
}

/* bd_rotate_quarter: every pixel where a quarter turn puts it (sizes across its 64-pixel
 * tiles, padded rows), and the turn to the right undoing the turn to the left. */
static void
test_rotate_quarter (void)
{
	static const uint32_t sizes[][2] = { { 1, 1 }, { 5, 3 }, { 3, 70 }, { 130, 67 } };
	for (size_t i = 0; i < G_N_ELEMENTS (sizes); i++)
		for (uint32_t ch = 1; ch <= 4; ch++) {
			uint32_t w = sizes[i][0], h = sizes[i][1];
			size_t stride = (size_t) w * ch + 5, tstride = (size_t) h * ch + 3;
			g_autofree uint8_t *src = g_malloc (stride * h), *left = g_malloc0 (tstride * w);
			g_autofree uint8_t *back = g_malloc0 (stride * h);
			for (size_t k = 0; k < stride * h; k++)
				src[k] = (uint8_t) (k * 7 + k / 251);
			bd_rotate_quarter (pool, src, w, h, stride, ch, false, left, tstride);
			for (uint32_t y = 0; y < w; y++)
				for (uint32_t x = 0; x < h; x++)
					for (uint32_t c = 0; c < ch; c++)
						/* Turned to the left: row y of the result is column w - 1 - y, top down. */
						g_assert_cmpuint (left[y * tstride + x * ch + c], ==, src[(size_t) x * stride + (w - 1 - y) * ch + c]);
			bd_rotate_quarter (pool, left, h, w, tstride, ch, true, back, stride);
			for (uint32_t y = 0; y < h; y++)
				g_assert_cmpmem (back + y * stride, (size_t) w * ch, src + y * stride, (size_t) w * ch);
		}
}

/* bd_run_looking's steps, with a run that stands in for the network: a first pass unsure of
 * its person, quick looks that find nothing as the photo stands and a person surely either
 * way turned. The photo's own run ends between its passes (its mask never written), the run
 * turned to the left takes the rest of the bar, and its mask comes back turned to the right. */
static int
turned_mask_value (uint32_t x, uint32_t y)
{
	return (int) ((x * 3 + y * 5) % 200) + 20;
}

/* The stand-ins' first pass: unsure of its person (0.6 everywhere), it hands its mask to
 * bd_between_passes, which makes the quick looks and says whether the run goes on. */
static bd_status
unsure_first_pass (bd_session *session, bool *go_on, bd_error *error)
{
	float prob[6 * 4];
	for (int i = 0; i < 6 * 4; i++)
		prob[i] = 0.6f;
	*go_on = true;
	return bd_between_passes (session, prob, 6, 4, 6, go_on, error);
}

/* A session of the synthetic model and a 40 x 24 photo, for bd_run_looking's stand-ins. */
enum { UPRIGHT_W = 40, UPRIGHT_H = 24 };
typedef struct {
	bd_model   *model;
	bd_session *session;
	uint8_t     px[UPRIGHT_W * UPRIGHT_H * 3];
	bd_image    photo;
} upright_fixture;

static void
upright_fixture_init (upright_fixture *f)
{
	f->model = synthetic_model ();
	f->session = NULL;
	g_assert_cmpint (bd_session_new (f->model, NULL, &f->session, NULL), ==, BD_OK);
	for (int i = 0; i < UPRIGHT_W * UPRIGHT_H * 3; i++)
		f->px[i] = (uint8_t) (i * 13);
	f->photo = (bd_image) { f->px, UPRIGHT_W, UPRIGHT_H, UPRIGHT_W * 3, BD_PIXEL_RGB8 };
}

static void
upright_fixture_clear (upright_fixture *f)
{
	bd_session_free (f->session);
	bd_model_free (f->model);
}

/* The stand-in's turned quick runs so far: the first (to the left) a level surer. */
static int turned_looks_made;

static bd_status
stand_in_run (bd_session *session, const bd_image *photo, const bd_run_options *options, uint8_t *alpha,
              size_t stride, bd_error *error)
{
	uint32_t w = photo->width, h = photo->height;
	if (session->look_run == 3) {
		/* Its second view: the quick looks of the photo turned (24 x 40), the left one
		 * standing, the right one (a level fainter) on her head. */
		const bd_turned_looks *l = session->turned_looks;
		g_assert_nonnull (l);
		g_assert_cmpuint (l->width, ==, 24);
		g_assert_cmpuint (l->height, ==, 40);
		g_assert_cmpuint (l->standing[0], ==, 255);
		g_assert_cmpuint (l->on_head[0], ==, 254);
		g_assert_cmpuint (l->standing[39 * 24], ==, 0);
	} else {
		g_assert_null (session->turned_looks);
	}
	if (session->look_run == 0) {
		bool go_on;
		bd_status st = unsure_first_pass (session, &go_on, error);
		if (st != BD_OK || !go_on)
			return st;
	}
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *a = alpha + y * stride + x;
			switch (session->look_run) {
			case 0: *a = 77; break;                          /* never to be seen */
			case 1: *a = 0; break;                           /* nothing as it stands */
			case 2: *a = y < h / 3 ? (uint8_t) (255 - turned_looks_made) : 0; break;   /* someone either way */
			default: *a = (uint8_t) turned_mask_value (x, y); break;
			}
		}
	if (session->look_run == 2)
		turned_looks_made++;
	if (session->look_run == 3 && options->progress)
		for (int i = 0; i <= 2; i++)
			options->progress (0.5f * (float) i, options->user_data);
	return BD_OK;
}

static void
test_upright_steps (void)
{
	upright_fixture f;
	upright_fixture_init (&f);
	bd_session *s = f.session;
	enum { W = UPRIGHT_W, H = UPRIGHT_H };
	uint8_t alpha[W * H];
	progress_log log = { 0 };
	bd_run_options o;
	bd_run_options_init (&o);
	o.progress = on_progress;
	o.user_data = &log;
	bd_error err = { 0 };
	turned_looks_made = 0;
	g_assert_cmpint (bd_run_looking (s, &f.photo, &o, alpha, W, stand_in_run, &err), ==, BD_OK);
	g_assert_cmpint (turned_looks_made, ==, 2);
	g_assert_null (s->between_passes);
	g_assert_null (s->turned_looks);
	g_assert_cmpint (s->look_run, ==, 0);
	/* Turned to the left, the photo is H wide: the stand-in's pixel (x, y) is the photo's
	 * (W - 1 - y, x). */
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++)
			g_assert_cmpint (alpha[y * W + x], ==, turned_mask_value (y, W - 1 - x));
	g_assert_cmpint (log.calls, ==, 3);
	g_assert_cmpfloat (log.first, ==, 0.5f);   /* the first run's half of the bar, with mirror averaging */
	g_assert_cmpfloat (log.last, ==, 1.0f);
	upright_fixture_clear (&f);
}

/* A stand-in whose first pass is unsure, and whose quick looks show a person in their top
 * third at look_levels[0] (as it stands), [1] (turned to the left) and [2] (to the right), 0
 * for nobody; it counts the looks and runs turned. */
static uint8_t look_levels[3];
static int     levels_looks_made, levels_own_looks, levels_runs_turned;

static bd_status
levels_stand_in (bd_session *session, const bd_image *photo, const bd_run_options *options, uint8_t *alpha,
                 size_t stride, bd_error *error)
{
	uint32_t w = photo->width, h = photo->height;
	if (session->look_run == 0) {
		bool go_on;
		bd_status st = unsure_first_pass (session, &go_on, error);
		if (st != BD_OK || !go_on)
			return st;
	}
	uint8_t level = 0;
	if (session->look_run == 2) {
		g_assert_cmpint (levels_looks_made, <, 2);
		level = look_levels[1 + levels_looks_made++];
	}
	if (session->look_run == 1)
		level = look_levels[0];
	levels_own_looks += session->look_run == 1;
	levels_runs_turned += session->look_run == 3;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *a = alpha + y * stride + x;
			switch (session->look_run) {
			case 0: *a = 77; break;                          /* the photo's own run */
			case 1:                                          /* the quick looks */
			case 2: *a = y < h / 3 ? level : 0; break;
			default: *a = 200; break;                        /* the run turned */
			}
		}
	return BD_OK;
}

typedef struct {
	uint8_t own_level, left, right;   /* look_levels */
	int     looks, own, turned;         /* turned looks, looks as it stands, runs turned */
	uint8_t mask;
} levels_case;

/* bd_run_looking with levels_stand_in on each case: the turned looks made, the runs turned
 * and the mask. */
static void
check_levels (const levels_case *cases, size_t n)
{
	upright_fixture f;
	upright_fixture_init (&f);
	uint8_t alpha[UPRIGHT_W * UPRIGHT_H];
	bd_run_options o;
	bd_run_options_init (&o);
	for (size_t c = 0; c < n; c++) {
		look_levels[0] = cases[c].own_level;
		look_levels[1] = cases[c].left;
		look_levels[2] = cases[c].right;
		levels_looks_made = levels_own_looks = levels_runs_turned = 0;
		bd_error err = { 0 };
		g_assert_cmpint (bd_run_looking (f.session, &f.photo, &o, alpha, UPRIGHT_W, levels_stand_in, &err), ==,
		                 BD_OK);
		g_assert_cmpint (levels_looks_made, ==, cases[c].looks);
		g_assert_cmpint (levels_own_looks, ==, cases[c].own);
		g_assert_cmpint (levels_runs_turned, ==, cases[c].turned);
		for (int i = 0; i < UPRIGHT_W * UPRIGHT_H; i++)
			g_assert_cmpint (alpha[i], ==, cases[c].mask);
	}
	upright_fixture_clear (&f);
}

/* The bar a turned look must pass where the photo as it stands shows nothing, a person at
 * the same level either way: 238 / 255 = 0.933, the ice cave's mountain turned, stays; 242 /
 * 255 = 0.949, the least sure of the turned CCP people that turn that way, turns
 * (docs/MODEL.md). */
static void
test_upright_bar (void)
{
	const levels_case cases[] = { { 0, 238, 238, 2, 1, 0, 77 }, { 0, 242, 242, 2, 1, 1, 200 } };
	check_levels (cases, G_N_ELEMENTS (cases));
}

/* A quick look is made only where it can still change where the photo turns. Nobody to the
 * left: the photo cannot turn either way, and only that look is made. Someone to the left,
 * not sure enough to turn the photo (230 / 255 = 0.90) but enough to be the other look of a
 * turn to the right: the other two are made, and the right one turns it. Someone to the
 * left as surely as as it stands: the right one cannot turn it alone and is not made.
 * Someone surely to the left and nobody to the right: all three made, and the photo stays
 * (no other look finds her). */
static void
test_upright_second_look (void)
{
	const levels_case cases[] = {
		{ 0, 0, 250, 1, 0, 0, 77 }, { 0, 230, 250, 2, 1, 1, 200 }, { 230, 230, 250, 1, 1, 0, 77 },
		{ 0, 250, 0, 2, 1, 0, 77 },
	};
	check_levels (cases, G_N_ELEMENTS (cases));
}

/* The close-up check (run-looking.c, close-up.c) with a stand-in for the network on a
 * 300 x 200 photo. Its first pass (300 x 200 too) calls person the rows above first_rows at
 * first_p and an unsure band of band_rows below them at 0.5; its look as it stands (256 x
 * 171) the top 57 rows at look_level and look_band rows below them at 128 (unsure), and its
 * turned looks the top third at turned_level. The run at the looks' size writes 200, the
 * photo's own run 77. */
typedef struct {
	float   first_p;
	int     first_rows, band_rows;
	uint8_t look_level;
	int     look_band;
	uint8_t turned_level;
	bool    upright;
	int     own_looks, smaller_runs;   /* expected: looks as it stands, runs at the looks' size */
} close_up_case;

static const close_up_case *close_up_now;
static int                  close_up_own_looks, close_up_smaller_runs;

static bd_status
close_up_stand_in (bd_session *session, const bd_image *photo, const bd_run_options *options, uint8_t *alpha,
                   size_t stride, bd_error *error)
{
	const close_up_case *c = close_up_now;
	uint32_t w = photo->width, h = photo->height;
	if (session->look_run == 0) {
		enum { FW = 300, FH = 200 };
		static float prob[FW * FH];
		for (int y = 0; y < FH; y++)
			for (int x = 0; x < FW; x++)
				prob[y * FW + x] = y < c->first_rows ? c->first_p
				                   : y < c->first_rows + c->band_rows ? 0.5f : 0.0f;
		bool go_on = true;
		bd_status st = bd_between_passes (session, prob, FW, FH, FW, &go_on, error);
		if (st != BD_OK || !go_on)
			return st;
	}
	if (session->look_run == 4) {
		/* With the network at the looks' size, mirror pass and all. */
		g_assert_cmpuint (session->run_side, ==, 256);
		bd_letterbox lb = bd_letterbox_for (session, w, h);
		g_assert_cmpuint (lb.sw, ==, 256);
		g_assert_cmpuint (lb.sh, ==, 171);
		g_assert_true (options->mirror_average);
		close_up_smaller_runs++;
	}
	if (session->look_run == 1) {
		g_assert_cmpuint (w, ==, 256);
		g_assert_cmpuint (h, ==, 171);
		close_up_own_looks++;
	}
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint8_t *a = alpha + y * stride + x;
			switch (session->look_run) {
			case 0: *a = 77; break;
			case 1: *a = y < 57 ? c->look_level : y < 57u + (uint32_t) c->look_band ? 128 : 0; break;
			case 2: *a = y < h / 3 ? c->turned_level : 0; break;
			case 4: *a = 200; break;
			default: g_assert_not_reached ();
			}
		}
	return BD_OK;
}

/* The first pass below: sure 0.8375 ((0.95 x 60 + 0.5 x 20) / 80), a tenth of it unsure. A
 * look as it stands at 217 / 255 = 0.851, surer by less than the 0.02 that turning needs,
 * runs the photo at its size; at the same level against a first pass at 0.97 (sure 0.8525)
 * it does not. An unsure band in the look of 13 rows (0.076 of it) is under 0.8 x 0.1 and
 * runs it smaller; 14 rows (0.082) does not. A first pass that finds nobody (mass under
 * 0.06), or has only 1% of its pixels unsure, makes no look; 1.5%, it does. With the turned looks on: a first pass unsure enough for them whose
 * left look finds nobody makes the look as it stands for the close-up alone; one whose left
 * look finds someone uses upright.c's look as it stands, not a second one. */
static void
test_close_up (void)
{
	const close_up_case cases[] = {
		{ 0.95f, 60, 20, 217, 0, 0, false, 1, 1 },   /* surer by 0.0135: smaller */
		{ 0.97f, 60, 20, 217, 0, 0, false, 1, 0 },   /* not surer */
		{ 0.95f, 60, 20, 250, 13, 0, false, 1, 1 },  /* unsure 0.076 < 0.08 */
		{ 0.95f, 60, 20, 250, 14, 0, false, 1, 0 },  /* unsure 0.082 */
		{ 0.95f, 4, 4, 250, 0, 0, false, 0, 0 },     /* mass 0.029: nobody, no look */
		{ 0.95f, 60, 2, 250, 0, 0, false, 0, 0 },    /* unsure 0.01: no look */
		{ 0.95f, 60, 3, 250, 0, 0, false, 1, 1 },    /* unsure 0.015: a look, surer */
		{ 0.95f, 60, 20, 217, 0, 0, true, 1, 1 },    /* the left look finds nobody */
		{ 0.95f, 60, 20, 217, 0, 230, true, 1, 1 },  /* upright.c's look as it stands */
	};
	bd_model *m = synthetic_model ();
	bd_session *s = NULL;
	g_assert_cmpint (bd_session_new (m, NULL, &s, NULL), ==, BD_OK);
	enum { W = 300, H = 200 };
	g_autofree uint8_t *px = g_malloc (W * H * 3), *alpha = g_malloc (W * H);
	for (int i = 0; i < W * H * 3; i++)
		px[i] = (uint8_t) (i * 13);
	bd_image photo = { px, W, H, W * 3, BD_PIXEL_RGB8 };
	for (size_t i = 0; i < G_N_ELEMENTS (cases); i++) {
		close_up_now = &cases[i];
		close_up_own_looks = close_up_smaller_runs = 0;
		bd_run_options o;
		bd_run_options_init (&o);
		o.upright = cases[i].upright;
		bd_error err = { 0 };
		g_assert_cmpint (bd_run_looking (s, &photo, &o, alpha, W, close_up_stand_in, &err), ==, BD_OK);
		g_assert_cmpint (close_up_own_looks, ==, cases[i].own_looks);
		g_assert_cmpint (close_up_smaller_runs, ==, cases[i].smaller_runs);
		g_assert_cmpuint (s->run_side, ==, 0);
		g_assert_cmpint (s->look_run, ==, 0);
		g_assert_null (s->between_passes);
		for (int p = 0; p < W * H; p++)
			g_assert_cmpuint (alpha[p], ==, cases[i].smaller_runs ? 200 : 77);
	}
	/* Without close_ups, none of it. */
	close_up_now = &cases[0];
	close_up_own_looks = close_up_smaller_runs = 0;
	bd_run_options o;
	bd_run_options_init (&o);
	o.upright = 0;
	o.close_ups = 0;
	g_assert_cmpint (bd_run_looking (s, &photo, &o, alpha, W, close_up_stand_in, NULL), ==, BD_OK);
	g_assert_cmpint (close_up_own_looks + close_up_smaller_runs, ==, 0);
	bd_session_free (s);
	bd_model_free (m);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	pool = bd_thread_pool_new (2);
	g_test_add_func ("/core/image/resample", test_resample);
	g_test_add_func ("/core/image/rotate-quarter", test_rotate_quarter);
	g_test_add_func ("/core/image/resample-public", test_resample_public);
	g_test_add_func ("/core/image/resample-threads", test_resample_threads);
	g_test_add_func ("/core/image/upsample-follows-edges", test_upsample_follows_edges);
	g_test_add_func ("/core/image/box-columns", test_box_columns);
	g_test_add_func ("/core/image/composite", test_composite);
	g_test_add_func ("/core/image/composite-in-thread", test_composite_in_thread);
	g_test_add_func ("/core/image/box-line", test_box_line);
	g_test_add_func ("/core/image/colour-means", test_colour_means);
	g_test_add_func ("/core/image/mask-adjust", test_mask_adjust);
	g_test_add_func ("/core/image/keep-main-subject", test_keep_main_subject);
	g_test_add_func ("/core/image/keep-main-subject-scratch", test_keep_main_subject_scratch);
	g_test_add_func ("/core/image/subject-blocks-to-drop", test_subject_blocks_to_drop);
	g_test_add_func ("/core/image/mask-decide", test_mask_decide);
	g_test_add_func ("/core/image/keep-main-subject-tall", test_keep_subject_tall);
	g_test_add_func ("/core/image/api-edges", test_api_edges);
	g_test_add_func ("/core/image/option-sizes", test_option_sizes);
	g_test_add_func ("/core/image/session-image-functions", test_session_image_functions);
	g_test_add_func ("/core/image/mirror-average", test_mirror_average);
	g_test_add_func ("/core/image/look-average", test_look_average);
	g_test_add_func ("/core/image/session-run", test_session_run);
	g_test_add_func ("/core/image/session-run-shapes", test_session_run_shapes);
	g_test_add_func ("/core/image/upright-steps", test_upright_steps);
	g_test_add_func ("/core/image/upright-bar", test_upright_bar);
	g_test_add_func ("/core/image/upright-second-look", test_upright_second_look);
	g_test_add_func ("/core/image/close-up", test_close_up);
	int ret = g_test_run ();
	bd_thread_pool_free (pool);
	return ret;
}
