/* SPDX-License-Identifier: Apache-2.0 */
/* A list row with a title, the current value and a slider under them, as in GNOME Settings. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

typedef enum {
  BD_SCALE_UNIT_PIXELS,
  BD_SCALE_UNIT_PERCENT,
} BdScaleUnit;

#define BD_TYPE_SCALE_UNIT (bd_scale_unit_get_type ())
GType bd_scale_unit_get_type (void);

#define BD_TYPE_SCALE_ROW (bd_scale_row_get_type ())

G_DECLARE_FINAL_TYPE (BdScaleRow, bd_scale_row, BD, SCALE_ROW, AdwPreferencesRow)

GtkAdjustment *bd_scale_row_get_adjustment (BdScaleRow *self);

G_END_DECLS
