/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include "bd-library.h"

#include <gio/gio.h>
#include <glib/gi18n-lib.h>

G_DEFINE_QUARK (bd-library-error-quark, bd_library_error)

void
bd_library_set_error (GError **error, const bd_error *bd, const char *context)
{
	if (bd->status == BD_ERR_CANCELLED) {
		g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, bd->message);
		return;
	}
	if (context)
		g_set_error (error, BD_LIBRARY_ERROR, (gint) bd->status, "%s: %s", context, bd->message);
	else
		g_set_error_literal (error, BD_LIBRARY_ERROR, (gint) bd->status, bd->message);
}

char *
bd_library_default_model (void)
{
	const char *env = g_getenv ("BACKDROP_MODEL");
	if (env && *env)
		return g_strdup (env);
	if (g_file_test (BD_MODEL_PATH, G_FILE_TEST_IS_REGULAR))
		return g_strdup (BD_MODEL_PATH);
	/* Run from a build folder: BUILD/cli/backdrop-cli finds BUILD/data's copy of the model. */
	g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
	if (self) {
		g_autofree char *dir = g_path_get_dirname (self);
		char *beside = g_build_filename (dir, "..", "data", BD_MODEL_NAME, NULL);
		if (g_file_test (beside, G_FILE_TEST_IS_REGULAR))
			return beside;
		g_free (beside);
	}
	return g_strdup (BD_MODEL_PATH);
}

gboolean
bd_library_parse_device (const char *text, bd_device *device, int *index)
{
	gboolean all;
	return bd_library_parse_devices (text, device, index, &all) && !all;
}

gboolean
bd_library_parse_devices (const char *text, bd_device *device, int *index, gboolean *all)
{
	*index = 0;
	*all = FALSE;
	if (!text)
		return FALSE;
	if (!g_strcmp0 (text, "cuda:all")) {
		*device = BD_DEVICE_CUDA;
		*all = TRUE;
	} else if (!g_strcmp0 (text, "auto"))
		*device = BD_DEVICE_AUTO;
	else if (!g_strcmp0 (text, "cpu"))
		*device = BD_DEVICE_CPU;
	else if (!g_strcmp0 (text, "cuda") || !g_strcmp0 (text, "gpu"))
		*device = BD_DEVICE_CUDA;
	else if (g_str_has_prefix (text, "cuda:")) {
		/* cuda:N, the GPU numbered N (from 0, as nvidia-smi and CUDA_VISIBLE_DEVICES count) */
		guint64 n;
		if (!g_ascii_string_to_unsigned (text + 5, 10, 0, G_MAXINT, &n, NULL))
			return FALSE;
		*device = BD_DEVICE_CUDA;
		*index = (int) n;
	} else
		return FALSE;
	return TRUE;
}

gboolean
bd_library_open_model (const char *path, bd_model **model, GError **error)
{
	g_autofree char *fallback = path ? NULL : bd_library_default_model ();
	const char *file = path ? path : fallback;
	g_autofree char *name = g_filename_display_name (file);
	*model = NULL;
	if (g_str_equal (file, BD_MODEL_PATH) && !g_file_test (file, G_FILE_TEST_EXISTS)) {
		/* The usual cause: a program or the GIMP plug-in copied somewhere on its own. */
		g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_IO,
		             _("Backdrop’s model is not installed: “%s” is missing. Install Backdrop with "
		               "“meson install”, which puts the model in place (a program or plug-in copied "
		               "on its own does not bring it), or set BACKDROP_MODEL to a model file."), name);
		return FALSE;
	}
	bd_error bd = { 0 };
	if (bd_model_open (file, model, &bd) == BD_OK)
		return TRUE;
	g_autofree char *context = g_strdup_printf (_("Could not load the model “%s”"), name);
	bd_library_set_error (error, &bd, context);
	return FALSE;
}

gboolean
bd_library_new_session (const bd_model *model, const bd_session_options *options, bd_session **session,
                        GError **error)
{
	bd_error bd = { 0 };
	if (bd_session_new (model, options, session, &bd) == BD_OK)
		return TRUE;
	bd_library_set_error (error, &bd, options && options->device == BD_DEVICE_CUDA ? _("Could not use the GPU")
	                                                                              : _("Could not start Backdrop"));
	return FALSE;
}

gboolean
bd_library_new_sessions (const bd_model *model, const bd_session_options *options, gboolean all, guint lanes,
                         bd_session ***sessions, guint *n_sessions, GError **error)
{
	bd_session_options one = *options;
	lanes = MAX (lanes, 1);
	guint n = lanes;
	if (all) {
		/* No GPU: one session on GPU 0 fails and says why (no driver, a build without CUDA). */
		n = (guint) MAX (bd_device_count (BD_DEVICE_CUDA), 1) * lanes;
		one.device = BD_DEVICE_CUDA;
	}
	/* Sessions side by side share the cores (the CPU network; on a GPU, compositing) rather
	 * than each taking them all. */
	if (n > 1 && options->threads == 0)
		one.threads = (int) MAX (g_get_num_processors () / n, 1);
	*sessions = NULL;
	*n_sessions = 0;
	bd_session **made = g_new0 (bd_session *, n + 1);
	for (guint i = 0; i < n; i++) {
		if (all)
			one.device_index = (int) (i / lanes);
		if (!bd_library_new_session (model, &one, &made[i], error)) {
			bd_library_free_sessions (made);
			return FALSE;
		}
	}
	*sessions = made;
	*n_sessions = n;
	return TRUE;
}

void
bd_library_free_sessions (bd_session **sessions)
{
	for (bd_session **s = sessions; s && *s; s++)
		bd_session_free (*s);
	g_free (sessions);
}

gboolean
bd_library_check_size (const char *name, int width, int height, GError **error)
{
	if (width > 0 && height > 0 && (guint64) width * (guint64) height <= BD_MAX_PIXELS)
		return TRUE;
	g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_TOO_LARGE,
	             _("“%s” is %d×%d pixels; Backdrop handles photos up to %d megapixels."),
	             name, width, height, (int) (BD_MAX_PIXELS / 1000000));
	return FALSE;
}
