/* SPDX-License-Identifier: Apache-2.0 */
/* The application: one engine (model + session) and one GSettings shared by its windows;
 * opens files from the command line and the file manager. */
#pragma once

#include <adwaita.h>

#include "bd-engine.h"

G_BEGIN_DECLS

#define BD_TYPE_APPLICATION (bd_application_get_type ())

G_DECLARE_FINAL_TYPE (BdApplication, bd_application, BD, APPLICATION, AdwApplication)

BdApplication *bd_application_new          (void);
BdEngine      *bd_application_get_engine   (BdApplication *self);
GSettings     *bd_application_get_settings (BdApplication *self);

G_END_DECLS
