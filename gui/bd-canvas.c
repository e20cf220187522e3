/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <math.h>

#include <adwaita.h>
#include <glib/gi18n.h>

#include "bd-canvas.h"
#include "bd-drag-provider.h"
#include "bd-pixels.h"

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
  guint64  serial;   /* the document edit it became; 0 while it is drawn */
} Stroke;

struct _BdCanvas
{
  GtkWidget   parent_instance;

  BdDocument *document;
  GSignalGroup *document_signals;

  const char *tool;          /* interned */
  double      brush_size;
  double      zoom;
  double      center_x;      /* photo point at the middle of the view */
  double      center_y;
  gboolean    fit;
  gboolean    compare;
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

  Detail      details[2];    /* by BdLayer */
  guint       detail_timeout;
};

G_DEFINE_FINAL_TYPE (BdCanvas, bd_canvas, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_DOCUMENT,
  PROP_TOOL,
  PROP_BRUSH_SIZE,
  PROP_ZOOM,
  PROP_FIT,
  PROP_COMPARE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void queue_details (BdCanvas *self);

static void
stroke_free (Stroke *stroke)
{
  g_array_unref (stroke->points);
  g_free (stroke);
}

/* Geometry */

static int
photo_width (BdCanvas *self)
{
  return self->document ? bd_document_get_width (self->document) : 0;
}

static int
photo_height (BdCanvas *self)
{
  return self->document ? bd_document_get_height (self->document) : 0;
}

static double
fit_zoom (BdCanvas *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)) - 2 * FIT_MARGIN;
  double h = gtk_widget_get_height (GTK_WIDGET (self)) - FIT_MARGIN - FIT_MARGIN_BOTTOM;
  int pw = photo_width (self), ph = photo_height (self);

  if (pw <= 0 || ph <= 0 || w <= 0 || h <= 0)
    return 1.0;

  return CLAMP (MIN (w / pw, h / ph), MIN_ZOOM, MAX_FIT_ZOOM);
}

/* Keeps the photo in view: centred along an axis where it fits, edges outside otherwise. */
static void
clamp_center (BdCanvas *self)
{
  double half_w = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0 / self->zoom;
  double half_h = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0 / self->zoom;
  int pw = photo_width (self), ph = photo_height (self);

  if (pw <= 2 * half_w)
    self->center_x = pw / 2.0;
  else
    self->center_x = CLAMP (self->center_x, half_w, pw - half_w);

  if (ph <= 2 * half_h)
    self->center_y = ph / 2.0;
  else
    self->center_y = CLAMP (self->center_y, half_h, ph - half_h);
}

static void
update_fit (BdCanvas *self)
{
  double zoom;

  if (!self->fit)
    return;

  zoom = fit_zoom (self);
  self->center_x = photo_width (self) / 2.0;
  /* Centred in the space above the tool bar. */
  self->center_y = photo_height (self) / 2.0 + (FIT_MARGIN_BOTTOM - FIT_MARGIN) / 2.0 / zoom;
  if (zoom != self->zoom)
    {
      self->zoom = zoom;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
}

/* The photo's rectangle in widget coordinates, on whole pixels. */
static graphene_rect_t
photo_rect (BdCanvas *self)
{
  double x0 = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0 - self->center_x * self->zoom;
  double y0 = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0 - self->center_y * self->zoom;

  return GRAPHENE_RECT_INIT (round (x0), round (y0),
                             photo_width (self) * self->zoom,
                             photo_height (self) * self->zoom);
}

static graphene_point_t
to_photo (BdCanvas *self,
          double    x,
          double    y)
{
  graphene_rect_t rect = photo_rect (self);

  return GRAPHENE_POINT_INIT ((x - rect.origin.x) / self->zoom, (y - rect.origin.y) / self->zoom);
}

static gboolean
photo_fits (BdCanvas *self)
{
  return photo_width (self) * self->zoom <= gtk_widget_get_width (GTK_WIDGET (self)) + 0.5 &&
         photo_height (self) * self->zoom <= gtk_widget_get_height (GTK_WIDGET (self)) + 0.5;
}

static double
split_x (BdCanvas *self)
{
  graphene_rect_t rect = photo_rect (self);

  return round (rect.origin.x + self->split * rect.size.width);
}

static gboolean
is_brush (BdCanvas *self)
{
  return self->tool != g_intern_static_string ("move");
}

static gboolean
can_paint (BdCanvas *self)
{
  return is_brush (self) && self->document != NULL &&
         bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY;
}

static gboolean
near_split (BdCanvas *self,
            double    x)
{
  return self->compare && self->document != NULL &&
         bd_document_get_result (self->document) != NULL &&
         fabs (x - split_x (self)) <= SPLIT_GRAB;
}

static void
update_cursor (BdCanvas *self)
{
  const char *name = "default";

  if (self->drag == DRAG_PAN)
    name = "grabbing";
  else if (self->drag == DRAG_SPLIT || (self->pointer_inside && near_split (self, self->pointer_x)))
    name = "col-resize";
  else if (can_paint (self))
    name = "none";
  else if (!photo_fits (self))
    name = "grab";

  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), name);
}

