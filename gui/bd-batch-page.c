/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "bd-application.h"
#include "bd-batch-page.h"
#include "bd-batch-row.h"
#include "bd-pixels.h"
#include "bd-unsaved-dialog.h"
#include "bd-utils.h"

#define THUMBNAIL_SIZE 96

struct _BdBatchPage
{
  AdwBreakpointBin parent_instance;

  GListStore     *items;
  GSettings      *settings;
  BdEngine       *engine;

  BdBatchItem    *working;        /* being processed */
  GCancellable   *cancellable;    /* for the processing of @working */
  GPtrArray      *export_queue;   /* items still to export in this pass */
  GFile          *export_folder;
  guint           exported;
  guint           export_failed;
  GTask          *export_task;    /* of bd_batch_page_export_async() */

  AdwWindowTitle *window_title;
  GtkMenuButton  *menu_button;
  GtkLabel       *summary_label;
  GtkListBox     *list_box;
};

G_DEFINE_FINAL_TYPE (BdBatchPage, bd_batch_page, ADW_TYPE_BREAKPOINT_BIN)

enum {
  PROP_0,
  PROP_N_ITEMS,
  PROP_BUSY,
  N_PROPS
};

enum {
  SIGNAL_ITEM_ACTIVATED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void process_next (BdBatchPage *self);
static void export_next  (BdBatchPage *self);

/* State shown in the header */

static void
update_summary (BdBatchPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  guint ready = 0, failed = 0, waiting = 0;
  g_autofree char *subtitle = NULL;
  g_autofree char *summary = NULL;

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

  /* Translators: batch header subtitle */
  subtitle = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u of %u photo ready", "%u of %u photos ready", n),
                              ready, n);
  adw_window_title_set_subtitle (self->window_title, n > 0 ? subtitle : "");

  if (waiting > 0)
    summary = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                            "Removing backgrounds: %u photo to go.",
                                            "Removing backgrounds: %u photos to go.", waiting),
                               waiting);
  else if (failed > 0)
    summary = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                            "%u photo could not be processed; the others are ready to export.",
                                            "%u photos could not be processed; the others are ready to export.",
                                            failed),
                               failed);
  else if (n > 0)
    summary = g_strdup (_("All photos are ready. Click one to refine it, or export them all."));
  else
    summary = g_strdup (_("Add photos to remove their backgrounds in one go."));
  gtk_label_set_label (self->summary_label, summary);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "batch.export-all",
                                 waiting == 0 && ready > 0 && self->export_queue == NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "batch.clear",
                                 n > 0 && self->export_queue == NULL);
}

static void
notify_busy (BdBatchPage *self)
{
  update_summary (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* Processing, one photo at a time */

typedef struct
{
  BdBatchPage    *self;
  BdBatchItem    *item;
  GdkPixbuf      *photo;
  BdSegmentation *segmentation;
  GdkTexture     *thumbnail;
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
  BdBatchPage *self = work->self;

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
  notify_busy (self);
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
  work->thumbnail = gdk_texture_new_for_pixbuf (thumbnail);
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
  GError *error = NULL;

  work->photo = bd_image_load_file (bd_batch_item_get_file (work->item), cancellable, &error);
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
  BdBatchPage *self = BD_BATCH_PAGE (object);
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

static void
process_next (BdBatchPage *self)
{
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  g_autoptr(GTask) task = NULL;
  Work *work;

  if (self->working != NULL)
    return;

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

  task = g_task_new (self, self->cancellable, on_loaded, NULL);
  g_task_set_task_data (task, work, (GDestroyNotify) work_free);
  g_task_run_in_thread (task, load_thread);
}

/* Export */

/* For bd_output_name(): whether @name is taken in the folder @data. */
static gboolean
name_taken_in (const char *name,
               gpointer    data)
{
  g_autoptr(GFile) file = g_file_get_child (G_FILE (data), name);

  return g_file_query_exists (file, NULL);
}

static void
finish_export (BdBatchPage *self)
{
  g_autofree char *title = NULL;

  if (self->export_failed == 0)
    title = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Exported %u photo", "Exported %u photos",
                                          self->exported),
                             self->exported);
  else
    /* Translators: the first %u counts saved photos, the second all of them */
    title = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Exported %u of %u photo", "Exported %u of %u photos",
                                          self->exported + self->export_failed),
                             self->exported, self->exported + self->export_failed);

  g_clear_pointer (&self->export_queue, g_ptr_array_unref);
  g_clear_object (&self->export_folder);
  bd_show_toast (GTK_WIDGET (self), title);
  notify_busy (self);

  if (self->export_task != NULL)
    {
      g_autoptr(GTask) task = g_steal_pointer (&self->export_task);

      g_task_return_boolean (task, self->export_failed == 0);
    }
}

