/* SPDX-License-Identifier: Apache-2.0 */
/* The editing page; saving is in bd-editor-save.c. */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gi18n.h>

#include "backdrop.h"
#include "bd-application.h"
#include "bd-editor-private.h"
#include "bd-image-io.h"
#include "bd-pixels.h"
#include "bd-recent.h"
#include "bd-scale-row.h"
#include "bd-utils.h"
#include "bd-window.h"


G_DEFINE_FINAL_TYPE (BdEditor, bd_editor, ADW_TYPE_BREAKPOINT_BIN)

enum {
  PROP_0,
  PROP_TOOL,
  PROP_COMPARE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Keeping the page in step with the document */

static void
update_title (BdEditor *self)
{
  BdDocument *doc = self->document;
  g_autofree char *subtitle = NULL;

  adw_window_title_set_title (self->window_title,
                              bd_document_get_title (doc) ? bd_document_get_title (doc) : "");

  switch (bd_document_get_state (doc))
    {
    case BD_DOCUMENT_STATE_LOADING:
      subtitle = g_strdup (_("Opening…"));
      break;

    case BD_DOCUMENT_STATE_SEGMENTING:
      subtitle = g_strdup (_("Removing the background…"));
      break;

    case BD_DOCUMENT_STATE_READY:
      if (self->saving_shown)
        {
          subtitle = g_strdup (_("Saving…"));
          break;
        }
      /* Not "done" before the canvas shows the result (a 48 MP one takes seconds). */
      if (bd_document_get_result (doc) == NULL)
        {
          subtitle = g_strdup (_("Preparing the result…"));
          break;
        }
      {
        g_autofree char *time = bd_format_seconds (bd_document_get_seconds (doc));

        /* Translators: window subtitle: the device that ran, then how long it took */
        subtitle = g_strdup_printf (_("%s · %s"),
                                    bd_document_get_device_description (doc)
                                      ? bd_document_get_device_description (doc) : _("Unknown device"),
                                    time);
      }
      break;

    case BD_DOCUMENT_STATE_STOPPED:
      subtitle = g_strdup (_("Stopped"));
      break;

    case BD_DOCUMENT_STATE_FAILED:
      subtitle = g_strdup (_("Failed"));
      break;

    case BD_DOCUMENT_STATE_EMPTY:
    default:
      break;
    }

  adw_window_title_set_subtitle (self->window_title, subtitle ? subtitle : "");
}

static void
update_details (BdEditor *self)
{
  BdDocument *doc = self->document;
  gboolean ready = bd_document_get_state (doc) == BD_DOCUMENT_STATE_READY;
  g_autofree char *time = bd_format_seconds (bd_document_get_seconds (doc));
  g_autofree char *size = NULL;

  /* Translators: photo size in pixels, width × height */
  size = g_strdup_printf (_("%d × %d"), bd_document_get_width (doc), bd_document_get_height (doc));

  adw_action_row_set_subtitle (self->device_row,
                               ready && bd_document_get_device_description (doc)
                                 ? bd_document_get_device_description (doc) : "—");
  adw_action_row_set_subtitle (self->time_row, ready ? time : "—");
  adw_action_row_set_subtitle (self->size_row, bd_document_get_width (doc) > 0 ? size : "—");
}

static gboolean
pulse (gpointer user_data)
{
  BdEditor *self = user_data;

  gtk_progress_bar_pulse (self->progress_bar);
  return G_SOURCE_CONTINUE;
}

static void
update_state (BdEditor *self)
{
  BdDocument *doc = self->document;
  BdDocumentState state = bd_document_get_state (doc);
  gboolean working = state == BD_DOCUMENT_STATE_LOADING || state == BD_DOCUMENT_STATE_SEGMENTING;
  gboolean failed = state == BD_DOCUMENT_STATE_FAILED;
  gboolean stopped = state == BD_DOCUMENT_STATE_STOPPED;
  /* Ready once the result is there to show: the mask alone is not what the user sees. */
  gboolean preparing = state == BD_DOCUMENT_STATE_READY && bd_document_get_result (doc) == NULL;
  gboolean ready = state == BD_DOCUMENT_STATE_READY && !preparing;
  /* Preparing and saving report no fraction: the bar pulses. */
  gboolean pulsing = preparing || self->saving_shown;

  gtk_widget_set_visible (self->progress_card, working || pulsing);
  gtk_widget_set_visible (self->cancel_button, working);
  gtk_label_set_label (self->progress_title,
                       state == BD_DOCUMENT_STATE_LOADING ? _("Opening the Photo…")
                       : preparing ? _("Preparing the Result…")
                       : self->saving_shown ? _("Saving the Result…")
                       : _("Removing the Background…"));
  if (pulsing && self->pulse_id == 0)
    self->pulse_id = g_timeout_add (100, pulse, self);
  else if (!pulsing)
    g_clear_handle_id (&self->pulse_id, g_source_remove);

  gtk_widget_set_visible (self->message_card, failed || stopped);
  if (failed)
    {
      gtk_image_set_from_icon_name (self->message_icon, "dialog-warning-symbolic");
      gtk_label_set_label (self->message_title,
                           bd_document_get_original (doc) ? _("The Background Could Not Be Removed")
                                                          : _("The Photo Could Not Be Opened"));
      gtk_label_set_label (self->message_body, bd_document_get_error_message (doc));
      /* A photo that could not be read will not read on a second try: offer another. */
      if (bd_document_get_original (doc))
        {
          gtk_button_set_label (self->retry_button, _("_Try Again"));
          gtk_actionable_set_action_name (GTK_ACTIONABLE (self->retry_button), "editor.retry");
        }
      else
        {
          gtk_button_set_label (self->retry_button, _("_Open Another Photo…"));
          gtk_actionable_set_action_name (GTK_ACTIONABLE (self->retry_button), "win.open");
        }
    }
  else if (stopped)
    {
      gtk_image_set_from_icon_name (self->message_icon, "media-playback-stop-symbolic");
      gtk_label_set_label (self->message_title, _("Stopped"));
      gtk_label_set_label (self->message_body, _("The background was not removed."));
      gtk_button_set_label (self->retry_button, _("_Remove Background"));
      gtk_actionable_set_action_name (GTK_ACTIONABLE (self->retry_button), "editor.retry");
    }

  gtk_widget_set_visible (self->tool_bar, bd_document_get_original (doc) != NULL && !failed);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.save-as", ready && self->saving == 0);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.copy", ready);
  /* Reset only once there is something to reset (update_history follows every edit). */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.reset", ready && bd_document_get_can_reset (doc));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.cancel", working);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.retry", failed || stopped);
  /* After Keep Passers-By or the device changed: the marks and settings stay. */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.rerun", ready);

  update_title (self);
  update_details (self);
}

