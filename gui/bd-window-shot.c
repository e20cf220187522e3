/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include "bd-window-shot.h"

#define MARGIN 40
#define RADIUS 12

static gboolean
drawn (gpointer widget)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;

  gdk_paintable_snapshot (paintable, snapshot, gtk_widget_get_width (widget), gtk_widget_get_height (widget));
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  return node != NULL;
}

gboolean
bd_widget_wait_drawn (GtkWidget *widget)
{
  return bd_main_loop_wait_for (drawn, widget);
}

gboolean
bd_window_shot_save (GtkWindow   *window,
                     const char  *path,
                     gboolean     decorate,
                     GError     **error)
{
  GtkWidget *widget = GTK_WIDGET (window);
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (window));
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  int margin = decorate ? MARGIN : 0;
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GtkSnapshot) snapshot = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  GskRoundedRect outline;

  if (renderer == NULL || width <= 0 || height <= 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED, "The window is not shown");
      return FALSE;
    }
  if (!bd_widget_wait_drawn (widget))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "The window was not drawn");
      return FALSE;
    }

  paintable = gtk_widget_paintable_new (widget);
  snapshot = gtk_snapshot_new ();
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (margin, margin));

  gsk_rounded_rect_init_from_rect (&outline, &GRAPHENE_RECT_INIT (0, 0, width, height),
                                   decorate ? RADIUS : 0);
  if (decorate)
    {
      gtk_snapshot_append_outset_shadow (snapshot, &outline, &(GdkRGBA) { 0, 0, 0, 0.10f }, 0, 0, 1, 0);
      gtk_snapshot_append_outset_shadow (snapshot, &outline, &(GdkRGBA) { 0, 0, 0, 0.22f }, 0, 6, 0, 22);
      gtk_snapshot_push_rounded_clip (snapshot, &outline);
    }

  gdk_paintable_snapshot (paintable, snapshot, width, height);

  if (decorate)
    gtk_snapshot_pop (snapshot);

  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  texture = gsk_renderer_render_texture (renderer, node,
                                         &GRAPHENE_RECT_INIT (0, 0, width + 2 * margin, height + 2 * margin));
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "Could not write %s", path);
      return FALSE;
    }

  return TRUE;
}

#define WAIT_TIMEOUT_S 300

static gboolean
wake_up (gpointer data)
{
  return G_SOURCE_CONTINUE;
}

gboolean
bd_main_loop_wait_for (BdCondition condition,
                       gpointer    data)
{
  gint64 end = g_get_monotonic_time () + WAIT_TIMEOUT_S * G_USEC_PER_SEC;
  /* A periodic source, so the loop wakes to check even when nothing else happens. */
  guint tick = g_timeout_add (20, wake_up, NULL);
  gboolean ok;

  while (!(ok = condition (data)) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);

  g_source_remove (tick);
  return ok;
}

static gboolean
elapsed (gpointer data)
{
  return g_get_monotonic_time () >= *(gint64 *) data;
}

void
bd_main_loop_spin (guint ms)
{
  gint64 end = g_get_monotonic_time () + (gint64) ms * 1000;

  bd_main_loop_wait_for (elapsed, &end);
}