static void
set_zoom_at (BdCanvas *self,
             double    zoom,
             double    x,
             double    y)
{
  graphene_point_t p = to_photo (self, x, y);
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  gboolean was_fit = self->fit;

  zoom = CLAMP (zoom, MIN_ZOOM, MAX_ZOOM);
  self->fit = FALSE;
  self->center_x = p.x - (x - w / 2.0) / zoom;
  self->center_y = p.y - (y - h / 2.0) / zoom;
  self->zoom = zoom;
  clamp_center (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  if (was_fit)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT]);
  update_cursor (self);
  queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_zoom_centered (BdCanvas *self,
                   double    zoom)
{
  set_zoom_at (self, zoom,
               gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
               gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
}

void
bd_canvas_zoom_in (BdCanvas *self)
{
  g_return_if_fail (BD_IS_CANVAS (self));
  set_zoom_centered (self, self->zoom * 1.25);
}

void
bd_canvas_zoom_out (BdCanvas *self)
{
  g_return_if_fail (BD_IS_CANVAS (self));
  set_zoom_centered (self, self->zoom / 1.25);
}

void
bd_canvas_zoom_actual (BdCanvas *self)
{
  g_return_if_fail (BD_IS_CANVAS (self));
  set_zoom_centered (self, 1.0);
}

void
bd_canvas_zoom_fit (BdCanvas *self)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  if (!self->fit)
    {
      self->fit = TRUE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT]);
    }
  update_fit (self);
  update_cursor (self);
  queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Details of big photos */

static double
preview_scale (BdCanvas *self,
               BdLayer   layer)
{
  GdkTexture *preview = bd_document_get_preview (self->document, layer);

  if (preview == NULL || photo_width (self) <= 0)
    return 1.0;

  return (double) gdk_texture_get_width (preview) / photo_width (self);
}

/* TRUE when the preview would be enlarged on screen. */
static gboolean
needs_detail (BdCanvas *self,
              BdLayer   layer)
{
  return self->document != NULL && self->zoom > preview_scale (self, layer) * 1.01;
}

static void
detail_clear (Detail *detail)
{
  if (detail->cancellable != NULL)
    g_cancellable_cancel (detail->cancellable);
  g_clear_object (&detail->cancellable);
  g_clear_object (&detail->texture);
}

/* The result's edit that the screen shows. */
static guint64
displayed_serial (BdCanvas *self)
{
  Detail *detail = &self->details[BD_LAYER_RESULT];

  if (needs_detail (self, BD_LAYER_RESULT) && detail->texture != NULL)
    return detail->serial;

  return bd_document_get_result_serial (self->document);
}

static void
prune_pending (BdCanvas *self)
{
  guint64 serial = displayed_serial (self);

  for (guint i = self->pending->len; i > 0; i--)
    {
      Stroke *stroke = g_ptr_array_index (self->pending, i - 1);

      if (stroke->serial <= serial)
        g_ptr_array_remove_index (self->pending, i - 1);
    }
}

typedef struct
{
  BdCanvas        *self;
  BdLayer          layer;
  graphene_rect_t  area;
  double           scale;
  guint64          serial;
} DetailRequest;

static void
on_detail_ready (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  DetailRequest *request = user_data;
  g_autoptr(BdCanvas) self = request->self;
  g_autoptr(GdkTexture) texture = NULL;
  Detail *detail = &self->details[request->layer];

  texture = bd_document_render_view_finish (BD_DOCUMENT (object), result, NULL);
  if (texture != NULL && self->document == BD_DOCUMENT (object))
    {
      g_set_object (&detail->texture, texture);
      detail->area = request->area;
      detail->scale = request->scale;
      detail->serial = request->serial;
      g_clear_object (&detail->cancellable);
      prune_pending (self);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }

  g_free (request);
}

/* Asks for a crop of @layer covering the view at screen resolution, unless the one at
 * hand does. */