typedef struct
{
  BdBatchPage *self;
  BdBatchItem *item;
  GFile       *target;
} Exporting;

static void
on_exported (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  Exporting *exporting = user_data;
  g_autoptr(BdBatchPage) self = exporting->self;
  g_autoptr(BdBatchItem) item = exporting->item;
  g_autoptr(GFile) target = exporting->target;
  g_autoptr(GError) error = NULL;
  gboolean saved;

  g_free (exporting);
  saved = BD_IS_DOCUMENT (object) ? bd_document_save_finish (BD_DOCUMENT (object), result, &error)
                                  : bd_document_save_unedited_finish (result, &error);
  if (saved)
    {
      g_autofree char *name = g_file_get_basename (target);

      self->exported++;
      bd_batch_item_set_state (item, BD_BATCH_ITEM_EXPORTED, name);
    }
  else
    {
      self->export_failed++;
      bd_batch_item_set_state (item, BD_BATCH_ITEM_EXPORT_FAILED, error->message);
    }

  export_next (self);
}

static void
export_next (BdBatchPage *self)
{
  g_autoptr(BdBatchItem) item = NULL;
  g_autofree char *basename = NULL;
  g_autofree char *name = NULL;
  const char *extension = bd_settings_export_extension (self->settings);
  int jpeg_quality = g_settings_get_int (self->settings, "jpeg-quality");
  BdDocument *document;
  Exporting *exporting;

  if (self->export_queue == NULL)
    return;

  if (self->export_queue->len == 0)
    {
      finish_export (self);
      return;
    }

  item = g_ptr_array_steal_index (self->export_queue, 0);
  basename = g_file_get_basename (bd_batch_item_get_file (item));
  /* The CLI's rule (common/bd-output-name.h): "a-cutout.png", "a-cutout-2.png", ... */
  name = bd_output_name (basename, BD_OUTPUT_CUTOUT, extension, name_taken_in, self->export_folder);

  exporting = g_new0 (Exporting, 1);
  exporting->self = g_object_ref (self);
  exporting->item = g_object_ref (item);
  exporting->target = g_file_get_child (self->export_folder, name);

  /* A row the user opened is written by its document, as the editor shows it; the others
   * as they came from the network, by the same code without a document. */
  document = bd_batch_item_get_document (item);
  if (document != NULL && bd_document_get_state (document) == BD_DOCUMENT_STATE_READY)
    bd_document_save_async (document, exporting->target, jpeg_quality, NULL, on_exported, exporting);
  else
    bd_document_save_unedited_async (bd_batch_item_get_file (item), bd_batch_item_get_mask (item),
                                     exporting->target, jpeg_quality, NULL, on_exported, exporting);
}

/* Exports @items (NULL: all) that have a mask. */
static void
export_items (BdBatchPage *self,
              GFile       *folder,
              GPtrArray   *items)
{
  guint n = items ? items->len : g_list_model_get_n_items (G_LIST_MODEL (self->items));

  self->export_queue = g_ptr_array_new_with_free_func (g_object_unref);
  self->export_folder = g_object_ref (folder);
  self->exported = 0;
  self->export_failed = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(BdBatchItem) item = items ? g_object_ref (g_ptr_array_index (items, i))
                                          : g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (bd_batch_item_has_mask (item))
        g_ptr_array_add (self->export_queue, g_steal_pointer (&item));
    }

  notify_busy (self);
  export_next (self);
}

void
bd_batch_page_export_to_folder (BdBatchPage *self,
                                GFile       *folder)
{
  g_return_if_fail (BD_IS_BATCH_PAGE (self));
  g_return_if_fail (G_IS_FILE (folder));

  if (self->export_queue != NULL)
    return;

  export_items (self, folder, NULL);
}

