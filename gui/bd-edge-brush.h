/* SPDX-License-Identifier: Apache-2.0 */
/* The edge-aware brush's solve: alpha under a stroke that follows the photo's own edges. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The inputs of one solve; every plane is full size with rows of @width, except @under. */
typedef struct
{
  const guint8 *photo;      /* RGB or RGBA, @stride bytes a row */
  gsize         stride;
  int           channels;
  int           width, height;
  const guint8 *mask;       /* the network's mask, 0..255 */
  const guint8 *marks;      /* the user's marks (BdMark values); NULL: none */
  /* The stroke: @under is @area_width x @area_height at (@area_x, @area_y), non-zero
   * where the brush passed. */
  const guint8 *under;
  int           area_x, area_y, area_width, area_height;
  double        radius;     /* the brush's, photo pixels */
  gboolean      keep;       /* a keep stroke (else remove) */
  double        hardness;   /* 1: the plain brush's value everywhere under it; 0: the edges' */
} BdEdgeBrush;

/* Writes the new alpha of every pixel under the stroke into @out (area-sized; pixels not
 * under it are left alone). A keep stroke never lowers alpha, a remove stroke never raises
 * it. FALSE when memory ran out. */
gboolean bd_edge_brush_solve (const BdEdgeBrush *brush,
                              guint8            *out);

G_END_DECLS
