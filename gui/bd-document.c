/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-document-private.h"
#include "bd-image-io.h"
#include "bd-pixels.h"

#define MAX_UNDO      64
#define MERGE_USEC    (1200 * 1000)  /* slider moves closer together than this are one edit */

G_DEFINE_FINAL_TYPE (BdDocument, bd_document, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE (BdDocumentState, bd_document_state,
  G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_EMPTY, "empty"),
  G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_LOADING, "loading"),
  G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_SEGMENTING, "segmenting"),
  G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_READY, "ready"),
  G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_STOPPED, "stopped"),
  G_DEFINE_ENUM_VALUE (BD_DOCUMENT_STATE_FAILED, "failed"))

enum {
  PROP_0,
  PROP_ENGINE,
  PROP_STATE,
  PROP_PROGRESS,
  PROP_TITLE,
  PROP_FILE,
  PROP_WIDTH,
  PROP_HEIGHT,
  PROP_DEVICE_DESCRIPTION,
  PROP_SECONDS,
  PROP_ERROR_MESSAGE,
  PROP_ORIGINAL,
  PROP_RESULT,
  PROP_BUSY,
  PROP_CAN_UNDO,
  PROP_CAN_REDO,
  PROP_THRESHOLD,
  PROP_FEATHER,
  PROP_BACKGROUND_KIND,
  PROP_BACKGROUND_COLOR,
  PROP_BACKGROUND_BLUR,
  PROP_BACKGROUND_NAME,
  PROP_MODIFIED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const GdkRGBA default_background_color = { 1.0f, 1.0f, 1.0f, 1.0f };

static void bd_document_queue_compose (BdDocument *self);
static void bd_document_start_compose (BdDocument *self);

/* Looks */

void
bd_look_init_default (Look *look)
{
  memset (look, 0, sizeof *look);
  look->background_kind = BD_BACKGROUND_TRANSPARENT;
  look->background_color = default_background_color;
  look->background_blur = 30;
}

void
bd_look_copy (Look       *dest,
              const Look *src)
{
  *dest = *src;
  if (dest->background_image != NULL)
    g_object_ref (dest->background_image);
  dest->background_name = g_strdup (src->background_name);
}

void
bd_look_clear (Look *look)
{
  g_clear_object (&look->background_image);
  g_clear_pointer (&look->background_name, g_free);
}

static gboolean
look_equal (const Look *a,
            const Look *b)
{
  return a->threshold == b->threshold &&
         a->feather == b->feather &&
         a->background_kind == b->background_kind &&
         gdk_rgba_equal (&a->background_color, &b->background_color) &&
         a->background_blur == b->background_blur &&
         a->background_image == b->background_image;
}

/* The library's background for @look; @image_view receives the image's view. */
void
bd_look_to_background (const Look    *look,
                       GdkPixbuf     *photo,
                       bd_background *background,
                       bd_image      *image_view)
{
  int long_side = MAX (gdk_pixbuf_get_width (photo), gdk_pixbuf_get_height (photo));

  memset (background, 0, sizeof *background);
  background->kind = look->background_kind;

  switch (look->background_kind)
    {
    case BD_BACKGROUND_COLOR:
      background->color[0] = CLAMP (look->background_color.red, 0.f, 1.f) * 255.f + .5f;
      background->color[1] = CLAMP (look->background_color.green, 0.f, 1.f) * 255.f + .5f;
      background->color[2] = CLAMP (look->background_color.blue, 0.f, 1.f) * 255.f + .5f;
      background->color[3] = CLAMP (look->background_color.alpha, 0.f, 1.f) * 255.f + .5f;
      break;

    case BD_BACKGROUND_BLUR:
      background->blur_radius = look->background_blur / 1000.0 * long_side;
      break;

    case BD_BACKGROUND_IMAGE:
      if (look->background_image != NULL)
        {
          bd_pixels_view (look->background_image, image_view);
          background->image = image_view;
        }
      else
        background->kind = BD_BACKGROUND_TRANSPARENT;
      break;

    default:
      background->kind = BD_BACKGROUND_TRANSPARENT;
      break;
    }
}

/* Marks */

static GBytes *
marks_copy_area (GBytes             *marks,
                 int                 width,
                 const GdkRectangle *area)
{
  const guint8 *src;
  guint8 *dest;

  if (marks == NULL)
    return NULL;

  src = g_bytes_get_data (marks, NULL);
  dest = g_malloc ((gsize) area->width * area->height);
  for (int y = 0; y < area->height; y++)
    memcpy (dest + (gsize) y * area->width,
            src + (gsize) (area->y + y) * width + area->x,
            area->width);

  return g_bytes_new_take (dest, (gsize) area->width * area->height);
}

/* A copy of @marks (or of none) with @area replaced by @area_marks (or cleared). */
static guint8 *
marks_dup_with_area (GBytes             *marks,
                     int                 width,
                     int                 height,
                     const GdkRectangle *area,
                     GBytes             *area_marks)
{
  gsize size = (gsize) width * height;
  guint8 *dest = marks ? g_memdup2 (g_bytes_get_data (marks, NULL), size) : g_malloc0 (size);
  const guint8 *src = area_marks ? g_bytes_get_data (area_marks, NULL) : NULL;

  for (int y = 0; y < area->height; y++)
    {
      guint8 *row = dest + (gsize) (area->y + y) * width + area->x;

      if (src != NULL)
        memcpy (row, src + (gsize) y * area->width, area->width);
      else
        memset (row, BD_MARK_NONE, area->width);
    }

  return dest;
}

/* Edits */

static void
edit_free (Edit *edit)
{
  bd_look_clear (&edit->before);
  bd_look_clear (&edit->after);
  g_clear_pointer (&edit->marks_before, g_bytes_unref);
  g_clear_pointer (&edit->marks_after, g_bytes_unref);
  g_free (edit);
}

static guint64
bd_document_top_edit (BdDocument *self)
{
  Edit *top = g_queue_peek_head (&self->undo);

  return top != NULL ? top->id : 0;
}

static void
bd_document_notify_history (BdDocument *self)
{
  gboolean modified = self->state == BD_DOCUMENT_STATE_READY &&
                      bd_document_top_edit (self) != self->saved_edit;

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_UNDO]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAN_REDO]);
  if (modified != self->modified)
    {
      self->modified = modified;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODIFIED]);
    }
}

