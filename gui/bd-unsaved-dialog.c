/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-document.h"
#include "bd-unsaved-dialog.h"

static void
on_chosen (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  const char *response = adw_alert_dialog_choose_finish (ADW_ALERT_DIALOG (object), result);

  g_task_return_int (task, g_str_equal (response, "save") ? BD_UNSAVED_SAVE
                         : g_str_equal (response, "discard") ? BD_UNSAVED_DISCARD
                                                             : BD_UNSAVED_CANCEL);
}

void
bd_unsaved_dialog_choose (GtkWidget           *parent,
                          GPtrArray           *documents,
                          gboolean             save_asks,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autofree char *body = NULL;
  AdwDialog *dialog;
  GTask *task;

  g_return_if_fail (GTK_IS_WIDGET (parent));
  g_return_if_fail (documents != NULL && documents->len > 0);

  if (documents->len == 1)
    /* Translators: %s is the name of a photo */
    body = g_strdup_printf (_("“%s” has unsaved changes. Changes which are not saved will be permanently lost."),
                            bd_document_get_title (g_ptr_array_index (documents, 0)));
  else
    body = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%u photo has unsaved changes. Changes which are not saved will be permanently lost.",
                                      "%u photos have unsaved changes. Changes which are not saved will be permanently lost.",
                                      documents->len),
                            documents->len);

  dialog = adw_alert_dialog_new (_("Save Changes?"), body);
  adw_alert_dialog_add_responses (ADW_ALERT_DIALOG (dialog),
                                  "cancel", _("_Cancel"),
                                  "discard", _("_Discard"),
                                  "save", save_asks ? _("_Save…") : _("_Save"),
                                  NULL);
  adw_alert_dialog_set_response_appearance (ADW_ALERT_DIALOG (dialog), "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_alert_dialog_set_response_appearance (ADW_ALERT_DIALOG (dialog), "save", ADW_RESPONSE_SUGGESTED);
  adw_alert_dialog_set_default_response (ADW_ALERT_DIALOG (dialog), "save");
  adw_alert_dialog_set_close_response (ADW_ALERT_DIALOG (dialog), "cancel");

  task = g_task_new (parent, cancellable, callback, user_data);
  g_task_set_source_tag (task, bd_unsaved_dialog_choose);
  adw_alert_dialog_choose (ADW_ALERT_DIALOG (dialog), parent, cancellable, on_chosen, task);
}

BdUnsavedResponse
bd_unsaved_dialog_choose_finish (GAsyncResult *result)
{
  gssize response = g_task_propagate_int (G_TASK (result), NULL);

  /* -1: the cancellable went off, which counts as Cancel. */
  return response < 0 ? BD_UNSAVED_CANCEL : (BdUnsavedResponse) response;
}
