/* SPDX-License-Identifier: Apache-2.0 */
/* PNG through libpng's simplified API: it converts every PNG kind (palette, grey, 16-bit,
 * gamma) to 8-bit sRGB and fails when the image data ends early, where gdk-pixbuf's loader
 * returns grey rows and success. */
#include "config.h"

#include "bd-decode-private.h"
#include "bd-image-io.h"

#include <glib/gi18n-lib.h>
#include <png.h>
#include <string.h>

GdkPixbuf *
bd_decode_png (const guint8 *data, gsize size, const char *name, BdDecodeSizeCheck check, GError **error)
{
	png_image image;
	memset (&image, 0, sizeof image);
	image.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory (&image, data, size)) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s could not be read: %s"), name, image.message);
		png_image_free (&image);
		return NULL;
	}
	if (image.width > G_MAXINT || image.height > G_MAXINT ||
	    !check ((int) image.width, (int) image.height, name, error)) {
		if (error && !*error)
			g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE, _("%s is too large"), name);
		png_image_free (&image);
		return NULL;
	}
	gboolean alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
	image.format = alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
	int w = (int) image.width, h = (int) image.height;
	GdkPixbuf *pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, alpha, 8, w, h);
	if (!pixbuf) {
		png_image_free (&image);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE, _("Not enough memory to open %s (%d×%d pixels)"),
		             name, w, h);
		return NULL;
	}
	/* A grey or palette background is composited away only if we pass one: NULL keeps alpha. */
	if (!png_image_finish_read (&image, NULL, gdk_pixbuf_get_pixels (pixbuf), gdk_pixbuf_get_rowstride (pixbuf),
	                            NULL)) {
		gboolean truncated = strstr (image.message, "end") || strstr (image.message, "Read Error") ||
		                     strstr (image.message, "Not enough");
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT,
		             truncated ? _("%s is a truncated PNG file (%s)") : _("%s could not be read: %s"), name,
		             image.message);
		png_image_free (&image);
		g_object_unref (pixbuf);
		return NULL;
	}
	png_image_free (&image);
	return pixbuf;
}