void
bd_document_mark_saved (BdDocument *self,
                        ComposeJob *job,
                        GFile      *file)
{
  if (job->generation != self->generation)
    return;

  self->saved_edit = job->edit_id;
  g_set_object (&self->saved_file, file);
  bd_document_notify_history (self);
}

static void
bd_document_clear_history (BdDocument *self)
{
  g_queue_clear_full (&self->undo, (GDestroyNotify) edit_free);
  g_queue_clear_full (&self->redo, (GDestroyNotify) edit_free);
  bd_document_notify_history (self);
}

static void
bd_document_push_edit (BdDocument *self,
                       Edit       *edit)
{
  edit->id = ++self->last_edit_id;
  g_queue_push_head (&self->undo, edit);
  while (g_queue_get_length (&self->undo) > MAX_UNDO)
    edit_free (g_queue_pop_tail (&self->undo));
  g_queue_clear_full (&self->redo, (GDestroyNotify) edit_free);
  bd_document_notify_history (self);
}

/* Makes @look the current look, with notifications for what changed. */
static void
bd_document_apply_look (BdDocument *self,
                        const Look *look)
{
  Look old = self->look;
  GObject *object = G_OBJECT (self);

  bd_look_copy (&self->look, look);

  g_object_freeze_notify (object);
  if (old.threshold != look->threshold)
    g_object_notify_by_pspec (object, properties[PROP_THRESHOLD]);
  if (old.feather != look->feather)
    g_object_notify_by_pspec (object, properties[PROP_FEATHER]);
  if (old.background_kind != look->background_kind)
    g_object_notify_by_pspec (object, properties[PROP_BACKGROUND_KIND]);
  if (!gdk_rgba_equal (&old.background_color, &look->background_color))
    g_object_notify_by_pspec (object, properties[PROP_BACKGROUND_COLOR]);
  if (old.background_blur != look->background_blur)
    g_object_notify_by_pspec (object, properties[PROP_BACKGROUND_BLUR]);
  if (g_strcmp0 (old.background_name, look->background_name) != 0)
    g_object_notify_by_pspec (object, properties[PROP_BACKGROUND_NAME]);
  g_object_thaw_notify (object);

  bd_look_clear (&old);
}

