/* SPDX-License-Identifier: Apache-2.0 */
/* The document's work off the main loop: loading a photo, the removal, compositing the
 * result after each edit, and loading a background image. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-document-private.h"
#include "bd-image-io.h"
#include "bd-mask-view.h"
#include "bd-pixels.h"

static void bd_document_start_compose (BdDocument *self);

/* Compositing */

void
bd_compose_job_free (ComposeJob *job)
{
  g_clear_object (&job->photo);
  g_clear_pointer (&job->mask, g_bytes_unref);
  g_clear_pointer (&job->marks, g_bytes_unref);
  g_clear_pointer (&job->preview_pixels, g_bytes_unref);
  bd_look_clear (&job->look);
  g_free (job);
}

ComposeJob *
bd_document_snapshot (BdDocument *self,
                      gboolean    premultiplied)
{
  ComposeJob *job = g_new0 (ComposeJob, 1);

  job->generation = self->generation;
  job->serial = self->serial;
  job->edit_id = bd_document_top_edit (self);
  job->photo = g_object_ref (self->photo);
  job->mask = g_bytes_ref (self->mask);
  job->marks = self->marks ? g_bytes_ref (self->marks) : NULL;
  bd_look_copy (&job->look, &self->look);
  job->premultiplied = premultiplied;
  job->mask_views = self->mask_views && self->preview_pixels != NULL;
  if (job->mask_views)
    {
      job->preview_pixels = g_bytes_ref (self->preview_pixels);
      job->preview_width = gdk_texture_get_width (self->original_preview);
      job->preview_height = gdk_texture_get_height (self->original_preview);
      job->preview_channels = self->preview_channels;
    }

  return job;
}

/* The network's mask with the user's marks: soft where the network was unsure. */
static guint8 *
compose_job_marked (ComposeJob  *job,
                    GError     **error)
{
  gsize size;
  const guint8 *mask = g_bytes_get_data (job->mask, &size);
  guint8 *alpha = g_try_malloc (size);

  if (alpha == NULL)
    {
      g_set_error_literal (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY,
                           _("There is not enough memory for this photo."));
      return NULL;
    }

  memcpy (alpha, mask, size);

  if (job->marks != NULL)
    {
      const guint8 *marks = g_bytes_get_data (job->marks, NULL);

      for (gsize i = 0; i < size; i++)
        alpha[i] = bd_mark_decide (marks[i], alpha[i]);
    }
  return alpha;
}

/* @marked made decisive (the engine keeps the network's mask soft, so that the unsure areas
 * can be shown: bd-engine.c), then the look's threshold and feather, in place. */
static gboolean
compose_job_finish_alpha (ComposeJob  *job,
                          guint8      *alpha,
                          GError     **error)
{
  int width = gdk_pixbuf_get_width (job->photo);
  int height = gdk_pixbuf_get_height (job->photo);
  bd_error bd_err = { 0 };

  if (!bd_pixels_check (bd_mask_make_decisive (alpha, width, height, width, &bd_err), &bd_err, error))
    return FALSE;
  if ((job->look.threshold > 0 || job->look.feather > 0) &&
      !bd_pixels_check (bd_mask_adjust (alpha, width, height, width,
                                        job->look.threshold > 0 ? job->look.threshold : -1.0f,
                                        job->look.feather, &bd_err),
                        &bd_err, error))
    return FALSE;
  return TRUE;
}

guint8 *
bd_compose_job_alpha (ComposeJob  *job,
                      GError     **error)
{
  guint8 *alpha = compose_job_marked (job, error);

  if (alpha != NULL && !compose_job_finish_alpha (job, alpha, error))
    g_clear_pointer (&alpha, g_free);
  return alpha;
}

GBytes *
bd_compose_job_run (ComposeJob  *job,
                    GError     **error)
{
  g_autofree guint8 *alpha = NULL;
  bd_background background;
  bd_image image_view;

  alpha = bd_compose_job_alpha (job, error);
  if (alpha == NULL)
    return NULL;

  bd_look_to_background (&job->look, job->photo, &background, &image_view);
  return bd_pixels_composite (job->photo, alpha, &background, job->premultiplied, error);
}

typedef struct
{
  GBytes     *bytes;
  GdkTexture *texture;
  GdkTexture *preview;
  GBytes     *preview_bytes;
  GBytes     *alpha;            /* with the job's mask_views: */
  GdkTexture *mask_preview;
  GdkTexture *overlay_preview;
  GdkTexture *unsure_preview;
  double      unsure_fraction;
} Composed;

