/* SPDX-License-Identifier: Apache-2.0 */
/* What a result dragged out of the window offers besides the image itself: a PNG file,
 * written in a worker only when the drop target asks for it (text/uri-list), so that
 * starting a drag costs nothing even for a 50 MP photo. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define BD_TYPE_DRAG_PROVIDER (bd_drag_provider_get_type ())

G_DECLARE_FINAL_TYPE (BdDragProvider, bd_drag_provider, BD, DRAG_PROVIDER, GdkContentProvider)

/* @texture is written to @path (a PNG) on first request. */
GdkContentProvider *bd_drag_provider_new (GdkTexture *texture,
                                          const char *path);

G_END_DECLS
