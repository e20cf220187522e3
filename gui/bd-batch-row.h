/* SPDX-License-Identifier: Apache-2.0 */
/* A row of the batch list: thumbnail, name, state in words, progress, a remove button. */
#pragma once

#include <adwaita.h>

#include "bd-batch-item.h"

G_BEGIN_DECLS

#define BD_TYPE_BATCH_ROW (bd_batch_row_get_type ())

G_DECLARE_FINAL_TYPE (BdBatchRow, bd_batch_row, BD, BATCH_ROW, AdwActionRow)

GtkWidget   *bd_batch_row_new      (BdBatchItem *item);
BdBatchItem *bd_batch_row_get_item (BdBatchRow  *self);

G_END_DECLS
