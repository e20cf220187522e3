/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include "bd-pixbuf.h"

#include "bd-library.h"

#include <glib/gi18n-lib.h>

gboolean
bd_pixbuf_view (GdkPixbuf *pixbuf, bd_image *view, GError **error)
{
	if (gdk_pixbuf_get_bits_per_sample (pixbuf) != 8 || gdk_pixbuf_get_colorspace (pixbuf) != GDK_COLORSPACE_RGB ||
	    gdk_pixbuf_get_n_channels (pixbuf) != (gdk_pixbuf_get_has_alpha (pixbuf) ? 4 : 3)) {
		g_set_error_literal (error, BD_LIBRARY_ERROR, BD_ERR_INVALID_ARGUMENT,
		                     _("The image is not in 8-bit RGB or RGBA, which Backdrop needs."));
		return FALSE;
	}
	*view = (bd_image) {
		.pixels = gdk_pixbuf_read_pixels (pixbuf),
		.width = (uint32_t) gdk_pixbuf_get_width (pixbuf),
		.height = (uint32_t) gdk_pixbuf_get_height (pixbuf),
		.stride = (size_t) gdk_pixbuf_get_rowstride (pixbuf),
		.format = gdk_pixbuf_get_has_alpha (pixbuf) ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8,
	};
	return TRUE;
}

static GdkPixbuf *
new_pixbuf (gboolean alpha, int width, int height, GError **error)
{
	GdkPixbuf *pixbuf = width > 0 && height > 0 ? gdk_pixbuf_new (GDK_COLORSPACE_RGB, alpha, 8, width, height) : NULL;
	if (!pixbuf)
		g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY, _("Out of memory for a %d×%d photo"), width, height);
	return pixbuf;
}

GdkPixbuf *
bd_pixbuf_new_result (int width, int height, GError **error)
{
	return new_pixbuf (TRUE, width, height, error);
}

GdkPixbuf *
bd_pixbuf_new_mask (const guint8 *alpha, int width, int height, gsize stride, GError **error)
{
	/* RGB, not RGBA: three quarters of the memory, and nothing for a tool to read as alpha. */
	GdkPixbuf *mask = new_pixbuf (FALSE, width, height, error);
	if (!mask)
		return NULL;
	guint8 *out = gdk_pixbuf_get_pixels (mask);
	gsize out_stride = (gsize) gdk_pixbuf_get_rowstride (mask);
	for (int y = 0; y < height; y++) {
		const guint8 *a = alpha + (gsize) y * stride;
		guint8 *p = out + (gsize) y * out_stride;
		for (int x = 0; x < width; x++, p += 3)
			p[0] = p[1] = p[2] = a[x];
	}
	return mask;
}
