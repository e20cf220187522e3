/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <glib/gi18n.h>

#include "bd-batch-item.h"
#include "bd-unsaved-dialog.h"
#include "bd-utils.h"
#include "bd-window.h"

struct _BdWindow
{
  AdwApplicationWindow  parent_instance;

  GSettings            *settings;

  AdwToastOverlay      *toast_overlay;
  GtkStack             *stack;
  GtkMenuButton        *welcome_menu_button;
  BdEditor             *editor;
  BdBatchPage          *batch_page;

  BdDocument           *document;    /* the photo opened on its own (file, drop, paste) */
  BdBatchItem          *shown_item;  /* the batch row the editor shows, if any */
  gboolean              may_close;   /* the user was asked and said yes */
  gboolean              asking;      /* "Save Changes?" is up */
};

G_DEFINE_FINAL_TYPE (BdWindow, bd_window, ADW_TYPE_APPLICATION_WINDOW)

static void
show_page (BdWindow   *self,
           const char *name)
{
  gtk_stack_set_visible_child_name (self->stack, name);
  bd_editor_set_show_back (self->editor, bd_batch_page_get_n_items (self->batch_page) > 0);
}

/* The editor shows @item's own document, or with NULL the window's. */
static void
show_document_of (BdWindow    *self,
                  BdBatchItem *item)
{
  g_autoptr(BdBatchItem) left = g_steal_pointer (&self->shown_item);

  if (item != NULL)
    {
      g_autoptr(BdEngine) engine = NULL;

      g_object_get (self->document, "engine", &engine, NULL);
      self->shown_item = g_object_ref (item);
      bd_editor_set_document (self->editor, bd_batch_item_open_document (item, engine));
    }
  else
    bd_editor_set_document (self->editor, self->document);

  if (left != NULL && left != item)
    bd_batch_item_release_document (left);
}

/* Asking before unsaved edits go */

typedef void (*ThenFunc) (BdWindow *self,
                          gboolean  go_ahead,
                          gpointer  data);

/* What waits for the answer: @then runs once, told whether to go ahead. */
typedef struct
{
  BdWindow       *self;
  gboolean        own;      /* the window's own photo would go */
  gboolean        batch;    /* and the batch rows */
  ThenFunc        then;
  gpointer        data;
  GDestroyNotify  destroy;
} Pending;

static void
pending_finish (Pending  *pending,
                gboolean  go_ahead)
{
  pending->then (pending->self, go_ahead, pending->data);
  if (pending->destroy != NULL)
    pending->destroy (pending->data);
  g_object_unref (pending->self);
  g_free (pending);
}

static GPtrArray *
edited_documents (BdWindow *self,
                  gboolean  own,
                  gboolean  batch)
{
  GPtrArray *documents = batch ? bd_batch_page_get_edited_documents (self->batch_page)
                               : g_ptr_array_new_with_free_func (g_object_unref);

  if (own && bd_document_get_modified (self->document))
    g_ptr_array_insert (documents, 0, g_object_ref (self->document));

  return documents;
}

static void
on_batch_saved (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  pending_finish (user_data, bd_batch_page_export_finish (BD_BATCH_PAGE (object), result, NULL));
}

static void
save_batch (Pending *pending)
{
  g_autoptr(GPtrArray) edited = bd_batch_page_get_edited_documents (pending->self->batch_page);

  if (pending->batch && edited->len > 0)
    bd_batch_page_export_async (pending->self->batch_page, NULL, NULL, on_batch_saved, pending);
  else
    pending_finish (pending, TRUE);
}

static void
on_own_saved (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Pending *pending = user_data;

  if (bd_editor_save_finish (BD_EDITOR (object), result, NULL))
    save_batch (pending);
  else
    pending_finish (pending, FALSE);
}

static void
on_unsaved_answer (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Pending *pending = user_data;
  BdWindow *self = pending->self;

  self->asking = FALSE;
  switch (bd_unsaved_dialog_choose_finish (result))
    {
    case BD_UNSAVED_DISCARD:
      pending_finish (pending, TRUE);
      break;

    case BD_UNSAVED_SAVE:
      /* The same Save As as the editor's (or Export All for batch rows); what was asked
       * for goes ahead only when every save succeeded. */
      if (pending->own && bd_document_get_modified (self->document))
        bd_editor_save_async (self->editor, self->document, FALSE, NULL, on_own_saved, pending);
      else
        save_batch (pending);
      break;

    case BD_UNSAVED_CANCEL:
    default:
      pending_finish (pending, FALSE);
      break;
    }
}

