/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Copies, once, every key the user had set at @old_path (the settings of the application's
 * earlier ID) into @settings where it is not set yet; TRUE when anything was copied. Marks
 * @settings' "settings-migrated" key, so that it never runs again. */
gboolean bd_settings_migrate (GSettings  *settings,
                              const char *old_path);

G_END_DECLS
