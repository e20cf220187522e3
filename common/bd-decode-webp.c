/* SPDX-License-Identifier: Apache-2.0 */
/* WebP through libwebp directly, for the pixels libwebp's own decoder gives: the colour
 * planes, stored at half size, upsampled by its "fancy" filter, as dwebp, browsers and
 * Pillow (which made the training data) decode them. gdk-pixbuf's loader asks libwebp to
 * scale the photo to its own size, a path that upsamples the colour planes differently: up
 * to 35 levels apart on street photos, and masks a little worse (docs/MODEL.md, "WebP"). */
#include "config.h"

#include "bd-decode-private.h"
#include "bd-image-io.h"

#include <glib/gi18n-lib.h>
#include <webp/decode.h>

gboolean
bd_webp_is_animated (const guint8 *data, gsize size)
{
	WebPBitstreamFeatures features;
	return WebPGetFeatures (data, size, &features) == VP8_STATUS_OK && features.has_animation;
}

static void
set_webp_error (GError **error, const char *name, VP8StatusCode status)
{
	if (status == VP8_STATUS_NOT_ENOUGH_DATA)
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s is a truncated WebP file"), name);
	else
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT,
		             _("%s could not be read: the WebP data is damaged (libwebp status %d)"), name,
		             (int) status);
}

GdkPixbuf *
bd_decode_webp (const guint8 *data, gsize size, const char *name, BdDecodeSizeCheck check, GError **error)
{
	WebPDecoderConfig config;
	if (!WebPInitDecoderConfig (&config)) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED,
		             _("%s is a WebP image, and this system's libwebp does not match Backdrop's"), name);
		return NULL;
	}
	VP8StatusCode status = WebPGetFeatures (data, size, &config.input);
	if (status != VP8_STATUS_OK) {
		set_webp_error (error, name, status);
		return NULL;
	}
	int w = config.input.width, h = config.input.height;
	if (!check (w, h, name, error))
		return NULL;
	gboolean alpha = config.input.has_alpha != 0;
	GdkPixbuf *pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, alpha, 8, w, h);
	if (!pixbuf) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE, _("Not enough memory to open %s (%d×%d pixels)"),
		             name, w, h);
		return NULL;
	}
	/* Straight (not premultiplied) alpha, as a pixbuf holds it. */
	config.output.colorspace = alpha ? MODE_RGBA : MODE_RGB;
	config.output.is_external_memory = 1;
	config.output.u.RGBA.rgba = gdk_pixbuf_get_pixels (pixbuf);
	config.output.u.RGBA.stride = gdk_pixbuf_get_rowstride (pixbuf);
	config.output.u.RGBA.size = gdk_pixbuf_get_byte_length (pixbuf);
	status = WebPDecode (data, size, &config);
	WebPFreeDecBuffer (&config.output);   /* frees nothing of ours: the memory is external */
	if (status != VP8_STATUS_OK) {
		g_object_unref (pixbuf);
		set_webp_error (error, name, status);
		return NULL;
	}
	return pixbuf;
}