/* Runs @then at once when nothing unsaved would go (of the window's own photo with @own,
 * of the batch rows with @batch); otherwise after asking. */
static void
confirm_discard (BdWindow       *self,
                 gboolean        own,
                 gboolean        batch,
                 ThenFunc        then,
                 gpointer        data,
                 GDestroyNotify  destroy)
{
  g_autoptr(GPtrArray) edited = edited_documents (self, own, batch);
  Pending *pending = g_new0 (Pending, 1);
  gboolean save_asks;

  pending->self = g_object_ref (self);
  pending->own = own;
  pending->batch = batch;
  pending->then = then;
  pending->data = data;
  pending->destroy = destroy;

  if (edited->len == 0)
    {
      pending_finish (pending, TRUE);
      return;
    }

  /* One question at a time: a second Ctrl+Q or close while it is up waits for the answer. */
  if (self->asking)
    {
      pending_finish (pending, FALSE);
      return;
    }

  self->asking = TRUE;

  /* Save asks where unless the one photo concerned was saved before. */
  save_asks = edited->len > 1 || g_ptr_array_index (edited, 0) != self->document ||
              bd_document_get_saved_file (self->document) == NULL;
  bd_unsaved_dialog_choose (GTK_WIDGET (self), edited, save_asks, NULL, on_unsaved_answer, pending);
}

static void
open_file_then (BdWindow *self,
                gboolean  go_ahead,
                gpointer  data)
{
  if (!go_ahead)
    return;

  show_document_of (self, NULL);
  bd_document_open_file (self->document, data);
  show_page (self, "editor");
}

void
bd_window_open_files (BdWindow  *self,
                      GFile    **files,
                      guint      n_files)
{
  g_return_if_fail (BD_IS_WINDOW (self));

  if (n_files == 0)
    return;

  if (n_files == 1)
    {
      confirm_discard (self, TRUE, FALSE, open_file_then, g_object_ref (files[0]), g_object_unref);
      return;
    }

  bd_batch_page_add_files (self->batch_page, files, n_files);
  show_page (self, "batch");
}

static void
open_texture_then (BdWindow *self,
                   gboolean  go_ahead,
                   gpointer  data)
{
  g_autoptr(GBytes) png = NULL;

  if (!go_ahead)
    return;

  png = gdk_texture_save_to_png_bytes (data);
  show_document_of (self, NULL);
  bd_document_open_bytes (self->document, png, NULL);
  show_page (self, "editor");
}

static void
open_texture (BdWindow   *self,
              GdkTexture *texture)
{
  confirm_discard (self, TRUE, FALSE, open_texture_then, g_object_ref (texture), g_object_unref);
}

gboolean
bd_window_open_value (BdWindow     *self,
                      const GValue *value)
{
  g_return_val_if_fail (BD_IS_WINDOW (self), FALSE);

  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      g_autoptr(GPtrArray) files = g_ptr_array_new ();
      GSList *list = gdk_file_list_get_files (g_value_get_boxed (value));

      for (GSList *l = list; l != NULL; l = l->next)
        g_ptr_array_add (files, l->data);
      g_slist_free (list);

      bd_window_open_files (self, (GFile **) files->pdata, files->len);
      return files->len > 0;
    }

  if (G_VALUE_HOLDS (value, G_TYPE_FILE))
    {
      GFile *file = g_value_get_object (value);

      bd_window_open_files (self, &file, 1);
      return TRUE;
    }

  if (G_VALUE_HOLDS (value, GDK_TYPE_TEXTURE))
    {
      open_texture (self, g_value_get_object (value));
      return TRUE;
    }

  return FALSE;
}

static gboolean
on_drop (GtkDropTarget *target,
         const GValue  *value,
         double         x,
         double         y,
         BdWindow      *self)
{
  return bd_window_open_value (self, value);
}

/* Actions */