static gboolean
show_saving (gpointer user_data)
{
  BdEditor *self = user_data;

  self->saving_delay_id = 0;
  self->saving_shown = TRUE;
  update_state (self);
  return G_SOURCE_REMOVE;
}

void
bd_editor_begin_saving (BdEditor *self)
{
  /* Shown only when it takes long enough to notice: most saves take a blink. */
  if (self->saving++ == 0)
    self->saving_delay_id = g_timeout_add (300, show_saving, self);
  update_state (self);
}

void
bd_editor_end_saving (BdEditor *self)
{
  g_return_if_fail (self->saving > 0);

  if (--self->saving == 0)
    {
      g_clear_handle_id (&self->saving_delay_id, g_source_remove);
      self->saving_shown = FALSE;
    }
  update_state (self);
}

static void
update_progress (BdEditor *self)
{
  if (bd_document_get_state (self->document) == BD_DOCUMENT_STATE_LOADING)
    gtk_progress_bar_pulse (self->progress_bar);
  else
    gtk_progress_bar_set_fraction (self->progress_bar, bd_document_get_progress (self->document));
}

static void
update_history (BdEditor *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.undo",
                                 bd_document_get_can_undo (self->document));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.redo",
                                 bd_document_get_can_redo (self->document));
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "editor.reset",
                                 bd_document_get_can_reset (self->document));
}

static void
update_background (BdEditor *self)
{
  guint kind = bd_document_get_background_kind (self->document);
  const char *name = bd_document_get_background_name (self->document);

  gtk_widget_set_visible (GTK_WIDGET (self->color_row), kind == BD_BACKGROUND_COLOR);
  gtk_widget_set_visible (self->blur_row, kind == BD_BACKGROUND_BLUR);
  gtk_widget_set_visible (GTK_WIDGET (self->image_row), kind == BD_BACKGROUND_IMAGE);
  adw_action_row_set_subtitle (self->image_row,
                               name ? name : _("Choose an image or drop one here"));
}

