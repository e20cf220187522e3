/* SPDX-License-Identifier: Apache-2.0 */
/* What the canvas draws of a document: previews of each layer, and crops of big photos at
 * screen resolution. */
#include "config.h"

#include "bd-document-private.h"
#include "bd-mask-view.h"
#include "bd-pixels.h"

/* Views of big photos */

typedef struct
{
  BdLayer    layer;
  GdkPixbuf *photo;       /* for the original and the overlay */
  GBytes    *rgba;        /* the result, premultiplied */
  GBytes    *alpha;       /* the mask, for the mask and the overlay */
  int        width;       /* of the whole layer */
  int        x, y, w, h;
  int        out_width, out_height;
} ViewJob;

static void
view_job_free (ViewJob *job)
{
  g_clear_object (&job->photo);
  g_clear_pointer (&job->rgba, g_bytes_unref);
  g_clear_pointer (&job->alpha, g_bytes_unref);
  g_free (job);
}

static GBytes *
resample_photo (ViewJob *job)
{
  return bd_pixels_resample (gdk_pixbuf_read_pixels (job->photo),
                             gdk_pixbuf_get_rowstride (job->photo),
                             gdk_pixbuf_get_n_channels (job->photo),
                             job->x, job->y, job->w, job->h, job->out_width, job->out_height);
}

static void
view_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  ViewJob *job = task_data;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) alpha = NULL;
  int channels;

  if (job->alpha != NULL)
    alpha = bd_pixels_resample (g_bytes_get_data (job->alpha, NULL), job->width, 1,
                                job->x, job->y, job->w, job->h, job->out_width, job->out_height);

  switch (job->layer)
    {
    case BD_LAYER_ORIGINAL:
      bytes = resample_photo (job);
      channels = gdk_pixbuf_get_n_channels (job->photo);
      break;

    case BD_LAYER_RESULT:
      bytes = bd_pixels_resample (g_bytes_get_data (job->rgba, NULL), (gsize) job->width * 4, 4,
                                  job->x, job->y, job->w, job->h, job->out_width, job->out_height);
      channels = 4;
      break;

    case BD_LAYER_MASK:
      bytes = g_steal_pointer (&alpha);
      channels = 1;
      break;

    case BD_LAYER_OVERLAY:
    default:
      {
        g_autoptr(GBytes) photo = resample_photo (job);
        int photo_channels = gdk_pixbuf_get_n_channels (job->photo);

        bytes = bd_mask_view_overlay (g_bytes_get_data (photo, NULL),
                                      (gsize) job->out_width * photo_channels, photo_channels,
                                      g_bytes_get_data (alpha, NULL), job->out_width, job->out_height);
        channels = 3;
      }
      break;
    }

  g_task_return_pointer (task,
                         bd_texture_new (bytes, job->out_width, job->out_height, channels,
                                         job->layer == BD_LAYER_RESULT),
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
      ((layer == BD_LAYER_MASK || layer == BD_LAYER_OVERLAY) && self->alpha == NULL) ||
      layer == BD_LAYER_UNSURE ||
      x < 0 || y < 0 || width <= 0 || height <= 0 || out_width <= 0 || out_height <= 0 ||
      x + width > gdk_pixbuf_get_width (self->photo) ||
      y + height > gdk_pixbuf_get_height (self->photo))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "Nothing to show there");
      return;
    }

  job = g_new0 (ViewJob, 1);
  job->layer = layer;
  if (layer == BD_LAYER_ORIGINAL || layer == BD_LAYER_OVERLAY)
    job->photo = g_object_ref (self->photo);
  if (layer == BD_LAYER_RESULT)
    job->rgba = g_bytes_ref (self->result_bytes);
  if (layer == BD_LAYER_MASK || layer == BD_LAYER_OVERLAY)
    job->alpha = g_bytes_ref (self->alpha);
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

  switch (layer)
    {
    case BD_LAYER_ORIGINAL:
      return self->original_preview;
    case BD_LAYER_RESULT:
      return self->result_preview;
    case BD_LAYER_MASK:
      return self->mask_preview;
    case BD_LAYER_OVERLAY:
      return self->overlay_preview;
    case BD_LAYER_UNSURE:
      return self->unsure_preview;
    default:
      return NULL;
    }
}

double
bd_document_get_unsure_fraction (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0.0);

  return self->unsure_preview != NULL ? self->unsure_fraction : 0.0;
}