static void
on_open_dialog_done (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(BdWindow) self = user_data;
  g_autoptr(GPtrArray) files = bd_files_from_dialog (GTK_FILE_DIALOG (object), result);

  if (files != NULL)
    bd_window_open_files (self, (GFile **) files->pdata, files->len);
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  g_autoptr(GtkFileDialog) dialog = bd_photo_dialog_new (_("Open Photos"));

  gtk_file_dialog_open_multiple (dialog, GTK_WINDOW (widget), NULL,
                                 on_open_dialog_done, g_object_ref (widget));
}

static void
on_clipboard_files (GObject      *object,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(BdWindow) self = user_data;
  const GValue *value;

  value = gdk_clipboard_read_value_finish (GDK_CLIPBOARD (object), result, NULL);
  if (value == NULL || !bd_window_open_value (self, value))
    bd_show_toast (GTK_WIDGET (self), _("The clipboard holds no image"));
}

static void
on_clipboard_texture (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(BdWindow) self = user_data;
  g_autoptr(GdkTexture) texture = NULL;

  texture = gdk_clipboard_read_texture_finish (GDK_CLIPBOARD (object), result, NULL);
  if (texture == NULL)
    {
      bd_show_toast (GTK_WIDGET (self), _("The clipboard holds no image"));
      return;
    }

  open_texture (self, texture);
}

static void
paste_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (widget);
  GdkContentFormats *formats = gdk_clipboard_get_formats (clipboard);

  /* Our own result, copied a moment ago, is an image too; files come first since they
   * keep their names. */
  if (gdk_content_formats_contain_gtype (formats, GDK_TYPE_FILE_LIST))
    gdk_clipboard_read_value_async (clipboard, GDK_TYPE_FILE_LIST, G_PRIORITY_DEFAULT, NULL,
                                    on_clipboard_files, g_object_ref (widget));
  else if (gdk_content_formats_contain_gtype (formats, GDK_TYPE_TEXTURE))
    gdk_clipboard_read_texture_async (clipboard, NULL, on_clipboard_texture, g_object_ref (widget));
  else
    bd_show_toast (widget, _("The clipboard holds no image"));
}

static void
show_batch_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  BdWindow *self = BD_WINDOW (widget);

  /* Leaving a row lets it give up its document when nothing was done to it. */
  show_document_of (self, NULL);
  show_page (self, "batch");
}

static void
on_batch_item_activated (BdWindow    *self,
                         BdBatchItem *item)
{
  show_document_of (self, item);
  show_page (self, "editor");
}

static void
on_batch_emptied (BdWindow *self)
{
  guint position;

  /* The row on show was removed: its document goes with it. */
  if (self->shown_item != NULL &&
      !g_list_store_find (G_LIST_STORE (bd_batch_page_get_items (self->batch_page)), self->shown_item, &position))
    {
      show_document_of (self, NULL);
      if (g_str_equal (bd_window_get_page (self), "editor"))
        show_page (self, bd_document_get_original (self->document) ? "editor" : "batch");
    }

  if (bd_batch_page_get_n_items (self->batch_page) > 0)
    return;

  bd_editor_set_show_back (self->editor, FALSE);
  if (g_str_equal (bd_window_get_page (self), "batch"))
    show_page (self, bd_document_get_original (self->document) ? "editor" : "welcome");
}

/* Closing */

typedef struct
{
  BdWindowClosed callback;
  gpointer       user_data;
} Closing;

static void
close_then (BdWindow *self,
            gboolean  go_ahead,
            gpointer  data)
{
  Closing *closing = data;

  if (go_ahead)
    {
      self->may_close = TRUE;
      gtk_window_destroy (GTK_WINDOW (self));
    }

  if (closing != NULL && closing->callback != NULL)
    closing->callback (self, go_ahead, closing->user_data);
}

void
bd_window_close_asking (BdWindow       *self,
                        BdWindowClosed  callback,
                        gpointer        user_data)
{
  Closing *closing;

  g_return_if_fail (BD_IS_WINDOW (self));

  closing = g_new0 (Closing, 1);
  closing->callback = callback;
  closing->user_data = user_data;
  confirm_discard (self, TRUE, TRUE, close_then, closing, g_free);
}