static void
update_detail (BdCanvas *self,
               BdLayer   layer)
{
  Detail *detail = &self->details[layer];
  graphene_point_t p0, p1;
  graphene_rect_t visible, area;
  double scale = MIN (self->zoom, 1.0);
  guint64 serial = bd_document_get_result_serial (self->document);
  DetailRequest *request;
  int x0, y0, x1, y1;

  if (!needs_detail (self, layer) ||
      (layer == BD_LAYER_RESULT && bd_document_get_result (self->document) == NULL))
    {
      detail_clear (detail);
      return;
    }

  p0 = to_photo (self, 0, 0);
  p1 = to_photo (self, gtk_widget_get_width (GTK_WIDGET (self)), gtk_widget_get_height (GTK_WIDGET (self)));
  graphene_rect_init (&visible, p0.x, p0.y, p1.x - p0.x, p1.y - p0.y);
  if (!graphene_rect_intersection (&visible, &GRAPHENE_RECT_INIT (0, 0, photo_width (self), photo_height (self)),
                                   &visible))
    return;

  if (detail->texture != NULL && graphene_rect_contains_rect (&detail->area, &visible) &&
      fabs (log (detail->scale / scale)) < log (1.3) &&
      (layer == BD_LAYER_ORIGINAL || detail->serial == serial))
    return;

  /* A margin around the view, so that small pans need nothing new. */
  x0 = CLAMP ((int) floor (visible.origin.x - visible.size.width * 0.2), 0, photo_width (self));
  y0 = CLAMP ((int) floor (visible.origin.y - visible.size.height * 0.2), 0, photo_height (self));
  x1 = CLAMP ((int) ceil (visible.origin.x + visible.size.width * 1.2), 0, photo_width (self));
  y1 = CLAMP ((int) ceil (visible.origin.y + visible.size.height * 1.2), 0, photo_height (self));
  graphene_rect_init (&area, x0, y0, x1 - x0, y1 - y0);

  if (detail->cancellable != NULL)
    g_cancellable_cancel (detail->cancellable);
  g_clear_object (&detail->cancellable);
  detail->cancellable = g_cancellable_new ();

  request = g_new0 (DetailRequest, 1);
  request->self = g_object_ref (self);
  request->layer = layer;
  request->area = area;
  request->scale = scale;
  request->serial = serial;

  bd_document_render_view_async (self->document, layer, x0, y0, x1 - x0, y1 - y0,
                                 MAX (1, (int) ceil ((x1 - x0) * scale)),
                                 MAX (1, (int) ceil ((y1 - y0) * scale)),
                                 detail->cancellable, on_detail_ready, request);
}

static gboolean
on_detail_timeout (gpointer user_data)
{
  BdCanvas *self = user_data;

  self->detail_timeout = 0;
  if (self->document != NULL && bd_document_get_original (self->document) != NULL)
    {
      update_detail (self, BD_LAYER_RESULT);
      if (self->compare || bd_document_get_result (self->document) == NULL)
        update_detail (self, BD_LAYER_ORIGINAL);
      else
        detail_clear (&self->details[BD_LAYER_ORIGINAL]);
    }

  return G_SOURCE_REMOVE;
}

/* Looks for the details the view needs once zooming and panning pause. */
static void
queue_details (BdCanvas *self)
{
  g_clear_handle_id (&self->detail_timeout, g_source_remove);
  self->detail_timeout = g_timeout_add (60, on_detail_timeout, self);
}

/* Drawing */

static void
append_checkerboard (BdCanvas              *self,
                     GtkSnapshot           *snapshot,
                     const graphene_rect_t *rect)
{
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  GdkRGBA light_square = dark ? (GdkRGBA) { .30f, .30f, .32f, 1.f } : (GdkRGBA) { 1.f, 1.f, 1.f, 1.f };
  GdkRGBA dark_square = dark ? (GdkRGBA) { .24f, .24f, .26f, 1.f } : (GdkRGBA) { .87f, .87f, .86f, 1.f };
  double x = rect->origin.x, y = rect->origin.y, s = CHECKER_SIZE;

  gtk_snapshot_push_repeat (snapshot, rect, &GRAPHENE_RECT_INIT (x, y, 2 * s, 2 * s));
  gtk_snapshot_append_color (snapshot, &light_square, &GRAPHENE_RECT_INIT (x, y, 2 * s, 2 * s));
  gtk_snapshot_append_color (snapshot, &dark_square, &GRAPHENE_RECT_INIT (x, y, s, s));
  gtk_snapshot_append_color (snapshot, &dark_square, &GRAPHENE_RECT_INIT (x + s, y + s, s, s));
  gtk_snapshot_pop (snapshot);
}

static void
append_texture (BdCanvas              *self,
                GtkSnapshot           *snapshot,
                GdkTexture            *texture,
                const graphene_rect_t *rect)
{
  GskScalingFilter filter;

  if (self->zoom >= 2.0)
    filter = GSK_SCALING_FILTER_NEAREST;
  else if (self->zoom < 1.0)
    filter = GSK_SCALING_FILTER_TRILINEAR;
  else
    filter = GSK_SCALING_FILTER_LINEAR;

  gtk_snapshot_append_scaled_texture (snapshot, texture, filter, rect);
}

/* A layer's preview over @rect, with the detail on top where there is one. */
static void
append_layer (BdCanvas              *self,
              GtkSnapshot           *snapshot,
              BdLayer                layer,
              const graphene_rect_t *rect)
{
  GdkTexture *preview = bd_document_get_preview (self->document, layer);
  Detail *detail = &self->details[layer];

  if (preview == NULL)
    return;

  append_texture (self, snapshot, preview, rect);

  if (detail->texture != NULL && needs_detail (self, layer))
    {
      graphene_rect_t area = GRAPHENE_RECT_INIT (rect->origin.x + detail->area.origin.x * self->zoom,
                                                 rect->origin.y + detail->area.origin.y * self->zoom,
                                                 detail->area.size.width * self->zoom,
                                                 detail->area.size.height * self->zoom);

      if (layer == BD_LAYER_RESULT)
        {
          /* What is behind a transparent detail must not be the preview's pixels. */
          gtk_snapshot_push_clip (snapshot, &area);
          append_checkerboard (self, snapshot, rect);
          gtk_snapshot_pop (snapshot);
        }
      append_texture (self, snapshot, detail->texture, &area);
    }
}

