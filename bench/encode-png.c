/* SPDX-License-Identifier: Apache-2.0 */
/* What writing a PNG costs, in milliseconds and bytes, for the encoders the programs can use:
 * gdk-pixbuf's saver (libpng inside) at zlib levels 1, 3, 6 (its default) and 9, and libpng's
 * simplified API (its defaults), on a real cut-out: a photo with a soft mask as its alpha (the
 * mask a disc with a feathered edge over the middle, so the transparent area compresses as a
 * cut-out's does). Also a greyscale mask through libpng, and both through the programs' own
 * writer (libdeflate, common/bd-encode-png.c). Median of RUNS after one warm-up.
 *
 *   encode-png PHOTO [RUNS]        e.g. a 12 MP JPEG */
#include "bd-decode-private.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <math.h>
#include <png.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	gsize bytes;
} counter;

static gboolean
count_bytes (const gchar *buf, gsize count, GError **error, gpointer data)
{
	((counter *) data)->bytes += count;
	return TRUE;
}

typedef struct {
	gsize bytes;
} sink;

static void
sink_write (png_structp png, png_bytep data, png_size_t length)
{
	((sink *) png_get_io_ptr (png))->bytes += length;
}

static void
sink_flush (png_structp png)
{
}

/* An RGBA cut-out through libpng's own writer with a chosen zlib level, row filter and zlib
 * strategy; returns the bytes written. */
