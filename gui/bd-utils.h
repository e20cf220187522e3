/* SPDX-License-Identifier: Apache-2.0 */
/* Small things the widgets share: toasts, error dialogs, GSettings enum <-> row bindings. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

/* Shows @title in the AdwToastOverlay above @widget, or else in its window's (for the window
 * itself and dialogs over it); returns the toast (not owned). */
AdwToast *bd_show_toast          (GtkWidget   *widget,
                                  const char  *title);
/* An alert with a plain heading and the error's message. */
void      bd_show_error          (GtkWidget   *widget,
                                  const char  *heading,
                                  const GError *error);
/* Binds an enum key to an AdwComboRow's "selected": item i stands for @nicks[i]. */
void      bd_settings_bind_combo (GSettings   *settings,
                                  const char  *key,
                                  AdwComboRow *row,
                                  const char * const *nicks);
/* The file name extension for the "export-format" setting: "png", "webp" or "jpg". */
const char *bd_settings_export_extension (GSettings *settings);
/* "38 ms", "1.2 s". */
char       *bd_format_seconds (double seconds);
/* The main menu that every page's header offers (bd-primary-menu.ui). */
GMenuModel *bd_primary_menu_new (void);
/* A drop target's "accept" handler that refuses what is dragged out of this app itself
 * (the result is not a new photo, nor a background). */
gboolean    bd_drop_accept_foreign (GtkDropTarget *target,
                                    GdkDrop       *drop,
                                    gpointer       user_data);
/* A file dialog titled @title for photos: the formats the programs read, starting where
 * bd_recent_folder() says. */
GtkFileDialog *bd_photo_dialog_new (const char *title);

/* The files an "open several" file dialog returned, as a GFile array (NULL: cancelled). */
GPtrArray  *bd_files_from_dialog (GtkFileDialog *dialog,
                                  GAsyncResult  *result);

G_END_DECLS
