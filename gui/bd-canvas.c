/* SPDX-License-Identifier: Apache-2.0 */
/* The canvas as a view: geometry, zoom, the document, properties. Drawing is in
 * bd-canvas-draw.c, the details of big photos in bd-canvas-detail.c, painting and the other
 * gestures in bd-canvas-brush.c. */
#include "config.h"

#include <math.h>

#include <adwaita.h>
#include <glib/gi18n.h>

#include "bd-canvas-private.h"

G_DEFINE_FINAL_TYPE (BdCanvas, bd_canvas, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_DOCUMENT,
  PROP_TOOL,
  PROP_BRUSH_SIZE,
  PROP_BRUSH_HARDNESS,
  PROP_ZOOM,
  PROP_FIT,
  PROP_COMPARE,
  PROP_VIEW,
  PROP_SHOW_UNSURE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Geometry */

int
bd_canvas_photo_width (BdCanvas *self)
{
  return self->document ? bd_document_get_width (self->document) : 0;
}

int
bd_canvas_photo_height (BdCanvas *self)
{
  return self->document ? bd_document_get_height (self->document) : 0;
}

static double
fit_zoom (BdCanvas *self)
{
  double w = gtk_widget_get_width (GTK_WIDGET (self)) - 2 * FIT_MARGIN;
  double h = gtk_widget_get_height (GTK_WIDGET (self)) - FIT_MARGIN - FIT_MARGIN_BOTTOM;
  int pw = bd_canvas_photo_width (self), ph = bd_canvas_photo_height (self);

  if (pw <= 0 || ph <= 0 || w <= 0 || h <= 0)
    return 1.0;

  return CLAMP (MIN (w / pw, h / ph), MIN_ZOOM, MAX_FIT_ZOOM);
}

/* Keeps the photo in view: centred along an axis where it fits, edges outside otherwise. */
void
bd_canvas_clamp_center (BdCanvas *self)
{
  double half_w = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0 / self->zoom;
  double half_h = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0 / self->zoom;
  int pw = bd_canvas_photo_width (self), ph = bd_canvas_photo_height (self);

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
  self->center_x = bd_canvas_photo_width (self) / 2.0;
  /* Centred in the space above the tool bar. */
  self->center_y = bd_canvas_photo_height (self) / 2.0 + (FIT_MARGIN_BOTTOM - FIT_MARGIN) / 2.0 / zoom;
  if (zoom != self->zoom)
    {
      self->zoom = zoom;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
}

/* The photo's rectangle in widget coordinates, on whole pixels. */
graphene_rect_t
bd_canvas_photo_rect (BdCanvas *self)
{
  double x0 = gtk_widget_get_width (GTK_WIDGET (self)) / 2.0 - self->center_x * self->zoom;
  double y0 = gtk_widget_get_height (GTK_WIDGET (self)) / 2.0 - self->center_y * self->zoom;

  return GRAPHENE_RECT_INIT (round (x0), round (y0),
                             bd_canvas_photo_width (self) * self->zoom,
                             bd_canvas_photo_height (self) * self->zoom);
}

graphene_point_t
bd_canvas_to_photo (BdCanvas *self,
                    double    x,
                    double    y)
{
  graphene_rect_t rect = bd_canvas_photo_rect (self);

  return GRAPHENE_POINT_INIT ((x - rect.origin.x) / self->zoom, (y - rect.origin.y) / self->zoom);
}

gboolean
bd_canvas_photo_fits (BdCanvas *self)
{
  return bd_canvas_photo_width (self) * self->zoom <= gtk_widget_get_width (GTK_WIDGET (self)) + 0.5 &&
         bd_canvas_photo_height (self) * self->zoom <= gtk_widget_get_height (GTK_WIDGET (self)) + 0.5;
}

double
bd_canvas_split_x (BdCanvas *self)
{
  graphene_rect_t rect = bd_canvas_photo_rect (self);

  return round (rect.origin.x + self->split * rect.size.width);
}

BdLayer
bd_canvas_shown_layer (BdCanvas *self)
{
  BdLayer layer = BD_LAYER_RESULT;

  if (self->view == g_intern_static_string ("mask"))
    layer = BD_LAYER_MASK;
  else if (self->view == g_intern_static_string ("overlay"))
    layer = BD_LAYER_OVERLAY;

  if (layer != BD_LAYER_RESULT &&
      (self->document == NULL || bd_document_get_preview (self->document, layer) == NULL))
    layer = BD_LAYER_RESULT;

  return layer;
}

gboolean
bd_canvas_is_brush (BdCanvas *self)
{
  return self->tool != g_intern_static_string ("move");
}

gboolean
bd_canvas_is_region (BdCanvas *self)
{
  return self->tool == g_intern_static_string ("region");
}

gboolean
bd_canvas_can_paint (BdCanvas *self)
{
  return bd_canvas_is_brush (self) && !bd_canvas_is_region (self) && self->document != NULL &&
         bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY;
}

gboolean
bd_canvas_near_split (BdCanvas *self,
                      double    x)
{
  return self->compare && self->document != NULL &&
         bd_document_get_result (self->document) != NULL &&
         fabs (x - bd_canvas_split_x (self)) <= SPLIT_GRAB;
}

void
bd_canvas_update_cursor (BdCanvas *self)
{
  const char *name = "default";

  if (self->drag == DRAG_PAN)
    name = "grabbing";
  else if (self->drag == DRAG_SPLIT || (self->pointer_inside && bd_canvas_near_split (self, self->pointer_x)))
    name = "col-resize";
  else if (bd_canvas_can_paint (self))
    name = "none";
  else if (bd_canvas_is_region (self) && self->document != NULL &&
           bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY)
    name = "pointer";
  else if (!bd_canvas_photo_fits (self))
    name = "grab";

  gtk_widget_set_cursor_from_name (GTK_WIDGET (self), name);
}

void
bd_canvas_set_zoom_at (BdCanvas *self,
                       double    zoom,
                       double    x,
                       double    y)
{
  graphene_point_t p = bd_canvas_to_photo (self, x, y);
  double w = gtk_widget_get_width (GTK_WIDGET (self));
  double h = gtk_widget_get_height (GTK_WIDGET (self));
  gboolean was_fit = self->fit;

  zoom = CLAMP (zoom, MIN_ZOOM, MAX_ZOOM);
  self->fit = FALSE;
  self->center_x = p.x - (x - w / 2.0) / zoom;
  self->center_y = p.y - (y - h / 2.0) / zoom;
  self->zoom = zoom;
  bd_canvas_clamp_center (self);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  if (was_fit)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FIT]);
  bd_canvas_update_cursor (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Zooms to @zoom with photo point (@x, @y) in the middle of the view (as far as the photo
 * allows): for the screenshots' close-ups. */
void
bd_canvas_zoom_to (BdCanvas *self,
                   double    zoom,
                   double    x,
                   double    y)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  bd_canvas_set_zoom_at (self, zoom, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
                         gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
  self->center_x = x;
  self->center_y = y;
  bd_canvas_clamp_center (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
set_zoom_centered (BdCanvas *self,
                   double    zoom)
{
  bd_canvas_set_zoom_at (self, zoom,
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
  bd_canvas_update_cursor (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Drawing: bd-canvas-draw.c */

static void
bd_canvas_snapshot (GtkWidget   *widget,
                    GtkSnapshot *snapshot)
{
  bd_canvas_draw (BD_CANVAS (widget), snapshot);
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
    bd_canvas_clamp_center (self);
  bd_canvas_queue_details (self);
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

static void update_mask_views (BdCanvas *self);

static void
on_document_result (BdCanvas *self)
{
  bd_canvas_prune_pending (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_document_original (BdCanvas *self)
{
  g_ptr_array_set_size (self->pending, 0);
  g_clear_pointer (&self->stroke, bd_canvas_stroke_free);
  for (guint i = 0; i < BD_LAYER_N; i++)
    bd_canvas_detail_clear (&self->details[i]);
  self->drag = DRAG_NONE;
  bd_canvas_zoom_fit (self);
}

static void
on_document_state (BdCanvas *self)
{
  bd_canvas_update_cursor (self);
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

  if (self->document == document)
    return;

  if (self->document != NULL)
    bd_document_set_mask_views (self->document, FALSE);
  g_set_object (&self->document, document);
  update_mask_views (self);

  g_signal_group_set_target (self->document_signals, document);
  on_document_original (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DOCUMENT]);
}

/* Properties */

void
bd_canvas_get_photo_area (BdCanvas        *self,
                          graphene_rect_t *area)
{
  g_return_if_fail (BD_IS_CANVAS (self));
  *area = bd_canvas_photo_rect (self);
}

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

  if (g_strcmp0 (tool, "keep") != 0 && g_strcmp0 (tool, "remove") != 0 &&
      g_strcmp0 (tool, "region") != 0)
    tool = "move";

  if (self->tool == g_intern_string (tool))
    return;

  self->tool = g_intern_string (tool);
  bd_canvas_update_cursor (self);
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
bd_canvas_get_brush_hardness (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), 100);
  return self->brush_hardness;
}

void
bd_canvas_set_brush_hardness (BdCanvas *self,
                              double    hardness)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  hardness = CLAMP (hardness, 0.0, 100.0);
  if (hardness == self->brush_hardness)
    return;

  self->brush_hardness = hardness;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BRUSH_HARDNESS]);
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
  bd_canvas_update_cursor (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPARE]);
}

/* The document makes the mask's pictures only while they are looked at. */
static void
update_mask_views (BdCanvas *self)
{
  if (self->document != NULL)
    bd_document_set_mask_views (self->document,
                                self->show_unsure || self->view != g_intern_static_string ("result"));
}

const char *
bd_canvas_get_view (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), NULL);
  return self->view;
}

void
bd_canvas_set_view (BdCanvas   *self,
                    const char *view)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  if (g_strcmp0 (view, "mask") != 0 && g_strcmp0 (view, "overlay") != 0)
    view = "result";

  if (self->view == g_intern_string (view))
    return;

  self->view = g_intern_string (view);
  update_mask_views (self);
  bd_canvas_queue_details (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW]);
}

