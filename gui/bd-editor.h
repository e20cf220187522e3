/* SPDX-License-Identifier: Apache-2.0 */
/* The editing page: the canvas with its floating tools, the adjustments sidebar, the header
 * with Save As and Copy. It shows one BdDocument at a time. */
#pragma once

#include <adwaita.h>

#include "bd-canvas.h"
#include "bd-document.h"

G_BEGIN_DECLS

#define BD_TYPE_EDITOR (bd_editor_get_type ())

G_DECLARE_FINAL_TYPE (BdEditor, bd_editor, BD, EDITOR, AdwBreakpointBin)

BdDocument *bd_editor_get_document   (BdEditor   *self);
/* Shows @document instead (the window's own, or a batch row's). */
void        bd_editor_set_document   (BdEditor   *self,
                                      BdDocument *document);
BdCanvas   *bd_editor_get_canvas     (BdEditor   *self);
/* Shows a button that leads back to the batch list. */
void        bd_editor_set_show_back  (BdEditor   *self,
                                      gboolean    show_back);
/* What Save As does once a file is chosen (the test calls it directly). */
void        bd_editor_save_to_file   (BdEditor   *self,
                                      GFile      *file);
/* Saves @document (NULL: the one shown): where it was saved last, or with @ask or before
 * its first save, where the Save As dialog says. The result is TRUE once it is saved, FALSE
 * when the user cancelled or it failed (the editor has said why). */
void        bd_editor_save_async     (BdEditor            *self,
                                      BdDocument          *document,
                                      gboolean             ask,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
gboolean    bd_editor_save_finish    (BdEditor            *self,
                                      GAsyncResult        *result,
                                      GError             **error);

G_END_DECLS
