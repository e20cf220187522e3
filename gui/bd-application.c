/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-application.h"
#include "bd-preferences-dialog.h"
#include "bd-settings-migrate.h"
#include "bd-window.h"

struct _BdApplication
{
  AdwApplication  parent_instance;

  GSettings      *settings;
  BdEngine       *engine;
};

G_DEFINE_FINAL_TYPE (BdApplication, bd_application, ADW_TYPE_APPLICATION)

BdApplication *
bd_application_new (void)
{
  return g_object_new (BD_TYPE_APPLICATION,
                       "application-id", APP_ID,
                       "flags", G_APPLICATION_HANDLES_OPEN,
                       "resource-base-path", "/org/backdrop_app/backdrop",
                       NULL);
}

BdEngine *
bd_application_get_engine (BdApplication *self)
{
  g_return_val_if_fail (BD_IS_APPLICATION (self), NULL);
  return self->engine;
}

GSettings *
bd_application_get_settings (BdApplication *self)
{
  g_return_val_if_fail (BD_IS_APPLICATION (self), NULL);
  return self->settings;
}

static void
update_color_scheme (BdApplication *self)
{
  g_autofree char *style = g_settings_get_string (self->settings, "style-variant");
  AdwColorScheme scheme = ADW_COLOR_SCHEME_DEFAULT;

  if (g_str_equal (style, "light"))
    scheme = ADW_COLOR_SCHEME_FORCE_LIGHT;
  else if (g_str_equal (style, "dark"))
    scheme = ADW_COLOR_SCHEME_FORCE_DARK;

  adw_style_manager_set_color_scheme (adw_style_manager_get_default (), scheme);
}

static void
about_action (GSimpleAction *action,
              GVariant      *parameter,
              gpointer       user_data)
{
  GtkApplication *app = user_data;
  static const char *developers[] = { "The Backdrop developers", NULL };
  g_autofree char *debug_info = NULL;
  AdwDialog *dialog;

  debug_info = g_strdup_printf ("Backdrop %s\nlibbackdrop %s\nGTK %u.%u.%u\nlibadwaita %u.%u.%u\nModel: %s\n",
                                PACKAGE_VERSION, BD_VERSION_STRING,
                                gtk_get_major_version (), gtk_get_minor_version (), gtk_get_micro_version (),
                                adw_get_major_version (), adw_get_minor_version (), adw_get_micro_version (),
                                bd_engine_get_model_path (BD_APPLICATION (app)->engine));

  dialog = adw_about_dialog_new ();
  adw_about_dialog_set_application_name (ADW_ABOUT_DIALOG (dialog), _("Backdrop"));
  adw_about_dialog_set_application_icon (ADW_ABOUT_DIALOG (dialog), APP_ID);
  adw_about_dialog_set_version (ADW_ABOUT_DIALOG (dialog), PACKAGE_VERSION);
  adw_about_dialog_set_developer_name (ADW_ABOUT_DIALOG (dialog), _("The Backdrop developers"));
  adw_about_dialog_set_developers (ADW_ABOUT_DIALOG (dialog), developers);
  adw_about_dialog_set_comments (ADW_ABOUT_DIALOG (dialog),
                                 _("Remove and replace the background of portrait photos, on your own computer."));
  adw_about_dialog_set_license_type (ADW_ABOUT_DIALOG (dialog), GTK_LICENSE_APACHE_2_0);
  /* The project's own homepage (data/meson.build); no issue tracker is public yet. */
  adw_about_dialog_set_website (ADW_ABOUT_DIALOG (dialog), APP_HOMEPAGE);
  adw_about_dialog_set_debug_info (ADW_ABOUT_DIALOG (dialog), debug_info);
  /* Translators: put your names here, one per line */
  adw_about_dialog_set_translator_credits (ADW_ABOUT_DIALOG (dialog), _("translator-credits"));

  adw_dialog_present (dialog, GTK_WIDGET (gtk_application_get_active_window (app)));
}

static void
preferences_action (GSimpleAction *action,
                    GVariant      *parameter,
                    gpointer       user_data)
{
  GtkApplication *app = user_data;

  adw_dialog_present (bd_preferences_dialog_new (), GTK_WIDGET (gtk_application_get_active_window (app)));
}