static gsize
libpng_rgba (const guint8 *px, int w, int h, int stride, int level, int filters, int strategy)
{
	png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct (png);
	sink s = { 0 };
	if (setjmp (png_jmpbuf (png))) {
		fprintf (stderr, "libpng failed\n");
		exit (1);
	}
	png_set_write_fn (png, &s, sink_write, sink_flush);
	png_set_IHDR (png, info, (png_uint_32) w, (png_uint_32) h, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
	              PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_filter (png, PNG_FILTER_TYPE_BASE, filters);
	png_set_compression_level (png, level);
	png_set_compression_strategy (png, strategy);
	png_write_info (png, info);
	for (int y = 0; y < h; y++)
		png_write_row (png, px + (size_t) y * stride);
	png_write_end (png, info);
	png_destroy_write_struct (&png, &info);
	return s.bytes;
}

static int
compare (const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;
	return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
	if (argc < 2) {
		fprintf (stderr, "usage: %s PHOTO [RUNS]\n", argv[0]);
		return 2;
	}
	int runs = argc > 2 ? atoi (argv[2]) : 5;
	GError *error = NULL;
	GdkPixbuf *photo = gdk_pixbuf_new_from_file (argv[1], &error);
	if (!photo) {
		fprintf (stderr, "%s\n", error->message);
		return 1;
	}
	int w = gdk_pixbuf_get_width (photo), h = gdk_pixbuf_get_height (photo);
	GdkPixbuf *cut = gdk_pixbuf_add_alpha (photo, FALSE, 0, 0, 0);
	guint8 *px = gdk_pixbuf_get_pixels (cut);
	int stride = gdk_pixbuf_get_rowstride (cut);
	guint8 *mask = malloc ((size_t) w * h);
	double r = 0.35 * (w < h ? w : h), soft = 0.01 * (w + h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			double d = hypot (x - w / 2.0, y - h / 2.0);
			double a = fmin (1.0, fmax (0.0, (r - d) / soft + 0.5));
			guint8 v = (guint8) lround (255 * a);
			px[(size_t) y * stride + (size_t) x * 4 + 3] = v;
			mask[(size_t) y * w + x] = v;
		}
	printf ("%dx%d (%.1f MP), median of %d\n", w, h, w * h / 1e6, runs);
	static const char *const levels[] = { "1", "3", "6", "9" };
	double *t = calloc ((size_t) runs, sizeof *t);
	for (size_t l = 0; l < G_N_ELEMENTS (levels) + 2; l++) {
		gsize bytes = 0;
		for (int i = -1; i < runs; i++) {
			counter c = { 0 };
			gint64 t0 = g_get_monotonic_time ();
			if (l < G_N_ELEMENTS (levels)) {
				if (!gdk_pixbuf_save_to_callback (cut, count_bytes, &c, "png", &error, "compression", levels[l], NULL)) {
					fprintf (stderr, "%s\n", error->message);
					return 1;
				}
				bytes = c.bytes;
			} else {
				png_image png = { .version = PNG_IMAGE_VERSION, .width = (png_uint_32) w, .height = (png_uint_32) h };
				gboolean grey = l == G_N_ELEMENTS (levels) + 1;
				png.format = grey ? PNG_FORMAT_GRAY : PNG_FORMAT_RGBA;
				png_alloc_size_t size = 0;
				const void *src = grey ? (const void *) mask : (const void *) px;
				png_int_32 row = grey ? w : stride;
				png_image_write_to_memory (&png, NULL, &size, 0, src, row, NULL);
				void *buf = malloc (size);
				if (!png_image_write_to_memory (&png, buf, &size, 0, src, row, NULL)) {
					fprintf (stderr, "libpng: %s\n", png.message);
					return 1;
				}
				free (buf);
				bytes = size;
			}
			if (i >= 0)
				t[i] = (g_get_monotonic_time () - t0) / 1000.0;
		}
		qsort (t, (size_t) runs, sizeof *t, compare);
		const char *name = l < G_N_ELEMENTS (levels) ? levels[l] : l == G_N_ELEMENTS (levels) ? "libpng" : "grey";
		if (l < G_N_ELEMENTS (levels))
			printf ("gdk-pixbuf cut-out, zlib level %-2s  %8.1f ms  %10zu bytes\n", name, t[runs / 2], bytes);
		else
			printf ("libpng simplified, %-6s cut-out %8.1f ms  %10zu bytes\n",
			        l == G_N_ELEMENTS (levels) ? "RGBA" : "grey", t[runs / 2], bytes);
	}
	/* libpng's writer: level, row filter, strategy. */
	static const struct { const char *name; int level, filters, strategy; } ways[] = {
		{ "level 3, adaptive filters (gdk-pixbuf's)", 3, PNG_ALL_FILTERS, Z_FILTERED },
		{ "level 1, adaptive filters", 1, PNG_ALL_FILTERS, Z_FILTERED },
		{ "level 1, up", 1, PNG_FILTER_UP, Z_FILTERED },
		{ "level 1, sub", 1, PNG_FILTER_SUB, Z_FILTERED },
		{ "level 2, sub", 2, PNG_FILTER_SUB, Z_FILTERED },
		{ "level 1, paeth", 1, PNG_FILTER_PAETH, Z_FILTERED },
		{ "level 3, sub", 3, PNG_FILTER_SUB, Z_FILTERED },
		{ "rle, sub", 1, PNG_FILTER_SUB, Z_RLE },
		{ "rle, up", 1, PNG_FILTER_UP, Z_RLE },
		{ "rle, paeth", 1, PNG_FILTER_PAETH, Z_RLE },
		{ "level 1, none", 1, PNG_FILTER_NONE, Z_DEFAULT_STRATEGY },
	};
	for (size_t k = 0; k < G_N_ELEMENTS (ways); k++) {
		gsize bytes = 0;
		for (int i = -1; i < runs; i++) {
			gint64 t0 = g_get_monotonic_time ();
			bytes = libpng_rgba (px, w, h, stride, ways[k].level, ways[k].filters, ways[k].strategy);
			if (i >= 0)
				t[i] = (g_get_monotonic_time () - t0) / 1000.0;
		}
		qsort (t, (size_t) runs, sizeof *t, compare);
		printf ("libpng cut-out, %-40s %8.1f ms  %10zu bytes\n", ways[k].name, t[runs / 2], bytes);
	}
	/* What the programs write (common/bd-encode-png.c): the cut-out, and the mask as grey. */
	GdkPixbuf *grey = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, w, h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			memset (gdk_pixbuf_get_pixels (grey) + (size_t) y * gdk_pixbuf_get_rowstride (grey) + (size_t) x * 3,
			        mask[(size_t) y * w + x], 3);
	for (int k = 0; k < 2; k++) {
		gsize bytes = 0;
		for (int i = -1; i < runs; i++) {
			GOutputStream *out = g_memory_output_stream_new_resizable ();
			gint64 t0 = g_get_monotonic_time ();
			gboolean ok = k == 0 ? bd_encode_png_rgba (out, cut, NULL, &error) : bd_encode_png_grey (out, grey, NULL, &error);
			if (i >= 0)
				t[i] = (g_get_monotonic_time () - t0) / 1000.0;
			if (!ok) {
				fprintf (stderr, "%s\n", error->message);
				return 1;
			}
			bytes = g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (out));
			g_object_unref (out);
		}
		qsort (t, (size_t) runs, sizeof *t, compare);
		printf ("ours (libdeflate, up), %-34s %8.1f ms  %10zu bytes\n", k == 0 ? "cut-out, level 1" : "grey mask, level 6",
		        t[runs / 2], bytes);
	}
	g_object_unref (grey);
	free (t);
	free (mask);
	g_object_unref (cut);
	g_object_unref (photo);
	return 0;
}
