/* SPDX-License-Identifier: Apache-2.0 */
/* The dialog's preview: the layer as a thumbnail (long side PREVIEW_SIZE), the network run on
 * it with the dialog's settings, what goes tinted red (preview-paint.c). A change of a
 * setting runs it again shortly after, so that dragging a slider does not queue runs. */
#include "config.h"

#include <glib/gi18n-lib.h>

#include "backdrop.h"
#include "bd-library.h"
#include "preview.h"
#include "preview-paint.h"

#define PREVIEW_SIZE 320
#define SETTLE_MS    150

typedef struct
{
  GimpProcedureConfig *config;
  gchar               *model_path;
  GdkPixbuf           *thumbnail;
  gint                 layer_width;   /* the feather is in the layer's pixels */
  bd_model            *model;
  bd_session          *session;
  GtkWidget           *image;
  GtkWidget           *message;
  guint                pending;
} Preview;

static void
preview_free (Preview *p)
{
  if (p->pending)
    g_source_remove (p->pending);
  g_signal_handlers_disconnect_by_data (p->config, p);
  g_object_unref (p->config);
  g_clear_object (&p->thumbnail);
  bd_session_free (p->session);
  bd_model_free (p->model);
  g_free (p->model_path);
  g_free (p);
}

static void
preview_show_error (Preview *p,
                    GError  *error)
{
  gtk_label_set_text (GTK_LABEL (p->message), error->message);
  gtk_widget_show (p->message);
  gtk_widget_hide (p->image);
  g_error_free (error);
}

static void
free_pixels (guchar   *pixels,
             gpointer  data)
{
  g_free (pixels);
}

static gboolean
preview_update (gpointer data)
{
  Preview        *p     = data;
  GError         *error = NULL;
  bd_error        bd    = { 0 };
  bd_image        view;
  bd_run_options  options;
  gboolean        refine, all_people;
  gdouble         threshold, feather;
  gint            width, height;
  guint8         *alpha, *out;
  GdkPixbuf      *shown;
  bd_status       status;

  p->pending = 0;
  if (! p->thumbnail)
    return G_SOURCE_REMOVE;

  if (! p->session)
    {
      bd_session_options session_options;

      bd_session_options_init (&session_options);
      session_options.device = BD_DEVICE_CPU;   /* a thumbnail: the GPU's start-up would cost more */
      if (! bd_library_open_model (p->model_path, &p->model, &error) ||
          ! bd_library_new_session (p->model, &session_options, &p->session, &error))
        {
          preview_show_error (p, error);
          return G_SOURCE_REMOVE;
        }
    }

  g_object_get (p->config,
                "refine-edges", &refine,
                "all-people",   &all_people,
                "threshold",    &threshold,
                "feather",      &feather,
                NULL);

  width         = gdk_pixbuf_get_width (p->thumbnail);
  height        = gdk_pixbuf_get_height (p->thumbnail);
  view.pixels   = gdk_pixbuf_read_pixels (p->thumbnail);
  view.width    = width;
  view.height   = height;
  view.stride   = gdk_pixbuf_get_rowstride (p->thumbnail);
  view.format   = gdk_pixbuf_get_has_alpha (p->thumbnail) ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8;

  alpha = g_malloc ((gsize) width * height);
  bd_run_options_init (&options);
  options.refine_edges      = refine;
  options.main_subject_only = ! all_people;
  status = bd_session_run (p->session, &view, &options, alpha, width, &bd);
  if (status == BD_OK && (threshold > 0.0 || feather > 0.0))
    status = bd_session_mask_adjust (p->session, alpha, width, height, width,
                                     threshold > 0.0 ? threshold : -1.0f,
                                     (float) (feather * width / MAX (1, p->layer_width)), &bd);
  if (status != BD_OK)
    {
      g_free (alpha);
      bd_library_set_error (&error, &bd, NULL);
      preview_show_error (p, error);
      return G_SOURCE_REMOVE;
    }

  out = g_malloc ((gsize) width * height * 3);
  bd_preview_paint (view.pixels, width, height, gdk_pixbuf_get_n_channels (p->thumbnail), view.stride,
                    alpha, out);
  g_free (alpha);
  shown = gdk_pixbuf_new_from_data (out, GDK_COLORSPACE_RGB, FALSE, 8, width, height, width * 3,
                                    free_pixels, NULL);
  gtk_image_set_from_pixbuf (GTK_IMAGE (p->image), shown);
  g_object_unref (shown);
  gtk_widget_show (p->image);
  gtk_widget_hide (p->message);

  return G_SOURCE_REMOVE;
}

static void
on_setting_changed (GObject    *config,
                    GParamSpec *pspec,
                    Preview    *p)
{
  if (p->pending)
    g_source_remove (p->pending);
  p->pending = g_timeout_add (SETTLE_MS, preview_update, p);
}

GtkWidget *
bd_preview_new (GimpDrawable        *drawable,
                GimpProcedureConfig *config,
                const gchar         *model_path)
{
  static const gchar *const settings[] = { "refine-edges", "all-people", "threshold", "feather" };
  Preview   *p   = g_new0 (Preview, 1);
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 6);
  GtkWidget *caption;

  p->config     = g_object_ref (config);
  p->model_path = g_strdup (model_path);
  p->thumbnail  = gimp_drawable_get_thumbnail (drawable, PREVIEW_SIZE, PREVIEW_SIZE,
                                               GIMP_PIXBUF_KEEP_ALPHA);
  p->layer_width = gimp_drawable_get_width (drawable);

  caption = gtk_label_new (_("Preview: what is removed shows red"));
  gtk_label_set_xalign (GTK_LABEL (caption), 0.0);
  p->image   = gtk_image_new ();
  p->message = gtk_label_new (NULL);
  gtk_label_set_line_wrap (GTK_LABEL (p->message), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (p->message), 40);

  gtk_box_pack_start (GTK_BOX (box), caption, FALSE, FALSE, 0);
  gtk_box_pack_start (GTK_BOX (box), p->image, TRUE, TRUE, 0);
  gtk_box_pack_start (GTK_BOX (box), p->message, FALSE, FALSE, 0);
  gtk_widget_show (caption);
  gtk_widget_show (box);

  g_object_set_data_full (G_OBJECT (box), "bd-preview", p, (GDestroyNotify) preview_free);
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      gchar *signal = g_strconcat ("notify::", settings[i], NULL);

      g_signal_connect (config, signal, G_CALLBACK (on_setting_changed), p);
      g_free (signal);
    }
  /* After the dialog shows: the first run takes a fraction of a second. */
  p->pending = g_idle_add (preview_update, p);

  return box;
}