/* Records and applies a change of look; moves of one slider in quick succession merge. */
static void
bd_document_change_look (BdDocument *self,
                         const Look *look,
                         guint       merge_key)
{
  Edit *top = g_queue_peek_head (&self->undo);
  gint64 now = g_get_monotonic_time ();

  if (look_equal (look, &self->look))
    return;

  /* The saved state is not merged into: undoing back to it must stay possible. */
  if (top != NULL && merge_key != 0 && top->merge_key == merge_key && top->id != self->saved_edit &&
      g_queue_is_empty (&self->redo) && now - top->time < MERGE_USEC)
    {
      bd_look_clear (&top->after);
      bd_look_copy (&top->after, look);
      top->time = now;
    }
  else
    {
      Edit *edit = g_new0 (Edit, 1);

      bd_look_copy (&edit->before, &self->look);
      bd_look_copy (&edit->after, look);
      edit->merge_key = merge_key;
      edit->time = now;
      bd_document_push_edit (self, edit);
    }

  bd_document_apply_look (self, look);
  bd_document_queue_compose (self);
}

/* Applies one side of @edit: its look, and its marks in its area. */
static void
bd_document_apply_edit (BdDocument *self,
                        Edit       *edit,
                        gboolean    forward)
{
  if (edit->area.width > 0 && edit->area.height > 0)
    {
      int width = gdk_pixbuf_get_width (self->photo);
      int height = gdk_pixbuf_get_height (self->photo);
      guint8 *marks = marks_dup_with_area (self->marks, width, height, &edit->area,
                                           forward ? edit->marks_after : edit->marks_before);

      g_clear_pointer (&self->marks, g_bytes_unref);
      self->marks = g_bytes_new_take (marks, (gsize) width * height);
    }

  bd_document_apply_look (self, forward ? &edit->after : &edit->before);
  bd_document_queue_compose (self);
}

/* Compositing */

void
bd_compose_job_free (ComposeJob *job)
{
  g_clear_object (&job->photo);
  g_clear_pointer (&job->mask, g_bytes_unref);
  g_clear_pointer (&job->marks, g_bytes_unref);
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

  return job;
}

/* The mask as the user edited it: marks, then threshold and feather. Any thread. */
static guint8 *
compose_job_alpha (ComposeJob  *job,
                   GError     **error)
{
  gsize size;
  const guint8 *mask = g_bytes_get_data (job->mask, &size);
  guint8 *alpha = g_try_malloc (size);
  int width = gdk_pixbuf_get_width (job->photo);
  int height = gdk_pixbuf_get_height (job->photo);
  bd_error bd_err = { 0 };

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
        {
          if (marks[i] == BD_MARK_KEEP)
            alpha[i] = 255;
          else if (marks[i] == BD_MARK_REMOVE)
            alpha[i] = 0;
        }
    }

  if ((job->look.threshold > 0 || job->look.feather > 0) &&
      !bd_pixels_check (bd_mask_adjust (alpha, width, height, width,
                                        job->look.threshold > 0 ? job->look.threshold : -1.0f,
                                        job->look.feather, &bd_err),
                        &bd_err, error))
    {
      g_free (alpha);
      return NULL;
    }

  return alpha;
}

GBytes *
bd_compose_job_run (ComposeJob  *job,
                    GError     **error)
{
  g_autofree guint8 *alpha = NULL;
  bd_background background;
  bd_image image_view;

  alpha = compose_job_alpha (job, error);
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
} Composed;

static void
composed_free (Composed *composed)
{
  g_clear_pointer (&composed->bytes, g_bytes_unref);
  g_clear_object (&composed->texture);
  g_clear_object (&composed->preview);
  g_free (composed);
}