static void
append_stroke (GtkSnapshot  *snapshot,
               const Stroke *stroke)
{
  static const GdkRGBA keep = { 0.18f, 0.76f, 0.49f, 0.55f };
  static const GdkRGBA remove = { 0.88f, 0.11f, 0.14f, 0.55f };
  const graphene_point_t *p = (const graphene_point_t *) stroke->points->data;
  g_autoptr(GskPathBuilder) builder = gsk_path_builder_new ();
  g_autoptr(GskPath) path = NULL;
  g_autoptr(GskStroke) pen = NULL;

  if (stroke->points->len == 0)
    return;

  gsk_path_builder_move_to (builder, p[0].x, p[0].y);
  for (guint i = 1; i < stroke->points->len; i++)
    gsk_path_builder_line_to (builder, p[i].x, p[i].y);
  if (stroke->points->len == 1)
    gsk_path_builder_line_to (builder, p[0].x + 0.01f, p[0].y);
  path = gsk_path_builder_free_to_path (g_steal_pointer (&builder));

  pen = gsk_stroke_new (2 * stroke->radius);
  gsk_stroke_set_line_cap (pen, GSK_LINE_CAP_ROUND);
  gsk_stroke_set_line_join (pen, GSK_LINE_JOIN_ROUND);

  gtk_snapshot_append_stroke (snapshot, path, pen, stroke->mark == BD_MARK_KEEP ? &keep : &remove);
}

static void
append_circle (GtkSnapshot   *snapshot,
               double         x,
               double         y,
               double         radius,
               double         width,
               const GdkRGBA *color)
{
  g_autoptr(GskPathBuilder) builder = gsk_path_builder_new ();
  g_autoptr(GskPath) path = NULL;
  g_autoptr(GskStroke) pen = gsk_stroke_new (width);

  gsk_path_builder_add_circle (builder, &GRAPHENE_POINT_INIT (x, y), radius);
  path = gsk_path_builder_free_to_path (g_steal_pointer (&builder));
  gtk_snapshot_append_stroke (snapshot, path, pen, color);
}

static void
append_label (BdCanvas    *self,
              GtkSnapshot *snapshot,
              const char  *text,
              double       x,
              double       y,
              gboolean     align_right)
{
  static const GdkRGBA pill = { 0.f, 0.f, 0.f, 0.6f };
  static const GdkRGBA white = { 1.f, 1.f, 1.f, 1.f };
  g_autoptr(PangoLayout) layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  GskRoundedRect rounded;
  int w, h;

  pango_layout_get_pixel_size (layout, &w, &h);
  if (align_right)
    x -= w + 20;

  gsk_rounded_rect_init_from_rect (&rounded, &GRAPHENE_RECT_INIT (x, y, w + 20, h + 8), (h + 8) / 2.0f);
  gtk_snapshot_push_rounded_clip (snapshot, &rounded);
  gtk_snapshot_append_color (snapshot, &pill, &rounded.bounds);
  gtk_snapshot_pop (snapshot);

  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (x + 10, y + 4));
  gtk_snapshot_append_layout (snapshot, layout, &white);
  gtk_snapshot_restore (snapshot);
}

static void
append_split_handle (BdCanvas              *self,
                     GtkSnapshot           *snapshot,
                     const graphene_rect_t *rect)
{
  static const GdkRGBA white = { 1.f, 1.f, 1.f, 1.f };
  static const GdkRGBA shade = { 0.f, 0.f, 0.f, 0.35f };
  static const GdkRGBA ink = { 0.2f, 0.2f, 0.22f, 1.f };
  double x = split_x (self);
  double top = MAX (rect->origin.y, 0);
  double bottom = MIN (rect->origin.y + rect->size.height, gtk_widget_get_height (GTK_WIDGET (self)));
  double cy = (top + bottom) / 2.0;   /* the middle of what is in view */
  GskRoundedRect line, knob;
  g_autoptr(GskPathBuilder) builder = gsk_path_builder_new ();
  g_autoptr(GskPath) path = NULL;
  g_autoptr(GskStroke) pen = gsk_stroke_new (2);

  gsk_rounded_rect_init_from_rect (&line, &GRAPHENE_RECT_INIT (x - 1, rect->origin.y, 2, rect->size.height), 0);
  gtk_snapshot_append_outset_shadow (snapshot, &line, &shade, 0, 0, 0, 3);
  gtk_snapshot_append_color (snapshot, &white, &line.bounds);

  gsk_rounded_rect_init_from_rect (&knob, &GRAPHENE_RECT_INIT (x - 16, cy - 16, 32, 32), 16);
  gtk_snapshot_append_outset_shadow (snapshot, &knob, &shade, 0, 1, 0, 4);
  gtk_snapshot_push_rounded_clip (snapshot, &knob);
  gtk_snapshot_append_color (snapshot, &white, &knob.bounds);
  gtk_snapshot_pop (snapshot);

  /* ‹ › */
  gsk_path_builder_move_to (builder, x - 3, cy - 5);
  gsk_path_builder_line_to (builder, x - 8, cy);
  gsk_path_builder_line_to (builder, x - 3, cy + 5);
  gsk_path_builder_move_to (builder, x + 3, cy - 5);
  gsk_path_builder_line_to (builder, x + 8, cy);
  gsk_path_builder_line_to (builder, x + 3, cy + 5);
  path = gsk_path_builder_free_to_path (g_steal_pointer (&builder));
  gsk_stroke_set_line_cap (pen, GSK_LINE_CAP_ROUND);
  gsk_stroke_set_line_join (pen, GSK_LINE_JOIN_ROUND);
  gtk_snapshot_append_stroke (snapshot, path, pen, &ink);

  /* Translators: labels on the two sides of the comparison handle */
  if (x - rect->origin.x > 90)
    append_label (self, snapshot, C_("comparison", "Before"), MAX (rect->origin.x, 0) + 12,
                  MAX (rect->origin.y, 0) + 12, FALSE);
  if (rect->origin.x + rect->size.width - x > 90)
    append_label (self, snapshot, C_("comparison", "After"),
                  MIN (rect->origin.x + rect->size.width, gtk_widget_get_width (GTK_WIDGET (self))) - 12,
                  MAX (rect->origin.y, 0) + 12, TRUE);
}

