/* SPDX-License-Identifier: Apache-2.0 */
/* The batch list's model: photos through the engine one at a time in the order added, the
 * next one decoding meanwhile. Its export is in bd-batch-export.c. */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-batch-private.h"
#include "bd-image-io.h"
#include "bd-pixels.h"

#define THUMBNAIL_SIZE 96

G_DEFINE_FINAL_TYPE (BdBatch, bd_batch, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_N_ITEMS,
  PROP_BUSY,
  PROP_EXPORTING,
  N_PROPS
};

enum {
  SIGNAL_CHANGED,
  SIGNAL_EXPORT_PROGRESS,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void process_next (BdBatch *self);

/* "changed" whenever an item's state or the list changes; "busy" when it flips. */
void
bd_batch_changed (BdBatch *self)
{
  gboolean busy = bd_batch_get_busy (self);

  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  if (busy != self->busy)
    {
      self->busy = busy;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
    }
}

void
bd_batch_notify_exporting (BdBatch *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXPORTING]);
  bd_batch_changed (self);
}

void
bd_batch_emit_export_progress (BdBatch     *self,
                               BdBatchItem *item,
                               guint        n_done,
                               guint        n_total)
{
  g_signal_emit (self, signals[SIGNAL_EXPORT_PROGRESS], 0, item, n_done, n_total);
}

/* Stops the processing of the item being processed, if any. */
static void
stop_working (BdBatch *self)
{
  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->working);
}

/* Processing, one photo at a time */

typedef struct
{
  BdBatch        *self;
  BdBatchItem    *item;
  GdkPixbuf      *photo;
  BdSegmentation *segmentation;
  GdkTexture     *thumbnail;
  gboolean        decoded_ahead; /* @item's photo was started in self->ahead */
} Work;

static void
work_free (Work *work)
{
  g_clear_object (&work->self);
  g_clear_object (&work->item);
  g_clear_object (&work->photo);
  g_clear_pointer (&work->segmentation, bd_segmentation_free);
  g_clear_object (&work->thumbnail);
  g_free (work);
}

/* Ends the work on @work's item: @error marks it failed. Then starts the next. */
static void
work_finish (Work   *work,
             GError *error)
{
  BdBatch *self = work->self;

  if (self->working != work->item)
    return;  /* removed from the list meanwhile */

  if (error != NULL)
    bd_batch_item_set_state (work->item, BD_BATCH_ITEM_FAILED, error->message);
  else
    {
      bd_batch_item_set_result (work->item, work->segmentation->alpha, work->thumbnail,
                                work->segmentation->device, work->segmentation->seconds);
      bd_batch_item_set_state (work->item, BD_BATCH_ITEM_DONE, NULL);
    }

  g_clear_object (&self->working);
  g_clear_object (&self->cancellable);
  bd_batch_changed (self);
  process_next (self);
}

static void
thumbnail_thread (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  Work *work = task_data;
  g_autoptr(GdkPixbuf) thumbnail = NULL;

  thumbnail = bd_pixels_thumbnail (work->photo, g_bytes_get_data (work->segmentation->alpha, NULL),
                                   THUMBNAIL_SIZE);
  /* Without one (no memory) the row keeps its placeholder. */
  work->thumbnail = thumbnail != NULL ? gdk_texture_new_for_pixbuf (thumbnail) : NULL;
  g_task_return_boolean (task, TRUE);
}

static void
on_thumbnail (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Work *work = g_task_get_task_data (G_TASK (result));

  work_finish (work, NULL);
}

static void
on_item_progress (GObject *target,
                  double   fraction)
{
  bd_batch_item_set_progress (BD_BATCH_ITEM (target), fraction);
}

static void
on_segmented (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Work *work = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GTask) task = NULL;

  work->segmentation = bd_engine_segment_finish (BD_ENGINE (object), result, &error);
  if (work->segmentation == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        work_finish (work, error);
      work_free (work);
      return;
    }

  task = g_task_new (work->self, NULL, on_thumbnail, NULL);
  g_task_set_task_data (task, work, (GDestroyNotify) work_free);
  g_task_run_in_thread (task, thumbnail_thread);
}