GdkTexture *
bd_texture_new (GBytes   *bytes,
                int       width,
                int       height,
                int       channels,
                gboolean  premultiplied)
{
  GdkMemoryFormat format = channels == 3 ? GDK_MEMORY_R8G8B8
                         : premultiplied ? GDK_MEMORY_R8G8B8A8_PREMULTIPLIED
                                         : GDK_MEMORY_R8G8B8A8;

  return gdk_memory_texture_new (width, height, format, bytes, (gsize) width * channels);
}

/* A preview of @pixels no longer than BD_DOCUMENT_PREVIEW_SIZE, or NULL when the pixels
 * are small enough themselves. */
static GdkTexture *
preview_new (const guint8 *pixels,
             gsize         stride,
             int           channels,
             int           width,
             int           height,
             gboolean      premultiplied)
{
  double scale = (double) BD_DOCUMENT_PREVIEW_SIZE / MAX (width, height);
  int pw = MAX (1, (int) (width * scale + 0.5));
  int ph = MAX (1, (int) (height * scale + 0.5));
  g_autoptr(GBytes) bytes = NULL;

  if (scale >= 1.0)
    return NULL;

  bytes = bd_pixels_resample (pixels, stride, channels, 0, 0, width, height, pw, ph);
  return bd_texture_new (bytes, pw, ph, channels, premultiplied);
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
  Composed *composed = g_new0 (Composed, 1);

  composed->bytes = bd_compose_job_run (job, &error);
  if (composed->bytes == NULL)
    {
      composed_free (composed);
      g_task_return_error (task, error);
      return;
    }

  composed->texture = bd_texture_new (composed->bytes, width, height, 4, job->premultiplied);
  if (job->premultiplied)
    composed->preview = preview_new (g_bytes_get_data (composed->bytes, NULL), (gsize) width * 4, 4,
                                     width, height, TRUE);
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
          g_set_object (&self->result_preview, (composed->preview ? composed->preview : composed->texture));
          g_clear_pointer (&self->result_bytes, g_bytes_unref);
          self->result_bytes = g_bytes_ref (composed->bytes);
          self->result_serial = job->serial;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESULT]);
        }
      else
        {
          g_free (self->error_message);
          self->error_message = g_strdup (error->message);
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR_MESSAGE]);
        }
    }

  g_clear_pointer (&composed, composed_free);

  if (self->compose_again)
    bd_document_start_compose (self);
  else
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
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

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* Counts an edit and starts making its result. */
static void
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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  bd_document_notify_history (self);
}

static void
bd_document_fail (BdDocument *self,
                  GError     *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      bd_document_set_state (self, self->photo ? BD_DOCUMENT_STATE_STOPPED
                                               : BD_DOCUMENT_STATE_EMPTY);
      return;
    }

  g_free (self->error_message);
  self->error_message = g_strdup (error->message);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ERROR_MESSAGE]);
  bd_document_set_state (self, BD_DOCUMENT_STATE_FAILED);
}

static void
bd_document_set_progress (BdDocument *self,
                          double      progress)
{
  self->progress = progress;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROGRESS]);
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
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEVICE_DESCRIPTION]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SECONDS]);
  bd_document_set_progress (self, 1.0);
  bd_document_set_state (self, BD_DOCUMENT_STATE_READY);
  bd_document_queue_compose (self);
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
} LoadData;

static void
load_data_free (LoadData *data)
{
  g_clear_object (&data->file);
  g_clear_pointer (&data->bytes, g_bytes_unref);
  g_clear_object (&data->photo);
  g_clear_object (&data->original);
  g_clear_object (&data->preview);
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
                            : bd_pixels_load_file (data->file, cancellable, &error);
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
                               gdk_pixbuf_get_height (data->photo), FALSE);
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

  g_object_freeze_notify (G_OBJECT (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ORIGINAL]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WIDTH]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_HEIGHT]);

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
  g_clear_pointer (&self->result_bytes, g_bytes_unref);
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
    g_object_notify_by_pspec (G_OBJECT (self), properties[i]);
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

/* Brush strokes */

static double
distance2_to_segment (double                  x,
                      double                  y,
                      const graphene_point_t *a,
                      const graphene_point_t *b)
{
  double dx = b->x - a->x, dy = b->y - a->y;
  double len2 = dx * dx + dy * dy;
  double t = len2 > 0 ? ((x - a->x) * dx + (y - a->y) * dy) / len2 : 0;
  double px, py;

  t = CLAMP (t, 0.0, 1.0);
  px = a->x + t * dx - x;
  py = a->y + t * dy - y;
  return px * px + py * py;
}

