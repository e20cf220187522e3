/* SPDX-License-Identifier: Apache-2.0 */
/* gdk-pixbuf and libbackdrop's plain image types, one way for every program: a pixbuf seen
 * as a bd_image, an alpha mask made a pixbuf for saving, and results allocated with the same
 * error when memory runs out. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>

#include "backdrop.h"

G_BEGIN_DECLS

/* A view of @pixbuf's pixels (8-bit RGB or RGBA, as bd_image_load gives): no copy, so
 * @pixbuf must outlive the view. FALSE with BD_LIBRARY_ERROR / BD_ERR_INVALID_ARGUMENT for
 * another pixel format. */
gboolean   bd_pixbuf_view      (GdkPixbuf *pixbuf, bd_image *view, GError **error);

/* A new RGBA pixbuf of @width x @height for a result (a cut-out or composite); NULL with
 * BD_LIBRARY_ERROR / BD_ERR_NO_MEMORY when memory runs out. */
GdkPixbuf *bd_pixbuf_new_result (int width, int height, GError **error);

/* @alpha (@width x @height, rows @stride apart) as an opaque grey pixbuf (R = G = B = alpha),
 * which bd_image_save_file with BD_SAVE_MASK writes as an 8-bit greyscale PNG. NULL with
 * @error when memory runs out. */
GdkPixbuf *bd_pixbuf_new_mask  (const guint8 *alpha, int width, int height, gsize stride, GError **error);

G_END_DECLS
