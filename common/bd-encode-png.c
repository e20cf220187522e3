/* SPDX-License-Identifier: Apache-2.0 */
/* Masks as 8-bit greyscale PNG: gdk-pixbuf writes only RGB(A), and a mask saved as opaque RGBA
 * shows nothing to the tools that read a mask from alpha or a single channel. libpng's
 * simplified API compresses the grey plane in memory (a mask compresses to a few percent of
 * its pixels), then it goes to the stream bd_image_save_file opened. */
#include "config.h"

#include "bd-decode-private.h"

#include <glib/gi18n-lib.h>
#include <png.h>

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