guint64
bd_document_paint_stroke (BdDocument             *self,
                          BdMark                  mark,
                          double                  radius,
                          const graphene_point_t *points,
                          guint                   n_points)
{
  int width, height;
  double x0 = G_MAXDOUBLE, y0 = G_MAXDOUBLE, x1 = -G_MAXDOUBLE, y1 = -G_MAXDOUBLE;
  GdkRectangle area;
  guint8 *marks;
  Edit *edit;

  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  g_return_val_if_fail (mark == BD_MARK_KEEP || mark == BD_MARK_REMOVE, 0);

  if (self->state != BD_DOCUMENT_STATE_READY || n_points == 0 || !(radius > 0))
    return 0;

  width = gdk_pixbuf_get_width (self->photo);
  height = gdk_pixbuf_get_height (self->photo);

  for (guint i = 0; i < n_points; i++)
    {
      x0 = MIN (x0, points[i].x);
      y0 = MIN (y0, points[i].y);
      x1 = MAX (x1, points[i].x);
      y1 = MAX (y1, points[i].y);
    }

  area.x = CLAMP ((int) floor (x0 - radius), 0, width);
  area.y = CLAMP ((int) floor (y0 - radius), 0, height);
  area.width = CLAMP ((int) ceil (x1 + radius), 0, width) - area.x;
  area.height = CLAMP ((int) ceil (y1 + radius), 0, height) - area.y;
  if (area.width <= 0 || area.height <= 0)
    return 0;

  edit = g_new0 (Edit, 1);
  bd_look_copy (&edit->before, &self->look);
  bd_look_copy (&edit->after, &self->look);
  edit->area = area;
  edit->time = g_get_monotonic_time ();
  edit->marks_before = marks_copy_area (self->marks, width, &area);

  marks = self->marks ? g_memdup2 (g_bytes_get_data (self->marks, NULL), (gsize) width * height)
                      : g_malloc0 ((gsize) width * height);

  /* Every pixel whose centre lies within @radius of the stroke's polyline. */
  for (guint i = 0; i < MAX (n_points, 2) - 1; i++)
    {
      const graphene_point_t *a = &points[i];
      const graphene_point_t *b = &points[MIN (i + 1, n_points - 1)];
      int sx0 = CLAMP ((int) floor (MIN (a->x, b->x) - radius), 0, width);
      int sy0 = CLAMP ((int) floor (MIN (a->y, b->y) - radius), 0, height);
      int sx1 = CLAMP ((int) ceil (MAX (a->x, b->x) + radius), 0, width);
      int sy1 = CLAMP ((int) ceil (MAX (a->y, b->y) + radius), 0, height);

      for (int y = sy0; y < sy1; y++)
        {
          guint8 *row = marks + (gsize) y * width;

          for (int x = sx0; x < sx1; x++)
            if (distance2_to_segment (x + 0.5, y + 0.5, a, b) <= radius * radius)
              row[x] = mark;
        }
    }

  g_clear_pointer (&self->marks, g_bytes_unref);
  self->marks = g_bytes_new_take (marks, (gsize) width * height);
  edit->marks_after = marks_copy_area (self->marks, width, &area);

  bd_document_push_edit (self, edit);
  bd_document_queue_compose (self);

  return self->serial;
}

gboolean
bd_document_get_can_undo (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  return self->state == BD_DOCUMENT_STATE_READY && !g_queue_is_empty (&self->undo);
}

gboolean
bd_document_get_can_redo (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  return self->state == BD_DOCUMENT_STATE_READY && !g_queue_is_empty (&self->redo);
}

void
bd_document_undo (BdDocument *self)
{
  Edit *edit;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (!bd_document_get_can_undo (self))
    return;

  edit = g_queue_pop_head (&self->undo);
  edit->merge_key = 0;
  bd_document_apply_edit (self, edit, FALSE);
  g_queue_push_head (&self->redo, edit);
  bd_document_notify_history (self);
}

