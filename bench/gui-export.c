/* SPDX-License-Identifier: Apache-2.0 */
/* How long the app's batch list takes to export its cut-outs (PNG), as the batch page's
 * "Export All" does: N photos of ../shared/datasets/ccp-person scaled to 6 MP, their masks made
 * first (not timed), then bd_batch_export_async into a new folder, timed to its end.
 *
 *   bench-gui-export [N]        (default 8; BACKDROP_MODEL names the model)
 *
 * No display is needed: the list's export is its model's (gui/bd-batch.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "bd-batch.h"
#include "bd-engine.h"
#include "bd-image-io.h"

#define WIDTH  2000
#define HEIGHT 3000

static gboolean exported;
static guint    n_exported, n_failed;

static void
on_exported (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!bd_batch_export_finish (BD_BATCH (object), result, &n_exported, &n_failed, &error))
    g_error ("The export failed: %s", error->message);
  exported = TRUE;
}

static int
by_name (gconstpointer a,
         gconstpointer b)
{
  return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

int
main (int    argc,
      char **argv)
{
  int n = argc > 1 ? atoi (argv[1]) : 8;
  const char *source_dir = "../shared/datasets/ccp-person/images";
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;
  g_autofree char *tmp = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(BdEngine) engine = NULL;
  g_autoptr(BdBatch) batch = NULL;
  g_autoptr(GFile) folder = NULL;
  const char *name;
  gint64 t0;

  /* Each call its own error: a GError is set once. */
  if ((dir = g_dir_open (source_dir, 0, &error)) == NULL ||
      (tmp = g_dir_make_tmp ("bench-gui-export-XXXXXX", &error)) == NULL)
    g_error ("%s", error->message);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, by_name);
  for (int i = 0; i < n && i < (int) names->len; i++)
    {
      g_autofree char *src = g_build_filename (source_dir, names->pdata[i], NULL);
      g_autofree char *path = g_strdup_printf ("%s/photo%02d.jpg", tmp, i);
      g_autoptr(GFile) file = g_file_new_for_path (src);
      g_autoptr(GdkPixbuf) small = bd_image_load_file (file, NULL, &error);
      g_autoptr(GdkPixbuf) photo = NULL;

      if (small == NULL)
        g_error ("%s: %s", src, error->message);
      photo = gdk_pixbuf_scale_simple (small, WIDTH, HEIGHT, GDK_INTERP_BILINEAR);
      if (!gdk_pixbuf_save (photo, path, "jpeg", &error, "quality", "92", NULL))
        g_error ("%s", error->message);
      g_ptr_array_add (files, g_file_new_for_path (path));
    }

  engine = bd_engine_new (g_getenv ("BACKDROP_MODEL"));
  batch = bd_batch_new (engine);
  t0 = g_get_monotonic_time ();
  bd_batch_add_files (batch, (GFile **) files->pdata, files->len);
  while (bd_batch_get_busy (batch))
    g_main_context_iteration (NULL, TRUE);
  printf ("%u photos of %d x %d, masks made in %.1f s\n", files->len, WIDTH, HEIGHT,
          (g_get_monotonic_time () - t0) / 1e6);

  out = g_build_filename (tmp, "out", NULL);
  g_mkdir (out, 0700);
  folder = g_file_new_for_path (out);
  t0 = g_get_monotonic_time ();
  bd_batch_export_async (batch, folder, NULL, "png", 90, NULL, on_exported, NULL);
  while (!exported)
    g_main_context_iteration (NULL, TRUE);
  double seconds = (g_get_monotonic_time () - t0) / 1e6;
  printf ("export: %u written, %u failed in %.2f s (%.0f ms a photo) on %u cores\n", n_exported, n_failed, seconds,
          1e3 * seconds / MAX (n_exported, 1), g_get_num_processors ());

  {
    g_autoptr(GDir) written = g_dir_open (out, 0, NULL);

    while (written && (name = g_dir_read_name (written)) != NULL)
      {
        g_autofree char *path = g_build_filename (out, name, NULL);

        g_unlink (path);
      }
  }
  g_rmdir (out);
  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *path = g_file_get_path (files->pdata[i]);

      g_unlink (path);
    }
  g_rmdir (tmp);
  return 0;
}
