/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include <libgimp/gimp.h>
#include <libgimp/gimpui.h>

G_BEGIN_DECLS

/* The dialog's preview of @drawable: its thumbnail with what the background removal would
 * take away under red, for the settings in @config, following them as they change. The
 * network runs on the CPU on the thumbnail (a fraction of a second); @model_path NULL for
 * the default model. Where it fails (no model), the widget shows why instead. */
GtkWidget *bd_preview_new (GimpDrawable        *drawable,
                           GimpProcedureConfig *config,
                           const gchar         *model_path);

G_END_DECLS
