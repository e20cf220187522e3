/* SPDX-License-Identifier: Apache-2.0 */
/* A Backdrop window: a welcome page, the editor for one photo, the batch list for many.
 * Photos arrive by the Open dialog, drag and drop, the clipboard or the command line. */
#pragma once

#include <adwaita.h>

#include "bd-application.h"
#include "bd-batch-page.h"
#include "bd-editor.h"

G_BEGIN_DECLS

#define BD_TYPE_WINDOW (bd_window_get_type ())

G_DECLARE_FINAL_TYPE (BdWindow, bd_window, BD, WINDOW, AdwApplicationWindow)

BdWindow    *bd_window_new            (BdApplication *application);
/* One file opens in the editor; several go to the batch list. */
void         bd_window_open_files     (BdWindow      *self,
                                       GFile        **files,
                                       guint          n_files);
/* What a drop onto the window does with its value (a GdkFileList, a GFile or a
 * GdkTexture); returns FALSE when the value holds nothing to open. */
gboolean     bd_window_open_value     (BdWindow      *self,
                                       const GValue  *value);
BdEditor    *bd_window_get_editor     (BdWindow      *self);
BdBatchPage *bd_window_get_batch_page (BdWindow      *self);
/* TRUE when a photo of the window (its own, or a batch row's) has unsaved edits. */
gboolean     bd_window_get_has_unsaved (BdWindow     *self);
typedef void (*BdWindowClosed) (BdWindow *window,
                                gboolean  closed,
                                gpointer  user_data);
/* Closes the window, asking first when edits would be lost; @callback (may be NULL) learns
 * whether it closed (the window is gone by then when it did). */
void         bd_window_close_asking   (BdWindow       *self,
                                       BdWindowClosed  callback,
                                       gpointer        user_data);
/* "welcome", "editor" or "batch". */
const char  *bd_window_get_page       (BdWindow      *self);

G_END_DECLS
