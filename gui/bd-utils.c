/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-image-types.h"
#include "bd-recent.h"
#include "bd-utils.h"

/* The first AdwToastOverlay at or below @widget. */
static GtkWidget *
find_toast_overlay (GtkWidget *widget)
{
  if (ADW_IS_TOAST_OVERLAY (widget))
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *overlay = find_toast_overlay (child);

      if (overlay != NULL)
        return overlay;
    }

  return NULL;
}

/* Lifts or lowers every floating bar (style class "floating-bar") under @widget. */
static void
set_floating_bars_lifted (GtkWidget *widget,
                          gboolean   lifted)
{
  if (gtk_widget_has_css_class (widget, "floating-bar"))
    {
      if (lifted)
        gtk_widget_add_css_class (widget, "above-toast");
      else
        gtk_widget_remove_css_class (widget, "above-toast");
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    set_floating_bars_lifted (child, lifted);
}

/* Toasts of @overlay not yet dismissed; the bars come down when the last goes. */
static void
on_toast_dismissed (AdwToast  *toast,
                    GtkWidget *overlay)
{
  guint pending = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (overlay), "bd-pending-toasts"));

  pending = pending > 0 ? pending - 1 : 0;
  g_object_set_data (G_OBJECT (overlay), "bd-pending-toasts", GUINT_TO_POINTER (pending));
  if (pending == 0)
    set_floating_bars_lifted (overlay, FALSE);
}

AdwToast *
bd_show_toast (GtkWidget  *widget,
               const char *title)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  AdwToast *toast;

  /* The window itself, and dialogs shown over it, sit above its overlay: look down from
   * the window for it. */
  if (overlay == NULL && gtk_widget_get_root (widget) != NULL)
    overlay = find_toast_overlay (GTK_WIDGET (gtk_widget_get_root (widget)));

  if (overlay == NULL)
    {
      g_message ("%s", title);
      return NULL;
    }

  toast = adw_toast_new (title);
  g_object_set_data (G_OBJECT (overlay), "bd-pending-toasts",
                     GUINT_TO_POINTER (GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (overlay),
                                                                            "bd-pending-toasts")) + 1));
  /* Not holding the overlay: closed with a toast showing, a window's widgets would live on
   * until the toast went, and then go from inside its finalization (GLib aborted there, in
   * invalid_closure_notify). */
  g_signal_connect_object (toast, "dismissed", G_CALLBACK (on_toast_dismissed), overlay, 0);
  set_floating_bars_lifted (overlay, TRUE);
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), toast);
  return toast;
}

void
bd_show_error (GtkWidget    *widget,
               const char   *heading,
               const GError *error)
{
  AdwDialog *dialog = adw_alert_dialog_new (heading, error ? error->message : NULL);

  adw_alert_dialog_add_response (ADW_ALERT_DIALOG (dialog), "close", _("_Close"));
  adw_dialog_present (dialog, widget);
}

static gboolean
combo_get (GValue   *value,
           GVariant *variant,
           gpointer  user_data)
{
  const char * const *nicks = user_data;
  const char *nick = g_variant_get_string (variant, NULL);

  for (guint i = 0; nicks[i] != NULL; i++)
    if (g_str_equal (nicks[i], nick))
      {
        g_value_set_uint (value, i);
        return TRUE;
      }

  return FALSE;
}

static GVariant *
combo_set (const GValue       *value,
           const GVariantType *expected_type,
           gpointer            user_data)
{
  const char * const *nicks = user_data;
  guint index = g_value_get_uint (value);

  if (index >= g_strv_length ((char **) nicks))
    return NULL;

  return g_variant_new_string (nicks[index]);
}

void
bd_settings_bind_combo (GSettings          *settings,
                        const char         *key,
                        AdwComboRow        *row,
                        const char * const *nicks)
{
  g_settings_bind_with_mapping (settings, key, row, "selected", G_SETTINGS_BIND_DEFAULT,
                                combo_get, combo_set, (gpointer) nicks, NULL);
}

const char *
bd_settings_export_extension (GSettings *settings)
{
  g_autofree char *format = g_settings_get_string (settings, "export-format");

  if (g_str_equal (format, "webp"))
    return "webp";
  if (g_str_equal (format, "jpeg"))
    return "jpg";
  return "png";
}

GtkFileDialog *
bd_photo_dialog_new (const char *title)
{
  GtkFileDialog *dialog = gtk_file_dialog_new ();
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new ();
  g_autoptr(GFile) folder = bd_recent_folder ();
  gsize n_types;
  const BdImageType *types = bd_image_types (&n_types);

  /* The types the programs read (common/bd-image-types.h), not every format gdk-pixbuf
   * knows: a BMP or GIF offered here would only be refused after the user picked it. */
  gtk_file_filter_set_name (filter, _("Photos"));
  for (gsize i = 0; i < n_types; i++)
    gtk_file_filter_add_mime_type (filter, types[i].mime_type);

  gtk_file_dialog_set_title (dialog, title);
  gtk_file_dialog_set_default_filter (dialog, filter);
  /* A folder, not GTK's Recent view: the next photo is usually beside the last one; and
   * closed while it fills, GTK 4.18's Recent view crashes, a file query's callback reading
   * the freed view (opened and closed 300 times a run: 3 runs of 10 crashed, none of 20 in
   * a folder). */
  gtk_file_dialog_set_initial_folder (dialog, folder);
  return dialog;
}

GMenuModel *
bd_primary_menu_new (void)
{
  g_autoptr(GtkBuilder) builder =
    gtk_builder_new_from_resource ("/org/backdrop_app/backdrop/bd-primary-menu.ui");

  return g_object_ref (G_MENU_MODEL (gtk_builder_get_object (builder, "primary-menu")));
}

char *
bd_format_seconds (double seconds)
{
  if (seconds < 1.0)
    /* Translators: a duration in milliseconds */
    return g_strdup_printf (_("%.0f ms"), seconds * 1000.0);

  /* Translators: a duration in seconds */
  return g_strdup_printf (_("%.1f s"), seconds);
}

gboolean
bd_drop_accept_foreign (GtkDropTarget *target,
                        GdkDrop       *drop,
                        gpointer       user_data)
{
  return gdk_drop_get_drag (drop) == NULL &&
         gdk_content_formats_match (gtk_drop_target_get_formats (target), gdk_drop_get_formats (drop));
}

GPtrArray *
bd_files_from_dialog (GtkFileDialog *dialog,
                      GAsyncResult  *result)
{
  g_autoptr(GListModel) files = gtk_file_dialog_open_multiple_finish (dialog, result, NULL);
  GPtrArray *array;

  if (files == NULL)
    return NULL;
  array = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < g_list_model_get_n_items (files); i++)
    g_ptr_array_add (array, g_list_model_get_item (files, i));
  return array;
}
