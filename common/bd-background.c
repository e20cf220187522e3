/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "bd-background.h"
#include "bd-image-io.h"
#include "bd-pixbuf.h"

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
bd_background_parse (const char *spec, bd_background *background, bd_image *image, GdkPixbuf **pixbuf,
                     GError **error)
{
	*pixbuf = NULL;
	memset (background, 0, sizeof *background);
	if (!spec || !*spec || !g_ascii_strcasecmp (spec, "transparent")) {
		background->kind = spec && *spec ? BD_BACKGROUND_TRANSPARENT : BD_BACKGROUND_COLOR;
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
	if (!p || !bd_pixbuf_view (p, image, error)) {   /* the view never fails: 8-bit RGB(A) */
		g_clear_object (&p);
		return FALSE;
	}
	background->kind = BD_BACKGROUND_IMAGE;
	background->image = image;
	*pixbuf = p;
	return TRUE;
}
