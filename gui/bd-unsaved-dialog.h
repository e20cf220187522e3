/* SPDX-License-Identifier: Apache-2.0 */
/* "Save Changes?": the alert shown before photos with unsaved edits are closed, replaced or
 * removed, the way GNOME apps ask. It only asks; the caller saves or goes ahead. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

typedef enum {
  BD_UNSAVED_CANCEL,
  BD_UNSAVED_DISCARD,
  BD_UNSAVED_SAVE,
} BdUnsavedResponse;

/* @documents: the BdDocuments with unsaved changes (one is named, more are counted).
 * @save_asks: Save opens a dialog that asks where ("Save…"), rather than saving at once. */
void              bd_unsaved_dialog_choose        (GtkWidget           *parent,
                                                   GPtrArray           *documents,
                                                   gboolean             save_asks,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
BdUnsavedResponse bd_unsaved_dialog_choose_finish (GAsyncResult        *result);

G_END_DECLS
