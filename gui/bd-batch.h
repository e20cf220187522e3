/* SPDX-License-Identifier: Apache-2.0 */
/* The batch list's data and work, without a widget: a list of BdBatchItem whose photos go
 * through the engine one at a time in the order they were added (one that fails is marked
 * and the rest go on), and an export that writes each photo as the user sees it. The batch
 * page only shows it. */
#pragma once

#include <gio/gio.h>

#include "bd-batch-item.h"
#include "bd-engine.h"

G_BEGIN_DECLS

#define BD_TYPE_BATCH (bd_batch_get_type ())

G_DECLARE_FINAL_TYPE (BdBatch, bd_batch, BD, BATCH, GObject)

BdBatch    *bd_batch_new             (BdEngine     *engine);
/* A GListModel of BdBatchItem, in the order added. */
GListModel *bd_batch_get_items       (BdBatch      *self);
guint       bd_batch_get_n_items     (BdBatch      *self);
/* Appends the photos; they are processed after those already waiting. */
void        bd_batch_add_files       (BdBatch      *self,
                                      GFile       **files,
                                      guint         n_files);
/* Removes @item, stopping its processing if it is the one being processed. */
void        bd_batch_remove          (BdBatch      *self,
                                      BdBatchItem  *item);
/* Removes every item and stops the processing. */
void        bd_batch_clear           (BdBatch      *self);
/* How many items are ready (a mask, exported or not), failed, or still waiting/working;
 * any pointer may be NULL. */
void        bd_batch_count           (BdBatch      *self,
                                      guint        *n_ready,
                                      guint        *n_failed,
                                      guint        *n_waiting);
/* TRUE while photos are waiting or being processed or exported ("busy"). */
gboolean    bd_batch_get_busy        (BdBatch      *self);
/* TRUE while an export runs ("exporting"); a second one is refused meanwhile. */
gboolean    bd_batch_get_exporting   (BdBatch      *self);
/* The documents of items with unsaved edits (a new array). */
GPtrArray  *bd_batch_get_edited_documents (BdBatch *self);

/* Writes @items (BdBatchItems; NULL: all) that have a mask into @folder, one after another,
 * each named as the CLI names it (common/bd-output-name.h) with @extension ("png", "webp",
 * "jpg"): an item the user opened as its document shows it, the others with the network's
 * mask. Each item ends EXPORTED (its message the file name) or EXPORT_FAILED (why); the
 * others go on. Cancelling stops the export: the photo being written is then written whole
 * or not at all (saving goes through a temporary file), and the rest are not written.
 * "export-progress" (item, n_done, n_total) follows each photo written or failed. */
void        bd_batch_export_async    (BdBatch             *self,
                                      GFile               *folder,
                                      GPtrArray           *items,
                                      const char          *extension,
                                      int                  jpeg_quality,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
/* TRUE when the export went through the list: @n_exported and @n_failed (may be NULL) count
 * its photos written and not written. FALSE with G_IO_ERROR_CANCELLED when cancelled (the
 * counts so far are still given), G_IO_ERROR_BUSY when another export was running. */
gboolean    bd_batch_export_finish   (BdBatch             *self,
                                      GAsyncResult        *result,
                                      guint               *n_exported,
                                      guint               *n_failed,
                                      GError             **error);

G_END_DECLS