static void
composed_free (Composed *composed)
{
  g_clear_pointer (&composed->bytes, g_bytes_unref);
  g_clear_object (&composed->texture);
  g_clear_object (&composed->preview);
  g_clear_pointer (&composed->preview_bytes, g_bytes_unref);
  g_clear_pointer (&composed->alpha, g_bytes_unref);
  g_clear_object (&composed->mask_preview);
  g_clear_object (&composed->overlay_preview);
  g_clear_object (&composed->unsure_preview);
  g_free (composed);
}

GdkTexture *
bd_texture_new (GBytes   *bytes,
                int       width,
                int       height,
                int       channels,
                gboolean  premultiplied)
{
  GdkMemoryFormat format = channels == 1 ? GDK_MEMORY_G8
                         : channels == 3 ? GDK_MEMORY_R8G8B8
                         : premultiplied ? GDK_MEMORY_R8G8B8A8_PREMULTIPLIED
                                         : GDK_MEMORY_R8G8B8A8;

  return gdk_memory_texture_new (width, height, format, bytes, (gsize) width * channels);
}

/* A preview of @pixels no longer than BD_DOCUMENT_PREVIEW_SIZE, or NULL when the pixels
 * are small enough themselves. @out_pixels, when given, receives the preview's pixels in
 * packed rows (a packed copy of @pixels when they are small enough). */
static GdkTexture *
preview_new (const guint8  *pixels,
             gsize          stride,
             int            channels,
             int            width,
             int            height,
             gboolean       premultiplied,
             GBytes       **out_pixels)
{
  double scale = (double) BD_DOCUMENT_PREVIEW_SIZE / MAX (width, height);
  int pw = MAX (1, (int) (width * scale + 0.5));
  int ph = MAX (1, (int) (height * scale + 0.5));
  g_autoptr(GBytes) bytes = NULL;
  GdkTexture *texture = NULL;

  if (scale >= 1.0)
    bytes = bd_pixels_resample (pixels, stride, channels, 0, 0, width, height, width, height);
  else
    {
      bytes = bd_pixels_resample (pixels, stride, channels, 0, 0, width, height, pw, ph);
      texture = bd_texture_new (bytes, pw, ph, channels, premultiplied);
    }

  if (out_pixels != NULL)
    *out_pixels = g_steal_pointer (&bytes);
  return texture;
}

/* The mask's pictures at the preview's size: black and white, red over the photo, and the
 * unsure places. */
static void
compose_mask_views (ComposeJob   *job,
                    const guint8 *alpha,
                    const guint8 *marked,
                    Composed     *composed)
{
  int width = gdk_pixbuf_get_width (job->photo);
  int height = gdk_pixbuf_get_height (job->photo);
  int pw = job->preview_width, ph = job->preview_height;
  g_autoptr(GBytes) small = NULL;
  g_autoptr(GBytes) overlay = NULL;
  g_autoptr(GBytes) unsure = NULL;
  /* 1 % of the diagonal, as evaluate.py's ghost share counts it, in preview pixels. */
  int band = (int) ceil (0.01 * hypot (pw, ph));

  composed->alpha = g_bytes_new (alpha, (gsize) width * height);
  small = (pw == width && ph == height) ? g_bytes_ref (composed->alpha)
                                        : bd_pixels_resample (alpha, width, 1, 0, 0, width, height, pw, ph);
  composed->mask_preview = bd_texture_new (small, pw, ph, 1, FALSE);

  overlay = bd_mask_view_overlay (g_bytes_get_data (job->preview_pixels, NULL),
                                  (gsize) pw * job->preview_channels, job->preview_channels,
                                  g_bytes_get_data (small, NULL), pw, ph);
  composed->overlay_preview = bd_texture_new (overlay, pw, ph, 3, FALSE);

  /* Where the network was unsure, from its soft mask with the user's marks: the decisive
   * pass has settled those places in the result, so the result alone would show none. */
  {
    g_autoptr(GBytes) soft = (pw == width && ph == height)
                             ? g_bytes_new (marked, (gsize) width * height)
                             : bd_pixels_resample (marked, width, 1, 0, 0, width, height, pw, ph);

    unsure = bd_mask_view_unsure (g_bytes_get_data (soft, NULL), pw, ph, band,
                                  &composed->unsure_fraction);
  }
  composed->unsure_preview = bd_texture_new (unsure, pw, ph, 4, TRUE);
}

