/* SPDX-License-Identifier: Apache-2.0 */
/* One photo in the batch list: where it is, how far it got, and its mask once known. */
#pragma once

#include <gtk/gtk.h>

#include "bd-document.h"

G_BEGIN_DECLS

typedef enum {
  BD_BATCH_ITEM_WAITING,
  BD_BATCH_ITEM_WORKING,
  BD_BATCH_ITEM_DONE,
  BD_BATCH_ITEM_FAILED,
  BD_BATCH_ITEM_EXPORTED,
  BD_BATCH_ITEM_EXPORT_FAILED,
} BdBatchItemState;

#define BD_TYPE_BATCH_ITEM_STATE (bd_batch_item_state_get_type ())
GType bd_batch_item_state_get_type (void);

#define BD_TYPE_BATCH_ITEM (bd_batch_item_get_type ())

G_DECLARE_FINAL_TYPE (BdBatchItem, bd_batch_item, BD, BATCH_ITEM, GObject)

BdBatchItem      *bd_batch_item_new           (GFile            *file);
GFile            *bd_batch_item_get_file      (BdBatchItem      *self);
const char       *bd_batch_item_get_title     (BdBatchItem      *self);
BdBatchItemState  bd_batch_item_get_state     (BdBatchItem      *self);
double            bd_batch_item_get_progress  (BdBatchItem      *self);
/* Why it failed, or where it was exported to. */
const char       *bd_batch_item_get_message   (BdBatchItem      *self);
GBytes           *bd_batch_item_get_mask      (BdBatchItem      *self);
const char       *bd_batch_item_get_device    (BdBatchItem      *self);
double            bd_batch_item_get_seconds   (BdBatchItem      *self);
GdkTexture       *bd_batch_item_get_thumbnail (BdBatchItem      *self);
/* TRUE when the mask is known (done, exported, or its export failed). */
gboolean          bd_batch_item_has_mask      (BdBatchItem      *self);
/* The row's own document, with its marks, settings and history: made (from the mask, no
 * second removal) when first asked for. Needs the mask. */
BdDocument       *bd_batch_item_open_document (BdBatchItem      *self,
                                               BdEngine         *engine);
/* Drops the document when it holds nothing to undo or redo (the editor left the row). */
void              bd_batch_item_release_document (BdBatchItem  *self);
/* NULL unless the row was opened and kept. */
BdDocument       *bd_batch_item_get_document  (BdBatchItem      *self);
/* TRUE when its document has unsaved changes. */
gboolean          bd_batch_item_get_modified  (BdBatchItem      *self);

void              bd_batch_item_set_state     (BdBatchItem      *self,
                                               BdBatchItemState  state,
                                               const char       *message);
void              bd_batch_item_set_progress  (BdBatchItem      *self,
                                               double            progress);
void              bd_batch_item_set_result    (BdBatchItem      *self,
                                               GBytes           *mask,
                                               GdkTexture       *thumbnail,
                                               const char       *device,
                                               double            seconds);

G_END_DECLS