static void
load_thread (GTask        *task,
             gpointer      source_object,
             gpointer      task_data,
             GCancellable *cancellable)
{
  Work *work = task_data;
  GFile *file = bd_batch_item_get_file (work->item);
  GError *error = NULL;

  /* Decoded while the photo before it was segmented (waiting for the decode to end), or now. */
  if (!work->decoded_ahead ||
      !bd_decode_ahead_take (work->self->ahead, file, NULL, &work->photo, &error))
    work->photo = bd_image_load_file (file, cancellable, &error);
  if (work->photo == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
on_loaded (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  BdBatch *self = BD_BATCH (object);
  Work *work = g_task_get_task_data (G_TASK (result));
  g_autoptr(GError) error = NULL;
  Work *next;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        work_finish (work, error);
      return;
    }

  if (self->working != work->item)
    return;

  /* The GTask frees @work; the next step gets its own copy of the references. */
  next = g_new0 (Work, 1);
  next->self = g_object_ref (self);
  next->item = g_object_ref (work->item);
  next->photo = g_object_ref (work->photo);

  bd_engine_segment_async (self->engine, next->photo, on_item_progress, G_OBJECT (next->item),
                           self->cancellable, on_segmented, next);
}

/* Forgets the photo decoded ahead, if any: it is not the next one any more. */
static void
drop_ahead (BdBatch *self)
{
  if (self->ahead_item != NULL)
    bd_decode_ahead_forget (self->ahead, bd_batch_item_get_file (self->ahead_item), NULL);
  g_clear_object (&self->ahead_item);
}

/* Starts decoding the first waiting photo after the one being processed, so that its
 * decoding overlaps the network's work (one photo ahead, as the CLI's batch engine does). */
static void
decode_next_ahead (BdBatch *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  g_autoptr(BdBatchItem) next = NULL;

  for (guint i = 0; i < n && next == NULL; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (item != self->working && bd_batch_item_get_state (item) == BD_BATCH_ITEM_WAITING)
        next = g_steal_pointer (&item);
    }

  if (next == self->ahead_item)
    return;
  drop_ahead (self);
  if (next == NULL)
    return;
  bd_decode_ahead_start (self->ahead, bd_batch_item_get_file (next), NULL);
  self->ahead_item = g_steal_pointer (&next);
}

static void
process_next (BdBatch *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  g_autoptr(GTask) task = NULL;
  Work *work;

  if (self->working != NULL)
    {
      decode_next_ahead (self);  /* the list may have changed behind it */
      return;
    }

  for (guint i = 0; i < n && self->working == NULL; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (bd_batch_item_get_state (item) == BD_BATCH_ITEM_WAITING)
        self->working = g_steal_pointer (&item);
    }

  if (self->working == NULL)
    return;

  self->cancellable = g_cancellable_new ();
  bd_batch_item_set_progress (self->working, 0.0);
  bd_batch_item_set_state (self->working, BD_BATCH_ITEM_WORKING, NULL);

  work = g_new0 (Work, 1);
  work->self = g_object_ref (self);
  work->item = g_object_ref (self->working);
  /* Started ahead: the load takes it over. */
  work->decoded_ahead = self->ahead_item == self->working;
  if (work->decoded_ahead)
    g_clear_object (&self->ahead_item);
  decode_next_ahead (self);

  task = g_task_new (self, self->cancellable, on_loaded, NULL);
  g_task_set_task_data (task, work, (GDestroyNotify) work_free);
  g_task_run_in_thread (task, load_thread);
}

/* The list */

static void
on_items_changed (BdBatch *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
  bd_batch_changed (self);
}

void
bd_batch_add_files (BdBatch  *self,
                    GFile   **files,
                    guint     n_files)
{
  g_return_if_fail (BD_IS_BATCH (self));

  for (guint i = 0; i < n_files; i++)
    {
      g_autoptr(BdBatchItem) item = bd_batch_item_new (files[i]);

      g_signal_connect_object (item, "notify::state", G_CALLBACK (bd_batch_changed), self, G_CONNECT_SWAPPED);
      g_list_store_append (self->items, item);
    }

  process_next (self);
}

void
bd_batch_remove (BdBatch     *self,
                 BdBatchItem *item)
{
  guint position;

  g_return_if_fail (BD_IS_BATCH (self));
  g_return_if_fail (BD_IS_BATCH_ITEM (item));

  if (self->working == item)
    stop_working (self);

  if (g_list_store_find (self->items, item, &position))
    g_list_store_remove (self->items, position);

  process_next (self);
}

void
bd_batch_clear (BdBatch *self)
{
  g_return_if_fail (BD_IS_BATCH (self));

  stop_working (self);
  drop_ahead (self);
  g_list_store_remove_all (self->items);
}

GListModel *
bd_batch_get_items (BdBatch *self)
{
  g_return_val_if_fail (BD_IS_BATCH (self), NULL);
  return G_LIST_MODEL (self->items);
}

guint
bd_batch_get_n_items (BdBatch *self)
{
  g_return_val_if_fail (BD_IS_BATCH (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->items));
}

void
bd_batch_count (BdBatch *self,
                guint   *n_ready,
                guint   *n_failed,
                guint   *n_waiting)
{
  guint ready = 0, failed = 0, waiting = 0;
  guint n;

  g_return_if_fail (BD_IS_BATCH (self));

  n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);

      switch (bd_batch_item_get_state (item))
        {
        case BD_BATCH_ITEM_WAITING:
        case BD_BATCH_ITEM_WORKING:
          waiting++;
          break;

        case BD_BATCH_ITEM_FAILED:
          failed++;
          break;

        default:
          ready++;
          break;
        }
    }

  if (n_ready != NULL)
    *n_ready = ready;
  if (n_failed != NULL)
    *n_failed = failed;
  if (n_waiting != NULL)
    *n_waiting = waiting;
}

