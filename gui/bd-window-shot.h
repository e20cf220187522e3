/* SPDX-License-Identifier: Apache-2.0 */
/* Renders a window as it is on screen into a PNG: for the test's screenshot and for
 * docs/screenshots (gui/screenshots.sh). With @decorate the window gets rounded corners and
 * a soft shadow on a transparent margin, as a compositor would draw it. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

gboolean bd_window_shot_save (GtkWindow   *window,
                              const char  *path,
                              gboolean     decorate,
                              GError     **error);

/* For scripted runs of the app (the test, the screenshots): run the main loop until
 * @condition holds, FALSE after 300 s; or for @ms milliseconds, so animations settle. */
typedef gboolean (*BdCondition) (gpointer data);

gboolean bd_main_loop_wait_for (BdCondition condition,
                                gpointer    data);
void     bd_main_loop_spin     (guint       ms);
/* Runs the main loop until @widget has been drawn once (a busy machine can be late with a
 * new window's first frame; until then it snapshots to nothing); FALSE after 300 s. */
gboolean bd_widget_wait_drawn  (GtkWidget  *widget);

G_END_DECLS
