/* SPDX-License-Identifier: Apache-2.0 */
/* Masks as 8-bit greyscale PNG: gdk-pixbuf writes only RGB(A), and a mask saved as opaque RGBA
 * shows nothing to the tools that read a mask from alpha or a single channel. libpng's
 * simplified API writes the grey plane to the temporary file bd_image_save_full opened. */
#include "bd-decode-private.h"

#include <glib/gi18n.h>
#include <png.h>
#include <stdio.h>
#include <unistd.h>

gboolean
bd_encode_png_grey (int fd, GdkPixbuf *image, GError **error)
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

	/* A FILE of its own on a duplicate, so that closing it leaves the caller's fd open. */
	int own = dup (fd);
	FILE *f = own >= 0 ? fdopen (own, "wb") : NULL;
	if (!f) {
		if (own >= 0)
			close (own);
		g_set_error_literal (error, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
		return FALSE;
	}
	png_image png = { .version = PNG_IMAGE_VERSION, .width = (png_uint_32) w, .height = (png_uint_32) h,
	                  .format = PNG_FORMAT_GRAY };
	gboolean ok = png_image_write_to_stdio (&png, f, 0, grey, w, NULL) != 0;
	if (!ok)
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, png.message);
	png_image_free (&png);
	if (fclose (f) != 0 && ok) {
		ok = FALSE;
		g_set_error_literal (error, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
	}
	return ok;
}