static void
compose_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  ComposeJob *job = task_data;
  int width = gdk_pixbuf_get_width (job->photo);
  int height = gdk_pixbuf_get_height (job->photo);
  GError *error = NULL;
  Composed *composed;
  g_autofree guint8 *alpha = NULL;
  g_autofree guint8 *marked = NULL;
  bd_background background;
  bd_image image_view;

  marked = compose_job_marked (job, &error);
  alpha = marked != NULL ? g_memdup2 (marked, (gsize) width * height) : NULL;
  if (alpha == NULL || !compose_job_finish_alpha (job, alpha, &error))
    {
      g_task_return_error (task, error);
      return;
    }

  composed = g_new0 (Composed, 1);
  bd_look_to_background (&job->look, job->photo, &background, &image_view);
  composed->bytes = bd_pixels_composite (job->photo, alpha, &background, job->premultiplied, &error);
  if (composed->bytes == NULL)
    {
      composed_free (composed);
      g_task_return_error (task, error);
      return;
    }

  if (job->mask_views)
    compose_mask_views (job, alpha, marked, composed);

  composed->texture = bd_texture_new (composed->bytes, width, height, 4, job->premultiplied);
  if (job->premultiplied)
    composed->preview = preview_new (g_bytes_get_data (composed->bytes, NULL), (gsize) width * 4, 4,
                                     width, height, TRUE, &composed->preview_bytes);
  g_task_return_pointer (task, composed, (GDestroyNotify) composed_free);
}

static void
bd_document_compose_cb (GObject      *object,
                        GAsyncResult *result,
                        gpointer      user_data)
{
  BdDocument *self = BD_DOCUMENT (object);
  ComposeJob *job = g_task_get_task_data (G_TASK (result));
  Composed *composed;
  g_autoptr(GError) error = NULL;

  composed = g_task_propagate_pointer (G_TASK (result), &error);
  self->composing = FALSE;

  if (job->generation == self->generation)
    {
      if (composed != NULL)
        {
          g_set_object (&self->result, composed->texture);
          /* Unless a patch of a later edit is on screen already. */
          if (job->serial >= self->preview_serial)
            {
              g_set_object (&self->result_preview, (composed->preview ? composed->preview : composed->texture));
              g_clear_pointer (&self->result_preview_bytes, g_bytes_unref);
              if (composed->preview_bytes != NULL)
                self->result_preview_bytes = g_bytes_ref (composed->preview_bytes);
              self->preview_serial = job->serial;
            }
          g_clear_pointer (&self->result_bytes, g_bytes_unref);
          self->result_bytes = g_bytes_ref (composed->bytes);
          self->result_serial = job->serial;
          g_clear_pointer (&self->alpha, g_bytes_unref);
          self->alpha = composed->alpha ? g_bytes_ref (composed->alpha) : NULL;
          g_set_object (&self->mask_preview, composed->mask_preview);
          g_set_object (&self->overlay_preview, composed->overlay_preview);
          g_set_object (&self->unsure_preview, composed->unsure_preview);
          self->unsure_fraction = composed->unsure_fraction;
          bd_document_notify (self, PROP_RESULT);
        }
      else
        {
          g_free (self->error_message);
          self->error_message = g_strdup (error->message);
          bd_document_notify (self, PROP_ERROR_MESSAGE);
        }
    }

  g_clear_pointer (&composed, composed_free);

  if (self->compose_again)
    bd_document_start_compose (self);
  else
    bd_document_notify (self, PROP_BUSY);
}

/* Makes a new result from the current state; one job at a time, the latest state wins. */
static void
bd_document_start_compose (BdDocument *self)
{
  g_autoptr(GTask) task = NULL;

  if (self->mask == NULL)
    return;

  if (self->composing)
    {
      self->compose_again = TRUE;
      return;
    }

  self->composing = TRUE;
  self->compose_again = FALSE;

  task = g_task_new (self, NULL, bd_document_compose_cb, NULL);
  g_task_set_source_tag (task, bd_document_queue_compose);
  g_task_set_task_data (task, bd_document_snapshot (self, TRUE), (GDestroyNotify) bd_compose_job_free);
  g_task_run_in_thread (task, compose_thread);

  bd_document_notify (self, PROP_BUSY);
}

