/* SPDX-License-Identifier: Apache-2.0 */
/* The batch list's view: the rows, the summary in the header, the dialogs and actions. The
 * queue and the export live in BdBatch (bd-batch.c). */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-application.h"
#include "bd-batch.h"
#include "bd-batch-page.h"
#include "bd-batch-row.h"
#include "bd-unsaved-dialog.h"
#include "bd-utils.h"

struct _BdBatchPage
{
  AdwBreakpointBin parent_instance;

  BdBatch        *batch;
  GSettings      *settings;
  GCancellable   *cancellable;    /* of the exports this page started */

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

/* State shown in the header */

static void
update_summary (BdBatchPage *self)
{
  guint n = bd_batch_get_n_items (self->batch);
  gboolean exporting = bd_batch_get_exporting (self->batch);
  guint ready, failed, waiting;
  g_autofree char *subtitle = NULL;
  g_autofree char *summary = NULL;

  bd_batch_count (self->batch, &ready, &failed, &waiting);

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
                                 waiting == 0 && ready > 0 && !exporting);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "batch.clear",
                                 n > 0 && !exporting);
}

/* Export */

/* Ends @task (a GTask of the page) once the batch has written its photos: a toast says how
 * many, and the task's value is TRUE when every one was written. */
static void
on_batch_exported (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  BdBatchPage *self = g_task_get_source_object (task);
  g_autoptr(GError) error = NULL;
  g_autofree char *title = NULL;
  guint exported, failed;
  gboolean done;

  done = bd_batch_export_finish (BD_BATCH (object), result, &exported, &failed, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BUSY))
    {
      g_task_return_boolean (task, FALSE);
      return;
    }

  if (failed == 0)
    title = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Exported %u photo", "Exported %u photos", exported),
                             exported);
  else
    /* Translators: the first %u counts saved photos, the second all of them */
    title = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "Exported %u of %u photo", "Exported %u of %u photos",
                                          exported + failed),
                             exported, exported + failed);
  if (self->batch != NULL)  /* not disposed meanwhile */
    bd_show_toast (GTK_WIDGET (self), title);

  g_task_return_boolean (task, done && failed == 0);
}

/* Writes @task's items (its task data; NULL: all) into @folder. */
static void
export_items (GTask *task,
              GFile *folder)
{
  BdBatchPage *self = g_task_get_source_object (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  bd_batch_export_async (self->batch, folder, g_task_get_task_data (task),
                         bd_settings_export_extension (self->settings),
                         g_settings_get_int (self->settings, "jpeg-quality"),
                         cancellable ? cancellable : self->cancellable, on_batch_exported, task);
}

void
bd_batch_page_export_to_folder (BdBatchPage *self,
                                GFile       *folder)
{
  g_return_if_fail (BD_IS_BATCH_PAGE (self));
  g_return_if_fail (G_IS_FILE (folder));

  if (bd_batch_get_exporting (self->batch))
    return;

  export_items (g_task_new (self, NULL, NULL, NULL), folder);
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
  if (folder == NULL || self->batch == NULL || bd_batch_get_exporting (self->batch))
    {
      g_task_return_boolean (task, FALSE);
      g_object_unref (task);
      return;
    }

  export_items (task, folder);
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
  if (bd_batch_get_n_items (self->batch) > 0)
    {
      g_autoptr(BdBatchItem) first = g_list_model_get_item (bd_batch_get_items (self->batch), 0);
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

  if (bd_batch_get_exporting (self->batch))
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
  g_autoptr(GtkFileDialog) dialog = bd_photo_dialog_new (_("Add Photos"));

  gtk_file_dialog_open_multiple (dialog, GTK_WINDOW (gtk_widget_get_root (widget)), NULL,
                                 on_add_dialog_done, g_object_ref (widget));
}

static void
remove_item (BdBatchPage *self,
             BdBatchItem *item)
{
  bd_batch_remove (self->batch, item);
}

static void
clear_all (BdBatchPage *self,
           BdBatchItem *unused)
{
  bd_batch_clear (self->batch);
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
  GListModel *model = bd_batch_get_items (asking->self->batch);
  guint n = g_list_model_get_n_items (model);

  if (asking->item != NULL)
    g_ptr_array_add (items, g_object_ref (asking->item));
  else
    for (guint i = 0; i < n; i++)
      g_ptr_array_add (items, g_list_model_get_item (model, i));

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
on_n_items (BdBatchPage *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
}

static void
on_busy (BdBatchPage *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

/* Public */

void
bd_batch_page_add_files (BdBatchPage  *self,
                         GFile       **files,
                         guint         n_files)
{
  g_return_if_fail (BD_IS_BATCH_PAGE (self));
  bd_batch_add_files (self->batch, files, n_files);
}

BdBatch *
bd_batch_page_get_batch (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), NULL);
  return self->batch;
}

guint
bd_batch_page_get_n_items (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), 0);
  return bd_batch_get_n_items (self->batch);
}

GListModel *
bd_batch_page_get_items (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), NULL);
  return bd_batch_get_items (self->batch);
}

GPtrArray *
bd_batch_page_get_edited_documents (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), NULL);
  return bd_batch_get_edited_documents (self->batch);
}

gboolean
bd_batch_page_get_busy (BdBatchPage *self)
{
  g_return_val_if_fail (BD_IS_BATCH_PAGE (self), FALSE);
  return bd_batch_get_busy (self->batch);
}

/* GObject */

static void
bd_batch_page_dispose (GObject *object)
{
  BdBatchPage *self = BD_BATCH_PAGE (object);

  /* An export of this page stops; the toast that ends it finds no page. */
  g_cancellable_cancel (self->cancellable);
  if (self->batch != NULL)
    g_signal_handlers_disconnect_by_data (self->batch, self);

  gtk_widget_dispose_template (GTK_WIDGET (self), BD_TYPE_BATCH_PAGE);
  /* Its work holds a reference to it: without the list, the queue stops. */
  if (self->batch != NULL)
    bd_batch_clear (self->batch);
  g_clear_object (&self->batch);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->settings);

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
  g_autoptr(BdEngine) engine = NULL;

  gtk_widget_init_template (GTK_WIDGET (self));
  {
    g_autoptr(GMenuModel) menu = bd_primary_menu_new ();

    gtk_menu_button_set_menu_model (self->menu_button, menu);
  }

  self->settings = g_settings_new (APP_ID);
  self->cancellable = g_cancellable_new ();
  engine = BD_IS_APPLICATION (app) ? g_object_ref (bd_application_get_engine (BD_APPLICATION (app)))
                                   : bd_engine_new (NULL);
  self->batch = bd_batch_new (engine);

  gtk_list_box_bind_model (self->list_box, bd_batch_get_items (self->batch), create_row, self, NULL);
  g_signal_connect (self->list_box, "row-activated", G_CALLBACK (on_row_activated), self);
  g_signal_connect_swapped (self->batch, "changed", G_CALLBACK (update_summary), self);
  g_signal_connect_swapped (self->batch, "notify::n-items", G_CALLBACK (on_n_items), self);
  g_signal_connect_swapped (self->batch, "notify::busy", G_CALLBACK (on_busy), self);

  update_summary (self);
}
