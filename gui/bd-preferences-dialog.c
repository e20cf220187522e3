/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-application.h"
#include "bd-preferences-dialog.h"
#include "bd-utils.h"

struct _BdPreferencesDialog
{
  AdwPreferencesDialog  parent_instance;

  GSettings            *settings;

  AdwPreferencesGroup  *removal_group;
  AdwComboRow          *device_row;
  AdwComboRow          *gpu_row;
  AdwSwitchRow         *all_people_row;
  AdwComboRow          *format_row;
  AdwSpinRow           *quality_row;
  AdwComboRow          *style_row;
};

G_DEFINE_FINAL_TYPE (BdPreferencesDialog, bd_preferences_dialog, ADW_TYPE_PREFERENCES_DIALOG)

/* In the order of the rows' items; without a usable graphics card it is not offered. */
static const char * const device_nicks[] = { "auto", "gpu", "cpu", NULL };
static const char * const device_nicks_no_gpu[] = { "auto", "cpu", NULL };
static const char * const format_nicks[] = { "png", "webp", "jpeg", NULL };
static const char * const style_nicks[] = { "default", "light", "dark", NULL };

/* Asked once: the first question starts CUDA, which takes a moment where a driver is. */
static int
gpu_count (void)
{
  static gsize answer;

  if (g_once_init_enter (&answer))
    g_once_init_leave (&answer, (gsize) bd_device_count (BD_DEVICE_CUDA) + 1);
  return (int) answer - 1;
}

static gboolean
have_gpu (void)
{
  return gpu_count () > 0;
}

/* Said under the group's title, not as the row's subtitle: beside a long subtitle the row's
 * value shrinks to "A…". */
static void
update_device_description (BdPreferencesDialog *self)
{
  GApplication *app = g_application_get_default ();
  g_autofree char *ran = NULL;
  g_autofree char *subtitle = NULL;

  if (BD_IS_APPLICATION (app))
    ran = bd_engine_dup_device_description (bd_application_get_engine (BD_APPLICATION (app)));

  if (ran != NULL)
    /* Translators: %s names a device, e.g. "NVIDIA H200" */
    subtitle = g_strdup_printf (_("Last used: %s"), ran);
  else if (!have_gpu ())
    subtitle = g_strdup (_("No usable NVIDIA graphics card was found: the processor removes backgrounds"));
  else
    subtitle = g_strdup (_("Automatic uses an NVIDIA graphics card when one can be used"));

  adw_preferences_group_set_description (self->removal_group, subtitle);
}

/* The card row: only where there is a choice of cards (or one chosen earlier that is not
 * there now, so that it can be changed back); of no use while the processor is chosen. */
static void
setup_gpu_row (BdPreferencesDialog *self)
{
  int chosen = g_settings_get_int (self->settings, "gpu-index");
  int cards = MAX (gpu_count (), chosen + 1);
  g_autoptr(GtkStringList) list = gtk_string_list_new (NULL);

  for (int i = 0; i < cards; i++)
    {
      /* Translators: an NVIDIA graphics card by its number, from 0 as nvidia-smi shows them */
      g_autofree char *name = g_strdup_printf (_("Card %d"), i);

      gtk_string_list_append (list, name);
    }
  adw_combo_row_set_model (self->gpu_row, G_LIST_MODEL (list));
  adw_combo_row_set_selected (self->gpu_row, (guint) chosen);
  gtk_widget_set_visible (GTK_WIDGET (self->gpu_row), cards > 1);
}

static void
on_gpu_selected (BdPreferencesDialog *self)
{
  guint selected = adw_combo_row_get_selected (self->gpu_row);

  if (selected != GTK_INVALID_LIST_POSITION)
    g_settings_set_int (self->settings, "gpu-index", (int) selected);
}

static void
update_gpu_sensitive (BdPreferencesDialog *self)
{
  g_autofree char *device = g_settings_get_string (self->settings, "device");

  gtk_widget_set_sensitive (GTK_WIDGET (self->gpu_row), !g_str_equal (device, "cpu"));
}

static void
update_quality_sensitive (BdPreferencesDialog *self)
{
  gtk_widget_set_sensitive (GTK_WIDGET (self->quality_row),
                            adw_combo_row_get_selected (self->format_row) == 2);
}

AdwDialog *
bd_preferences_dialog_new (void)
{
  return g_object_new (BD_TYPE_PREFERENCES_DIALOG, NULL);
}

static void
bd_preferences_dialog_dispose (GObject *object)
{
  BdPreferencesDialog *self = BD_PREFERENCES_DIALOG (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), BD_TYPE_PREFERENCES_DIALOG);
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (bd_preferences_dialog_parent_class)->dispose (object);
}

static void
bd_preferences_dialog_class_init (BdPreferencesDialogClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = bd_preferences_dialog_dispose;

  gtk_widget_class_set_template_from_resource (widget_class, "/org/backdrop_app/backdrop/bd-preferences-dialog.ui");
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, removal_group);
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, device_row);
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, gpu_row);
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, all_people_row);
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, format_row);
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, quality_row);
  gtk_widget_class_bind_template_child (widget_class, BdPreferencesDialog, style_row);
}

static void
bd_preferences_dialog_init (BdPreferencesDialog *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  self->settings = g_settings_new (APP_ID);
  g_autofree char *device = g_settings_get_string (self->settings, "device");
  if (!have_gpu () && !g_str_equal (device, "gpu"))
    {
      /* No card to offer. (Chosen earlier, it stays listed, so that it can be changed.) */
      const char * const items[] = { C_("device", "Automatic"), C_("device", "Processor"), NULL };
      g_autoptr(GtkStringList) list = gtk_string_list_new (items);

      adw_combo_row_set_model (self->device_row, G_LIST_MODEL (list));
      bd_settings_bind_combo (self->settings, "device", self->device_row, device_nicks_no_gpu);
    }
  else
    bd_settings_bind_combo (self->settings, "device", self->device_row, device_nicks);
  bd_settings_bind_combo (self->settings, "export-format", self->format_row, format_nicks);
  bd_settings_bind_combo (self->settings, "style-variant", self->style_row, style_nicks);
  g_settings_bind (self->settings, "jpeg-quality", self->quality_row, "value", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "keep-all-people", self->all_people_row, "active", G_SETTINGS_BIND_DEFAULT);

  setup_gpu_row (self);
  g_signal_connect_object (self->gpu_row, "notify::selected",
                           G_CALLBACK (on_gpu_selected), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->settings, "changed::device",
                           G_CALLBACK (update_gpu_sensitive), self, G_CONNECT_SWAPPED);
  update_gpu_sensitive (self);

  g_signal_connect_object (self->format_row, "notify::selected",
                           G_CALLBACK (update_quality_sensitive), self, G_CONNECT_SWAPPED);
  update_quality_sensitive (self);
  update_device_description (self);
}
