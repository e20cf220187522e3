/* SPDX-License-Identifier: Apache-2.0 */
/* The settings of io.github.backdrop.Backdrop, the application's earlier ID, moved to the
 * current one. The old schema is gone with the old files, but its values stay in dconf at
 * the old path: they are read through "APP_ID.keys", the schema of the keys without a path
 * that the current one extends (data/), so every key keeps its type and range. */
#include "config.h"

#include "bd-settings-migrate.h"

#define MIGRATED_KEY "settings-migrated"

gboolean
bd_settings_migrate (GSettings  *settings,
                     const char *old_path)
{
  g_autoptr(GSettingsSchema) schema = NULL;
  g_autoptr(GSettingsSchema) keys_schema = NULL;
  g_autoptr(GSettings) old = NULL;
  g_auto(GStrv) keys = NULL;
  g_autofree char *keys_id = NULL;
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  gboolean copied = FALSE;

  g_return_val_if_fail (G_IS_SETTINGS (settings), FALSE);

  if (g_settings_get_boolean (settings, MIGRATED_KEY))
    return FALSE;

  g_object_get (settings, "settings-schema", &schema, NULL);
  keys_id = g_strconcat (g_settings_schema_get_id (schema), ".keys", NULL);
  if (source != NULL)
    keys_schema = g_settings_schema_source_lookup (source, keys_id, TRUE);
  if (keys_schema == NULL)
    {
      g_debug ("no schema %s: the earlier settings stay where they are", keys_id);
      return FALSE;
    }

  old = g_settings_new_full (keys_schema, NULL, old_path);
  keys = g_settings_schema_list_keys (schema);
  for (guint i = 0; keys[i] != NULL; i++)
    {
      g_autoptr(GSettingsSchemaKey) key = NULL;
      g_autoptr(GVariant) was = NULL;
      g_autoptr(GVariant) now = NULL;

      if (g_str_equal (keys[i], MIGRATED_KEY))
        continue;
      was = g_settings_get_user_value (old, keys[i]);
      now = g_settings_get_user_value (settings, keys[i]);
      key = g_settings_schema_get_key (schema, keys[i]);
      /* A value the user set here since wins; one out of today's range is left behind. */
      if (was == NULL || now != NULL || !g_settings_schema_key_range_check (key, was))
        continue;
      if (g_settings_set_value (settings, keys[i], was))
        copied = TRUE;
    }

  g_settings_set_boolean (settings, MIGRATED_KEY, TRUE);
  return copied;
}
