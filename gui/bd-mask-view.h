/* SPDX-License-Identifier: Apache-2.0 */
/* The pictures that show a mask for what it is: the red overlay on the photo, and the
 * marks of undecided pixels away from the mask's edges (where the model was unsure). Plain
 * pixel loops on packed rows; any thread. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Undecided: alpha strictly between these (0.15 and 0.85 of 255), as training/evaluate.py
 * counts a ghost. */
#define BD_MASK_UNSURE_LOW  38
#define BD_MASK_UNSURE_HIGH 217

/* @rgb (@channels 3 or 4, rows @stride apart) with red laid over what @alpha (@width bytes a
 * row) removes: opaque RGB, @width x @height. */
GBytes *bd_mask_view_overlay   (const guint8 *rgb,
                                gsize         stride,
                                int           channels,
                                const guint8 *alpha,
                                int           width,
                                int           height);

/* Premultiplied RGBA, @width x @height: hatched where @alpha is undecided and farther than
 * @band pixels from the edge of the mask cut at 0.5 (soft pixels on the edge itself, hair,
 * are not unsure); transparent elsewhere. With no edge every undecided pixel counts.
 * @fraction receives the share of such pixels. */
GBytes *bd_mask_view_unsure    (const guint8 *alpha,
                                int           width,
                                int           height,
                                int           band,
                                double       *fraction);

G_END_DECLS
