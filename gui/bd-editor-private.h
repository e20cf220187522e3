/* SPDX-License-Identifier: Apache-2.0 */
/* What the files of BdEditor share: bd-editor.c (the page, its actions and bindings) and
 * bd-editor-save.c (Save As and saving for the window). */
#pragma once

#include "bd-editor.h"

G_BEGIN_DECLS

struct _BdEditor
{
  AdwBreakpointBin     parent_instance;

  BdDocument          *document;
  GPtrArray           *document_bindings;
  GSettings           *settings;

  /* Template widgets */
  GtkButton           *back_button;
  GtkMenuButton       *menu_button;
  AdwWindowTitle      *window_title;
  AdwOverlaySplitView *split_view;
  BdCanvas            *canvas;
  GtkWidget           *progress_card;
  GtkLabel            *progress_title;
  GtkProgressBar      *progress_bar;
  GtkWidget           *cancel_button;
  guint                pulse_id;       /* pulses the bar for work without a fraction */
  guint                saving;         /* saves running */
  guint                saving_delay_id;
  gboolean             saving_shown;   /* one has run long enough to say so */
  GtkWidget           *message_card;
  GtkImage            *message_icon;
  GtkLabel            *message_title;
  GtkLabel            *message_body;
  GtkButton           *retry_button;
  GtkWidget           *tool_bar;
  GtkLabel            *zoom_label;
  GtkAdjustment       *brush_adjustment;
  GtkAdjustment       *hardness_adjustment;
  GtkAdjustment       *feather_adjustment;
  GtkAdjustment       *threshold_adjustment;
  GtkAdjustment       *blur_adjustment;
  AdwPreferencesGroup *background_group;
  AdwComboRow         *background_row;
  AdwComboRow         *crop_row;
  AdwSplitButton      *open_button;
  AdwActionRow        *color_row;
  GtkColorDialogButton *color_button;
  GtkWidget           *blur_row;
  AdwActionRow        *image_row;
  AdwActionRow        *device_row;
  AdwActionRow        *time_row;
  AdwActionRow        *size_row;
};

/* Around each save: a save that takes long (a 48 MP PNG: seconds) is shown (bd-editor.c). */
void bd_editor_begin_saving   (BdEditor   *self);
void bd_editor_end_saving     (BdEditor   *self);

/* Saving (bd-editor-save.c) */
void bd_editor_save_as_action (GtkWidget  *widget,
                               const char *action_name,
                               GVariant   *parameter);

G_END_DECLS