gboolean
bd_batch_get_busy (BdBatch *self)
{
  guint waiting;

  g_return_val_if_fail (BD_IS_BATCH (self), FALSE);

  if (self->working != NULL || self->export_task != NULL)
    return TRUE;
  bd_batch_count (self, NULL, NULL, &waiting);
  return waiting > 0;
}

gboolean
bd_batch_get_exporting (BdBatch *self)
{
  g_return_val_if_fail (BD_IS_BATCH (self), FALSE);
  return self->export_task != NULL;
}

GPtrArray *
bd_batch_get_edited_documents (BdBatch *self)
{
  GPtrArray *documents = g_ptr_array_new_with_free_func (g_object_unref);
  guint n;

  g_return_val_if_fail (BD_IS_BATCH (self), documents);

  n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (bd_batch_item_get_modified (item))
        g_ptr_array_add (documents, g_object_ref (bd_batch_item_get_document (item)));
    }

  return documents;
}

BdBatch *
bd_batch_new (BdEngine *engine)
{
  BdBatch *self;

  g_return_val_if_fail (BD_IS_ENGINE (engine), NULL);

  self = g_object_new (BD_TYPE_BATCH, NULL);
  self->engine = g_object_ref (engine);
  return self;
}

/* GObject */

static void
bd_batch_dispose (GObject *object)
{
  BdBatch *self = BD_BATCH (object);

  stop_working (self);
  drop_ahead (self);
  g_clear_object (&self->items);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (bd_batch_parent_class)->dispose (object);
}

static void
bd_batch_finalize (GObject *object)
{
  BdBatch *self = BD_BATCH (object);

  /* Here, not in dispose: a load still running holds a reference and may be taking from it. */
  bd_decode_ahead_free (self->ahead);

  G_OBJECT_CLASS (bd_batch_parent_class)->finalize (object);
}

static void
bd_batch_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  BdBatch *self = BD_BATCH (object);

  switch (prop_id)
    {
    case PROP_N_ITEMS:
      g_value_set_uint (value, bd_batch_get_n_items (self));
      break;

    case PROP_BUSY:
      g_value_set_boolean (value, bd_batch_get_busy (self));
      break;

    case PROP_EXPORTING:
      g_value_set_boolean (value, bd_batch_get_exporting (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_batch_class_init (BdBatchClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = bd_batch_dispose;
  object_class->finalize = bd_batch_finalize;
  object_class->get_property = bd_batch_get_property;

  properties[PROP_N_ITEMS] =
    g_param_spec_uint ("n-items", NULL, NULL, 0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_EXPORTING] =
    g_param_spec_boolean ("exporting", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* Some item's state, or the list, changed: counts and "busy" may differ. */
  signals[SIGNAL_CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
  /* An export is through with @item (written, or failed: its state says), the @n_done-th of
   * @n_total. */
  signals[SIGNAL_EXPORT_PROGRESS] =
    g_signal_new ("export-progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 3, BD_TYPE_BATCH_ITEM, G_TYPE_UINT, G_TYPE_UINT);
}

static void
bd_batch_init (BdBatch *self)
{
  self->ahead = bd_decode_ahead_new (1);
  self->items = g_list_store_new (BD_TYPE_BATCH_ITEM);
  g_signal_connect_object (self->items, "items-changed", G_CALLBACK (on_items_changed), self,
                           G_CONNECT_SWAPPED);
}
