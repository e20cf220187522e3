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
/* "welcome", "editor" or "batch". */
const char  *bd_window_get_page       (BdWindow      *self);

G_END_DECLS