void
bd_document_redo (BdDocument *self)
{
  Edit *edit;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (!bd_document_get_can_redo (self))
    return;

  edit = g_queue_pop_head (&self->redo);
  bd_document_apply_edit (self, edit, TRUE);
  g_queue_push_head (&self->undo, edit);
  bd_document_notify_history (self);
}

void
bd_document_reset (BdDocument *self)
{
  Edit *edit;
  int width, height;

  g_return_if_fail (BD_IS_DOCUMENT (self));

  if (!bd_document_get_can_reset (self))
    return;

  width = gdk_pixbuf_get_width (self->photo);
  height = gdk_pixbuf_get_height (self->photo);

  edit = g_new0 (Edit, 1);
  bd_look_copy (&edit->before, &self->look);
  bd_look_copy (&edit->after, &self->look);
  edit->after.threshold = 0;
  edit->after.feather = 0;
  edit->area = (GdkRectangle) { 0, 0, width, height };
  edit->marks_before = self->marks ? g_bytes_ref (self->marks) : NULL;
  edit->marks_after = NULL;
  edit->time = g_get_monotonic_time ();

  bd_document_push_edit (self, edit);
  bd_document_apply_edit (self, edit, TRUE);
}

gboolean
bd_document_get_can_reset (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);

  if (self->state != BD_DOCUMENT_STATE_READY)
    return FALSE;
  if (self->look.threshold != 0 || self->look.feather != 0)
    return TRUE;
  if (self->marks == NULL)
    return FALSE;

  /* Undone strokes leave a mark plane of zeros: look for one that is not (about a
   * millisecond for 12 MP, once an edit). */
  gsize size;
  const guint8 *m = g_bytes_get_data (self->marks, &size);
  for (gsize i = 0; i < size; i++)
    if (m[i] != 0)
      return TRUE;
  return FALSE;
}

/* Settings of the look */

#define CHANGE_LOOK(self, field, value, prop)          \
  G_STMT_START {                                        \
    Look look_;                                         \
    bd_look_copy (&look_, &(self)->look);                  \
    look_.field = (value);                              \
    bd_document_change_look ((self), &look_, (prop));   \
    bd_look_clear (&look_);                                \
  } G_STMT_END

double
bd_document_get_threshold (BdDocument *self)
{
  return self->look.threshold;
}

void
bd_document_set_threshold (BdDocument *self,
                           double      threshold)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, threshold, CLAMP (threshold, 0.0, 1.0), PROP_THRESHOLD);
}

double
bd_document_get_feather (BdDocument *self)
{
  return self->look.feather;
}

void
bd_document_set_feather (BdDocument *self,
                         double      feather)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, feather, CLAMP (feather, 0.0, 100.0), PROP_FEATHER);
}

guint
bd_document_get_background_kind (BdDocument *self)
{
  return self->look.background_kind;
}

void
bd_document_set_background_kind (BdDocument *self,
                                 guint       kind)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));
  g_return_if_fail (kind <= BD_BACKGROUND_IMAGE);

  CHANGE_LOOK (self, background_kind, kind, 0);
}

const GdkRGBA *
bd_document_get_background_color (BdDocument *self)
{
  return &self->look.background_color;
}

void
bd_document_set_background_color (BdDocument    *self,
                                  const GdkRGBA *color)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, background_color, color ? *color : default_background_color,
               PROP_BACKGROUND_COLOR);
}

double
bd_document_get_background_blur (BdDocument *self)
{
  return self->look.background_blur;
}

void
bd_document_set_background_blur (BdDocument *self,
                                 double      blur)
{
  g_return_if_fail (BD_IS_DOCUMENT (self));

  CHANGE_LOOK (self, background_blur, CLAMP (blur, 0.0, 100.0), PROP_BACKGROUND_BLUR);
}

const char *
bd_document_get_background_name (BdDocument *self)
{
  return self->look.background_name;
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

  data->image = bd_pixels_load_file (data->file, cancellable, &error);
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

/* Getters */

BdDocumentState
bd_document_get_state (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), BD_DOCUMENT_STATE_EMPTY);
  return self->state;
}

double
bd_document_get_progress (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->progress;
}

const char *
bd_document_get_title (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->title;
}

GFile *
bd_document_get_file (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->file;
}

