/* SPDX-License-Identifier: Apache-2.0 */
/* BdBatch's insides, shared by its two files: bd-batch.c (the list and its photos through the
 * engine) and bd-batch-export.c (Export All). */
#pragma once

#include "bd-batch.h"
#include "bd-decode-ahead.h"

G_BEGIN_DECLS

struct _BdBatch
{
  GObject       parent_instance;

  GListStore   *items;
  BdEngine     *engine;
  BdBatchItem  *working;        /* being processed */
  GCancellable *cancellable;    /* for the processing of @working */
  BdDecodeAhead *ahead;         /* decodes the next photo while @working is segmented */
  BdBatchItem  *ahead_item;     /* that next photo, started and not yet taken */
  GTask        *export_task;    /* of bd_batch_export_async(), while it runs */
  gboolean      busy;           /* as last notified */
};

/* Emits "changed", and notifies "busy" when it flipped. */
void bd_batch_changed              (BdBatch     *self);
/* Notifies "exporting" (export_task set or cleared), then as bd_batch_changed. */
void bd_batch_notify_exporting     (BdBatch     *self);
void bd_batch_emit_export_progress (BdBatch     *self,
                                    BdBatchItem *item,
                                    guint        n_done,
                                    guint        n_total);

G_END_DECLS
