/* SPDX-License-Identifier: Apache-2.0 */
/* The background of a composite, from one word: the same choices as backdrop-cli's. */
#include "bd-video-stream.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "bd-image-io.h"

static gboolean
parse_color (const char *s, guint8 rgba[4])
{
	static const struct { const char *name; guint32 rgb; } names[] = {
		{ "white", 0xffffff }, { "black", 0x000000 }, { "gray", 0x808080 }, { "grey", 0x808080 },
		{ "red", 0xff0000 }, { "green", 0x008000 }, { "blue", 0x0000ff }, { "yellow", 0xffff00 },
	};
	rgba[3] = 255;
	for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
		if (!g_ascii_strcasecmp (s, names[i].name)) {
			rgba[0] = names[i].rgb >> 16;
			rgba[1] = (names[i].rgb >> 8) & 0xff;
			rgba[2] = names[i].rgb & 0xff;
			return TRUE;
		}
	gsize n = strlen (s);
	if (s[0] != '#' || (n != 7 && n != 9))
		return FALSE;
	for (gsize i = 1; i < n; i++)
		if (!g_ascii_isxdigit (s[i]))
			return FALSE;
	for (gsize i = 0; i < (n - 1) / 2; i++)
		rgba[i] = (guint8) (g_ascii_xdigit_value (s[1 + 2 * i]) * 16 + g_ascii_xdigit_value (s[2 + 2 * i]));
	return TRUE;
}

gboolean
bd_video_parse_background (const char *spec, bd_background *background, bd_image *image,
                           GdkPixbuf **pixbuf, GError **error)
{
	*pixbuf = NULL;
	memset (background, 0, sizeof *background);
	if (!spec || !*spec) {
		background->kind = BD_BACKGROUND_COLOR;
		memset (background->color, 255, 4);
		return TRUE;
	}
	if (!g_ascii_strncasecmp (spec, "blur", 4) && (spec[4] == '\0' || spec[4] == ':')) {
		background->kind = BD_BACKGROUND_BLUR;
		background->blur_radius = 25;
		if (spec[4] == ':') {
			char *end = NULL;
			double r = g_ascii_strtod (spec + 5, &end);
			if (!end || *end || !(r > 0 && r <= 1000)) {
				g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				             _("The blur radius in “%s” must be a number of pixels from 1 to 1000"), spec);
				return FALSE;
			}
			background->blur_radius = (float) r;
		}
		return TRUE;
	}
	if (parse_color (spec, background->color)) {
		background->kind = BD_BACKGROUND_COLOR;
		return TRUE;
	}
	if (!g_file_test (spec, G_FILE_TEST_EXISTS)) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		             _("The background “%s” is not a colour, “blur[:RADIUS]” or an existing image file"), spec);
		return FALSE;
	}
	GdkPixbuf *p = bd_image_load (spec, error);
	if (!p)
		return FALSE;
	*image = (bd_image) {
		gdk_pixbuf_read_pixels (p), (uint32_t) gdk_pixbuf_get_width (p), (uint32_t) gdk_pixbuf_get_height (p),
		(size_t) gdk_pixbuf_get_rowstride (p),
		gdk_pixbuf_get_has_alpha (p) ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8,
	};
	background->kind = BD_BACKGROUND_IMAGE;
	background->image = image;
	*pixbuf = p;
	return TRUE;
}
