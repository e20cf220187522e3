/* SPDX-License-Identifier: Apache-2.0 */
/* Details of big photos: when the canvas shows a photo larger than its preview, a crop of
 * the layer at screen resolution is asked for once zooming and panning pause. */
#include "config.h"

#include <math.h>

#include "bd-canvas-private.h"

static double
preview_scale (BdCanvas *self,
               BdLayer   layer)
{
  GdkTexture *preview = bd_document_get_preview (self->document, layer);

  if (preview == NULL || bd_canvas_photo_width (self) <= 0)
    return 1.0;

  return (double) gdk_texture_get_width (preview) / bd_canvas_photo_width (self);
}

/* TRUE when the preview would be enlarged on screen. */
gboolean
bd_canvas_needs_detail (BdCanvas *self,
                        BdLayer   layer)
{
  return self->document != NULL && self->zoom > preview_scale (self, layer) * 1.01;
}

void
bd_canvas_detail_clear (Detail *detail)
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
  BdLayer layer = bd_canvas_shown_layer (self);
  Detail *detail = &self->details[layer];

  if (bd_canvas_needs_detail (self, layer) && detail->texture != NULL)
    return detail->serial;

  /* The result's preview may be patched ahead of the whole result. */
  if (layer == BD_LAYER_RESULT)
    return bd_document_get_preview_serial (self->document);
  return bd_document_get_result_serial (self->document);
}

void
bd_canvas_prune_pending (BdCanvas *self)
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
      bd_canvas_prune_pending (self);
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
  int pw = bd_canvas_photo_width (self), ph = bd_canvas_photo_height (self);
  int x0, y0, x1, y1;

  if (!bd_canvas_needs_detail (self, layer) ||
      (layer != BD_LAYER_ORIGINAL && bd_document_get_preview (self->document, layer) == NULL))
    {
      bd_canvas_detail_clear (detail);
      return;
    }

  p0 = bd_canvas_to_photo (self, 0, 0);
  p1 = bd_canvas_to_photo (self, gtk_widget_get_width (GTK_WIDGET (self)),
                           gtk_widget_get_height (GTK_WIDGET (self)));
  graphene_rect_init (&visible, p0.x, p0.y, p1.x - p0.x, p1.y - p0.y);
  if (!graphene_rect_intersection (&visible, &GRAPHENE_RECT_INIT (0, 0, pw, ph), &visible))
    return;

  if (detail->texture != NULL && graphene_rect_contains_rect (&detail->area, &visible) &&
      fabs (log (detail->scale / scale)) < log (1.3) &&
      (layer == BD_LAYER_ORIGINAL || detail->serial == serial))
    return;

  /* A margin around the view, so that small pans need nothing new. */
  x0 = CLAMP ((int) floor (visible.origin.x - visible.size.width * 0.2), 0, pw);
  y0 = CLAMP ((int) floor (visible.origin.y - visible.size.height * 0.2), 0, ph);
  x1 = CLAMP ((int) ceil (visible.origin.x + visible.size.width * 1.2), 0, pw);
  y1 = CLAMP ((int) ceil (visible.origin.y + visible.size.height * 1.2), 0, ph);
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
      BdLayer shown = bd_canvas_shown_layer (self);

      for (BdLayer layer = BD_LAYER_RESULT; layer < BD_LAYER_UNSURE; layer++)
        if (layer == shown)
          update_detail (self, layer);
        else
          bd_canvas_detail_clear (&self->details[layer]);
      if (self->compare || bd_document_get_result (self->document) == NULL)
        update_detail (self, BD_LAYER_ORIGINAL);
      else
        bd_canvas_detail_clear (&self->details[BD_LAYER_ORIGINAL]);
    }

  return G_SOURCE_REMOVE;
}

/* Looks for the details the view needs once zooming and panning pause. */
void
bd_canvas_queue_details (BdCanvas *self)
{
  g_clear_handle_id (&self->detail_timeout, g_source_remove);
  self->detail_timeout = g_timeout_add (60, on_detail_timeout, self);
}