void
bd_document_set_mask_views (BdDocument *self,
                            gboolean    mask_views)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  mask_views = !!mask_views;
  if (self->mask_views == mask_views)
    return;

  self->mask_views = mask_views;
  /* The pictures of the result that is there now; no edit. */
  if (mask_views && self->mask_preview == NULL)
    bd_document_start_compose (self);
}

/* Counts an edit and starts making its result. */
void
bd_document_queue_compose (BdDocument *self)
{
  self->serial++;
  bd_document_start_compose (self);
}

/* Loading and removal */

static void
bd_document_set_state (BdDocument      *self,
                       BdDocumentState  state)
{
  if (self->state == state)
    return;

  self->state = state;
  bd_document_notify (self, PROP_STATE);
  bd_document_notify_history (self);
}

static void
bd_document_fail (BdDocument *self,
                  GError     *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* A second removal stopped: the first one's mask is still there. */
      bd_document_set_state (self, self->mask ? BD_DOCUMENT_STATE_READY
                                   : self->photo ? BD_DOCUMENT_STATE_STOPPED
                                   : BD_DOCUMENT_STATE_EMPTY);
      return;
    }

  g_free (self->error_message);
  self->error_message = g_strdup (error->message);
  bd_document_notify (self, PROP_ERROR_MESSAGE);
  bd_document_set_state (self, BD_DOCUMENT_STATE_FAILED);
}

static void
bd_document_set_progress (BdDocument *self,
                          double      progress)
{
  self->progress = progress;
  bd_document_notify (self, PROP_PROGRESS);
}

static void
on_engine_progress (GObject *target,
                    double   fraction)
{
  BdDocument *self = BD_DOCUMENT (target);

  if (self->state == BD_DOCUMENT_STATE_SEGMENTING)
    bd_document_set_progress (self, fraction);
}

/* Makes @mask the network's answer and the document ready for edits. */
static void
bd_document_take_mask (BdDocument *self,
                       GBytes     *mask,
                       const char *device,
                       double      seconds)
{
  g_clear_pointer (&self->mask, g_bytes_unref);
  self->mask = mask;
  g_free (self->device);
  self->device = g_strdup (device);
  self->seconds = seconds;

  g_object_freeze_notify (G_OBJECT (self));
  bd_document_notify (self, PROP_DEVICE_DESCRIPTION);
  bd_document_notify (self, PROP_SECONDS);
  bd_document_set_progress (self, 1.0);
  bd_document_set_state (self, BD_DOCUMENT_STATE_READY);
  bd_document_queue_compose (self);
  self->look_serial = self->serial;   /* a new mask: no patch of the old preview */
  g_object_thaw_notify (G_OBJECT (self));
}

typedef struct
{
  BdDocument *self;
  guint       generation;
} Pending;

static void
bd_document_segment_cb (GObject      *object,
                        GAsyncResult *result,
                        gpointer      user_data)
{
  Pending *pending = user_data;
  g_autoptr(BdDocument) self = pending->self;
  g_autoptr(BdSegmentation) segmentation = NULL;
  g_autoptr(GError) error = NULL;
  guint generation = pending->generation;

  g_free (pending);
  segmentation = bd_engine_segment_finish (BD_ENGINE (object), result, &error);
  if (generation != self->generation)
    return;

  if (segmentation == NULL)
    {
      bd_document_fail (self, error);
      return;
    }

  bd_document_take_mask (self, g_steal_pointer (&segmentation->alpha),
                         segmentation->device, segmentation->seconds);
}

static void
bd_document_segment (BdDocument *self)
{
  Pending *pending = g_new0 (Pending, 1);

  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();

  bd_document_set_progress (self, 0.0);
  bd_document_set_state (self, BD_DOCUMENT_STATE_SEGMENTING);

  pending->self = g_object_ref (self);
  pending->generation = self->generation;
  bd_engine_segment_async (self->engine, self->photo,
                           on_engine_progress, G_OBJECT (self),
                           self->cancellable,
                           bd_document_segment_cb, pending);
}

typedef struct
{
  GFile      *file;
  GBytes     *bytes;
  GdkPixbuf  *photo;
  GdkTexture *original;
  GdkTexture *preview;
  GBytes     *preview_pixels;
} LoadData;

static void
load_data_free (LoadData *data)
{
  g_clear_object (&data->file);
  g_clear_pointer (&data->bytes, g_bytes_unref);
  g_clear_object (&data->photo);
  g_clear_object (&data->original);
  g_clear_object (&data->preview);
  g_clear_pointer (&data->preview_pixels, g_bytes_unref);
  g_free (data);
}