static void
update_zoom (BdEditor *self)
{
  g_autofree char *text = NULL;

  /* Translators: the zoom level */
  text = g_strdup_printf (_("%d %%"), (int) lround (bd_canvas_get_zoom (self->canvas) * 100));
  gtk_label_set_label (self->zoom_label, text);
}

/* Edge Softness is relative to the photo, so that a setting looks the same on any size:
 * 100 % feathers by this share of the longer side (the document keeps photo pixels). */
#define FEATHER_FULL_SHARE 0.02

static double
feather_full_pixels (BdEditor *self)
{
  return FEATHER_FULL_SHARE * MAX (bd_document_get_width (self->document),
                                   bd_document_get_height (self->document));
}

static gboolean
feather_to_percent (GBinding     *binding,
                    const GValue *from,
                    GValue       *to,
                    gpointer      user_data)
{
  double full = feather_full_pixels (user_data);

  g_value_set_double (to, full > 0 ? g_value_get_double (from) / full * 100.0 : 0.0);
  return TRUE;
}

static gboolean
percent_to_feather (GBinding     *binding,
                    const GValue *from,
                    GValue       *to,
                    gpointer      user_data)
{
  g_value_set_double (to, g_value_get_double (from) / 100.0 * feather_full_pixels (user_data));
  return TRUE;
}

static gboolean
threshold_to_percent (GBinding     *binding,
                      const GValue *from,
                      GValue       *to,
                      gpointer      user_data)
{
  g_value_set_double (to, g_value_get_double (from) * 100.0);
  return TRUE;
}

static gboolean
percent_to_threshold (GBinding     *binding,
                      const GValue *from,
                      GValue       *to,
                      gpointer      user_data)
{
  g_value_set_double (to, g_value_get_double (from) / 100.0);
  return TRUE;
}

/* Actions */

static void
on_rendered_for_copy (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(BdEditor) self = user_data;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GError) error = NULL;

  texture = bd_document_render_finish (BD_DOCUMENT (object), result, &error);
  if (texture == NULL)
    {
      bd_show_error (GTK_WIDGET (self), _("The Result Could Not Be Copied"), error);
      return;
    }

  gdk_clipboard_set_texture (gtk_widget_get_clipboard (GTK_WIDGET (self)), texture);
  bd_show_toast (GTK_WIDGET (self), _("Copied to the clipboard"));
}

static void
copy_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);

  bd_document_render_async (self->document, NULL, on_rendered_for_copy, g_object_ref (self));
}

static void
document_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);

  if (g_str_equal (action_name, "editor.undo"))
    bd_document_undo (self->document);
  else if (g_str_equal (action_name, "editor.redo"))
    bd_document_redo (self->document);
  else if (g_str_equal (action_name, "editor.reset"))
    bd_document_reset (self->document);
  else if (g_str_equal (action_name, "editor.cancel"))
    bd_document_cancel (self->document);
  else if (g_str_equal (action_name, "editor.retry") || g_str_equal (action_name, "editor.rerun"))
    bd_document_retry (self->document);
}

static void
zoom_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);

  if (g_str_equal (action_name, "editor.zoom-in"))
    bd_canvas_zoom_in (self->canvas);
  else if (g_str_equal (action_name, "editor.zoom-out"))
    bd_canvas_zoom_out (self->canvas);
  else if (g_str_equal (action_name, "editor.zoom-fit"))
    bd_canvas_zoom_fit (self->canvas);
  else if (g_str_equal (action_name, "editor.zoom-actual"))
    bd_canvas_zoom_actual (self->canvas);
  else if (bd_canvas_get_fit (self->canvas))
    bd_canvas_zoom_actual (self->canvas);
  else
    bd_canvas_zoom_fit (self->canvas);
}

static void
brush_size_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);
  double value = gtk_adjustment_get_value (self->brush_adjustment);

  gtk_adjustment_set_value (self->brush_adjustment,
                            g_str_equal (action_name, "editor.brush-larger") ? value * 1.2
                                                                             : value / 1.2);
}

/* A photo from the open button's menu of recent ones, as if opened: the window asks
 * before unsaved edits go. */
static void
open_recent_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autoptr(GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  if (BD_IS_WINDOW (root))
    bd_window_open_files (BD_WINDOW (root), &file, 1);
}

