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
	*index = 0;
	if (!g_strcmp0 (text, "auto"))
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
bd_library_check_size (const char *name, int width, int height, GError **error)
{
	if (width > 0 && height > 0 && (guint64) width * (guint64) height <= BD_MAX_PIXELS)
		return TRUE;
	g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_TOO_LARGE,
	             _("“%s” is %d×%d pixels; Backdrop handles photos up to %d megapixels."),
	             name, width, height, (int) (BD_MAX_PIXELS / 1000000));
	return FALSE;
}
