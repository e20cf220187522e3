/* SPDX-License-Identifier: Apache-2.0 */
/* What the canvas draws of a document: previews, and crops of big photos at screen
 * resolution. */
#include "config.h"

#include "bd-document-private.h"
#include "bd-pixels.h"

/* Views of big photos */

typedef struct
{
  GdkPixbuf *photo;       /* the original layer, or */
  GBytes    *rgba;        /* the result layer, premultiplied */
  int        width;       /* of the whole layer */
  int        x, y, w, h;
  int        out_width, out_height;
} ViewJob;

static void
view_job_free (ViewJob *job)
{
  g_clear_object (&job->photo);
  g_clear_pointer (&job->rgba, g_bytes_unref);
  g_free (job);
}

static void
view_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  ViewJob *job = task_data;
  const guint8 *pixels;
  g_autoptr(GBytes) bytes = NULL;
  gsize stride;
  int channels;

  if (job->photo != NULL)
    {
      pixels = gdk_pixbuf_read_pixels (job->photo);
      stride = gdk_pixbuf_get_rowstride (job->photo);
      channels = gdk_pixbuf_get_n_channels (job->photo);
    }
  else
    {
      pixels = g_bytes_get_data (job->rgba, NULL);
      stride = (gsize) job->width * 4;
      channels = 4;
    }

  bytes = bd_pixels_resample (pixels, stride, channels, job->x, job->y, job->w, job->h,
                              job->out_width, job->out_height);
  g_task_return_pointer (task,
                         bd_texture_new (bytes, job->out_width, job->out_height, channels,
                                      job->photo == NULL),
                         g_object_unref);
}

void
bd_document_render_view_async (BdDocument          *self,
                               BdLayer              layer,
                               int                  x,
                               int                  y,
                               int                  width,
                               int                  height,
                               int                  out_width,
                               int                  out_height,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  ViewJob *job;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_document_render_view_async);

  if (self->photo == NULL || (layer == BD_LAYER_RESULT && self->result_bytes == NULL) ||
      x < 0 || y < 0 || width <= 0 || height <= 0 || out_width <= 0 || out_height <= 0 ||
      x + width > gdk_pixbuf_get_width (self->photo) ||
      y + height > gdk_pixbuf_get_height (self->photo))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "Nothing to show there");
      return;
    }

  job = g_new0 (ViewJob, 1);
  if (layer == BD_LAYER_ORIGINAL)
    job->photo = g_object_ref (self->photo);
  else
    job->rgba = g_bytes_ref (self->result_bytes);
  job->width = gdk_pixbuf_get_width (self->photo);
  job->x = x;
  job->y = y;
  job->w = width;
  job->h = height;
  job->out_width = out_width;
  job->out_height = out_height;

  g_task_set_task_data (task, job, (GDestroyNotify) view_job_free);
  g_task_run_in_thread (task, view_thread);
}

GdkTexture *
bd_document_render_view_finish (BdDocument    *self,
                                GAsyncResult  *result,
                                GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

GdkTexture *
bd_document_get_preview (BdDocument *self,
                         BdLayer     layer)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);

  return layer == BD_LAYER_ORIGINAL ? self->original_preview : self->result_preview;
}

