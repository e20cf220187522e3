/* SPDX-License-Identifier: Apache-2.0 */
/* libbackdrop for GLib programs, one way for all of them (CLI, app, GIMP plug-in): its
 * statuses as a GError domain, where the model is found, and device names. */
#pragma once

#include <glib.h>

#include "backdrop.h"

G_BEGIN_DECLS

/* Errors from libbackdrop: the code is the bd_status (BD_ERR_IO, BD_ERR_FORMAT, ...). */
#define BD_LIBRARY_ERROR (bd_library_error_quark ())
GQuark    bd_library_error_quark (void);

/* Sets @error from @bd: its status as the code, its message, after "@context: " when
 * @context is given. A cancelled run becomes G_IO_ERROR_CANCELLED, as GIO's own are. */
void      bd_library_set_error (GError **error, const bd_error *bd, const char *context);

/* The model to use when none is named: $BACKDROP_MODEL when set, else the installed one,
 * else the one of an uninstalled build beside the program (../data/), else the installed
 * path (which then says where it should be). */
char     *bd_library_default_model (void);

/* "auto", "cpu", "cuda" (or "gpu"), "cuda:N": FALSE for anything else. */
gboolean  bd_library_parse_device (const char *text, bd_device *device, int *index);

G_END_DECLS