/* A photo shown is a recent photo (opened again, it moves to the top). */
static void
remember_recent (BdEditor *self)
{
  if (bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY)
    bd_recent_add (bd_document_get_file (self->document));
}

/* Shift+] and Shift+[: a quarter harder or softer, as in other editors. */
static void
brush_hardness_action (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);
  double value = gtk_adjustment_get_value (self->hardness_adjustment);

  gtk_adjustment_set_value (self->hardness_adjustment,
                            g_str_equal (action_name, "editor.brush-harder") ? value + 25
                                                                             : value - 25);
}

/* V: the next of result, mask, red overlay. */
static void
next_view_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  static const char *const views[] = { "result", "mask", "overlay" };
  BdCanvas *canvas = BD_EDITOR (widget)->canvas;
  guint i = 0;

  while (i < G_N_ELEMENTS (views) && g_strcmp0 (bd_canvas_get_view (canvas), views[i]) != 0)
    i++;
  bd_canvas_set_view (canvas, views[(i + 1) % G_N_ELEMENTS (views)]);
}

static void
toggle_sidebar_action (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);

  adw_overlay_split_view_set_show_sidebar (self->split_view,
                                           !adw_overlay_split_view_get_show_sidebar (self->split_view));
}

static void
on_background_loaded (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(BdEditor) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!bd_document_set_background_file_finish (BD_DOCUMENT (object), result, &error))
    {
      bd_show_error (GTK_WIDGET (self), _("The Background Image Could Not Be Opened"), error);
      /* The fill list may show Image while the document has none. */
      adw_combo_row_set_selected (self->background_row, bd_document_get_background_kind (self->document));
    }
}

static void
on_background_chosen (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(BdEditor) self = user_data;
  g_autoptr(GFile) file = NULL;

  file = gtk_file_dialog_open_finish (GTK_FILE_DIALOG (object), result, NULL);
  if (file != NULL)
    bd_document_set_background_file_async (self->document, file, NULL,
                                           on_background_loaded, g_object_ref (self));
  else
    adw_combo_row_set_selected (self->background_row, bd_document_get_background_kind (self->document));
}

/* Image chosen as the fill before any image: the document refuses it until one is picked, so
 * the chooser opens; cancelling it brings the list back to the fill there is. */
static void
on_fill_selected (BdEditor *self)
{
  if (adw_combo_row_get_selected (self->background_row) == BD_BACKGROUND_IMAGE &&
      bd_document_get_background_kind (self->document) != BD_BACKGROUND_IMAGE &&
      bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY)
    gtk_widget_activate_action (GTK_WIDGET (self), "editor.choose-background", NULL);
}

static void
choose_background_action (GtkWidget  *widget,
                          const char *action_name,
                          GVariant   *parameter)
{
  BdEditor *self = BD_EDITOR (widget);
  g_autoptr(GtkFileDialog) dialog = bd_photo_dialog_new (_("Choose a Background Image"));

  gtk_file_dialog_open (dialog, GTK_WINDOW (gtk_widget_get_root (widget)), NULL,
                        on_background_chosen, g_object_ref (self));
}

static gboolean
on_background_drop (GtkDropTarget *target,
                    const GValue  *value,
                    double         x,
                    double         y,
                    BdEditor      *self)
{
  GFile *file = NULL;

  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));

      file = files ? files->data : NULL;
      g_slist_free (files);
    }
  else if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    file = g_value_get_object (value);

  if (file == NULL)
    return FALSE;

  bd_document_set_background_file_async (self->document, file, NULL,
                                         on_background_loaded, g_object_ref (self));
  return TRUE;
}

/* Public */

BdDocument *
bd_editor_get_document (BdEditor *self)
{
  g_return_val_if_fail (BD_IS_EDITOR (self), NULL);
  return self->document;
}

BdCanvas *
bd_editor_get_canvas (BdEditor *self)
{
  g_return_val_if_fail (BD_IS_EDITOR (self), NULL);
  return self->canvas;
}

void
bd_editor_set_show_back (BdEditor *self,
                         gboolean  show_back)
{
  g_return_if_fail (BD_IS_EDITOR (self));
  gtk_widget_set_visible (GTK_WIDGET (self->back_button), show_back);
}