gboolean
bd_window_get_has_unsaved (BdWindow *self)
{
  g_autoptr(GPtrArray) edited = NULL;

  g_return_val_if_fail (BD_IS_WINDOW (self), FALSE);

  edited = edited_documents (self, TRUE, TRUE);
  return edited->len > 0;
}

static gboolean
bd_window_close_request (GtkWindow *window)
{
  BdWindow *self = BD_WINDOW (window);

  if (self->may_close || !bd_window_get_has_unsaved (self))
    return GTK_WINDOW_CLASS (bd_window_parent_class)->close_request (window);

  bd_window_close_asking (self, NULL, NULL);
  return TRUE;
}

/* Public */

BdEditor *
bd_window_get_editor (BdWindow *self)
{
  g_return_val_if_fail (BD_IS_WINDOW (self), NULL);
  return self->editor;
}

BdBatchPage *
bd_window_get_batch_page (BdWindow *self)
{
  g_return_val_if_fail (BD_IS_WINDOW (self), NULL);
  return self->batch_page;
}

const char *
bd_window_get_page (BdWindow *self)
{
  g_return_val_if_fail (BD_IS_WINDOW (self), NULL);
  return gtk_stack_get_visible_child_name (self->stack);
}

BdWindow *
bd_window_new (BdApplication *application)
{
  return g_object_new (BD_TYPE_WINDOW, "application", application, NULL);
}

/* GObject */

static void
bd_window_dispose (GObject *object)
{
  BdWindow *self = BD_WINDOW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), BD_TYPE_WINDOW);
  g_clear_object (&self->settings);
  g_clear_object (&self->document);
  g_clear_object (&self->shown_item);

  G_OBJECT_CLASS (bd_window_parent_class)->dispose (object);
}

static void
bd_window_class_init (BdWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = bd_window_dispose;
  GTK_WINDOW_CLASS (klass)->close_request = bd_window_close_request;

  g_type_ensure (BD_TYPE_EDITOR);
  g_type_ensure (BD_TYPE_BATCH_PAGE);

  gtk_widget_class_set_template_from_resource (widget_class, "/org/backdrop_app/backdrop/bd-window.ui");
  gtk_widget_class_bind_template_child (widget_class, BdWindow, toast_overlay);
  gtk_widget_class_bind_template_child (widget_class, BdWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, BdWindow, welcome_menu_button);
  gtk_widget_class_bind_template_child (widget_class, BdWindow, editor);
  gtk_widget_class_bind_template_child (widget_class, BdWindow, batch_page);

  gtk_widget_class_install_action (widget_class, "win.open", NULL, open_action);
  gtk_widget_class_install_action (widget_class, "win.paste", NULL, paste_action);
  gtk_widget_class_install_action (widget_class, "win.show-batch", NULL, show_batch_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_v, GDK_CONTROL_MASK, "win.paste", NULL);
}

static void
bd_window_init (BdWindow *self)
{
  GtkDropTarget *target;
  GType types[] = { GDK_TYPE_FILE_LIST, G_TYPE_FILE, GDK_TYPE_TEXTURE };

  gtk_widget_init_template (GTK_WIDGET (self));
  self->document = g_object_ref (bd_editor_get_document (self->editor));
  {
    g_autoptr(GMenuModel) menu = bd_primary_menu_new ();

    gtk_menu_button_set_menu_model (self->welcome_menu_button, menu);
  }

  self->settings = g_settings_new (APP_ID);
  g_settings_bind (self->settings, "window-width", self, "default-width", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-height", self, "default-height", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "window-maximized", self, "maximized", G_SETTINGS_BIND_DEFAULT);

  target = gtk_drop_target_new (G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes (target, types, G_N_ELEMENTS (types));
  g_signal_connect (target, "accept", G_CALLBACK (bd_drop_accept_foreign), NULL);
  g_signal_connect (target, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self->stack), GTK_EVENT_CONTROLLER (target));

  g_signal_connect_object (self->batch_page, "item-activated",
                           G_CALLBACK (on_batch_item_activated), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->batch_page, "notify::n-items",
                           G_CALLBACK (on_batch_emptied), self, G_CONNECT_SWAPPED);
}