static void
bd_canvas_snapshot (GtkWidget   *widget,
                    GtkSnapshot *snapshot)
{
  BdCanvas *self = BD_CANVAS (widget);
  static const GdkRGBA shadow = { 0.f, 0.f, 0.f, 0.18f };
  GdkTexture *original, *result;
  graphene_rect_t rect;
  GskRoundedRect outline;
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (self->document == NULL || (original = bd_document_get_original (self->document)) == NULL)
    return;

  result = bd_document_get_result (self->document);
  rect = photo_rect (self);

  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));

  gsk_rounded_rect_init_from_rect (&outline, &rect, 0);
  gtk_snapshot_append_outset_shadow (snapshot, &outline, &shadow, 0, 2, 0, 10);

  if (result != NULL && self->compare)
    {
      double x = split_x (self);
      graphene_rect_t before = rect, after = rect;

      before.size.width = x - rect.origin.x;
      after.origin.x = x;
      after.size.width = rect.origin.x + rect.size.width - x;

      gtk_snapshot_push_clip (snapshot, &before);
      append_layer (self, snapshot, BD_LAYER_ORIGINAL, &rect);
      gtk_snapshot_pop (snapshot);

      gtk_snapshot_push_clip (snapshot, &after);
      append_checkerboard (self, snapshot, &rect);
      append_layer (self, snapshot, BD_LAYER_RESULT, &rect);
      gtk_snapshot_pop (snapshot);
    }
  else if (result != NULL)
    {
      append_checkerboard (self, snapshot, &rect);
      append_layer (self, snapshot, BD_LAYER_RESULT, &rect);
    }
  else
    append_layer (self, snapshot, BD_LAYER_ORIGINAL, &rect);

  /* Strokes not yet in the result, drawn in photo coordinates. */
  if (self->stroke != NULL || self->pending->len > 0)
    {
      gtk_snapshot_push_clip (snapshot, &rect);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &rect.origin);
      gtk_snapshot_scale (snapshot, self->zoom, self->zoom);
      for (guint i = 0; i < self->pending->len; i++)
        append_stroke (snapshot, g_ptr_array_index (self->pending, i));
      if (self->stroke != NULL)
        append_stroke (snapshot, self->stroke);
      gtk_snapshot_restore (snapshot);
      gtk_snapshot_pop (snapshot);
    }

  if (result != NULL && self->compare)
    append_split_handle (self, snapshot, &rect);

  if (self->pointer_inside && can_paint (self) && self->drag != DRAG_SPLIT &&
      !near_split (self, self->pointer_x))
    {
      static const GdkRGBA black = { 0.f, 0.f, 0.f, 0.7f };
      static const GdkRGBA white = { 1.f, 1.f, 1.f, 0.9f };
      double r = MAX (self->brush_size / 2.0, 2.0);

      append_circle (snapshot, self->pointer_x, self->pointer_y, r + 1, 1.5, &black);
      append_circle (snapshot, self->pointer_x, self->pointer_y, r, 1.5, &white);
    }

  gtk_snapshot_pop (snapshot);
}

static void
bd_canvas_size_allocate (GtkWidget *widget,
                         int        width,
                         int        height,
                         int        baseline)
{
  BdCanvas *self = BD_CANVAS (widget);

  if (self->fit)
    update_fit (self);
  else
    clamp_center (self);
  queue_details (self);
}

static void
bd_canvas_measure (GtkWidget      *widget,
                   GtkOrientation  orientation,
                   int             for_size,
                   int            *minimum,
                   int            *natural,
                   int            *minimum_baseline,
                   int            *natural_baseline)
{
  *minimum = 64;
  *natural = 480;
}

/* Document */

