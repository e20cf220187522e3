/* SPDX-License-Identifier: Apache-2.0 */
/* PNG written with libpng, then sent to the stream bd_image_save_file opened.
 *
 * Masks as 8-bit greyscale: gdk-pixbuf writes only RGB(A), and a mask saved as opaque RGBA
 * shows nothing to the tools that read a mask from alpha or a single channel. libpng's
 * simplified API compresses the grey plane in memory (a mask compresses to a few percent of
 * its pixels).
 *
 * Cut-outs and composites: gdk-pixbuf's saver tries every row filter on every row (libpng's
 * adaptive choice), which at zlib level 3 was most of a folder's time on a GPU. One filter,
 * "up", at level 1 writes a 1 MP cut-out 2.3 times faster for 1.6% more bytes; "sub" and
 * "paeth" were slower or larger, zlib's run-length strategy 30-50% larger (bench/encode-png,
 * docs/PERFORMANCE.md). */
#include "config.h"

#include "bd-decode-private.h"

#include <glib/gi18n-lib.h>
#include <png.h>
#include <setjmp.h>
#include <zlib.h>

gboolean
bd_encode_png_grey (GOutputStream *out, GdkPixbuf *image, GCancellable *cancellable, GError **error)
{
	int w = gdk_pixbuf_get_width (image), h = gdk_pixbuf_get_height (image);
	int channels = gdk_pixbuf_get_n_channels (image), stride = gdk_pixbuf_get_rowstride (image);
	const guint8 *src = gdk_pixbuf_read_pixels (image);
	g_autofree guint8 *grey = g_try_malloc ((gsize) w * h);
	if (!grey) {
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, _("Out of memory"));
		return FALSE;
	}
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			grey[(gsize) y * w + x] = src[(gsize) y * stride + (gsize) x * channels];

	png_image png = { .version = PNG_IMAGE_VERSION, .width = (png_uint_32) w, .height = (png_uint_32) h,
	                  .format = PNG_FORMAT_GRAY };
	/* Room for the worst case (stored, not deflated), so that one pass compresses. */
	png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX (png);
	g_autofree guint8 *encoded = g_try_malloc (size);
	if (!encoded) {
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, _("Out of memory"));
		return FALSE;
	}
	gboolean ok = png_image_write_to_memory (&png, encoded, &size, 0, grey, w, NULL) != 0;
	if (!ok)
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, png.message);
	png_image_free (&png);
	if (ok)
		ok = g_output_stream_write_all (out, encoded, size, NULL, cancellable, error);
	return ok;
}

/* Where libpng's bytes go: the stream, written as they come; the first failure is kept. */
typedef struct {
	GOutputStream *out;
	GCancellable  *cancellable;
	GError        *error;
	char           message[200];
} png_sink;

/* libpng reports a failure by longjmp from its error handler; the message is kept. */
static void
keep_message (png_structp png, png_const_charp message)
{
	png_sink *sink = png_get_error_ptr (png);
	g_strlcpy (sink->message, message, sizeof sink->message);
	png_longjmp (png, 1);
}

static void
write_to_stream (png_structp png, png_bytep data, png_size_t length)
{
	png_sink *sink = png_get_io_ptr (png);
	if (!g_output_stream_write_all (sink->out, data, length, NULL, sink->cancellable, &sink->error))
		png_error (png, sink->error->message);
}

static void
flush_nothing (png_structp png)
{
}

/* The rows through libpng into @sink; FALSE when libpng or the stream failed. Apart from its
 * caller so that nothing of the caller's lives across the longjmp. */
static gboolean
encode_rgba_rows (GdkPixbuf *image, png_sink *sink)
{
	int w = gdk_pixbuf_get_width (image), h = gdk_pixbuf_get_height (image);
	int stride = gdk_pixbuf_get_rowstride (image);
	gboolean alpha = gdk_pixbuf_get_n_channels (image) == 4;
	const guint8 *px = gdk_pixbuf_read_pixels (image);
	png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, sink, keep_message, NULL);
	png_infop info = png ? png_create_info_struct (png) : NULL;
	if (!png || !info) {
		png_destroy_write_struct (&png, NULL);
		g_strlcpy (sink->message, "out of memory", sizeof sink->message);
		return FALSE;
	}
	if (setjmp (png_jmpbuf (png))) {
		png_destroy_write_struct (&png, &info);
		return FALSE;
	}
	png_set_write_fn (png, sink, write_to_stream, flush_nothing);
	png_set_compression_buffer_size (png, 64 * 1024);   /* fewer, larger writes */
	png_set_IHDR (png, info, (png_uint_32) w, (png_uint_32) h, 8,
	              alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
	              PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_filter (png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
	png_set_compression_level (png, 1);
	png_set_compression_strategy (png, Z_FILTERED);
	png_write_info (png, info);
	for (int y = 0; y < h; y++)
		png_write_row (png, px + (gsize) y * stride);
	png_write_end (png, info);
	png_destroy_write_struct (&png, &info);
	return TRUE;
}

gboolean
bd_encode_png_rgba (GOutputStream *out, GdkPixbuf *image, GCancellable *cancellable, GError **error)
{
	png_sink sink = { out, cancellable, NULL, "" };
	if (encode_rgba_rows (image, &sink))
		return TRUE;
	/* The stream's own error (a full disk, a cancel) as it is; else libpng's words. */
	if (sink.error)
		g_propagate_error (error, sink.error);
	else
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "libpng: %s", sink.message);
	return FALSE;
}