void
bd_editor_set_document (BdEditor   *self,
                        BdDocument *document)
{
  g_return_if_fail (BD_IS_EDITOR (self));
  g_return_if_fail (BD_IS_DOCUMENT (document));

  if (self->document == document)
    return;

  if (self->document != NULL)
    {
      for (guint i = 0; i < self->document_bindings->len; i++)
        g_binding_unbind (g_ptr_array_index (self->document_bindings, i));
      g_ptr_array_set_size (self->document_bindings, 0);
      g_signal_handlers_disconnect_by_data (self->document, self);
    }

  g_set_object (&self->document, document);
  bd_canvas_set_document (self->canvas, document);

  /* The document's settings and the sidebar's controls mirror each other. */
  g_ptr_array_add (self->document_bindings,
                   g_object_bind_property_full (document, "feather", self->feather_adjustment, "value",
                                                G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL,
                                                feather_to_percent, percent_to_feather, self, NULL));
  g_ptr_array_add (self->document_bindings,
                   g_object_bind_property_full (document, "threshold", self->threshold_adjustment, "value",
                                                G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL,
                                                threshold_to_percent, percent_to_threshold, NULL, NULL));
  g_ptr_array_add (self->document_bindings,
                   g_object_bind_property (document, "background-kind", self->background_row, "selected",
                                           G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL));
  g_ptr_array_add (self->document_bindings,
                   g_object_bind_property (document, "crop", self->crop_row, "selected",
                                           G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL));
  g_ptr_array_add (self->document_bindings,
                   g_object_bind_property (document, "background-color", self->color_button, "rgba",
                                           G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL));
  g_ptr_array_add (self->document_bindings,
                   g_object_bind_property (document, "background-blur", self->blur_adjustment, "value",
                                           G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL));

  g_signal_connect_object (self->document, "notify::state", G_CALLBACK (update_state), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::state", G_CALLBACK (remember_recent), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::original", G_CALLBACK (update_state), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::result", G_CALLBACK (update_state), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::title", G_CALLBACK (update_title), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::progress", G_CALLBACK (update_progress), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::can-undo", G_CALLBACK (update_history), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::can-redo", G_CALLBACK (update_history), self, G_CONNECT_SWAPPED);
  /* The history is told before an undone edit is applied; Reset depends on the marks after. */
  g_signal_connect_object (self->document, "notify::result", G_CALLBACK (update_history), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::background-kind", G_CALLBACK (update_background), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->document, "notify::background-name", G_CALLBACK (update_background), self, G_CONNECT_SWAPPED);

  update_state (self);
  update_history (self);
  update_background (self);
}

/* GObject */

static void
bd_editor_dispose (GObject *object)
{
  BdEditor *self = BD_EDITOR (object);

  g_clear_handle_id (&self->pulse_id, g_source_remove);
  g_clear_handle_id (&self->saving_delay_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), BD_TYPE_EDITOR);
  if (self->document != NULL)
    g_signal_handlers_disconnect_by_data (self->document, self);
  g_clear_object (&self->document);
  g_clear_pointer (&self->document_bindings, g_ptr_array_unref);
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (bd_editor_parent_class)->dispose (object);
}

static void
bd_editor_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  BdEditor *self = BD_EDITOR (object);

  switch (prop_id)
    {
    case PROP_TOOL:
      g_value_set_string (value, bd_canvas_get_tool (self->canvas));
      break;

    case PROP_COMPARE:
      g_value_set_boolean (value, bd_canvas_get_compare (self->canvas));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_editor_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  BdEditor *self = BD_EDITOR (object);

  switch (prop_id)
    {
    case PROP_TOOL:
      bd_canvas_set_tool (self->canvas, g_value_get_string (value));
      break;

    case PROP_COMPARE:
      bd_canvas_set_compare (self->canvas, g_value_get_boolean (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
bd_editor_class_init (BdEditorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = bd_editor_dispose;
  object_class->get_property = bd_editor_get_property;
  object_class->set_property = bd_editor_set_property;

  properties[PROP_TOOL] =
    g_param_spec_string ("tool", NULL, NULL, "move",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_COMPARE] =
    g_param_spec_boolean ("compare", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  g_type_ensure (BD_TYPE_CANVAS);
  g_type_ensure (BD_TYPE_SCALE_ROW);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/backdrop_app/backdrop/bd-editor.ui");
  gtk_widget_class_bind_template_child (widget_class, BdEditor, back_button);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, menu_button);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, window_title);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, split_view);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, canvas);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, progress_card);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, progress_title);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, progress_bar);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, message_card);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, message_icon);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, message_title);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, message_body);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, retry_button);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, tool_bar);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, zoom_label);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, brush_adjustment);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, hardness_adjustment);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, crop_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, open_button);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, feather_adjustment);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, threshold_adjustment);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, blur_adjustment);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, background_group);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, background_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, color_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, color_button);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, blur_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, image_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, device_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, time_row);
  gtk_widget_class_bind_template_child (widget_class, BdEditor, size_row);

  gtk_widget_class_install_action (widget_class, "editor.save-as", NULL, bd_editor_save_as_action);
  gtk_widget_class_install_action (widget_class, "editor.copy", NULL, copy_action);
  gtk_widget_class_install_action (widget_class, "editor.undo", NULL, document_action);
  gtk_widget_class_install_action (widget_class, "editor.redo", NULL, document_action);
  gtk_widget_class_install_action (widget_class, "editor.reset", NULL, document_action);
  gtk_widget_class_install_action (widget_class, "editor.cancel", NULL, document_action);
  gtk_widget_class_install_action (widget_class, "editor.retry", NULL, document_action);
  gtk_widget_class_install_action (widget_class, "editor.rerun", NULL, document_action);
  gtk_widget_class_install_action (widget_class, "editor.zoom-in", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "editor.zoom-out", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "editor.zoom-fit", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "editor.zoom-actual", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "editor.zoom-toggle", NULL, zoom_action);
  gtk_widget_class_install_action (widget_class, "editor.brush-larger", NULL, brush_size_action);
  gtk_widget_class_install_action (widget_class, "editor.brush-smaller", NULL, brush_size_action);
  gtk_widget_class_install_action (widget_class, "editor.brush-harder", NULL, brush_hardness_action);
  gtk_widget_class_install_action (widget_class, "editor.open-recent", "s", open_recent_action);
  gtk_widget_class_install_action (widget_class, "editor.brush-softer", NULL, brush_hardness_action);
  gtk_widget_class_install_action (widget_class, "editor.choose-background", NULL,
                                   choose_background_action);
  gtk_widget_class_install_action (widget_class, "editor.toggle-sidebar", NULL, toggle_sidebar_action);
  gtk_widget_class_install_action (widget_class, "editor.next-view", NULL, next_view_action);
  gtk_widget_class_install_property_action (widget_class, "editor.tool", "tool");
  gtk_widget_class_install_property_action (widget_class, "editor.compare", "compare");

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s, GDK_CONTROL_MASK, "editor.save-as", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_S, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "editor.save-as", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, GDK_CONTROL_MASK, "editor.copy", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_z, GDK_CONTROL_MASK, "editor.undo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Z, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "editor.redo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_y, GDK_CONTROL_MASK, "editor.redo", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK, "editor.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK, "editor.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, GDK_CONTROL_MASK, "editor.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK, "editor.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, GDK_CONTROL_MASK, "editor.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK, "editor.zoom-fit", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, GDK_CONTROL_MASK, "editor.zoom-actual", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_bracketright, 0, "editor.brush-larger", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_bracketleft, 0, "editor.brush-smaller", NULL);
  /* Shift+] and Shift+[ give braces on most layouts; whether Shift is then counted as
   * consumed differs between backends, so both forms. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_braceright, GDK_SHIFT_MASK, "editor.brush-harder", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_braceleft, GDK_SHIFT_MASK, "editor.brush-softer", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_braceright, 0, "editor.brush-harder", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_braceleft, 0, "editor.brush-softer", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_m, 0, "editor.tool", "s", "move");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_k, 0, "editor.tool", "s", "keep");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, 0, "editor.tool", "s", "remove");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, 0, "editor.tool", "s", "region");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_c, 0, "editor.compare", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "editor.cancel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F9, 0, "editor.toggle-sidebar", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_v, 0, "editor.next-view", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_u, 0, "canvas.show-unsure", NULL);
}

/* The editor's "tool" and "compare" are the canvas's, for the property actions. */
static void
on_canvas_notify (BdCanvas   *canvas,
                  GParamSpec *pspec,
                  BdEditor   *self)
{
  if (g_str_equal (pspec->name, "tool"))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TOOL]);
  else
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPARE]);
}

