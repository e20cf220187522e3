/* SPDX-License-Identifier: Apache-2.0 */
#include "bd-library.h"

#include <gio/gio.h>

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
