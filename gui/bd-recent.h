/* SPDX-License-Identifier: Apache-2.0 */
/* Recent photos: the ones opened in Backdrop, from the desktop's recent files, as a menu;
 * and the folder where photo dialogs start. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define BD_RECENT_MAX 8

/* Records @file as opened in Backdrop. */
void        bd_recent_add      (GFile *file);

/* A menu of the photos opened last, newest first, each "editor.open-recent" with the
 * file's URI; it follows the recent files as they change. */
GMenuModel *bd_recent_menu_new (void);

/* Where a file dialog for photos starts: the folder of the photo opened last in Backdrop,
 * else the Pictures folder, else home. */
GFile      *bd_recent_folder   (void);

G_END_DECLS