static void
on_folder_chosen (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  GTask *task = user_data;
  BdBatchPage *self = g_task_get_source_object (task);
  g_autoptr(GFile) folder = NULL;

  folder = gtk_file_dialog_select_folder_finish (GTK_FILE_DIALOG (object), result, NULL);
  if (folder == NULL || self->export_queue != NULL)
    {
      g_task_return_boolean (task, FALSE);
      g_object_unref (task);
      return;
    }

  self->export_task = task;
  export_items (self, folder, g_task_get_task_data (task));
}

GtkFileDialog *
bd_batch_page_new_export_dialog (BdBatchPage *self)
{
  GtkFileDialog *dialog = gtk_file_dialog_new ();
  g_autofree char *format = g_ascii_strup (bd_settings_export_extension (self->settings), -1);
  g_autofree char *accept = NULL;

  gtk_file_dialog_set_title (dialog, _("Export All to a Folder"));
  /* Translators: %s is a file format, "PNG", "WEBP" or "JPG" (chosen in Preferences) */
  accept = g_strdup_printf (_("_Export as %s"), format);
  gtk_file_dialog_set_accept_label (dialog, accept);

  /* Where the photos came from, not Recent: results usually go beside them. */
  if (g_list_model_get_n_items (G_LIST_MODEL (self->items)) > 0)
    {
      g_autoptr(BdBatchItem) first = g_list_model_get_item (G_LIST_MODEL (self->items), 0);
      g_autoptr(GFile) parent = g_file_get_parent (bd_batch_item_get_file (first));

      if (parent != NULL)
        gtk_file_dialog_set_initial_folder (dialog, parent);
    }
  return dialog;
}

void
bd_batch_page_export_async (BdBatchPage         *self,
                            GPtrArray           *items,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_autoptr(GtkFileDialog) dialog = NULL;
  GTask *task;

  g_return_if_fail (BD_IS_BATCH_PAGE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_batch_page_export_async);
  if (items != NULL)
    g_task_set_task_data (task, g_ptr_array_ref (items), (GDestroyNotify) g_ptr_array_unref);

  if (self->export_queue != NULL)
    {
      g_task_return_boolean (task, FALSE);
      g_object_unref (task);
      return;
    }

  dialog = bd_batch_page_new_export_dialog (self);
  gtk_file_dialog_select_folder (dialog, GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (self))), cancellable,
                                 on_folder_chosen, task);
}

gboolean
bd_batch_page_export_finish (BdBatchPage   *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Actions */

static void
export_all_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  bd_batch_page_export_async (BD_BATCH_PAGE (widget), NULL, NULL, NULL, NULL);
}

static void
on_add_dialog_done (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(BdBatchPage) self = user_data;
  g_autoptr(GPtrArray) files = bd_files_from_dialog (GTK_FILE_DIALOG (object), result);

  if (files != NULL)
    bd_batch_page_add_files (self, (GFile **) files->pdata, files->len);
}

static void
add_action (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  g_autoptr(GtkFileDialog) dialog = gtk_file_dialog_new ();
  g_autoptr(GtkFileFilter) filter = bd_image_file_filter ();

  gtk_file_dialog_set_title (dialog, _("Add Photos"));
  gtk_file_dialog_set_default_filter (dialog, filter);
  gtk_file_dialog_open_multiple (dialog, GTK_WINDOW (gtk_widget_get_root (widget)), NULL,
                                 on_add_dialog_done, g_object_ref (widget));
}

static void
remove_item (BdBatchPage *self,
             BdBatchItem *item)
{
  guint position;

  if (self->working == item)
    {
      g_cancellable_cancel (self->cancellable);
      g_clear_object (&self->cancellable);
      g_clear_object (&self->working);
    }

  if (g_list_store_find (self->items, item, &position))
    g_list_store_remove (self->items, position);

  process_next (self);
}

static void
clear_all (BdBatchPage *self,
           BdBatchItem *unused)
{
  if (self->working != NULL)
    {
      g_cancellable_cancel (self->cancellable);
      g_clear_object (&self->cancellable);
      g_clear_object (&self->working);
    }

  g_list_store_remove_all (self->items);
}

/* Before rows with unsaved edits go: @then (self, @item) runs once the user chose Discard,
 * or Save and the export succeeded. */
