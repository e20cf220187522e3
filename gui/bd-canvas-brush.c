/* SPDX-License-Identifier: Apache-2.0 */
/* The canvas's input: brush strokes (drawn at once, kept until the result has them),
 * panning, the split handle, zoom gestures, the brush outline, dragging the result out. */
#include "config.h"

#include <math.h>

#include "bd-canvas-private.h"
#include "bd-drag-provider.h"
#include "bd-pixels.h"

void
bd_canvas_stroke_free (Stroke *stroke)
{
  g_array_unref (stroke->points);
  g_free (stroke);
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

/* Strokes not yet in the result, drawn in photo coordinates over @rect. */
void
bd_canvas_append_strokes (BdCanvas              *self,
                          GtkSnapshot           *snapshot,
                          const graphene_rect_t *rect)
{
  if (self->stroke == NULL && self->pending->len == 0)
    return;

  gtk_snapshot_push_clip (snapshot, rect);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &rect->origin);
  gtk_snapshot_scale (snapshot, self->zoom, self->zoom);
  for (guint i = 0; i < self->pending->len; i++)
    append_stroke (snapshot, g_ptr_array_index (self->pending, i));
  if (self->stroke != NULL)
    append_stroke (snapshot, self->stroke);
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_pop (snapshot);
}

/* The brush's outline under the pointer. */
void
bd_canvas_append_brush_outline (BdCanvas    *self,
                                GtkSnapshot *snapshot)
{
  static const GdkRGBA black = { 0.f, 0.f, 0.f, 0.7f };
  static const GdkRGBA white = { 1.f, 1.f, 1.f, 0.9f };
  double r = MAX (self->brush_size / 2.0, 2.0);

  if (!self->pointer_inside || !bd_canvas_can_paint (self) || self->drag == DRAG_SPLIT ||
      bd_canvas_near_split (self, self->pointer_x))
    return;

  append_circle (snapshot, self->pointer_x, self->pointer_y, r + 1, 1.5, &black);
  append_circle (snapshot, self->pointer_x, self->pointer_y, r, 1.5, &white);
}

/* Gestures */

/* A stroke of the current brush starts at widget point (@x, @y). */
static void
begin_stroke (BdCanvas *self,
              double    x,
              double    y)
{
  graphene_point_t p = bd_canvas_to_photo (self, x, y);

  self->drag = DRAG_PAINT;
  self->stroke = g_new0 (Stroke, 1);
  self->stroke->points = g_array_new (FALSE, FALSE, sizeof (graphene_point_t));
  self->stroke->mark = self->tool == g_intern_static_string ("keep") ? BD_MARK_KEEP
                                                                      : BD_MARK_REMOVE;
  self->stroke->radius = self->brush_size / 2.0 / self->zoom;
  self->stroke->hardness = self->brush_hardness / 100.0;
  g_array_append_val (self->stroke->points, p);
}

