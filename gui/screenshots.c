/* SPDX-License-Identifier: Apache-2.0 */
/* Makes the screenshots in docs/screenshots (and the metainfo's): the real app, real photos,
 * the real model, rendered window by window. Run it through gui/screenshots.sh, which gives it
 * an X server and private folders.
 *
 *   backdrop-screenshots OUTPUT-FOLDER PHOTO [PHOTO...]
 *
 * The first photo is the one in the editor; all of them go into the batch list. With
 * BACKDROP_SCREENSHOT_ONLY=a.png,b.png only those files are written (the steps all run). */
#include "config.h"

#include <stdio.h>

#include <adwaita.h>

#include "bd-application.h"
#include "bd-batch-page.h"
#include "bd-crop.h"
#include "bd-editor.h"
#include "bd-window.h"
#include "bd-window-shot.h"


static gboolean
document_settled (gpointer data)
{
  BdDocument *doc = data;
  BdDocumentState state = bd_document_get_state (doc);

  return state == BD_DOCUMENT_STATE_FAILED ||
         (state == BD_DOCUMENT_STATE_READY && bd_document_get_result (doc) != NULL &&
          !bd_document_get_busy (doc));
}

static gboolean
mask_views_ready (gpointer data)
{
  return document_settled (data) && bd_document_get_preview (data, BD_LAYER_UNSURE) != NULL;
}

static gboolean
batch_idle (gpointer data)
{
  return !bd_batch_page_get_busy (data);
}

static gboolean
window_shown (gpointer data)
{
  return gtk_widget_get_mapped (data) && gtk_widget_get_width (data) > 0;
}

static gboolean
window_size_is (gpointer data)
{
  GtkWidget *window = data;
  int *size = g_object_get_data (G_OBJECT (window), "wanted-size");

  return gtk_widget_get_width (window) == size[0] && gtk_widget_get_height (window) == size[1];
}

/* Without a compositor the window's resize borders come off its default size: ask for
 * that much more. */
static void
resize (BdWindow *window,
        int       width,
        int       height)
{
  static int size[2];
  int default_width, default_height;

  bd_main_loop_wait_for (window_shown, window);
  gtk_window_get_default_size (GTK_WINDOW (window), &default_width, &default_height);
  size[0] = width;
  size[1] = height;
  g_object_set_data (G_OBJECT (window), "wanted-size", size);
  gtk_window_set_default_size (GTK_WINDOW (window),
                               width + default_width - gtk_widget_get_width (GTK_WIDGET (window)),
                               height + default_height - gtk_widget_get_height (GTK_WIDGET (window)));
  if (!bd_main_loop_wait_for (window_size_is, window))
    g_printerr ("The window is %d×%d, not %d×%d\n", gtk_widget_get_width (GTK_WIDGET (window)),
                gtk_widget_get_height (GTK_WIDGET (window)), width, height);
  bd_main_loop_spin (600);
}

static void
shoot (BdWindow   *window,
       const char *folder,
       const char *name)
{
  g_autofree char *path = g_build_filename (folder, name, NULL);
  g_autoptr(GError) error = NULL;
  const char *only = g_getenv ("BACKDROP_SCREENSHOT_ONLY");

  bd_main_loop_spin (1000);
  if (only != NULL)
    {
      g_auto(GStrv) names = g_strsplit (only, ",", -1);

      if (!g_strv_contains ((const char * const *) names, name))
        return;
    }
  if (!bd_window_shot_save (GTK_WINDOW (window), path, TRUE, &error))
    g_error ("%s: %s", path, error->message);
  g_print ("%s\n", path);
}

