/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <locale.h>

#include <glib/gi18n.h>

#include "bd-application.h"

int
main (int   argc,
      char *argv[])
{
  g_autoptr(BdApplication) app = NULL;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = bd_application_new ();
  return g_application_run (G_APPLICATION (app), argc, argv);
}