typedef struct
{
  BdBatchPage  *self;
  BdBatchItem  *item;     /* the row to remove; NULL: all of them */
  void        (*then) (BdBatchPage *self,
                       BdBatchItem *item);
} Asking;

static void
asking_free (Asking *asking)
{
  g_clear_object (&asking->self);
  g_clear_object (&asking->item);
  g_free (asking);
}

static GPtrArray *
asking_items (Asking *asking)
{
  GPtrArray *items = g_ptr_array_new_with_free_func (g_object_unref);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (asking->self->items));

  if (asking->item != NULL)
    g_ptr_array_add (items, g_object_ref (asking->item));
  else
    for (guint i = 0; i < n; i++)
      g_ptr_array_add (items, g_list_model_get_item (G_LIST_MODEL (asking->self->items), i));

  return items;
}

static void
on_saved_before_removal (GObject      *object,
                         GAsyncResult *result,
                         gpointer      user_data)
{
  Asking *asking = user_data;

  if (bd_batch_page_export_finish (BD_BATCH_PAGE (object), result, NULL))
    asking->then (asking->self, asking->item);
  asking_free (asking);
}

static void
on_removal_answer (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Asking *asking = user_data;

  switch (bd_unsaved_dialog_choose_finish (result))
    {
    case BD_UNSAVED_DISCARD:
      asking->then (asking->self, asking->item);
      break;

    case BD_UNSAVED_SAVE:
      {
        g_autoptr(GPtrArray) items = asking_items (asking);

        bd_batch_page_export_async (asking->self, items, NULL, on_saved_before_removal, asking);
      }
      return;

    case BD_UNSAVED_CANCEL:
    default:
      break;
    }

  asking_free (asking);
}

static void
ask_before_removal (BdBatchPage *self,
                    BdBatchItem *item,
                    void       (*then) (BdBatchPage *self,
                                        BdBatchItem *item))
{
  Asking *asking = g_new0 (Asking, 1);
  g_autoptr(GPtrArray) items = NULL;
  g_autoptr(GPtrArray) edited = g_ptr_array_new ();

  asking->self = g_object_ref (self);
  asking->item = item ? g_object_ref (item) : NULL;
  asking->then = then;

  items = asking_items (asking);
  for (guint i = 0; i < items->len; i++)
    if (bd_batch_item_get_modified (g_ptr_array_index (items, i)))
      g_ptr_array_add (edited, bd_batch_item_get_document (g_ptr_array_index (items, i)));

  if (edited->len == 0)
    {
      then (self, item);
      asking_free (asking);
      return;
    }

  bd_unsaved_dialog_choose (GTK_WIDGET (self), edited, TRUE, NULL, on_removal_answer, asking);
}

static void
clear_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  ask_before_removal (BD_BATCH_PAGE (widget), NULL, clear_all);
}

static void
on_row_remove (BdBatchRow  *row,
               BdBatchPage *self)
{
  ask_before_removal (self, bd_batch_row_get_item (row), remove_item);
}

static GtkWidget *
create_row (gpointer item,
            gpointer user_data)
{
  GtkWidget *row = bd_batch_row_new (item);

  g_signal_connect_object (row, "remove", G_CALLBACK (on_row_remove), user_data, 0);
  return row;
}

static void
on_row_activated (GtkListBox    *list_box,
                  GtkListBoxRow *row,
                  BdBatchPage   *self)
{
  BdBatchItem *item = bd_batch_row_get_item (BD_BATCH_ROW (row));

  if (bd_batch_item_has_mask (item))
    g_signal_emit (self, signals[SIGNAL_ITEM_ACTIVATED], 0, item);
}

static void
on_items_changed (BdBatchPage *self)
{
  update_summary (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
}

/* Public */

void
bd_batch_page_add_files (BdBatchPage  *self,
                         GFile       **files,
                         guint         n_files)
{
  g_return_if_fail (BD_IS_BATCH_PAGE (self));

  for (guint i = 0; i < n_files; i++)
    {
      g_autoptr(BdBatchItem) item = bd_batch_item_new (files[i]);

      g_signal_connect_object (item, "notify::state", G_CALLBACK (update_summary), self,
                               G_CONNECT_SWAPPED);
      g_list_store_append (self->items, item);
    }

  notify_busy (self);
  process_next (self);
}

guint
bd_batch_page_get_n_items (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->items));
}