static void
on_document_result (BdCanvas *self)
{
  prune_pending (self);
  queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_document_original (BdCanvas *self)
{
  g_ptr_array_set_size (self->pending, 0);
  g_clear_pointer (&self->stroke, stroke_free);
  detail_clear (&self->details[BD_LAYER_ORIGINAL]);
  detail_clear (&self->details[BD_LAYER_RESULT]);
  self->drag = DRAG_NONE;
  bd_canvas_zoom_fit (self);
}

static void
on_document_state (BdCanvas *self)
{
  update_cursor (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

BdDocument *
bd_canvas_get_document (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), NULL);
  return self->document;
}

void
bd_canvas_set_document (BdCanvas   *self,
                        BdDocument *document)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  if (!g_set_object (&self->document, document))
    return;

  g_signal_group_set_target (self->document_signals, document);
  on_document_original (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DOCUMENT]);
}

/* Gestures */

static void
on_drag_begin (GtkGestureDrag *gesture,
               double          x,
               double          y,
               BdCanvas       *self)
{
  guint button = gtk_gesture_single_get_current_button (GTK_GESTURE_SINGLE (gesture));

  self->drag_x = x;
  self->drag_y = y;
  self->drag = DRAG_NONE;

  if (self->document == NULL || bd_document_get_original (self->document) == NULL)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }

  gtk_widget_grab_focus (GTK_WIDGET (self));

  if (button == GDK_BUTTON_PRIMARY && near_split (self, x))
    self->drag = DRAG_SPLIT;
  else if (button == GDK_BUTTON_PRIMARY && can_paint (self))
    {
      graphene_point_t p = to_photo (self, x, y);

      self->drag = DRAG_PAINT;
      self->stroke = g_new0 (Stroke, 1);
      self->stroke->points = g_array_new (FALSE, FALSE, sizeof (graphene_point_t));
      self->stroke->mark = self->tool == g_intern_static_string ("keep") ? BD_MARK_KEEP
                                                                          : BD_MARK_REMOVE;
      self->stroke->radius = self->brush_size / 2.0 / self->zoom;
      g_array_append_val (self->stroke->points, p);
    }
  else if (button == GDK_BUTTON_MIDDLE || (button == GDK_BUTTON_PRIMARY && !photo_fits (self)))
    {
      self->drag = DRAG_PAN;
      self->drag_center_x = self->center_x;
      self->drag_center_y = self->center_y;
    }

  if (self->drag == DRAG_NONE)
    {
      /* Leaves the press to the drag source, which drags the result out. */
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }

  gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
  update_cursor (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_update (GtkGestureDrag *gesture,
                double          dx,
                double          dy,
                BdCanvas       *self)
{
  double x = self->drag_x + dx, y = self->drag_y + dy;

  self->pointer_x = x;
  self->pointer_y = y;

  switch (self->drag)
    {
    case DRAG_SPLIT:
      {
        graphene_rect_t rect = photo_rect (self);

        if (rect.size.width > 0)
          bd_canvas_set_split (self, (x - rect.origin.x) / rect.size.width);
      }
      break;

    case DRAG_PAINT:
      {
        graphene_point_t p = to_photo (self, x, y);
        graphene_point_t *last = &g_array_index (self->stroke->points, graphene_point_t,
                                                 self->stroke->points->len - 1);

        if (graphene_point_distance (&p, last, NULL, NULL) * self->zoom >= 1.0)
          g_array_append_val (self->stroke->points, p);
      }
      break;

    case DRAG_PAN:
      self->center_x = self->drag_center_x - dx / self->zoom;
      self->center_y = self->drag_center_y - dy / self->zoom;
      clamp_center (self);
      queue_details (self);
      break;

    case DRAG_NONE:
    default:
      return;
    }

  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
finish_drag (BdCanvas *self,
             gboolean  commit)
{
  Stroke *stroke = g_steal_pointer (&self->stroke);

  if (stroke != NULL)
    {
      if (commit)
        stroke->serial = bd_document_paint_stroke (self->document, stroke->mark, stroke->radius,
                                                   (const graphene_point_t *) stroke->points->data,
                                                   stroke->points->len);
      if (stroke->serial > 0)
        g_ptr_array_add (self->pending, stroke);
      else
        stroke_free (stroke);
    }

  self->drag = DRAG_NONE;
  update_cursor (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_end (GtkGestureDrag *gesture,
             double          dx,
             double          dy,
             BdCanvas       *self)
{
  finish_drag (self, TRUE);
}

static void
on_drag_cancel (GtkGesture       *gesture,
                GdkEventSequence *sequence,
                BdCanvas         *self)
{
  finish_drag (self, FALSE);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller,
           double                    dx,
           double                    dy,
           BdCanvas                 *self)
{
  GdkModifierType state = gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  gboolean wheel = gtk_event_controller_scroll_get_unit (controller) == GDK_SCROLL_UNIT_WHEEL;

  if (self->document == NULL || bd_document_get_original (self->document) == NULL)
    return FALSE;

  if (state & GDK_CONTROL_MASK)
    {
      double x = self->pointer_inside ? self->pointer_x : gtk_widget_get_width (GTK_WIDGET (self)) / 2.0;
      double y = self->pointer_inside ? self->pointer_y : gtk_widget_get_height (GTK_WIDGET (self)) / 2.0;

      set_zoom_at (self, self->zoom * exp (-dy * (wheel ? 0.2 : 0.01)), x, y);
      return TRUE;
    }

  if (photo_fits (self))
    return FALSE;

  if (state & GDK_SHIFT_MASK && dx == 0)
    {
      dx = dy;
      dy = 0;
    }

  self->center_x += dx * (wheel ? 48.0 : 1.0) / self->zoom;
  self->center_y += dy * (wheel ? 48.0 : 1.0) / self->zoom;
  clamp_center (self);
  queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return TRUE;
}

static void
on_zoom_begin (GtkGesture       *gesture,
               GdkEventSequence *sequence,
               BdCanvas         *self)
{
  self->zoom_gesture_start = self->zoom;
  g_clear_pointer (&self->stroke, stroke_free);
  self->drag = DRAG_NONE;
}

static void
on_zoom_scale_changed (GtkGestureZoom *gesture,
                       double          scale,
                       BdCanvas       *self)
{
  double x, y;

  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    return;

  set_zoom_at (self, self->zoom_gesture_start * scale, x, y);
}

static void
on_motion (GtkEventControllerMotion *controller,
           double                    x,
           double                    y,
           BdCanvas                 *self)
{
  self->pointer_inside = TRUE;
  self->pointer_x = x;
  self->pointer_y = y;
  update_cursor (self);

  if (can_paint (self) || self->compare)
    gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_leave (GtkEventControllerMotion *controller,
          BdCanvas                 *self)
{
  self->pointer_inside = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Dragging the result out */

static GdkContentProvider *
on_drag_prepare (GtkDragSource *source,
                 double         x,
                 double         y,
                 BdCanvas      *self)
{
  GdkTexture *result;
  g_autofree char *name = NULL;
  g_autofree char *path = NULL;
  GdkContentProvider *providers[2];

  if (self->document == NULL || is_brush (self) || !photo_fits (self) || near_split (self, x) ||
      bd_document_get_state (self->document) != BD_DOCUMENT_STATE_READY ||
      (result = bd_document_get_result (self->document)) == NULL)
    return NULL;

  /* The image for apps that take pixels, a file for those that take files (chats, file
   * managers); the file is written only if one asks. */
  name = bd_pixels_output_name (bd_document_get_title (self->document), "png");
  path = g_build_filename (g_get_user_cache_dir (), "backdrop", "drag", name, NULL);
  providers[0] = gdk_content_provider_new_typed (GDK_TYPE_TEXTURE, result);
  providers[1] = bd_drag_provider_new (result, path);

  return gdk_content_provider_new_union (providers, G_N_ELEMENTS (providers));
}

static void
on_drag_source_begin (GtkDragSource *source,
                      GdkDrag       *drag,
                      BdCanvas      *self)
{
  GdkTexture *result = bd_document_get_preview (self->document, BD_LAYER_RESULT);
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GdkPaintable) icon = NULL;
  double scale = (double) DRAG_ICON_SIZE / MAX (gdk_texture_get_width (result),
                                                 gdk_texture_get_height (result));
  graphene_size_t size = GRAPHENE_SIZE_INIT (gdk_texture_get_width (result) * scale,
                                             gdk_texture_get_height (result) * scale);

  gtk_snapshot_append_scaled_texture (snapshot, result, GSK_SCALING_FILTER_TRILINEAR,
                                      &GRAPHENE_RECT_INIT (0, 0, size.width, size.height));
  icon = gtk_snapshot_free_to_paintable (g_steal_pointer (&snapshot), &size);
  gtk_drag_source_set_icon (source, icon, size.width / 2, size.height / 2);
}

/* Properties */

const char *
bd_canvas_get_tool (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), NULL);
  return self->tool;
}

void
bd_canvas_set_tool (BdCanvas   *self,
                    const char *tool)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  if (g_strcmp0 (tool, "keep") != 0 && g_strcmp0 (tool, "remove") != 0)
    tool = "move";

  if (self->tool == g_intern_string (tool))
    return;

  self->tool = g_intern_string (tool);
  update_cursor (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOOL]);
}

double
bd_canvas_get_brush_size (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), 0);
  return self->brush_size;
}