static void
set_style (AdwColorScheme scheme)
{
  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), scheme);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(BdApplication) app = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) photo = NULL;
  g_autoptr(GPtrArray) batch = g_ptr_array_new_with_free_func (g_object_unref);
  const char *folder;
  BdWindow *window;
  BdEditor *editor;
  BdDocument *doc;
  BdCanvas *canvas;
  GdkRGBA sky = { 0.60f, 0.76f, 0.95f, 1.f };

  if (argc < 3)
    {
      g_printerr ("Usage: %s OUTPUT-FOLDER PHOTO [PHOTO...]\n", argv[0]);
      return 2;
    }

  gtk_init ();
  folder = argv[1];
  g_mkdir_with_parents (folder, 0755);

  /* GNOME's interface font, when it is installed. */
  g_object_set (gtk_settings_get_default (),
                "gtk-font-name", "Cantarell 11",
                "gtk-decoration-layout", "appmenu:close",
                NULL);

  app = bd_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE | G_APPLICATION_HANDLES_OPEN);
  if (!g_application_register (G_APPLICATION (app), NULL, &error))
    g_error ("%s", error->message);

  window = bd_window_new (app);
  editor = bd_window_get_editor (window);
  doc = bd_editor_get_document (editor);
  canvas = bd_editor_get_canvas (editor);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 760);
  gtk_window_present (GTK_WINDOW (window));

  /* 1. The welcome page. */
  set_style (ADW_COLOR_SCHEME_FORCE_LIGHT);
  resize (window, 1000, 640);
  shoot (window, folder, "welcome.png");

  /* 2. The editor: the person on the checkerboard, the adjustments beside. */
  photo = g_file_new_for_commandline_arg (argv[2]);
  bd_window_open_files (window, &photo, 1);
  resize (window, 1200, 760);
  if (!bd_main_loop_wait_for (document_settled, doc) || bd_document_get_state (doc) != BD_DOCUMENT_STATE_READY)
    g_error ("The removal failed: %s", bd_document_get_error_message (doc));
  shoot (window, folder, "editor-light.png");

  /* 2b. The mask in black and white; then red over what is removed, with the places where
   * the model was unsure marked: of a photo that has some (BACKDROP_SCREENSHOT_MASK_PHOTO),
   * after which the first photo comes back. */
  if (g_getenv ("BACKDROP_SCREENSHOT_MASK_PHOTO") != NULL)
    {
      g_autoptr(GFile) other = g_file_new_for_commandline_arg (g_getenv ("BACKDROP_SCREENSHOT_MASK_PHOTO"));

      bd_window_open_files (window, &other, 1);
      bd_main_loop_spin (300);
      bd_main_loop_wait_for (document_settled, doc);
    }
  bd_canvas_set_view (canvas, "mask");
  bd_main_loop_wait_for (mask_views_ready, doc);
  shoot (window, folder, "mask.png");
  bd_canvas_set_view (canvas, "overlay");
  bd_canvas_set_show_unsure (canvas, TRUE);
  bd_main_loop_wait_for (mask_views_ready, doc);
  shoot (window, folder, "unsure.png");
  bd_canvas_set_show_unsure (canvas, FALSE);
  bd_canvas_set_view (canvas, "result");

  /* 2c. With Keep Passers-By on, a garden lamp stays in BACKDROP_SCREENSHOT_REGION_PHOTO;
   * one click of the region tool on it (at BACKDROP_SCREENSHOT_REGION_POINT, photo pixels)
   * takes it away. */
  if (g_getenv ("BACKDROP_SCREENSHOT_REGION_PHOTO") != NULL)
    {
      g_autoptr(GFile) other = g_file_new_for_commandline_arg (g_getenv ("BACKDROP_SCREENSHOT_REGION_PHOTO"));
      const char *point = g_getenv ("BACKDROP_SCREENSHOT_REGION_POINT");
      double x = 0, y = 0;
      graphene_rect_t area;

      if (point == NULL || sscanf (point, "%lf,%lf", &x, &y) != 2)
        g_error ("BACKDROP_SCREENSHOT_REGION_POINT is not X,Y");
      g_settings_set_boolean (bd_application_get_settings (app), "keep-all-people", TRUE);
      bd_window_open_files (window, &other, 1);
      bd_main_loop_spin (300);
      bd_main_loop_wait_for (document_settled, doc);
      bd_main_loop_spin (5000);   /* the toast offering the changed setting for the last photo goes */
      bd_canvas_set_tool (canvas, "region");
      shoot (window, folder, "region-before.png");
      bd_canvas_get_photo_area (canvas, &area);
      bd_canvas_click_region (canvas, area.origin.x + x * area.size.width / bd_document_get_width (doc),
                              area.origin.y + y * area.size.height / bd_document_get_height (doc));
      bd_main_loop_spin (300);
      bd_main_loop_wait_for (document_settled, doc);
      shoot (window, folder, "region-after.png");
      bd_document_undo (doc);
      bd_main_loop_wait_for (document_settled, doc);
      bd_canvas_set_tool (canvas, "move");
      g_settings_set_boolean (bd_application_get_settings (app), "keep-all-people", FALSE);
      bd_main_loop_spin (5000);   /* and the toast this change offers goes too */
    }

  /* 2d. The edge-aware brush on hair (BACKDROP_SCREENSHOT_BRUSH_PHOTO): keep strokes at
   * hardness 0 along BACKDROP_SCREENSHOT_BRUSH_STROKES ("x0,y0,x1,y1;...", photo pixels, a
   * brush of BACKDROP_SCREENSHOT_BRUSH_SIZE photo pixels) where the model cut hair off,
   * seen close up as red over what is removed; then undone. */
  if (g_getenv ("BACKDROP_SCREENSHOT_BRUSH_PHOTO") != NULL)
    {
      g_autoptr(GFile) other = g_file_new_for_commandline_arg (g_getenv ("BACKDROP_SCREENSHOT_BRUSH_PHOTO"));
      g_auto(GStrv) strokes = g_strsplit (g_getenv ("BACKDROP_SCREENSHOT_BRUSH_STROKES") ?: "", ";", -1);
      double size = g_ascii_strtod (g_getenv ("BACKDROP_SCREENSHOT_BRUSH_SIZE") ?: "16", NULL);
      double cx = 0, cy = 0;
      guint n = 0;

      bd_window_open_files (window, &other, 1);
      bd_main_loop_spin (300);
      bd_main_loop_wait_for (document_settled, doc);
      for (guint i = 0; strokes[i] != NULL; i++)
        {
          double x0, y0, x1, y1;

          if (sscanf (strokes[i], "%lf,%lf,%lf,%lf", &x0, &y0, &x1, &y1) != 4)
            g_error ("BACKDROP_SCREENSHOT_BRUSH_STROKES: “%s” is not x0,y0,x1,y1", strokes[i]);
          cx += x0 + x1;
          cy += y0 + y1;
          n += 2;
        }
      if (n == 0)
        g_error ("BACKDROP_SCREENSHOT_BRUSH_STROKES names no stroke");
      bd_canvas_zoom_to (canvas, 3 * bd_canvas_get_zoom (canvas), cx / n, cy / n);
      bd_main_loop_spin (300);
      bd_canvas_set_tool (canvas, "keep");
      bd_canvas_set_brush_hardness (canvas, 0);
      bd_canvas_set_view (canvas, "overlay");
      for (guint i = 0; strokes[i] != NULL; i++)
        {
          double v[4];
          graphene_rect_t area;
          graphene_point_t points[9];
          double scale;

          sscanf (strokes[i], "%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3]);
          bd_canvas_get_photo_area (canvas, &area);
          scale = area.size.width / bd_document_get_width (doc);
          bd_canvas_set_brush_size (canvas, size * scale);
          for (guint k = 0; k < G_N_ELEMENTS (points); k++)
            points[k] = GRAPHENE_POINT_INIT (area.origin.x + (v[0] + (v[2] - v[0]) * k / 8.0) * scale,
                                             area.origin.y + (v[1] + (v[3] - v[1]) * k / 8.0) * scale);
          bd_canvas_paint (canvas, points, G_N_ELEMENTS (points));
          bd_main_loop_spin (300);
          bd_main_loop_wait_for (mask_views_ready, doc);
        }
      shoot (window, folder, "edge-brush.png");
      while (bd_document_get_can_undo (doc))
        bd_document_undo (doc);
      bd_main_loop_wait_for (document_settled, doc);
      bd_canvas_set_view (canvas, "result");
      bd_canvas_set_brush_hardness (canvas, 100);
      bd_canvas_set_tool (canvas, "move");
      bd_canvas_zoom_fit (canvas);
    }

  if (g_getenv ("BACKDROP_SCREENSHOT_MASK_PHOTO") != NULL ||
      g_getenv ("BACKDROP_SCREENSHOT_BRUSH_PHOTO") != NULL)
    {
      bd_window_open_files (window, &photo, 1);
      bd_main_loop_spin (300);
      bd_main_loop_wait_for (document_settled, doc);
    }

  /* 2e. Crop to the subject, 4:5: the frame over the result, the rest dimmed; undone. */
  bd_document_set_crop (doc, BD_CROP_PORTRAIT);
  bd_main_loop_wait_for (document_settled, doc);
  shoot (window, folder, "crop.png");
  bd_document_undo (doc);
  bd_main_loop_wait_for (document_settled, doc);

  /* 3. Dark: a blurred copy of the photo behind the person. */
  set_style (ADW_COLOR_SCHEME_FORCE_DARK);
  bd_document_set_background_blur (doc, 40);
  bd_document_set_background_kind (doc, 2 /* BD_BACKGROUND_BLUR */);
  bd_main_loop_wait_for (document_settled, doc);
  shoot (window, folder, "editor-dark.png");

  /* 4. Narrow, comparing before and after on a plain colour. */
  set_style (ADW_COLOR_SCHEME_FORCE_LIGHT);
  bd_document_set_background_color (doc, &sky);
  bd_document_set_background_kind (doc, 1 /* BD_BACKGROUND_COLOR */);
  bd_main_loop_wait_for (document_settled, doc);
  resize (window, 400, 760);
  bd_canvas_set_compare (canvas, TRUE);
  bd_canvas_set_split (canvas, 0.42);
  shoot (window, folder, "narrow.png");
  bd_canvas_set_compare (canvas, FALSE);
  bd_document_set_background_kind (doc, 0);

  /* 5. The batch list, every photo done. */
  for (int i = 2; i < argc; i++)
    g_ptr_array_add (batch, g_file_new_for_commandline_arg (argv[i]));
  if (batch->len > 1)
    {
      resize (window, 1000, 640);
      bd_window_open_files (window, (GFile **) batch->pdata, batch->len);
      bd_main_loop_wait_for (batch_idle, bd_window_get_batch_page (window));
      shoot (window, folder, "batch.png");
    }

  gtk_window_destroy (GTK_WINDOW (window));
  return 0;
}