GListModel *
bd_batch_page_get_items (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), NULL);
  return G_LIST_MODEL (self->items);
}

GPtrArray *
bd_batch_page_get_edited_documents (BdBatchPage *self)
{
  GPtrArray *documents = g_ptr_array_new_with_free_func (g_object_unref);
  guint n;

  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), documents);

  n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (bd_batch_item_get_modified (item))
        g_ptr_array_add (documents, g_object_ref (bd_batch_item_get_document (item)));
    }

  return documents;
}

gboolean
bd_batch_page_get_busy (BdBatchPage *self)
{
  guint n;

  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), FALSE);

  if (self->working != NULL || self->export_queue != NULL)
    return TRUE;

  n = g_list_model_get_n_items (G_LIST_MODEL (self->items));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (G_LIST_MODEL (self->items), i);

      if (bd_batch_item_get_state (item) == BD_BATCH_ITEM_WAITING)
        return TRUE;
    }

  return FALSE;
}

/* GObject */

static void
bd_batch_page_dispose (GObject *object)
{
  BdBatchPage *self = BD_BATCH_PAGE (object);

  if (self->cancellable != NULL)
    g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->working);
  g_clear_pointer (&self->export_queue, g_ptr_array_unref);
  g_clear_object (&self->export_folder);
  if (self->export_task != NULL)
    {
      g_autoptr(GTask) task = g_steal_pointer (&self->export_task);

      g_task_return_boolean (task, FALSE);
    }

  gtk_widget_dispose_template (GTK_WIDGET (self), BD_TYPE_BATCH_PAGE);
  g_clear_object (&self->items);
  g_clear_object (&self->settings);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (bd_batch_page_parent_class)->dispose (object);
}

static void
bd_batch_page_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  BdBatchPage *self = BD_BATCH_PAGE (object);

  switch (prop_id)
    {
    case PROP_N_ITEMS:
      g_value_set_uint (value, bd_batch_page_get_n_items (self));
      break;

    case PROP_BUSY:
      g_value_set_boolean (value, bd_batch_page_get_busy (self));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_batch_page_class_init (BdBatchPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = bd_batch_page_dispose;
  object_class->get_property = bd_batch_page_get_property;

  properties[PROP_N_ITEMS] =
    g_param_spec_uint ("n-items", NULL, NULL, 0, G_MAXUINT, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_ITEM_ACTIVATED] =
    g_signal_new ("item-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, BD_TYPE_BATCH_ITEM);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/backdrop_app/backdrop/bd-batch-page.ui");
  gtk_widget_class_bind_template_child (widget_class, BdBatchPage, window_title);
  gtk_widget_class_bind_template_child (widget_class, BdBatchPage, menu_button);
  gtk_widget_class_bind_template_child (widget_class, BdBatchPage, summary_label);
  gtk_widget_class_bind_template_child (widget_class, BdBatchPage, list_box);

  gtk_widget_class_install_action (widget_class, "batch.add", NULL, add_action);
  gtk_widget_class_install_action (widget_class, "batch.clear", NULL, clear_action);
  gtk_widget_class_install_action (widget_class, "batch.export-all", NULL, export_all_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "batch.export-all", NULL);
}

static void
bd_batch_page_init (BdBatchPage *self)
{
  GApplication *app = g_application_get_default ();

  gtk_widget_init_template (GTK_WIDGET (self));
  {
    g_autoptr(GMenuModel) menu = bd_primary_menu_new ();

    gtk_menu_button_set_menu_model (self->menu_button, menu);
  }

  self->settings = g_settings_new (APP_ID);
  self->engine = BD_IS_APPLICATION (app) ? g_object_ref (bd_application_get_engine (BD_APPLICATION (app)))
                                         : bd_engine_new (NULL);
  self->items = g_list_store_new (BD_TYPE_BATCH_ITEM);

  gtk_list_box_bind_model (self->list_box, G_LIST_MODEL (self->items), create_row, self, NULL);
  g_signal_connect (self->list_box, "row-activated", G_CALLBACK (on_row_activated), self);
  g_signal_connect_object (self->items, "items-changed", G_CALLBACK (on_items_changed), self,
                           G_CONNECT_SWAPPED);

  update_summary (self);
}
