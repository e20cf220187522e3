/* SPDX-License-Identifier: Apache-2.0 */
/* Preferences: where the removal runs, the default export format, the style. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define BD_TYPE_PREFERENCES_DIALOG (bd_preferences_dialog_get_type ())

G_DECLARE_FINAL_TYPE (BdPreferencesDialog, bd_preferences_dialog, BD, PREFERENCES_DIALOG, AdwPreferencesDialog)

AdwDialog *bd_preferences_dialog_new (void);

G_END_DECLS