static void
load_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  LoadData *data = task_data;
  GError *error = NULL;

  data->photo = data->bytes ? bd_image_load_bytes (data->bytes, &error)
                            : bd_image_load_file (data->file, cancellable, &error);
  if (data->photo == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  data->original = gdk_texture_new_for_pixbuf (data->photo);
  data->preview = preview_new (gdk_pixbuf_read_pixels (data->photo),
                               gdk_pixbuf_get_rowstride (data->photo),
                               gdk_pixbuf_get_n_channels (data->photo),
                               gdk_pixbuf_get_width (data->photo),
                               gdk_pixbuf_get_height (data->photo), FALSE, &data->preview_pixels);
  g_task_return_boolean (task, TRUE);
}

static void
bd_document_load_cb (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  BdDocument *self = BD_DOCUMENT (object);
  LoadData *data = g_task_get_task_data (G_TASK (result));
  BdSegmentation *known = user_data;
  g_autoptr(GError) error = NULL;
  guint generation = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (result), "generation"));
  gsize mask_size = 0;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (generation == self->generation)
        bd_document_fail (self, error);
      g_clear_pointer (&known, bd_segmentation_free);
      return;
    }

  if (generation != self->generation)
    {
      g_clear_pointer (&known, bd_segmentation_free);
      return;
    }

  g_set_object (&self->photo, data->photo);
  g_set_object (&self->original, data->original);
  g_set_object (&self->original_preview, (data->preview ? data->preview : data->original));
  g_clear_pointer (&self->preview_pixels, g_bytes_unref);
  self->preview_pixels = g_bytes_ref (data->preview_pixels);
  self->preview_channels = gdk_pixbuf_get_n_channels (data->photo);

  g_object_freeze_notify (G_OBJECT (self));
  bd_document_notify (self, PROP_ORIGINAL);
  bd_document_notify (self, PROP_WIDTH);
  bd_document_notify (self, PROP_HEIGHT);

  if (known != NULL)
    g_bytes_get_data (known->alpha, &mask_size);

  if (known != NULL &&
      mask_size == (gsize) gdk_pixbuf_get_width (data->photo) * gdk_pixbuf_get_height (data->photo))
    bd_document_take_mask (self, g_steal_pointer (&known->alpha), known->device, known->seconds);
  else
    bd_document_segment (self);

  g_object_thaw_notify (G_OBJECT (self));
  g_clear_pointer (&known, bd_segmentation_free);
}

/* Forgets the current photo and starts loading a new one. */
static void
bd_document_open (BdDocument     *self,
                  GFile          *file,
                  GBytes         *bytes,
                  const char     *title,
                  BdSegmentation *known)
{
  g_autoptr(GTask) task = NULL;
  Look look;
  LoadData *data;

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  self->cancellable = g_cancellable_new ();
  self->generation++;

  g_object_freeze_notify (G_OBJECT (self));

  g_clear_object (&self->photo);
  g_clear_object (&self->original);
  g_clear_object (&self->original_preview);
  g_clear_object (&self->result);
  g_clear_object (&self->result_preview);
  g_clear_pointer (&self->result_preview_bytes, g_bytes_unref);
  self->preview_serial = 0;
  g_clear_pointer (&self->result_bytes, g_bytes_unref);
  g_clear_pointer (&self->preview_pixels, g_bytes_unref);
  g_clear_pointer (&self->alpha, g_bytes_unref);
  g_clear_object (&self->mask_preview);
  g_clear_object (&self->overlay_preview);
  g_clear_object (&self->unsure_preview);
  self->unsure_fraction = 0;
  g_clear_pointer (&self->mask, g_bytes_unref);
  g_clear_pointer (&self->marks, g_bytes_unref);
  g_clear_pointer (&self->error_message, g_free);
  g_clear_pointer (&self->device, g_free);
  self->seconds = 0;
  self->compose_again = FALSE;
  self->saved_edit = 0;
  g_clear_object (&self->saved_file);
  bd_document_clear_history (self);

  /* A new photo starts as it came: a clean mask, no background of the last photo's (it
   * looked like part of the new photo to users who had not picked it for this one). */
  bd_look_init_default (&look);
  bd_document_apply_look (self, &look);
  bd_look_clear (&look);

  g_set_object (&self->file, file);
  g_free (self->title);
  self->title = g_strdup (title);

  for (guint i = PROP_TITLE; i <= PROP_RESULT; i++)
    bd_document_notify (self, i);
  bd_document_set_progress (self, 0.0);
  bd_document_set_state (self, BD_DOCUMENT_STATE_LOADING);

  g_object_thaw_notify (G_OBJECT (self));

  data = g_new0 (LoadData, 1);
  data->file = file ? g_object_ref (file) : NULL;
  data->bytes = bytes ? g_bytes_ref (bytes) : NULL;

  task = g_task_new (self, self->cancellable, bd_document_load_cb, known);
  g_task_set_source_tag (task, bd_document_open);
  g_task_set_task_data (task, data, (GDestroyNotify) load_data_free);
  g_object_set_data (G_OBJECT (task), "generation", GUINT_TO_POINTER (self->generation));
  g_task_run_in_thread (task, load_thread);
}

