/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The dialog preview's picture: @photo (@width x @height, @channels 3 or 4, rows @stride
 * apart; a transparent pixel shown on grey) with what the mask @alpha (rows @width apart)
 * removes tinted red, into @out (RGB, rows @width * 3 apart). Kept parts show as they are,
 * removed ones half red, so both stay readable on any photo. */
void bd_preview_paint (const guint8 *photo,
                       gint          width,
                       gint          height,
                       gint          channels,
                       gsize         stride,
                       const guint8 *alpha,
                       guint8       *out);

G_END_DECLS