gboolean
bd_canvas_get_show_unsure (BdCanvas *self)
{
  g_return_val_if_fail (BD_IS_CANVAS (self), FALSE);
  return self->show_unsure;
}

void
bd_canvas_set_show_unsure (BdCanvas *self,
                           gboolean  show_unsure)
{
  g_return_if_fail (BD_IS_CANVAS (self));

  show_unsure = !!show_unsure;
  if (show_unsure == self->show_unsure)
    return;

  self->show_unsure = show_unsure;
  update_mask_views (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOW_UNSURE]);
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
  for (guint i = 0; i < BD_LAYER_N; i++)
    bd_canvas_detail_clear (&self->details[i]);
  g_clear_object (&self->document);
  g_clear_pointer (&self->stroke, bd_canvas_stroke_free);
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

    case PROP_BRUSH_HARDNESS:
      g_value_set_double (value, self->brush_hardness);
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

    case PROP_VIEW:
      g_value_set_string (value, self->view);
      break;

    case PROP_SHOW_UNSURE:
      g_value_set_boolean (value, self->show_unsure);
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

    case PROP_BRUSH_HARDNESS:
      bd_canvas_set_brush_hardness (self, g_value_get_double (value));
      break;

    case PROP_COMPARE:
      bd_canvas_set_compare (self, g_value_get_boolean (value));
      break;

    case PROP_VIEW:
      bd_canvas_set_view (self, g_value_get_string (value));
      break;

    case PROP_SHOW_UNSURE:
      bd_canvas_set_show_unsure (self, g_value_get_boolean (value));
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
  properties[PROP_BRUSH_HARDNESS] = g_param_spec_double ("brush-hardness", NULL, NULL, 0, 100, 100, rw);
  properties[PROP_ZOOM] =
    g_param_spec_double ("zoom", NULL, NULL, MIN_ZOOM, MAX_ZOOM, 1.0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_FIT] =
    g_param_spec_boolean ("fit", NULL, NULL, TRUE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_COMPARE] = g_param_spec_boolean ("compare", NULL, NULL, FALSE, rw);
  properties[PROP_VIEW] = g_param_spec_string ("view", NULL, NULL, "result", rw);
  properties[PROP_SHOW_UNSURE] = g_param_spec_boolean ("show-unsure", NULL, NULL, FALSE, rw);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "canvas");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
bd_canvas_init (BdCanvas *self)
{
  GtkWidget *widget = GTK_WIDGET (self);

  self->tool = g_intern_static_string ("move");
  self->view = g_intern_static_string ("result");
  self->brush_size = 40;
  self->brush_hardness = 100;
  self->zoom = 1.0;
  self->fit = TRUE;
  self->split = 0.5;
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) bd_canvas_stroke_free);

  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Photo"),
                                  -1);

  self->document_signals = g_signal_group_new (BD_TYPE_DOCUMENT);
  g_signal_group_connect_swapped (self->document_signals, "notify::result",
                                  G_CALLBACK (on_document_result), self);
  g_signal_group_connect_swapped (self->document_signals, "notify::preview",
                                  G_CALLBACK (on_document_result), self);
  g_signal_group_connect_swapped (self->document_signals, "notify::original",
                                  G_CALLBACK (on_document_original), self);
  g_signal_group_connect_swapped (self->document_signals, "notify::state",
                                  G_CALLBACK (on_document_state), self);
  g_signal_connect_object (adw_style_manager_get_default (), "notify::dark",
                           G_CALLBACK (gtk_widget_queue_draw), self, G_CONNECT_SWAPPED);

  bd_canvas_add_controllers (self);
}

