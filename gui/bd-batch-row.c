/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-batch-row.h"
#include "bd-utils.h"

struct _BdBatchRow
{
  AdwActionRow    parent_instance;

  BdBatchItem    *item;

  GtkStack       *thumbnail_stack;
  GtkImage       *thumbnail;
  GtkProgressBar *progress_bar;
  GtkImage       *state_icon;
  GtkButton      *remove_button;
};

G_DEFINE_FINAL_TYPE (BdBatchRow, bd_batch_row, ADW_TYPE_ACTION_ROW)

enum {
  SIGNAL_REMOVE,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
update_state (BdBatchRow *self)
{
  BdBatchItem *item = self->item;
  BdBatchItemState state = bd_batch_item_get_state (item);
  const char *message = bd_batch_item_get_message (item);
  g_autofree char *subtitle = NULL;
  const char *icon = NULL;

  switch (state)
    {
    case BD_BATCH_ITEM_WAITING:
      subtitle = g_strdup (_("Waiting"));
      break;

    case BD_BATCH_ITEM_WORKING:
      subtitle = g_strdup (_("Removing the background…"));
      break;

    case BD_BATCH_ITEM_DONE:
      {
        g_autofree char *time = bd_format_seconds (bd_batch_item_get_seconds (item));

        /* Translators: a batch row's state; %s is a duration such as "1.2 s" */
        subtitle = g_strdup_printf (_("Ready in %s"), time);
      }
      icon = "object-select-symbolic";
      break;

    case BD_BATCH_ITEM_FAILED:
      subtitle = g_strdup (message ? message : _("Failed"));
      icon = "dialog-warning-symbolic";
      break;

    case BD_BATCH_ITEM_EXPORTED:
      /* Translators: a batch row's state; %s is a file name */
      subtitle = g_strdup_printf (_("Saved as %s"), message ? message : "");
      icon = "object-select-symbolic";
      break;

    case BD_BATCH_ITEM_EXPORT_FAILED:
      /* Translators: a batch row's state; %s says why */
      subtitle = g_strdup_printf (_("Not saved: %s"), message ? message : "");
      icon = "dialog-warning-symbolic";
      break;

    default:
      break;
    }

  adw_action_row_set_subtitle (ADW_ACTION_ROW (self), subtitle);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), state == BD_BATCH_ITEM_WORKING);
  gtk_widget_set_visible (GTK_WIDGET (self->state_icon), icon != NULL);
  if (icon != NULL)
    gtk_image_set_from_icon_name (self->state_icon, icon);

  gtk_widget_remove_css_class (GTK_WIDGET (self->state_icon), "error");
  gtk_widget_remove_css_class (GTK_WIDGET (self->state_icon), "success");
  gtk_widget_add_css_class (GTK_WIDGET (self->state_icon),
                            state == BD_BATCH_ITEM_FAILED || state == BD_BATCH_ITEM_EXPORT_FAILED
                              ? "error" : "success");

  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (self), bd_batch_item_has_mask (item));
}

static void
update_progress (BdBatchRow *self)
{
  gtk_progress_bar_set_fraction (self->progress_bar, bd_batch_item_get_progress (self->item));
}

static void
update_thumbnail (BdBatchRow *self)
{
  GdkTexture *texture = bd_batch_item_get_thumbnail (self->item);

  gtk_image_set_from_paintable (self->thumbnail, GDK_PAINTABLE (texture));
  gtk_stack_set_visible_child_name (self->thumbnail_stack, texture ? "thumbnail" : "placeholder");
}

static void
on_remove_clicked (BdBatchRow *self)
{
  g_signal_emit (self, signals[SIGNAL_REMOVE], 0);
}

GtkWidget *
bd_batch_row_new (BdBatchItem *item)
{
  BdBatchRow *self = g_object_new (BD_TYPE_BATCH_ROW, NULL);

  self->item = g_object_ref (item);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self), bd_batch_item_get_title (item));
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (self), FALSE);

  g_signal_connect_object (item, "notify::state", G_CALLBACK (update_state), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (item, "notify::message", G_CALLBACK (update_state), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (item, "notify::progress", G_CALLBACK (update_progress), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (item, "notify::thumbnail", G_CALLBACK (update_thumbnail), self, G_CONNECT_SWAPPED);
  update_state (self);
  update_progress (self);
  update_thumbnail (self);

  return GTK_WIDGET (self);
}

BdBatchItem *
bd_batch_row_get_item (BdBatchRow *self)
{
  g_return_val_if_fail (BD_IS_BATCH_ROW (self), NULL);
  return self->item;
}

static void
bd_batch_row_dispose (GObject *object)
{
  BdBatchRow *self = BD_BATCH_ROW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), BD_TYPE_BATCH_ROW);
  g_clear_object (&self->item);

  G_OBJECT_CLASS (bd_batch_row_parent_class)->dispose (object);
}

static void
bd_batch_row_class_init (BdBatchRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = bd_batch_row_dispose;

  signals[SIGNAL_REMOVE] =
    g_signal_new ("remove", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/backdrop_app/backdrop/bd-batch-row.ui");
  gtk_widget_class_bind_template_child (widget_class, BdBatchRow, thumbnail_stack);
  gtk_widget_class_bind_template_child (widget_class, BdBatchRow, thumbnail);
  gtk_widget_class_bind_template_child (widget_class, BdBatchRow, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, BdBatchRow, state_icon);
  gtk_widget_class_bind_template_child (widget_class, BdBatchRow, remove_button);
}

static void
bd_batch_row_init (BdBatchRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  g_signal_connect_swapped (self->remove_button, "clicked", G_CALLBACK (on_remove_clicked), self);
}
