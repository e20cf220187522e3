/* SPDX-License-Identifier: Apache-2.0 */
/* What goes behind the person in a composite, from the one word the CLI's --background, the
 * video tool and the GStreamer element take: "transparent", a colour ("white", "#00ff00",
 * "#00ff0080"), "blur" or "blur:RADIUS" (pixels), or an image file. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>

#include "backdrop.h"

G_BEGIN_DECLS

/* Fills @background from @spec (NULL or empty: white). For an image, @image receives its view
 * and @pixbuf the decoded image, which must outlive both (else *@pixbuf is NULL). FALSE with
 * G_OPTION_ERROR_BAD_VALUE (or the decoder's error) for a word that is none of these. */
gboolean bd_background_parse (const char     *spec,
                              bd_background  *background,
                              bd_image       *image,
                              GdkPixbuf     **pixbuf,
                              GError        **error);

G_END_DECLS
