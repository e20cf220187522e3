/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of BdCanvas share: bd-canvas.c (the view: geometry, zoom, details,
 * drawing, properties), bd-canvas-detail.c (crops of big photos at screen resolution)
 * and bd-canvas-brush.c (strokes, gestures, dragging out). */
#pragma once

#include <adwaita.h>

#include "bd-canvas.h"

G_BEGIN_DECLS

#define MIN_ZOOM        0.02
#define MAX_ZOOM        32.0
#define MAX_FIT_ZOOM    4.0
#define FIT_MARGIN      24.0
#define FIT_MARGIN_BOTTOM 84.0   /* clear of the floating tool bar */
#define CHECKER_SIZE    10.0
#define SPLIT_GRAB      18.0
#define DRAG_ICON_SIZE  128

typedef enum {
  DRAG_NONE,
  DRAG_PAN,
  DRAG_PAINT,
  DRAG_SPLIT,
  DRAG_CLICK,   /* the region tool: a click unless it moves */
} DragMode;

/* A crop of a layer at screen resolution, for photos bigger than their preview. */
typedef struct
{
  GdkTexture      *texture;
  graphene_rect_t  area;         /* photo coordinates */
  double           scale;        /* texture pixels per photo pixel */
  guint64          serial;       /* the result it was cut from */
  GCancellable    *cancellable;  /* the request in flight */
} Detail;

typedef struct
{
  GArray  *points;   /* graphene_point_t, photo coordinates */
  BdMark   mark;
  double   radius;   /* photo pixels */
  double   hardness; /* 0..1: 1 is the plain brush */
  guint64  serial;   /* the document edit it became; 0 while it is drawn */
} Stroke;

struct _BdCanvas
{
  GtkWidget   parent_instance;

  BdDocument *document;
  GSignalGroup *document_signals;

  const char *tool;          /* interned */
  double      brush_size;
  double      brush_hardness;  /* percent */
  double      zoom;
  double      center_x;      /* photo point at the middle of the view */
  double      center_y;
  gboolean    fit;
  gboolean    compare;
  const char *view;          /* interned: "result", "mask" or "overlay" */
  gboolean    show_unsure;
  double      split;

  gboolean    pointer_inside;
  double      pointer_x;
  double      pointer_y;

  DragMode    drag;
  double      drag_x;
  double      drag_y;
  double      drag_center_x;
  double      drag_center_y;
  Stroke     *stroke;        /* being painted */
  GPtrArray  *pending;       /* painted, not yet in the result */
  double      zoom_gesture_start;

  Detail      details[BD_LAYER_N];  /* by BdLayer; none for BD_LAYER_UNSURE */
  guint       detail_timeout;
};


void             bd_canvas_stroke_free     (Stroke        *stroke);

/* Geometry (bd-canvas.c) */
int              bd_canvas_photo_width     (BdCanvas      *self);
int              bd_canvas_photo_height    (BdCanvas      *self);
/* The photo's rectangle in widget coordinates, on whole pixels. */
graphene_rect_t  bd_canvas_photo_rect      (BdCanvas      *self);
/* Everything the canvas shows (bd-canvas-draw.c). */
void             bd_canvas_draw            (BdCanvas      *self,
                                            GtkSnapshot   *snapshot);
graphene_point_t bd_canvas_to_photo        (BdCanvas      *self,
                                            double         x,
                                            double         y);
gboolean         bd_canvas_photo_fits      (BdCanvas      *self);
/* Keeps the photo in view: centred along an axis where it fits, edges outside otherwise. */
void             bd_canvas_clamp_center    (BdCanvas      *self);
double           bd_canvas_split_x         (BdCanvas      *self);
/* TRUE for the tools that edit (not "move"). */
gboolean         bd_canvas_is_brush        (BdCanvas      *self);
gboolean         bd_canvas_is_region       (BdCanvas      *self);
gboolean         bd_canvas_can_paint       (BdCanvas      *self);
gboolean         bd_canvas_near_split      (BdCanvas      *self,
                                            double         x);
void             bd_canvas_update_cursor   (BdCanvas      *self);
/* The layer that the view shows after the split: the result, or the mask's picture once the
 * document has made it. */
BdLayer          bd_canvas_shown_layer     (BdCanvas      *self);
void             bd_canvas_set_zoom_at     (BdCanvas      *self,
                                            double         zoom,
                                            double         x,
                                            double         y);

/* Details (bd-canvas-detail.c) */
/* TRUE when the preview of @layer would be enlarged on screen. */
gboolean         bd_canvas_needs_detail    (BdCanvas      *self,
                                            BdLayer        layer);
void             bd_canvas_detail_clear    (Detail        *detail);
/* Looks for the details the view needs once zooming and panning pause. */
void             bd_canvas_queue_details   (BdCanvas      *self);
/* Drops the pending strokes that the result on screen has. */
void             bd_canvas_prune_pending   (BdCanvas      *self);

/* Input (bd-canvas-brush.c) */
void             bd_canvas_add_controllers (BdCanvas      *self);
void             bd_canvas_append_strokes  (BdCanvas              *self,
                                            GtkSnapshot           *snapshot,
                                            const graphene_rect_t *rect);
void             bd_canvas_append_brush_outline (BdCanvas    *self,
                                                 GtkSnapshot *snapshot);

G_END_DECLS
