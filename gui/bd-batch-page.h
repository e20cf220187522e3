/* SPDX-License-Identifier: Apache-2.0 */
/* The batch list's view: a row per photo of its BdBatch (bd-batch.h, which processes them one
 * after another and exports them), with progress and state; Export All asks for a folder and
 * says in a toast how it went. */
#pragma once

#include <adwaita.h>

#include "bd-batch.h"

G_BEGIN_DECLS

#define BD_TYPE_BATCH_PAGE (bd_batch_page_get_type ())

G_DECLARE_FINAL_TYPE (BdBatchPage, bd_batch_page, BD, BATCH_PAGE, AdwBreakpointBin)

void        bd_batch_page_add_files         (BdBatchPage  *self,
                                             GFile       **files,
                                             guint         n_files);
/* The model the page shows: its queue and export. */
BdBatch    *bd_batch_page_get_batch         (BdBatchPage  *self);
guint       bd_batch_page_get_n_items       (BdBatchPage  *self);
/* A GListModel of BdBatchItem. */
GListModel *bd_batch_page_get_items         (BdBatchPage  *self);
/* TRUE while photos are waiting or being processed or exported. */
gboolean    bd_batch_page_get_busy          (BdBatchPage  *self);
/* What Export All does once a folder is chosen. */
void        bd_batch_page_export_to_folder  (BdBatchPage  *self,
                                             GFile        *folder);
/* Export All: asks for a folder, then exports @items (BdBatchItems; NULL: all). TRUE once
 * every one is written; FALSE when the user cancelled or one failed. */
/* The folder dialog Export All shows: it opens where the first photo is, and its button names
 * the format the results are written in (Preferences' default format). */
GtkFileDialog *bd_batch_page_new_export_dialog (BdBatchPage       *self);
void        bd_batch_page_export_async      (BdBatchPage          *self,
                                             GPtrArray            *items,
                                             GCancellable         *cancellable,
                                             GAsyncReadyCallback   callback,
                                             gpointer              user_data);
gboolean    bd_batch_page_export_finish     (BdBatchPage          *self,
                                             GAsyncResult         *result,
                                             GError              **error);
/* The documents of rows with unsaved edits (a new array). */
GPtrArray  *bd_batch_page_get_edited_documents (BdBatchPage  *self);

G_END_DECLS