int
bd_document_get_width (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->photo ? gdk_pixbuf_get_width (self->photo) : 0;
}

int
bd_document_get_height (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->photo ? gdk_pixbuf_get_height (self->photo) : 0;
}

const char *
bd_document_get_device_description (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->device;
}

double
bd_document_get_seconds (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->seconds;
}

const char *
bd_document_get_error_message (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->error_message;
}

GdkTexture *
bd_document_get_original (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->original;
}

GdkTexture *
bd_document_get_result (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->result;
}

guint64
bd_document_get_result_serial (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);
  return self->result_serial;
}

gboolean
bd_document_get_busy (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);
  return self->composing;
}

GBytes *
bd_document_get_mask (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->mask;
}

gboolean
bd_document_get_modified (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), FALSE);
  return self->modified;
}

GFile *
bd_document_get_saved_file (BdDocument *self)
{
  g_return_val_if_fail (BD_IS_DOCUMENT (self), NULL);
  return self->saved_file;
}

/* GObject */

BdDocument *
bd_document_new (BdEngine *engine)
{
  g_return_val_if_fail (BD_IS_ENGINE (engine), NULL);

  return g_object_new (BD_TYPE_DOCUMENT, "engine", engine, NULL);
}

static void
bd_document_dispose (GObject *object)
{
  BdDocument *self = BD_DOCUMENT (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);

  G_OBJECT_CLASS (bd_document_parent_class)->dispose (object);
}

static void
bd_document_finalize (GObject *object)
{
  BdDocument *self = BD_DOCUMENT (object);

  g_queue_clear_full (&self->undo, (GDestroyNotify) edit_free);
  g_queue_clear_full (&self->redo, (GDestroyNotify) edit_free);
  bd_look_clear (&self->look);
  g_clear_object (&self->engine);
  g_clear_object (&self->file);
  g_clear_object (&self->saved_file);
  g_clear_object (&self->photo);
  g_clear_object (&self->original);
  g_clear_object (&self->original_preview);
  g_clear_object (&self->result);
  g_clear_object (&self->result_preview);
  g_clear_pointer (&self->result_bytes, g_bytes_unref);
  g_clear_pointer (&self->mask, g_bytes_unref);
  g_clear_pointer (&self->marks, g_bytes_unref);
  g_free (self->title);
  g_free (self->device);
  g_free (self->error_message);

  G_OBJECT_CLASS (bd_document_parent_class)->finalize (object);
}