static void
extend_stroke (BdCanvas *self,
               double    x,
               double    y)
{
  graphene_point_t p = bd_canvas_to_photo (self, x, y);
  graphene_point_t *last = &g_array_index (self->stroke->points, graphene_point_t,
                                           self->stroke->points->len - 1);

  if (graphene_point_distance (&p, last, NULL, NULL) * self->zoom >= 1.0)
    g_array_append_val (self->stroke->points, p);
}

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

  if (button == GDK_BUTTON_PRIMARY && bd_canvas_near_split (self, x))
    self->drag = DRAG_SPLIT;
  else if (button == GDK_BUTTON_PRIMARY && bd_canvas_can_paint (self))
    begin_stroke (self, x, y);
  else if (button == GDK_BUTTON_PRIMARY && bd_canvas_is_region (self) &&
           bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY)
    self->drag = DRAG_CLICK;
  else if (button == GDK_BUTTON_MIDDLE || (button == GDK_BUTTON_PRIMARY && !bd_canvas_photo_fits (self)))
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
  bd_canvas_update_cursor (self);
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
        graphene_rect_t rect = bd_canvas_photo_rect (self);

        if (rect.size.width > 0)
          bd_canvas_set_split (self, (x - rect.origin.x) / rect.size.width);
      }
      break;

    case DRAG_PAINT:
      extend_stroke (self, x, y);
      break;

    case DRAG_PAN:
      self->center_x = self->drag_center_x - dx / self->zoom;
      self->center_y = self->drag_center_y - dy / self->zoom;
      bd_canvas_clamp_center (self);
      bd_canvas_queue_details (self);
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
        stroke->serial = bd_document_paint_stroke_edge (self->document, stroke->mark, stroke->radius,
                                                        (const graphene_point_t *) stroke->points->data,
                                                        stroke->points->len, stroke->hardness);
      if (stroke->serial > 0)
        g_ptr_array_add (self->pending, stroke);
      else
        bd_canvas_stroke_free (stroke);
    }

  self->drag = DRAG_NONE;
  bd_canvas_update_cursor (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint64
bd_canvas_paint (BdCanvas               *self,
                 const graphene_point_t *points,
                 guint                   n_points)
{
  guint pending;

  g_return_val_if_fail (BD_IS_CANVAS (self), 0);

  if (self->document == NULL || n_points == 0 || !bd_canvas_can_paint (self) || self->drag != DRAG_NONE)
    return 0;

  begin_stroke (self, points[0].x, points[0].y);
  for (guint i = 1; i < n_points; i++)
    extend_stroke (self, points[i].x, points[i].y);
  pending = self->pending->len;
  finish_drag (self, TRUE);  /* keeps the stroke in pending when it became an edit */

  return self->pending->len > pending ? ((Stroke *) g_ptr_array_index (self->pending, pending))->serial : 0;
}

void
bd_canvas_click_region (BdCanvas *self,
                        double    x,
                        double    y)
{
  graphene_point_t p;

  g_return_if_fail (BD_IS_CANVAS (self));

  if (self->document == NULL)
    return;

  p = bd_canvas_to_photo (self, x, y);
  bd_document_toggle_region_async (self->document, p.x, p.y, NULL, NULL, NULL);
}

static void
on_drag_end (GtkGestureDrag *gesture,
             double          dx,
             double          dy,
             BdCanvas       *self)
{
  /* A click, not a drag that strayed; the document says whether it was on the photo. */
  if (self->drag == DRAG_CLICK && hypot (dx, dy) < 6)
    bd_canvas_click_region (self, self->drag_x, self->drag_y);
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

      bd_canvas_set_zoom_at (self, self->zoom * exp (-dy * (wheel ? 0.2 : 0.01)), x, y);
      return TRUE;
    }

  if (bd_canvas_photo_fits (self))
    return FALSE;

  if (state & GDK_SHIFT_MASK && dx == 0)
    {
      dx = dy;
      dy = 0;
    }

  self->center_x += dx * (wheel ? 48.0 : 1.0) / self->zoom;
  self->center_y += dy * (wheel ? 48.0 : 1.0) / self->zoom;
  bd_canvas_clamp_center (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return TRUE;
}

static void
on_zoom_begin (GtkGesture       *gesture,
               GdkEventSequence *sequence,
               BdCanvas         *self)
{
  self->zoom_gesture_start = self->zoom;
  g_clear_pointer (&self->stroke, bd_canvas_stroke_free);
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

  bd_canvas_set_zoom_at (self, self->zoom_gesture_start * scale, x, y);
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
  bd_canvas_update_cursor (self);

  if (bd_canvas_can_paint (self) || self->compare)
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

  if (self->document == NULL || bd_canvas_is_brush (self) || !bd_canvas_photo_fits (self) ||
      bd_canvas_near_split (self, x) ||
      bd_document_get_state (self->document) != BD_DOCUMENT_STATE_READY ||
      (result = bd_document_get_result (self->document)) == NULL)
    return NULL;

  /* The image for apps that take pixels, a file for those that take files (chats, file
   * managers); the file is written only if one asks. */
  name = bd_output_name (bd_document_get_title (self->document), BD_OUTPUT_CUTOUT, "png", NULL, NULL);
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

void
bd_canvas_add_controllers (BdCanvas *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  GtkGesture *drag, *zoom;
  GtkEventController *controller;
  GtkDragSource *source;

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