void
bd_canvas_set_brush_size (BdCanvas *self,
                          double    size)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  size = CLAMP (size, 2.0, 400.0);
  if (size == self->brush_size)
    return;

  self->brush_size = size;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BRUSH_SIZE]);
}

double
bd_canvas_get_zoom (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), 1.0);
  return self->zoom;
}

gboolean
bd_canvas_get_fit (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), TRUE);
  return self->fit;
}

gboolean
bd_canvas_get_compare (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), FALSE);
  return self->compare;
}

void
bd_canvas_set_compare (BdCanvas *self,
                       gboolean  compare)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  compare = !!compare;
  if (compare == self->compare)
    return;

  self->compare = compare;
  update_cursor (self);
  queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPARE]);
}

void
bd_canvas_set_split (BdCanvas *self,
                     double    split)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  self->split = CLAMP (split, 0.0, 1.0);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

GtkWidget *
bd_canvas_new (void)
{
  return g_object_new (BD_TYPE_CANVAS, NULL);
}

static void
bd_canvas_dispose (GObject *object)
{
  BdCanvas *self = BD_CANVAS (object);

  if (self->document_signals != NULL)
    g_signal_group_set_target (self->document_signals, NULL);
  g_clear_object (&self->document_signals);
  g_clear_handle_id (&self->detail_timeout, g_source_remove);
  detail_clear (&self->details[BD_LAYER_ORIGINAL]);
  detail_clear (&self->details[BD_LAYER_RESULT]);
  g_clear_object (&self->document);
  g_clear_pointer (&self->stroke, stroke_free);
  g_clear_pointer (&self->pending, g_ptr_array_unref);

  G_OBJECT_CLASS (bd_canvas_parent_class)->dispose (object);
}