static void
bd_document_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  BdDocument *self = BD_DOCUMENT (object);

  switch (prop_id)
    {
    case PROP_ENGINE:
      g_value_set_object (value, self->engine);
      break;

    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_PROGRESS:
      g_value_set_double (value, self->progress);
      break;

    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;

    case PROP_FILE:
      g_value_set_object (value, self->file);
      break;

    case PROP_WIDTH:
      g_value_set_int (value, bd_document_get_width (self));
      break;

    case PROP_HEIGHT:
      g_value_set_int (value, bd_document_get_height (self));
      break;

    case PROP_DEVICE_DESCRIPTION:
      g_value_set_string (value, self->device);
      break;

    case PROP_SECONDS:
      g_value_set_double (value, self->seconds);
      break;

    case PROP_ERROR_MESSAGE:
      g_value_set_string (value, self->error_message);
      break;

    case PROP_ORIGINAL:
      g_value_set_object (value, self->original);
      break;

    case PROP_RESULT:
      g_value_set_object (value, self->result);
      break;

    case PROP_BUSY:
      g_value_set_boolean (value, self->composing);
      break;

    case PROP_CAN_UNDO:
      g_value_set_boolean (value, bd_document_get_can_undo (self));
      break;

    case PROP_CAN_REDO:
      g_value_set_boolean (value, bd_document_get_can_redo (self));
      break;

    case PROP_THRESHOLD:
      g_value_set_double (value, self->look.threshold);
      break;

    case PROP_FEATHER:
      g_value_set_double (value, self->look.feather);
      break;

    case PROP_BACKGROUND_KIND:
      g_value_set_uint (value, self->look.background_kind);
      break;

    case PROP_BACKGROUND_COLOR:
      g_value_set_boxed (value, &self->look.background_color);
      break;

    case PROP_BACKGROUND_BLUR:
      g_value_set_double (value, self->look.background_blur);
      break;

    case PROP_BACKGROUND_NAME:
      g_value_set_string (value, self->look.background_name);
      break;

    case PROP_MODIFIED:
      g_value_set_boolean (value, self->modified);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_document_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  BdDocument *self = BD_DOCUMENT (object);

  switch (prop_id)
    {
    case PROP_ENGINE:
      self->engine = g_value_dup_object (value);
      break;

    case PROP_THRESHOLD:
      bd_document_set_threshold (self, g_value_get_double (value));
      break;

    case PROP_FEATHER:
      bd_document_set_feather (self, g_value_get_double (value));
      break;

    case PROP_BACKGROUND_KIND:
      bd_document_set_background_kind (self, g_value_get_uint (value));
      break;

    case PROP_BACKGROUND_COLOR:
      bd_document_set_background_color (self, g_value_get_boxed (value));
      break;

    case PROP_BACKGROUND_BLUR:
      bd_document_set_background_blur (self, g_value_get_double (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_document_class_init (BdDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = bd_document_dispose;
  object_class->finalize = bd_document_finalize;
  object_class->get_property = bd_document_get_property;
  object_class->set_property = bd_document_set_property;

  properties[PROP_ENGINE] =
    g_param_spec_object ("engine", NULL, NULL, BD_TYPE_ENGINE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, BD_TYPE_DOCUMENT_STATE, BD_DOCUMENT_STATE_EMPTY, ro);
  properties[PROP_PROGRESS] = g_param_spec_double ("progress", NULL, NULL, 0, 1, 0, ro);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL, ro);
  properties[PROP_FILE] = g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE, ro);
  properties[PROP_WIDTH] = g_param_spec_int ("width", NULL, NULL, 0, G_MAXINT, 0, ro);
  properties[PROP_HEIGHT] = g_param_spec_int ("height", NULL, NULL, 0, G_MAXINT, 0, ro);
  properties[PROP_DEVICE_DESCRIPTION] =
    g_param_spec_string ("device-description", NULL, NULL, NULL, ro);
  properties[PROP_SECONDS] = g_param_spec_double ("seconds", NULL, NULL, 0, G_MAXDOUBLE, 0, ro);
  properties[PROP_ERROR_MESSAGE] = g_param_spec_string ("error-message", NULL, NULL, NULL, ro);
  properties[PROP_ORIGINAL] = g_param_spec_object ("original", NULL, NULL, GDK_TYPE_TEXTURE, ro);
  properties[PROP_RESULT] = g_param_spec_object ("result", NULL, NULL, GDK_TYPE_TEXTURE, ro);
  properties[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, ro);
  properties[PROP_CAN_UNDO] = g_param_spec_boolean ("can-undo", NULL, NULL, FALSE, ro);
  properties[PROP_CAN_REDO] = g_param_spec_boolean ("can-redo", NULL, NULL, FALSE, ro);
  properties[PROP_THRESHOLD] = g_param_spec_double ("threshold", NULL, NULL, 0, 1, 0, rw);
  properties[PROP_FEATHER] = g_param_spec_double ("feather", NULL, NULL, 0, 100, 0, rw);
  properties[PROP_BACKGROUND_KIND] =
    g_param_spec_uint ("background-kind", NULL, NULL, 0, BD_BACKGROUND_IMAGE, 0, rw);
  properties[PROP_BACKGROUND_COLOR] =
    g_param_spec_boxed ("background-color", NULL, NULL, GDK_TYPE_RGBA, rw);
  properties[PROP_BACKGROUND_BLUR] =
    g_param_spec_double ("background-blur", NULL, NULL, 0, 100, 30, rw);
  properties[PROP_BACKGROUND_NAME] = g_param_spec_string ("background-name", NULL, NULL, NULL, ro);
  properties[PROP_MODIFIED] = g_param_spec_boolean ("modified", NULL, NULL, FALSE, ro);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
bd_document_init (BdDocument *self)
{
  g_queue_init (&self->undo);
  g_queue_init (&self->redo);
  bd_look_init_default (&self->look);
}
