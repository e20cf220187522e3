/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <math.h>

#include <glib/gi18n.h>

#include "bd-scale-row.h"

struct _BdScaleRow
{
  AdwPreferencesRow parent_instance;

  GtkAdjustment *adjustment;
  BdScaleUnit    unit;
  char          *zero_text;

  GtkLabel      *title_label;
  GtkLabel      *value_label;
  GtkScale      *scale;
};

G_DEFINE_FINAL_TYPE (BdScaleRow, bd_scale_row, ADW_TYPE_PREFERENCES_ROW)

G_DEFINE_ENUM_TYPE (BdScaleUnit, bd_scale_unit,
  G_DEFINE_ENUM_VALUE (BD_SCALE_UNIT_PIXELS, "pixels"),
  G_DEFINE_ENUM_VALUE (BD_SCALE_UNIT_PERCENT, "percent"))

enum {
  PROP_0,
  PROP_ADJUSTMENT,
  PROP_UNIT,
  PROP_ZERO_TEXT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
update_value (BdScaleRow *self)
{
  double value = gtk_adjustment_get_value (self->adjustment);
  g_autofree char *text = NULL;

  if (self->zero_text != NULL && value < 0.5)
    text = g_strdup (self->zero_text);
  else if (self->unit == BD_SCALE_UNIT_PERCENT)
    /* Translators: a percentage on a slider */
    text = g_strdup_printf (_("%d %%"), (int) lround (value));
  else
    /* Translators: a size in pixels on a slider */
    text = g_strdup_printf (_("%d px"), (int) lround (value));

  gtk_label_set_label (self->value_label, text);
}

GtkAdjustment *
bd_scale_row_get_adjustment (BdScaleRow *self)
{
  g_return_val_if_fail (BD_IS_SCALE_ROW (self), NULL);
  return self->adjustment;
}

static void
bd_scale_row_set_adjustment (BdScaleRow    *self,
                             GtkAdjustment *adjustment)
{
  if (adjustment == NULL)
    adjustment = gtk_adjustment_new (0, 0, 100, 1, 10, 0);

  if (self->adjustment != NULL)
    g_signal_handlers_disconnect_by_func (self->adjustment, update_value, self);

  g_set_object (&self->adjustment, adjustment);
  gtk_range_set_adjustment (GTK_RANGE (self->scale), adjustment);
  g_signal_connect_swapped (adjustment, "value-changed", G_CALLBACK (update_value), self);
  update_value (self);
}

static void
bd_scale_row_dispose (GObject *object)
{
  BdScaleRow *self = BD_SCALE_ROW (object);

  if (self->adjustment != NULL)
    g_signal_handlers_disconnect_by_func (self->adjustment, update_value, self);
  g_clear_object (&self->adjustment);
  g_clear_pointer (&self->zero_text, g_free);

  G_OBJECT_CLASS (bd_scale_row_parent_class)->dispose (object);
}

static void
bd_scale_row_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  BdScaleRow *self = BD_SCALE_ROW (object);

  switch (prop_id)
    {
    case PROP_ADJUSTMENT:
      g_value_set_object (value, self->adjustment);
      break;

    case PROP_UNIT:
      g_value_set_enum (value, self->unit);
      break;

    case PROP_ZERO_TEXT:
      g_value_set_string (value, self->zero_text);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_scale_row_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  BdScaleRow *self = BD_SCALE_ROW (object);

  switch (prop_id)
    {
    case PROP_ADJUSTMENT:
      bd_scale_row_set_adjustment (self, g_value_get_object (value));
      break;

    case PROP_UNIT:
      self->unit = g_value_get_enum (value);
      update_value (self);
      break;

    case PROP_ZERO_TEXT:
      g_free (self->zero_text);
      self->zero_text = g_value_dup_string (value);
      update_value (self);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_scale_row_class_init (BdScaleRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = bd_scale_row_dispose;
  object_class->get_property = bd_scale_row_get_property;
  object_class->set_property = bd_scale_row_set_property;

  properties[PROP_ADJUSTMENT] =
    g_param_spec_object ("adjustment", NULL, NULL, GTK_TYPE_ADJUSTMENT,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_UNIT] =
    g_param_spec_enum ("unit", NULL, NULL, BD_TYPE_SCALE_UNIT, BD_SCALE_UNIT_PIXELS,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZERO_TEXT] =
    g_param_spec_string ("zero-text", NULL, NULL, NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/backdrop_app/backdrop/bd-scale-row.ui");
  gtk_widget_class_bind_template_child (widget_class, BdScaleRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, BdScaleRow, value_label);
  gtk_widget_class_bind_template_child (widget_class, BdScaleRow, scale);
}

static void
bd_scale_row_init (BdScaleRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  bd_scale_row_set_adjustment (self, NULL);
  g_object_bind_property (self, "title", self->title_label, "label", G_BINDING_SYNC_CREATE);
  gtk_accessible_update_relation (GTK_ACCESSIBLE (self->scale),
                                  GTK_ACCESSIBLE_RELATION_LABELLED_BY, self->title_label, NULL,
                                  -1);
}
