/* SPDX-License-Identifier: Apache-2.0 */
/* Shows a document's photo or result on a checkerboard; zooms (pinch, Ctrl+scroll, fit,
 * 100%) and pans; compares before and after with a split handle; shows the mask in black
 * and white or as red over the photo, and where it is unsure; paints keep and remove
 * strokes with a round brush whose outline follows the pointer; drags the result out. */
#pragma once

#include <gtk/gtk.h>

#include "bd-document.h"

G_BEGIN_DECLS

#define BD_TYPE_CANVAS (bd_canvas_get_type ())

G_DECLARE_FINAL_TYPE (BdCanvas, bd_canvas, BD, CANVAS, GtkWidget)

GtkWidget  *bd_canvas_new           (void);
BdDocument *bd_canvas_get_document  (BdCanvas   *self);
void        bd_canvas_set_document  (BdCanvas   *self,
                                     BdDocument *document);
/* "move", "keep", "remove" or "region" (a click keeps or removes a whole region). */
const char *bd_canvas_get_tool      (BdCanvas   *self);
void        bd_canvas_set_tool      (BdCanvas   *self,
                                     const char *tool);
/* A drag of the current brush through @points (widget coordinates), as the pointer makes
 * it; returns the document's edit serial, 0 when nothing was painted. */
guint64     bd_canvas_paint         (BdCanvas               *self,
                                     const graphene_point_t *points,
                                     guint                   n_points);
/* What a click of the region tool at (@x, @y), widget coordinates, does. */
void        bd_canvas_click_region  (BdCanvas   *self,
                                     double      x,
                                     double      y);
/* Brush diameter in screen pixels. */
double      bd_canvas_get_brush_size (BdCanvas  *self);
void        bd_canvas_set_brush_size (BdCanvas  *self,
                                      double     size);
/* Brush hardness in percent: 100 is the plain brush, less follows the photo's edges. */
double      bd_canvas_get_brush_hardness (BdCanvas *self);
void        bd_canvas_set_brush_hardness (BdCanvas *self,
                                          double    hardness);
double      bd_canvas_get_zoom      (BdCanvas   *self);
gboolean    bd_canvas_get_fit       (BdCanvas   *self);
void        bd_canvas_zoom_in       (BdCanvas   *self);
void        bd_canvas_zoom_out      (BdCanvas   *self);
void        bd_canvas_zoom_fit      (BdCanvas   *self);
void        bd_canvas_zoom_actual   (BdCanvas   *self);
void        bd_canvas_zoom_to       (BdCanvas   *self,
                                     double      zoom,
                                     double      x,
                                     double      y);
gboolean    bd_canvas_get_compare   (BdCanvas   *self);
void        bd_canvas_set_compare   (BdCanvas   *self,
                                     gboolean    compare);
/* What shows the result: "result" (on a checkerboard), "mask" (black and white) or
 * "overlay" (red over the photo where it is removed). */
const char *bd_canvas_get_view      (BdCanvas   *self);
void        bd_canvas_set_view      (BdCanvas   *self,
                                     const char *view);
/* Marks where the mask is undecided away from its edges, over any view. */
gboolean    bd_canvas_get_show_unsure (BdCanvas *self);
void        bd_canvas_set_show_unsure (BdCanvas *self,
                                       gboolean  show_unsure);
/* Where the photo lies on the canvas, in widget coordinates. */
void        bd_canvas_get_photo_area (BdCanvas        *self,
                                      graphene_rect_t *area);
/* Where the split handle is, as a fraction of the photo's width. */
void        bd_canvas_set_split     (BdCanvas   *self,
                                     double      split);

G_END_DECLS
