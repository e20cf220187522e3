/* SPDX-License-Identifier: Apache-2.0 */
/* How a result is named after its photo, the one rule of the CLI's --output-dir and the app's
 * Export All and save dialog:
 *
 *     STEM-KIND.EXT, then STEM-KIND-2.EXT, STEM-KIND-3.EXT ... while the name is taken
 *
 * STEM is the photo's name without its extension ("portrait" for "portrait.jpg"), KIND says
 * what the file holds (BD_OUTPUT_CUTOUT, BD_OUTPUT_MASK, BD_OUTPUT_COMPOSITE) and EXT is the
 * format written. The KIND keeps a result beside its photo from ever taking the photo's own
 * name; the number keeps two photos of one name (from two folders) apart. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define BD_OUTPUT_CUTOUT    "cutout"
#define BD_OUTPUT_MASK      "mask"
#define BD_OUTPUT_COMPOSITE "composite"

/* Whether @name (a file name, no folder) may not be used; @data is the caller's. */
typedef gboolean (*BdOutputNameTaken) (const char *name, gpointer data);

/* The name for the result of @source_name (a file name or path; "photo" when empty) of
 * @kind in format @extension ("png", no dot): the first of the rule's names that @taken
 * (NULL: none is) does not refuse. A file name, without folder. */
char *bd_output_name (const char        *source_name,
                      const char        *kind,
                      const char        *extension,
                      BdOutputNameTaken  taken,
                      gpointer           data);

G_END_DECLS