static char *
file_title (GFile *file)
{
  g_autoptr(GFileInfo) info = NULL;

  /* Display names of local files come without I/O; others fall back to the base name. */
  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_DISPLAY_NAME,
                            G_FILE_QUERY_INFO_NONE, NULL, NULL);
  if (info != NULL)
    return g_strdup (g_file_info_get_display_name (info));

  return g_file_get_basename (file);
}

void
bd_document_open_file (BdDocument *self,
                       GFile      *file)
{
  g_autofree char *title = NULL;

  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (G_IS_FILE (file));

  title = file_title (file);
  bd_document_open (self, file, NULL, title, NULL);
}

void
bd_document_open_bytes (BdDocument *self,
                        GBytes     *bytes,
                        const char *title)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (bytes != NULL);

  bd_document_open (self, NULL, bytes, title ? title : _("Pasted Image"), NULL);
}

void
bd_document_open_with_mask (BdDocument *self,
                            GFile      *file,
                            GBytes     *mask,
                            const char *device,
                            double      seconds)
{
  g_autofree char *title = NULL;
  BdSegmentation *known;

  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (G_IS_FILE (file));
  g_return_if_fail (mask != NULL);

  known = g_new0 (BdSegmentation, 1);
  known->alpha = g_bytes_ref (mask);
  known->device = g_strdup (device);
  known->seconds = seconds;

  title = file_title (file);
  bd_document_open (self, file, NULL, title, known);
}

void
bd_document_cancel (BdDocument *self)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
}

void
bd_document_retry (BdDocument *self)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (self->photo == NULL)
    {
      /* Loading failed: start again from the file. */
      if (self->file != NULL)
        bd_document_open_file (self, self->file);
      return;
    }

  if (self->state == BD_DOCUMENT_STATE_LOADING || self->state == BD_DOCUMENT_STATE_SEGMENTING)
    return;

  self->generation++;
  g_clear_pointer (&self->error_message, g_free);
  bd_document_segment (self);
}

typedef struct
{
  GFile     *file;
  GdkPixbuf *image;
  char      *name;
} BackgroundData;

static void
background_data_free (BackgroundData *data)
{
  g_clear_object (&data->file);
  g_clear_object (&data->image);
  g_free (data->name);
  g_free (data);
}

static void
background_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  BackgroundData *data = task_data;
  GError *error = NULL;

  data->image = bd_image_load_file (data->file, cancellable, &error);
  if (data->image == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  data->name = file_title (data->file);
  g_task_return_boolean (task, TRUE);
}

void
bd_document_set_background_file_async (BdDocument          *self,
                                       GFile               *file,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  BackgroundData *data;

  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (G_IS_FILE (file));

  data = g_new0 (BackgroundData, 1);
  data->file = g_object_ref (file);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_document_set_background_file_async);
  g_task_set_task_data (task, data, (GDestroyNotify) background_data_free);
  g_task_run_in_thread (task, background_thread);
}

gboolean
bd_document_set_background_file_finish (BdDocument    *self,
                                        GAsyncResult  *result,
                                        GError       **error)
{
  BackgroundData *data;
  Look look;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;

  data = g_task_get_task_data (G_TASK (result));
  bd_look_copy (&look, &self->look);
  g_set_object (&look.background_image, data->image);
  g_free (look.background_name);
  look.background_name = g_strdup (data->name);
  look.background_kind = BD_BACKGROUND_IMAGE;
  bd_document_change_look (self, &look, 0);
  bd_look_clear (&look);

  return TRUE;
}