static void
new_window_action (GSimpleAction *action,
                   GVariant      *parameter,
                   gpointer       user_data)
{
  gtk_window_present (GTK_WINDOW (bd_window_new (BD_APPLICATION (user_data))));
}

static void quit_next (BdApplication *self);

static void
on_window_closed_for_quit (BdWindow *window,
                           gboolean  closed,
                           gpointer  user_data)
{
  g_autoptr(BdApplication) self = user_data;

  /* Cancel in any window stops the quit there. */
  if (closed)
    quit_next (self);
}

/* Closes the windows with unsaved edits one at a time, asking in each, then quits. */
static void
quit_next (BdApplication *self)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    if (BD_IS_WINDOW (l->data) && bd_window_get_has_unsaved (l->data))
      {
        gtk_window_present (l->data);
        bd_window_close_asking (l->data, on_window_closed_for_quit, g_object_ref (self));
        return;
      }

  g_application_quit (G_APPLICATION (self));
}

static void
quit_action (GSimpleAction *action,
             GVariant      *parameter,
             gpointer       user_data)
{
  quit_next (BD_APPLICATION (user_data));
}

static const GActionEntry app_actions[] = {
  { .name = "about", .activate = about_action },
  { .name = "preferences", .activate = preferences_action },
  { .name = "new-window", .activate = new_window_action },
  { .name = "quit", .activate = quit_action },
};

static void
bd_application_startup (GApplication *application)
{
  BdApplication *self = BD_APPLICATION (application);
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *preferences_accels[] = { "<Control>comma", NULL };
  static const char *new_window_accels[] = { "<Control>n", NULL };

  G_APPLICATION_CLASS (bd_application_parent_class)->startup (application);

  g_set_application_name (_("Backdrop"));
  gtk_window_set_default_icon_name (APP_ID);

  self->settings = g_settings_new (APP_ID);
  if (bd_settings_migrate (self->settings, APP_OLD_SETTINGS_PATH))
    g_debug ("settings of the earlier application ID copied from %s", APP_OLD_SETTINGS_PATH);
  self->engine = bd_engine_new (NULL);
  g_settings_bind (self->settings, "device", self->engine, "device", G_SETTINGS_BIND_GET);
  g_settings_bind (self->settings, "gpu-index", self->engine, "gpu-index", G_SETTINGS_BIND_GET);
  g_settings_bind (self->settings, "keep-all-people", self->engine, "all-people", G_SETTINGS_BIND_GET);

  g_signal_connect_object (self->settings, "changed::style-variant",
                           G_CALLBACK (update_color_scheme), self, G_CONNECT_SWAPPED);
  update_color_scheme (self);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_actions, G_N_ELEMENTS (app_actions), self);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.preferences", preferences_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.new-window", new_window_accels);
}

static void
bd_application_activate (GApplication *application)
{
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (application));

  if (window == NULL)
    window = GTK_WINDOW (bd_window_new (BD_APPLICATION (application)));

  gtk_window_present (window);
}

static void
bd_application_open (GApplication  *application,
                     GFile        **files,
                     int            n_files,
                     const char    *hint)
{
  BdWindow *window = BD_WINDOW (gtk_application_get_active_window (GTK_APPLICATION (application)));

  /* A window already at work keeps its photo; new files get a window of their own. */
  if (window == NULL || !g_str_equal (bd_window_get_page (window), "welcome"))
    window = bd_window_new (BD_APPLICATION (application));

  bd_window_open_files (window, files, n_files);
  gtk_window_present (GTK_WINDOW (window));
}

static void
bd_application_dispose (GObject *object)
{
  BdApplication *self = BD_APPLICATION (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (bd_application_parent_class)->dispose (object);
}

static void
bd_application_class_init (BdApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = bd_application_dispose;
  app_class->startup = bd_application_startup;
  app_class->activate = bd_application_activate;
  app_class->open = bd_application_open;
}

static void
bd_application_init (BdApplication *self)
{
}
