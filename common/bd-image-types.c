/* SPDX-License-Identifier: Apache-2.0 */
#include "bd-image-types.h"

#include <string.h>

static const char *const jpeg[] = { ".jpg", ".jpeg", ".jpe", NULL };
static const char *const png[] = { ".png", NULL };
static const char *const webp[] = { ".webp", NULL };
static const char *const tiff[] = { ".tif", ".tiff", NULL };

/* Keep in step with sniff () in bd-image-io.c, which decodes these and nothing else. */
static const BdImageType types[] = {
	{ "image/jpeg", jpeg },
	{ "image/png", png },
	{ "image/webp", webp },
	{ "image/tiff", tiff },
};

const BdImageType *
bd_image_types (gsize *n_types)
{
	*n_types = G_N_ELEMENTS (types);
	return types;
}

gboolean
bd_image_types_match_name (const char *name)
{
	gsize n = strlen (name);
	for (gsize t = 0; t < G_N_ELEMENTS (types); t++)
		for (const char *const *ext = types[t].extensions; *ext; ext++) {
			gsize e = strlen (*ext);
			if (n > e && !g_ascii_strcasecmp (name + n - e, *ext))
				return TRUE;
		}
	return FALSE;
}
