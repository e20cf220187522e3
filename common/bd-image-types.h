/* SPDX-License-Identifier: Apache-2.0 */
/* The image types the programs read: the one list behind the CLI's folder scan, the app's
 * file filters and the desktop file's MimeType line (tests/test-common.c holds the desktop
 * file to it). bd_image_load knows them by their first bytes, never by the name. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
	const char        *mime_type;   /* "image/jpeg" */
	const char *const *extensions;  /* lower case, with the dot, NULL-terminated: ".jpg", ".jpeg" */
} BdImageType;

/* JPEG, PNG, WebP, TIFF; @n_types receives how many. */
const BdImageType *bd_image_types            (gsize *n_types);

/* TRUE when @name ends in the extension of a type we read, in any case ("IMG_1.JPG"). */
gboolean           bd_image_types_match_name (const char *name);

G_END_DECLS