static void
on_apply_to_photo (AdwToast *toast,
                   BdEditor *self)
{
  if (bd_document_get_state (self->document) == BD_DOCUMENT_STATE_READY)
    bd_document_retry (self->document);
}

/* Keep Passers-By or the device changed: it applies to the next removal; offer it for the
 * photo shown, whose strokes stay. */
static void
on_removal_setting_changed (GSettings  *settings,
                            const char *key,
                            BdEditor   *self)
{
  AdwToast *toast;

  if (bd_document_get_state (self->document) != BD_DOCUMENT_STATE_READY ||
      !gtk_widget_get_mapped (GTK_WIDGET (self)))
    return;

  toast = bd_show_toast (GTK_WIDGET (self), _("The new setting applies to the next photo"));
  adw_toast_set_button_label (toast, _("_Apply to This Photo"));
  g_signal_connect_object (toast, "button-clicked", G_CALLBACK (on_apply_to_photo), self, 0);
}

static void
bd_editor_init (BdEditor *self)
{
  GtkDropTarget *target;
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE };
  GtkApplication *app = GTK_APPLICATION (g_application_get_default ());
  BdEngine *engine = BD_IS_APPLICATION (app) ? bd_application_get_engine (BD_APPLICATION (app)) : NULL;
  g_autoptr(BdEngine) own_engine = engine ? NULL : bd_engine_new (NULL);

  gtk_widget_init_template (GTK_WIDGET (self));
  {
    g_autoptr(GMenuModel) menu = bd_primary_menu_new ();

    gtk_menu_button_set_menu_model (self->menu_button, menu);
  }
  {
    g_autoptr(GMenuModel) recent = bd_recent_menu_new ();

    adw_split_button_set_menu_model (self->open_button, recent);
  }

  self->settings = g_settings_new (APP_ID);
  self->document_bindings = g_ptr_array_new ();
  {
    g_autoptr(BdDocument) document = bd_document_new (engine ? engine : own_engine);

    bd_editor_set_document (self, document);
  }

  g_object_bind_property (self->brush_adjustment, "value", self->canvas, "brush-size",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
  g_settings_bind (self->settings, "brush-size", self->brush_adjustment, "value", G_SETTINGS_BIND_DEFAULT);
  g_object_bind_property (self->hardness_adjustment, "value", self->canvas, "brush-hardness",
                          G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);

  /* "canvas.view" and "canvas.show-unsure" for the view menu of the tool bar. */
  {
    g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();
    g_autoptr(GPropertyAction) view = g_property_action_new ("view", self->canvas, "view");
    g_autoptr(GPropertyAction) unsure = g_property_action_new ("show-unsure", self->canvas, "show-unsure");

    g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (view));
    g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (unsure));
    gtk_widget_insert_action_group (GTK_WIDGET (self), "canvas", G_ACTION_GROUP (group));
  }

  g_signal_connect_object (self->settings, "changed::keep-all-people",
                           G_CALLBACK (on_removal_setting_changed), self, 0);
  g_signal_connect_object (self->settings, "changed::device",
                           G_CALLBACK (on_removal_setting_changed), self, 0);
  g_signal_connect_object (self->settings, "changed::gpu-index",
                           G_CALLBACK (on_removal_setting_changed), self, 0);
  /* GSettings tells of changes only to keys read since the handler was connected. */
  g_settings_get_boolean (self->settings, "keep-all-people");
  g_free (g_settings_get_string (self->settings, "device"));
  g_settings_get_int (self->settings, "gpu-index");

  g_signal_connect_object (self->canvas, "notify::tool", G_CALLBACK (on_canvas_notify), self, 0);
  g_signal_connect_object (self->canvas, "notify::compare", G_CALLBACK (on_canvas_notify), self, 0);
  g_signal_connect_object (self->canvas, "notify::zoom", G_CALLBACK (update_zoom), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->background_row, "notify::selected", G_CALLBACK (on_fill_selected), self,
                           G_CONNECT_SWAPPED | G_CONNECT_AFTER);

  /* An image dropped on the background settings becomes the background. */
  target = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (target, types, G_N_ELEMENTS (types));
  g_signal_connect (target, "accept", G_CALLBACK (bd_drop_accept_foreign), NULL);
  g_signal_connect (target, "drop", G_CALLBACK (on_background_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self->background_group), GTK_EVENT_CONTROLLER (target));

  update_zoom (self);
}
