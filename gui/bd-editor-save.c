/* SPDX-License-Identifier: Apache-2.0 */
/* Saving from the editor: Save As, Save to the same file, and the saves the window asks for
 * before edits would be lost. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "bd-editor-private.h"
#include "bd-image-io.h"
#include "bd-pixels.h"
#include "bd-utils.h"

/* Saving: a GTask whose source is the editor and whose data is the document saved (the one
 * shown, or another the window asks for); it returns FALSE when the user cancelled. */

static void
on_saved (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  BdEditor *self = g_task_get_source_object (task);
  GFile *file = g_object_get_data (G_OBJECT (task), "bd-file");
  g_autoptr(GError) error = NULL;
  g_autofree char *basename = NULL;
  g_autofree char *title = NULL;

  bd_editor_end_saving (self);
  if (!bd_document_save_finish (BD_DOCUMENT (object), result, &error))
    {
      bd_show_error (GTK_WIDGET (self), _("The Result Could Not Be Saved"), error);
      g_task_return_boolean (task, FALSE);
      return;
    }

  basename = g_file_get_basename (file);
  /* Translators: a toast after saving; %s is a file name */
  title = g_strdup_printf (_("Saved “%s”"), basename);
  bd_show_toast (GTK_WIDGET (self), title);
  g_task_return_boolean (task, TRUE);
}

static void
save_to_file (GTask *task,
              GFile *file)
{
  BdEditor *self = g_task_get_source_object (task);
  BdDocument *document = g_task_get_task_data (task);
  g_autofree char *path = NULL;
  g_autofree char *basename = NULL;
  g_autoptr(GFile) with_extension = NULL;

  path = g_file_get_path (file);
  basename = g_file_get_basename (file);

  /* A name without an extension gets the default format's. */
  if (path != NULL && strchr (basename, '.') == NULL)
    {
      g_autofree char *named = g_strdup_printf ("%s.%s", path,
                                                bd_settings_export_extension (self->settings));

      file = with_extension = g_file_new_for_path (named);
      g_free (path);
      path = g_steal_pointer (&named);
    }

  if (path != NULL && !bd_image_format_supported (path))
    {
      g_autoptr(GError) error =
        g_error_new_literal (BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED,
                             _("Backdrop saves PNG, WebP and JPEG files. Choose a name that ends in .png, .webp or .jpg."));

      bd_show_error (GTK_WIDGET (self), _("The Result Could Not Be Saved"), error);
      g_task_return_boolean (task, FALSE);
      g_object_unref (task);
      return;
    }

  g_object_set_data_full (G_OBJECT (task), "bd-file", g_object_ref (file), g_object_unref);
  bd_editor_begin_saving (self);
  bd_document_save_async (document, file, g_settings_get_int (self->settings, "jpeg-quality"),
                          g_task_get_cancellable (task), on_saved, task);
}

void
bd_editor_save_to_file (BdEditor *self,
                        GFile    *file)
{
  GTask *task;

  g_return_if_fail (BD_IS_EDITOR (self));
  g_return_if_fail (G_IS_FILE (file));

  task = g_task_new (self, NULL, NULL, NULL);
  g_task_set_task_data (task, g_object_ref (self->document), g_object_unref);
  save_to_file (task, file);
}

static void
on_save_dialog_done (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  GTask *task = user_data;
  g_autoptr(GFile) file = NULL;

  file = gtk_file_dialog_save_finish (GTK_FILE_DIALOG (object), result, NULL);
  if (file == NULL)
    {
      g_task_return_boolean (task, FALSE);
      g_object_unref (task);
      return;
    }

  save_to_file (task, file);
}

static GtkFileFilter *
format_filter (const char *name,
               const char *mime_type,
               const char *suffix)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  gtk_file_filter_set_name (filter, name);
  gtk_file_filter_add_mime_type (filter, mime_type);
  gtk_file_filter_add_suffix (filter, suffix);
  return filter;
}

/* Asks where, then saves. */
static void
save_as (GTask *task)
{
  BdEditor *self = g_task_get_source_object (task);
  BdDocument *document = g_task_get_task_data (task);
  g_autoptr(GtkFileDialog) dialog = gtk_file_dialog_new ();
  g_autoptr(GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);
  g_autoptr(GtkFileFilter) png = format_filter (_("PNG (transparent)"), "image/png", "png");
  g_autoptr(GtkFileFilter) webp = format_filter (_("WebP (transparent)"), "image/webp", "webp");
  g_autoptr(GtkFileFilter) jpeg = format_filter (_("JPEG (no transparency)"), "image/jpeg", "jpg");
  const char *extension = bd_settings_export_extension (self->settings);
  g_autofree char *name = bd_output_name (bd_document_get_title (document), BD_OUTPUT_CUTOUT, extension, NULL, NULL);
  GFile *source = bd_document_get_file (document);

  g_list_store_append (filters, png);
  g_list_store_append (filters, webp);
  g_list_store_append (filters, jpeg);

  gtk_file_dialog_set_title (dialog, _("Save the Result"));
  gtk_file_dialog_set_initial_name (dialog, name);
  gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
  gtk_file_dialog_set_default_filter (dialog, g_str_equal (extension, "webp") ? webp
                                              : g_str_equal (extension, "jpg") ? jpeg : png);
  if (source != NULL && g_file_is_native (source))
    {
      g_autoptr(GFile) folder = g_file_get_parent (source);

      gtk_file_dialog_set_initial_folder (dialog, folder);
    }

  gtk_file_dialog_save (dialog, GTK_WINDOW (gtk_widget_get_root (GTK_WIDGET (self))),
                        g_task_get_cancellable (task), on_save_dialog_done, task);
}

void
bd_editor_save_async (BdEditor            *self,
                      BdDocument          *document,
                      gboolean             ask,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (BD_IS_EDITOR (self));
  g_return_if_fail (document == NULL || BD_IS_DOCUMENT (document));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_editor_save_async);
  g_task_set_task_data (task, g_object_ref (document ? document : self->document), g_object_unref);

  if (!ask && bd_document_get_saved_file (g_task_get_task_data (task)) != NULL)
    save_to_file (task, bd_document_get_saved_file (g_task_get_task_data (task)));
  else
    save_as (task);
}

gboolean
bd_editor_save_finish (BdEditor      *self,
                       GAsyncResult  *result,
                       GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

void
bd_editor_save_as_action (GtkWidget  *widget,
                          const char *action_name,
                          GVariant   *parameter)
{
  bd_editor_save_async (BD_EDITOR (widget), NULL, TRUE, NULL, NULL, NULL);
}
