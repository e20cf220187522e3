/* SPDX-License-Identifier: Apache-2.0 */
/* The canvas's drawing: the photo or the result as the view shows it, the comparison's split
 * handle and labels, the crop frame, the unsure areas' label; the strokes and the brush outline
 * come from bd-canvas-brush.c. */
#include "config.h"

#include <math.h>

#include <adwaita.h>
#include <glib/gi18n.h>

#include "bd-canvas-private.h"

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

  if (detail->texture != NULL && bd_canvas_needs_detail (self, layer))
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
  double x = bd_canvas_split_x (self);
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

/* What the view shows of the result over @rect: the result on a checkerboard or a picture
 * of the mask, then the unsure places when asked for. */
static void
append_shown (BdCanvas              *self,
              GtkSnapshot           *snapshot,
              const graphene_rect_t *rect)
{
  BdLayer layer = bd_canvas_shown_layer (self);
  GdkTexture *unsure = bd_document_get_preview (self->document, BD_LAYER_UNSURE);

  if (layer == BD_LAYER_RESULT)
    append_checkerboard (self, snapshot, rect);
  append_layer (self, snapshot, layer, rect);

  /* Drawn scaled from the preview even when zoomed in: it points at places, no more. */
  if (self->show_unsure && unsure != NULL)
    gtk_snapshot_append_scaled_texture (snapshot, unsure, GSK_SCALING_FILTER_NEAREST, rect);
}

/* Says how much the unsure marks cover, so that none on screen reads as "sure". */
static void
append_unsure_label (BdCanvas    *self,
                     GtkSnapshot *snapshot)
{
  g_autofree char *text = NULL;
  double fraction = bd_document_get_unsure_fraction (self->document);
  PangoLayout *layout;
  int w, h;

  if (bd_document_get_preview (self->document, BD_LAYER_UNSURE) == NULL)
    text = g_strdup (_("Finding unsure areas…"));
  else if (fraction <= 0)
    text = g_strdup (_("No unsure areas"));
  else
    /* Translators: the share of the photo where the mask is undecided, e.g. "2.4 %" */
    text = g_strdup_printf (_("Unsure areas: %.1f %% of the photo"), MAX (fraction * 100, 0.1));

  layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  pango_layout_get_pixel_size (layout, &w, &h);
  g_object_unref (layout);
  append_label (self, snapshot, text, (gtk_widget_get_width (GTK_WIDGET (self)) - w - 20) / 2.0, 12,
                FALSE);
}

/* The crop that saving applies: the rest of the photo dimmed, the frame outlined. */
static void
append_crop_frame (BdCanvas              *self,
                   GtkSnapshot           *snapshot,
                   const graphene_rect_t *rect)
{
  static const GdkRGBA dim = { 0.f, 0.f, 0.f, 0.55f };
  static const GdkRGBA line = { 1.f, 1.f, 1.f, 0.9f };
  static const GdkRGBA shade = { 0.f, 0.f, 0.f, 0.6f };
  GdkRectangle frame;
  graphene_rect_t f;
  float top, bottom;

  if (!bd_document_get_crop_frame (self->document, &frame))
    return;

  f = GRAPHENE_RECT_INIT (rect->origin.x + frame.x * self->zoom, rect->origin.y + frame.y * self->zoom,
                          frame.width * self->zoom, frame.height * self->zoom);
  /* The photo outside the frame, dimmed: above, below, left and right of it. */
  top = CLAMP (f.origin.y, rect->origin.y, rect->origin.y + rect->size.height);
  bottom = CLAMP (f.origin.y + f.size.height, rect->origin.y, rect->origin.y + rect->size.height);
  gtk_snapshot_push_clip (snapshot, rect);
  gtk_snapshot_append_color (snapshot, &dim, &GRAPHENE_RECT_INIT (rect->origin.x, rect->origin.y,
                                                                  rect->size.width, top - rect->origin.y));
  gtk_snapshot_append_color (snapshot, &dim, &GRAPHENE_RECT_INIT (rect->origin.x, bottom, rect->size.width,
                                                                  rect->origin.y + rect->size.height - bottom));
  gtk_snapshot_append_color (snapshot, &dim, &GRAPHENE_RECT_INIT (rect->origin.x, top,
                                                                  MAX (0, f.origin.x - rect->origin.x), bottom - top));
  gtk_snapshot_append_color (snapshot, &dim, &GRAPHENE_RECT_INIT (f.origin.x + f.size.width, top,
                                                                  MAX (0, rect->origin.x + rect->size.width - f.origin.x - f.size.width),
                                                                  bottom - top));
  gtk_snapshot_pop (snapshot);
  /* The frame, past the photo's edges too where the fill will pad it: white inside dark,
   * seen on the photo and on the window alike. */
  gtk_snapshot_append_border (snapshot, &GSK_ROUNDED_RECT_INIT (f.origin.x - 1.5f, f.origin.y - 1.5f,
                                                                f.size.width + 3.f, f.size.height + 3.f),
                              (const float[4]) { 1.5f, 1.5f, 1.5f, 1.5f },
                              (const GdkRGBA[4]) { shade, shade, shade, shade });
  gtk_snapshot_append_border (snapshot, &GSK_ROUNDED_RECT_INIT (f.origin.x, f.origin.y, f.size.width, f.size.height),
                              (const float[4]) { 1.5f, 1.5f, 1.5f, 1.5f },
                              (const GdkRGBA[4]) { line, line, line, line });
}

void
bd_canvas_draw (BdCanvas    *self,
                GtkSnapshot *snapshot)
{
  GtkWidget *widget = GTK_WIDGET (self);
  static const GdkRGBA shadow = { 0.f, 0.f, 0.f, 0.18f };
  GdkTexture *original, *result;
  graphene_rect_t rect;
  GskRoundedRect outline;
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);

  if (self->document == NULL || (original = bd_document_get_original (self->document)) == NULL)
    return;

  result = bd_document_get_result (self->document);
  rect = bd_canvas_photo_rect (self);

  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));

  gsk_rounded_rect_init_from_rect (&outline, &rect, 0);
  gtk_snapshot_append_outset_shadow (snapshot, &outline, &shadow, 0, 2, 0, 10);

  if (result != NULL && self->compare)
    {
      double x = bd_canvas_split_x (self);
      graphene_rect_t before = rect, after = rect;

      before.size.width = x - rect.origin.x;
      after.origin.x = x;
      after.size.width = rect.origin.x + rect.size.width - x;

      gtk_snapshot_push_clip (snapshot, &before);
      append_layer (self, snapshot, BD_LAYER_ORIGINAL, &rect);
      gtk_snapshot_pop (snapshot);

      gtk_snapshot_push_clip (snapshot, &after);
      append_shown (self, snapshot, &rect);
      gtk_snapshot_pop (snapshot);
    }
  else if (result != NULL)
    append_shown (self, snapshot, &rect);
  else
    append_layer (self, snapshot, BD_LAYER_ORIGINAL, &rect);

  bd_canvas_append_strokes (self, snapshot, &rect);

  if (result != NULL && !self->compare)
    append_crop_frame (self, snapshot, &rect);

  if (result != NULL && self->compare)
    append_split_handle (self, snapshot, &rect);

  if (result != NULL && self->show_unsure)
    append_unsure_label (self, snapshot);

  bd_canvas_append_brush_outline (self, snapshot);

  gtk_snapshot_pop (snapshot);
}
