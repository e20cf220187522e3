/* SPDX-License-Identifier: Apache-2.0 */
/* libbackdrop for GLib programs, one way for all of them (CLI, app, GIMP plug-in): its
 * statuses as a GError domain, where the model is found, device names, and opening a model
 * and a session and checking a photo's size with the same words in every program. */
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

/* bd_library_parse_device for programs that can run a session per GPU: "cuda:all" too, which
 * sets *@all (and BD_DEVICE_CUDA); the others clear it. */
gboolean  bd_library_parse_devices (const char *text, bd_device *device, int *index, gboolean *all);

/* bd_model_open on @path (NULL: bd_library_default_model ()). On failure "Could not load the
 * model “PATH”: why", or, when the installed model is missing, how to install it. */
gboolean  bd_library_open_model (const char *path, bd_model **model, GError **error);

/* bd_session_new; on failure "Could not use the GPU: why" when @options ask for CUDA, else
 * "Could not start Backdrop: why". */
gboolean  bd_library_new_session (const bd_model *model, const bd_session_options *options,
                                  bd_session **session, GError **error);

/* @lanes sessions for @options on each GPU (@all, whatever device_index says), else on
 * @options' one device (each with its share of the CPU threads): an array of *@n_sessions,
 * NULL-terminated, device by device, for bd_library_free_sessions. With no usable GPU, cuda:all
 * fails as cuda does: "Could not use the GPU: why". */
gboolean  bd_library_new_sessions (const bd_model *model, const bd_session_options *options, gboolean all,
                                   guint lanes, bd_session ***sessions, guint *n_sessions, GError **error);
void      bd_library_free_sessions (bd_session **sessions);

/* FALSE with BD_LIBRARY_ERROR / BD_ERR_TOO_LARGE when a @width x @height photo is over the
 * library's limit (BD_MAX_PIXELS) or empty; @name (a file's or layer's) is for the message. */
gboolean  bd_library_check_size (const char *name, int width, int height, GError **error);

G_END_DECLS