static void
bd_canvas_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  BdCanvas *self = BD_CANVAS (object);

  switch (prop_id)
    {
    case PROP_DOCUMENT:
      g_value_set_object (value, self->document);
      break;

    case PROP_TOOL:
      g_value_set_string (value, self->tool);
      break;

    case PROP_BRUSH_SIZE:
      g_value_set_double (value, self->brush_size);
      break;

    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;

    case PROP_FIT:
      g_value_set_boolean (value, self->fit);
      break;

    case PROP_COMPARE:
      g_value_set_boolean (value, self->compare);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_canvas_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  BdCanvas *self = BD_CANVAS (object);

  switch (prop_id)
    {
    case PROP_DOCUMENT:
      bd_canvas_set_document (self, g_value_get_object (value));
      break;

    case PROP_TOOL:
      bd_canvas_set_tool (self, g_value_get_string (value));
      break;

    case PROP_BRUSH_SIZE:
      bd_canvas_set_brush_size (self, g_value_get_double (value));
      break;

    case PROP_COMPARE:
      bd_canvas_set_compare (self, g_value_get_boolean (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_canvas_class_init (BdCanvasClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = bd_canvas_dispose;
  object_class->get_property = bd_canvas_get_property;
  object_class->set_property = bd_canvas_set_property;

  widget_class->snapshot = bd_canvas_snapshot;
  widget_class->size_allocate = bd_canvas_size_allocate;
  widget_class->measure = bd_canvas_measure;

  properties[PROP_DOCUMENT] =
    g_param_spec_object ("document", NULL, NULL, BD_TYPE_DOCUMENT, rw);
  properties[PROP_TOOL] = g_param_spec_string ("tool", NULL, NULL, "move", rw);
  properties[PROP_BRUSH_SIZE] = g_param_spec_double ("brush-size", NULL, NULL, 2, 400, 40, rw);
  properties[PROP_ZOOM] =
    g_param_spec_double ("zoom", NULL, NULL, MIN_ZOOM, MAX_ZOOM, 1.0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_FIT] =
    g_param_spec_boolean ("fit", NULL, NULL, TRUE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_COMPARE] = g_param_spec_boolean ("compare", NULL, NULL, FALSE, rw);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "canvas");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
bd_canvas_init (BdCanvas *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkGesture *drag, *zoom;
  GtkEventController *controller;
  GtkDragSource *source;

  self->tool = g_intern_static_string ("move");
  self->brush_size = 40;
  self->zoom = 1.0;
  self->fit = TRUE;
  self->split = 0.5;
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) stroke_free);

  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Photo"),
                                  -1);

  self->document_signals = g_signal_group_new (BD_TYPE_DOCUMENT);
  g_signal_group_connect_swapped (self->document_signals, "notify::result",
                                  G_CALLBACK (on_document_result), self);
  g_signal_group_connect_swapped (self->document_signals, "notify::original",
                                  G_CALLBACK (on_document_original), self);
  g_signal_group_connect_swapped (self->document_signals, "notify::state",
                                  G_CALLBACK (on_document_state), self);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);

  drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), 0);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  g_signal_connect (drag, "cancel", G_CALLBACK (on_drag_cancel), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  zoom = gtk_gesture_zoom_new ();
  g_signal_connect (zoom, "begin", G_CALLBACK (on_zoom_begin), self);
  g_signal_connect (zoom, "scale-changed", G_CALLBACK (on_zoom_scale_changed), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (zoom));
  gtk_gesture_group (zoom, drag);

  controller = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (controller, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (widget, controller);

  controller = gtk_event_controller_motion_new ();
  g_signal_connect (controller, "enter", G_CALLBACK (on_motion), self);
  g_signal_connect (controller, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (controller, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (widget, controller);

  source = gtk_drag_source_new ();
  gtk_drag_source_set_actions (source, GDK_ACTION_COPY);
  g_signal_connect (source, "prepare", G_CALLBACK (on_drag_prepare), self);
  g_signal_connect (source, "drag-begin", G_CALLBACK (on_drag_source_begin), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (source));
}
