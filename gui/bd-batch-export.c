/* SPDX-License-Identifier: Apache-2.0 */
/* The batch list's Export All: every row with a mask written into a folder, each as its row
 * shows it, named as the CLI names results. */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-batch-private.h"
#include "bd-document.h"
#include "bd-output-name.h"

static void export_fill (GTask *task);

/* Several photos are written at once (each reads its photo, composes and encodes on a thread
 * of its own), named in the list's order as they start. */
typedef struct
{
  GFile      *folder;
  GPtrArray  *queue;        /* items still to write, in the list's order */
  GHashTable *names;        /* names given by this export: written or being written */
  char       *extension;
  int         jpeg_quality;
  guint       total;        /* photos in this export */
  guint       exported;
  guint       failed;
  guint       writing;      /* writes under way */
  guint       most;         /* at most this many at once */
  GError     *error;        /* the cancel that ends it once the writes under way are through */
} Export;

static void
export_free (Export *export)
{
  g_clear_object (&export->folder);
  g_clear_pointer (&export->queue, g_ptr_array_unref);
  g_clear_pointer (&export->names, g_hash_table_unref);
  g_clear_error (&export->error);
  g_free (export->extension);
  g_free (export);
}

/* Ends the export; @error (taken) NULL: it went through the list. */
static void
export_end (GTask  *task,
            GError *error)
{
  BdBatch *self = g_task_get_source_object (task);
  g_autoptr(GTask) ended = g_steal_pointer (&self->export_task);

  g_assert (ended == task);
  bd_batch_notify_exporting (self);
  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/* For bd_output_name(): whether @name is taken in the export's folder, or given by it to a
 * photo still being written. */
static gboolean
name_taken_in (const char *name,
               gpointer    data)
{
  Export *export = data;
  g_autoptr(GFile) file = g_file_get_child (export->folder, name);

  return g_hash_table_contains (export->names, name) || g_file_query_exists (file, NULL);
}

typedef struct
{
  GTask       *task;
  BdBatchItem *item;
  GFile       *target;
} Writing;

static void
on_written (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Writing *writing = user_data;
  g_autoptr(GTask) task = writing->task;
  g_autoptr(BdBatchItem) item = writing->item;
  g_autoptr(GFile) target = writing->target;
  Export *export = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  gboolean saved;

  g_free (writing);
  export->writing--;
  saved = BD_IS_DOCUMENT (object) ? bd_document_save_finish (BD_DOCUMENT (object), result, &error)
                                  : bd_document_save_unedited_finish (result, &error);
  /* A cancel that came after the rename still reads as cancelled: the name was free
   * (bd_output_name), so a file there now is this one, whole. */
  if (!saved && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) && g_file_query_exists (target, NULL))
    {
      saved = TRUE;
      g_clear_error (&error);
    }
  if (saved)
    {
      g_autofree char *name = g_file_get_basename (target);

      export->exported++;
      bd_batch_item_set_state (item, BD_BATCH_ITEM_EXPORTED, name);
    }
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* Not written (its temporary file is gone): the row keeps its state. */
      if (export->error == NULL)
        export->error = g_steal_pointer (&error);
      export_fill (task);
      return;
    }
  else
    {
      export->failed++;
      bd_batch_item_set_state (item, BD_BATCH_ITEM_EXPORT_FAILED, error->message);
    }

  bd_batch_emit_export_progress (g_task_get_source_object (task), item, export->exported + export->failed,
                                 export->total);
  export_fill (task);
}

/* Starts writing the next photo of the queue. */
static void
export_start (GTask *task)
{
  Export *export = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  g_autoptr(BdBatchItem) item = g_ptr_array_steal_index (export->queue, 0);
  g_autofree char *basename = g_file_get_basename (bd_batch_item_get_file (item));
  char *name;
  BdDocument *document;
  Writing *writing;

  /* The CLI's rule (common/bd-output-name.h): "a-cutout.png", "a-cutout-2.png", ... */
  name = bd_output_name (basename, BD_OUTPUT_CUTOUT, export->extension, name_taken_in, export);
  g_hash_table_add (export->names, name);
  export->writing++;

  writing = g_new0 (Writing, 1);
  writing->task = g_object_ref (task);
  writing->item = g_object_ref (item);
  writing->target = g_file_get_child (export->folder, name);

  /* A row the user opened is written by its document, as the editor shows it; the others
   * as they came from the network, by the same code without a document. */
  document = bd_batch_item_get_document (item);
  if (document != NULL && bd_document_get_state (document) == BD_DOCUMENT_STATE_READY)
    bd_document_save_async (document, writing->target, export->jpeg_quality, cancellable, on_written, writing);
  else
    bd_document_save_unedited_async (bd_batch_item_get_file (item), bd_batch_item_get_mask (item),
                                     writing->target, export->jpeg_quality, cancellable, on_written, writing);
}

/* Keeps export->most photos being written while the queue lasts; ends the export once the
 * queue is through, or it was cancelled, and no write is under way. */
static void
export_fill (GTask *task)
{
  Export *export = g_task_get_task_data (task);

  if (export->error == NULL)
    g_cancellable_set_error_if_cancelled (g_task_get_cancellable (task), &export->error);
  while (export->error == NULL && export->writing < export->most && export->queue->len > 0)
    export_start (task);
  if (export->writing == 0 && (export->error != NULL || export->queue->len == 0))
    export_end (task, g_steal_pointer (&export->error));
}

void
bd_batch_export_async (BdBatch             *self,
                       GFile               *folder,
                       GPtrArray           *items,
                       const char          *extension,
                       int                  jpeg_quality,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  guint n;
  Export *export;

  g_return_if_fail (BD_IS_BATCH (self));
  g_return_if_fail (G_IS_FILE (folder));
  g_return_if_fail (extension != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_batch_export_async);

  if (self->export_task != NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_BUSY, "%s", _("An export is already running"));
      return;
    }

  export = g_new0 (Export, 1);
  export->folder = g_object_ref (folder);
  export->queue = g_ptr_array_new_with_free_func (g_object_unref);
  export->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  /* Each write decodes, composes and encodes one photo, mostly on one core. */
  export->most = CLAMP (g_get_num_processors () / 2, 2, 8);
  export->extension = g_strdup (extension);
  export->jpeg_quality = jpeg_quality;
  g_task_set_task_data (task, export, (GDestroyNotify) export_free);

  n = items ? items->len : g_list_model_get_n_items (G_LIST_MODEL (self->items));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(BdBatchItem) item = items ? g_object_ref (g_ptr_array_index (items, i))
                                          : g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (bd_batch_item_has_mask (item))
        g_ptr_array_add (export->queue, g_steal_pointer (&item));
    }
  export->total = export->queue->len;

  self->export_task = g_object_ref (task);
  bd_batch_notify_exporting (self);
  export_fill (task);
}

gboolean
bd_batch_export_finish (BdBatch       *self,
                        GAsyncResult  *result,
                        guint         *n_exported,
                        guint         *n_failed,
                        GError       **error)
{
  Export *export;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  export = g_task_get_task_data (G_TASK (result));
  if (n_exported != NULL)
    *n_exported = export ? export->exported : 0;
  if (n_failed != NULL)
    *n_failed = export ? export->failed : 0;

  return g_task_propagate_boolean (G_TASK (result), error);
}

