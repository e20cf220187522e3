/* SPDX-License-Identifier: Apache-2.0 */
/* Recent photos through GtkRecentManager: shared with the desktop (Files and other apps
 * list them too), filtered to the images Backdrop itself opened. */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-recent.h"

void
bd_recent_add (GFile *file)
{
  g_autofree char *uri = NULL;

  if (file == NULL)
    return;
  uri = g_file_get_uri (file);
  /* The whole record, not gtk_recent_manager_add_item: that one builds the command line from
   * g_get_prgname (), and a program that never set it (the screenshot tool) crashed GTK. */
  {
    g_autofree char *basename = g_file_get_basename (file);
    g_autofree char *type = g_content_type_guess (basename, NULL, 0, NULL);
    g_autofree char *mime = g_content_type_get_mime_type (type);
    GtkRecentData data = {
      .display_name = NULL,
      .mime_type = mime != NULL ? mime : (char *) "application/octet-stream",
      .app_name = (char *) g_get_application_name (),
      .app_exec = (char *) "backdrop %u",
    };

    if (data.app_name != NULL)
      gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
  }
}

static int
newest_first (gconstpointer a,
              gconstpointer b)
{
  GDateTime *ta = gtk_recent_info_get_modified (*(GtkRecentInfo **) a);
  GDateTime *tb = gtk_recent_info_get_modified (*(GtkRecentInfo **) b);

  return g_date_time_compare (tb, ta);
}

/* The photos Backdrop opened that are still there, newest first; @items owns them. */
static GPtrArray *
our_photos (GList *items)
{
  GPtrArray *ours = g_ptr_array_new ();
  const char *app = g_get_application_name ();

  for (GList *l = items; l != NULL; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      const char *mime = gtk_recent_info_get_mime_type (info);

      if (app != NULL && gtk_recent_info_has_application (info, app) &&
          mime != NULL && g_str_has_prefix (mime, "image/") && gtk_recent_info_exists (info))
        g_ptr_array_add (ours, info);
    }
  g_ptr_array_sort (ours, newest_first);
  return ours;
}

static void
fill_menu (GtkRecentManager *manager,
           GMenu            *menu)
{
  GList *items = gtk_recent_manager_get_items (manager);
  g_autoptr(GPtrArray) ours = our_photos (items);

  g_menu_remove_all (menu);
  /* Said rather than an empty menu under the button's arrow: an item without an action
   * shows greyed out. */
  if (ours->len == 0)
    g_menu_append (menu, _("No Recent Photos"), NULL);
  for (guint i = 0; i < MIN (ours->len, BD_RECENT_MAX); i++)
    {
      GtkRecentInfo *info = g_ptr_array_index (ours, i);
      g_autoptr(GMenuItem) item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);

      g_menu_item_set_action_and_target (item, "editor.open-recent", "s", gtk_recent_info_get_uri (info));
      g_menu_append_item (menu, item);
    }

  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

GMenuModel *
bd_recent_menu_new (void)
{
  GtkRecentManager *manager = gtk_recent_manager_get_default ();
  GMenu *menu = g_menu_new ();

  fill_menu (manager, menu);
  g_signal_connect_object (manager, "changed", G_CALLBACK (fill_menu), menu, 0);
  return G_MENU_MODEL (menu);
}

GFile *
bd_recent_folder (void)
{
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  g_autoptr(GPtrArray) ours = our_photos (items);
  const char *pictures = g_get_user_special_dir (G_USER_DIRECTORY_PICTURES);
  GFile *folder = NULL;

  for (guint i = 0; i < ours->len && folder == NULL; i++)
    {
      g_autoptr(GFile) photo = g_file_new_for_uri (gtk_recent_info_get_uri (ours->pdata[i]));

      /* Not a remote one: the dialog would have to reach it before it shows anything. */
      if (g_file_is_native (photo))
        folder = g_file_get_parent (photo);
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);

  if (folder == NULL && pictures != NULL && g_file_test (pictures, G_FILE_TEST_IS_DIR))
    folder = g_file_new_for_path (pictures);
  if (folder == NULL)
    folder = g_file_new_for_path (g_get_home_dir ());
  return folder;
}
