/* SPDX-License-Identifier: Apache-2.0 */
/* Rendering the result for the clipboard and for files: saving a document as it is now,
 * and saving a batch photo that was never opened the same way, without a document. The
 * one compositing step for all of them is bd_compose_job_run(). */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-crop.h"
#include "bd-document-private.h"
#include "bd-image-io.h"
#include "bd-pixels.h"

/* @whole cropped as @job's look says, around the mask as edited. */
static GdkPixbuf *
crop_result (ComposeJob  *job,
             GdkPixbuf   *whole,
             GError     **error)
{
  g_autofree guint8 *alpha = NULL;
  guint32 fill = 0;   /* transparent; a colour fill pads with its colour */

  if (job->look.crop == BD_CROP_NONE)
    return g_object_ref (whole);
  alpha = bd_compose_job_alpha (job, error);
  if (alpha == NULL)
    return NULL;
  if (job->look.background_kind == BD_BACKGROUND_COLOR)
    {
      bd_background background;
      bd_image image_view;

      bd_look_to_background (&job->look, job->photo, &background, &image_view);
      fill = (guint32) background.color[0] << 24 | (guint32) background.color[1] << 16 |
             (guint32) background.color[2] << 8 | background.color[3];
    }
  return bd_crop_apply (whole, alpha, job->look.crop, fill);
}

static void
render_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  ComposeJob *job = task_data;
  g_autoptr(GBytes) bytes = NULL;
  GError *error = NULL;

  bytes = bd_compose_job_run (job, &error);
  if (bytes == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  if (job->look.crop != BD_CROP_NONE)
    {
      g_autoptr(GdkPixbuf) whole = bd_pixels_to_pixbuf (bytes, gdk_pixbuf_get_width (job->photo),
                                                        gdk_pixbuf_get_height (job->photo));
      g_autoptr(GdkPixbuf) cropped = crop_result (job, whole, &error);

      if (cropped == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      g_task_return_pointer (task, gdk_texture_new_for_pixbuf (cropped), g_object_unref);
      return;
    }

  g_task_return_pointer (task,
                         bd_texture_new (bytes, gdk_pixbuf_get_width (job->photo),
                                      gdk_pixbuf_get_height (job->photo), 4, FALSE),
                         g_object_unref);
}

void
bd_document_render_async (BdDocument          *self,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_document_render_async);

  if (self->mask == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                               _("The background has not been removed yet."));
      return;
    }

  if (self->result != NULL && self->result_serial == self->serial && self->look.crop == BD_CROP_NONE)
    {
      g_task_return_pointer (task, g_object_ref (self->result), g_object_unref);
      return;
    }

  g_task_set_task_data (task, bd_document_snapshot (self, FALSE), (GDestroyNotify) bd_compose_job_free);
  g_task_run_in_thread (task, render_thread);
}

GdkTexture *
bd_document_render_finish (BdDocument    *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  ComposeJob *job;
  GFile      *file;
  int         jpeg_quality;
  GFile      *source;      /* for bd_document_save_unedited_async(): the photo to read */
} SaveData;

static void
save_data_free (SaveData *data)
{
  g_clear_pointer (&data->job, bd_compose_job_free);
  g_clear_object (&data->file);
  g_clear_object (&data->source);
  g_free (data);
}

static void
save_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  SaveData *data = task_data;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  GError *error = NULL;

  bytes = bd_compose_job_run (data->job, &error);
  if (bytes == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  pixbuf = bd_pixels_to_pixbuf (bytes,
                                gdk_pixbuf_get_width (data->job->photo),
                                gdk_pixbuf_get_height (data->job->photo));
  if (data->job->look.crop != BD_CROP_NONE)
    {
      GdkPixbuf *cropped = crop_result (data->job, pixbuf, &error);

      if (cropped == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      g_object_unref (pixbuf);
      pixbuf = cropped;
    }
  /* The user confirmed the name in a file dialog: replace, through GIO (any GFile). */
  if (!bd_image_save_file (pixbuf, data->file, data->jpeg_quality, BD_SAVE_REPLACE, cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }

  g_task_return_boolean (task, TRUE);
}

/* Where @data goes, then @thread runs it. Takes @data. */
static void
save_data_run (GTask           *task,
               SaveData        *data,
               GFile           *file,
               int              jpeg_quality,
               GTaskThreadFunc  thread)
{
  data->file = g_object_ref (file);
  data->jpeg_quality = jpeg_quality;

  g_task_set_task_data (task, data, (GDestroyNotify) save_data_free);
  g_task_run_in_thread (task, thread);
}

void
bd_document_save_async (BdDocument          *self,
                        GFile               *file,
                        int                  jpeg_quality,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  SaveData *data;

  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (G_IS_FILE (file));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_document_save_async);

  if (self->mask == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                               _("The background has not been removed yet."));
      return;
    }

  data = g_new0 (SaveData, 1);
  data->job = bd_document_snapshot (self, FALSE);
  save_data_run (task, data, file, jpeg_quality, save_thread);
}

gboolean
bd_document_save_finish (BdDocument    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  SaveData *data;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;

  data = g_task_get_task_data (G_TASK (result));
  bd_document_mark_saved (self, data->job, data->file);
  return TRUE;
}

static void
save_unedited_thread (GTask        *task,
                      gpointer      source_object,
                      gpointer      task_data,
                      GCancellable *cancellable)
{
  SaveData *data = task_data;
  g_autoptr(GdkPixbuf) photo = NULL;
  GError *error = NULL;

  photo = bd_image_load_file (data->source, cancellable, &error);
  if (photo == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  if (g_bytes_get_size (data->job->mask) != (gsize) gdk_pixbuf_get_width (photo) * gdk_pixbuf_get_height (photo))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED,
                               _("The photo changed on disk after its background was removed."));
      return;
    }

  /* From here on, exactly what a document with this photo and mask saves. */
  data->job->photo = g_steal_pointer (&photo);
  save_thread (task, source_object, task_data, cancellable);
}

void
bd_document_save_unedited_async (GFile               *source,
                                 GBytes              *mask,
                                 GFile               *file,
                                 int                  jpeg_quality,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  SaveData *data;

  g_return_if_fail (G_IS_FILE (source));
  g_return_if_fail (mask != NULL);
  g_return_if_fail (G_IS_FILE (file));

  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_document_save_unedited_async);

  data = g_new0 (SaveData, 1);
  data->job = g_new0 (ComposeJob, 1);
  data->job->mask = g_bytes_ref (mask);
  bd_look_init_default (&data->job->look);
  data->source = g_object_ref (source);
  save_data_run (task, data, file, jpeg_quality, save_unedited_thread);
}

gboolean
bd_document_save_unedited_finish (GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
