/* SPDX-License-Identifier: Apache-2.0 */
#include "bd-output-name.h"

#include <string.h>

char *
bd_output_name (const char *source_name, const char *kind, const char *extension, BdOutputNameTaken taken,
                gpointer data)
{
	g_autofree char *base = source_name && *source_name ? g_path_get_basename (source_name) : g_strdup ("photo");
	char *dot = strrchr (base, '.');
	if (dot && dot != base)   /* ".hidden" keeps its whole name */
		*dot = '\0';
	char *name = g_strdup_printf ("%s-%s.%s", base, kind, extension);
	for (guint n = 2; taken && taken (name, data); n++) {
		g_free (name);
		name = g_strdup_printf ("%s-%s-%u.%s", base, kind, n, extension);
	}
	return name;
}
