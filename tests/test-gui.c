/* SPDX-License-Identifier: Apache-2.0 */
/* The app in a real window (under Xvfb, CPU backend): open a photo the way a drop does, wait
 * for the mask, paint a remove stroke, undo and redo it, export a PNG and read it back, copy
 * to the clipboard, run a batch with one bad file, check the narrow layout, take a screenshot;
 * toasts reach the screen, each batch row keeps its own edits, and edits are never lost
 * without asking (quit, close, paste, clearing the batch).
 *
 * Needs a display, and BACKDROP_TEST_PHOTOS, a folder of photos (skipped when absent). The
 * model is BACKDROP_MODEL, else the shipped one (BACKDROP_TEST_SHIPPED_MODEL), else a small
 * U-Net with random weights that the test writes itself: its masks are blobs, not people,
 * but every check here holds for any mask that is neither empty nor full. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <adwaita.h>
#include <glib/gstdio.h>

#include "backdrop.h"
#include "bd-application.h"
#include "bd-batch.h"
#include "bd-batch-item.h"
#include "bd-batch-page.h"
#include "bd-batch-row.h"
#include "bd-drag-provider.h"
#include "bd-editor.h"
#include "bd-preferences-dialog.h"
#include "bd-recent.h"
#include "bd-settings-migrate.h"
#include "bd-utils.h"
#include "bd-window.h"
#include "bd-window-shot.h"
#include "synthetic-model.h"

static BdApplication *app;
static BdWindow      *window;
static char          *tmp_dir;      /* removed at the end */
static char          *work_dir;     /* tmp_dir/work: exports */
static GPtrArray     *photos;       /* paths, sorted */
static char          *skip_reason;  /* why the tests that need a photo and a model skip */

/* Helpers */

static BdDocument *
document (void)
{
  return bd_editor_get_document (bd_window_get_editor (window));
}

static gboolean
result_settled (gpointer data)
{
  BdDocument *doc = document ();
  BdDocumentState state = bd_document_get_state (doc);

  if (state == BD_DOCUMENT_STATE_FAILED)
    return TRUE;

  return state == BD_DOCUMENT_STATE_READY && bd_document_get_result (doc) != NULL &&
         !bd_document_get_busy (doc) &&
         bd_document_get_result_serial (doc) >= GPOINTER_TO_SIZE (data);
}

/* The current result at full size as straight RGBA. */
static guint8 *
download_result (int *width,
                 int *height)
{
  GdkTexture *texture = bd_document_get_result (document ());
  g_autoptr(GdkTextureDownloader) downloader = gdk_texture_downloader_new (texture);
  gsize stride;
  GBytes *bytes;

  gdk_texture_downloader_set_format (downloader, GDK_MEMORY_R8G8B8A8);
  bytes = gdk_texture_downloader_download_bytes (downloader, &stride);
  *width = gdk_texture_get_width (texture);
  *height = gdk_texture_get_height (texture);
  g_assert_cmpuint (stride, ==, (gsize) *width * 4);

  return g_bytes_unref_to_data (bytes, &stride);
}

/* The first widget of @type at or below @widget. */
/* The first widget under @widget (itself included, depth first) that @match accepts. */
static GtkWidget *
find_matching (GtkWidget     *widget,
               gboolean     (*match) (GtkWidget *widget, gconstpointer data),
               gconstpointer  data)
{
  if (match (widget, data))
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_matching (child, match, data);

      if (found != NULL)
        return found;
    }

  return NULL;
}

static gboolean
is_of_type (GtkWidget *widget, gconstpointer type)
{
  return G_TYPE_CHECK_INSTANCE_TYPE (widget, GPOINTER_TO_SIZE (type));
}

static GtkWidget *
find_widget (GtkWidget *widget,
             GType      type)
{
  return find_matching (widget, is_of_type, GSIZE_TO_POINTER (type));
}

/* Whether a label at or below @widget reads @text. */
static gboolean
has_label (GtkWidget  *widget,
           const char *text)
{
  if (GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_label (GTK_LABEL (widget)), text) == 0)
    return TRUE;
  if (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), text) == 0)
    return TRUE;

  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (has_label (child, text))
      return TRUE;

  return FALSE;
}

/* Whether the window's toast overlay shows a toast reading @data: the toast's own widget is
 * there, a child of the overlay beside the page. */
static gboolean
toast_shown (gpointer data)
{
  GtkWidget *overlay = find_widget (GTK_WIDGET (window), ADW_TYPE_TOAST_OVERLAY);

  g_assert_nonnull (overlay);
  for (GtkWidget *child = gtk_widget_get_first_child (overlay); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (g_str_equal (G_OBJECT_TYPE_NAME (child), "AdwToastWidget") && has_label (child, data))
      return TRUE;

  return FALSE;
}

static gboolean
has_css_class (GtkWidget *widget, gconstpointer name)
{
  return gtk_widget_has_css_class (widget, name);
}

/* The first widget under @widget with the style class @name. */
static GtkWidget *
find_css_class (GtkWidget  *widget,
                const char *name)
{
  return find_matching (widget, has_css_class, name);
}

static gboolean
no_toast (gpointer data)
{
  GtkWidget *overlay = find_widget (GTK_WIDGET (window), ADW_TYPE_TOAST_OVERLAY);

  for (GtkWidget *child = gtk_widget_get_first_child (overlay); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    if (g_str_equal (G_OBJECT_TYPE_NAME (child), "AdwToastWidget"))
      return FALSE;

  return TRUE;
}

/* Clicks the button of @dialog that reads @label, as a user does. */
static void
click_response (AdwDialog  *dialog,
                const char *label)
{
  GtkWidget *stack[64];
  guint n = 0;

  stack[n++] = GTK_WIDGET (dialog);
  while (n > 0)
    {
      GtkWidget *widget = stack[--n];

      if (GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0)
        {
          g_signal_emit_by_name (widget, "clicked");
          return;
        }
      for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL && n < G_N_ELEMENTS (stack);
           child = gtk_widget_get_next_sibling (child))
        stack[n++] = child;
    }

  g_error ("No button “%s” in the dialog", label);
}

/* A remove stroke through the middle of the person in @doc; returns its serial. */
static guint64
paint_through_person (BdDocument *doc)
{
  const guint8 *mask = g_bytes_get_data (bd_document_get_mask (doc), NULL);
  int width = bd_document_get_width (doc), height = bd_document_get_height (doc);
  double cx = 0, cy = 0, n = 0, radius = MAX (4.0, width / 16.0);
  graphene_point_t points[2];

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      if (mask[(gsize) y * width + x] >= 128)
        {
          cx += x;
          cy += y;
          n++;
        }
  g_assert_cmpfloat (n, >, 0);
  points[0] = GRAPHENE_POINT_INIT (cx / n - radius, cy / n);
  points[1] = GRAPHENE_POINT_INIT (cx / n + radius, cy / n);

  return bd_document_paint_stroke (doc, BD_MARK_REMOVE, radius, points, G_N_ELEMENTS (points));
}

static gboolean
skip_without_photo_and_model (void)
{
  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return TRUE;
    }
  return FALSE;
}

/* Opens photos[0] through the window's drop handler, once. */
static gboolean
ensure_opened (void)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GFile) file = NULL;
  GSList *list;

  if (skip_without_photo_and_model ())
    return FALSE;

  if (bd_document_get_state (document ()) == BD_DOCUMENT_STATE_READY &&
      g_str_equal (bd_window_get_page (window), "editor"))
    return TRUE;

  file = g_file_new_for_path (g_ptr_array_index (photos, 0));
  list = g_slist_prepend (NULL, file);
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (list));
  g_slist_free (list);

  g_assert_true (bd_window_open_value (window, &value));
  g_assert_cmpstr (bd_window_get_page (window), ==, "editor");

  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
  if (bd_document_get_state (document ()) == BD_DOCUMENT_STATE_FAILED)
    g_error ("Removal failed: %s", bd_document_get_error_message (document ()));

  return TRUE;
}

/* Tests */

static void
test_open_drop (void)
{
  GBytes *mask;
  const guint8 *alpha;
  gsize size, person = 0;
  int width, height;
  g_autofree guint8 *rgba = NULL;
  g_autofree guint8 *decided = NULL;

  if (!ensure_opened ())
    return;

  mask = bd_document_get_mask (document ());
  g_assert_nonnull (mask);
  alpha = g_bytes_get_data (mask, &size);
  g_assert_cmpuint (size, ==, (gsize) bd_document_get_width (document ()) * bd_document_get_height (document ()));

  for (gsize i = 0; i < size; i++)
    person += alpha[i] >= 128;

  /* A person, not all of the photo and not none of it. */
  g_test_message ("person covers %.1f %% of the photo", 100.0 * person / size);
  g_assert_cmpfloat ((double) person / size, >, 0.02);
  g_assert_cmpfloat ((double) person / size, <, 0.98);

  /* The result on screen carries the mask as its alpha, made decisive as bd_session_run
   * would (the document keeps the network's soft mask for the unsure areas). */
  rgba = download_result (&width, &height);
  g_assert_cmpuint ((gsize) width * height, ==, size);
  decided = g_memdup2 (alpha, size);
  g_assert_cmpint (bd_mask_make_decisive (decided, width, height, width, NULL), ==, BD_OK);
  for (gsize i = 0; i < size; i++)
    g_assert_cmpuint (rgba[i * 4 + 3], ==, decided[i]);

  g_assert_nonnull (bd_document_get_device_description (document ()));
  g_test_message ("removed on %s in %.3f s", bd_document_get_device_description (document ()),
                  bd_document_get_seconds (document ()));
}

static gboolean
is_button_labelled (GtkWidget *widget, gconstpointer label)
{
  return GTK_IS_BUTTON (widget) && g_strcmp0 (gtk_button_get_label (GTK_BUTTON (widget)), label) == 0;
}

/* The button under @widget labelled @label, or NULL. */
static GtkWidget *
find_button_labelled (GtkWidget  *widget,
                      const char *label)
{
  return find_matching (widget, is_button_labelled, label);
}

static void
test_brush_undo_redo (void)
{
  BdDocument *doc;
  BdEditor *editor;
  const guint8 *mask;
  g_autofree guint8 *before = NULL;
  g_autofree guint8 *painted = NULL;
  g_autofree guint8 *undone = NULL;
  g_autofree guint8 *redone = NULL;
  int width, height, w2, h2;
  double cx = 0, cy = 0, n = 0, radius;
  graphene_point_t points[2];
  guint64 serial;
  gsize changed = 0;

  if (!ensure_opened ())
    return;

  doc = document ();
  editor = bd_window_get_editor (window);
  before = download_result (&width, &height);

  /* A short horizontal stroke through the middle of the person. */
  mask = g_bytes_get_data (bd_document_get_mask (doc), NULL);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      if (mask[(gsize) y * width + x] >= 128)
        {
          cx += x;
          cy += y;
          n++;
        }
  g_assert_cmpfloat (n, >, 0);
  cx /= n;
  cy /= n;
  radius = MAX (4.0, width / 16.0);
  points[0] = GRAPHENE_POINT_INIT (cx - radius, cy);
  points[1] = GRAPHENE_POINT_INIT (cx + radius, cy);

  /* Nothing to reset yet: Reset is greyed out, as a user sees it. */
  g_assert_nonnull (find_button_labelled (GTK_WIDGET (editor), "_Reset"));
  g_assert_false (gtk_widget_is_sensitive (find_button_labelled (GTK_WIDGET (editor), "_Reset")));

  serial = bd_document_paint_stroke (doc, BD_MARK_REMOVE, radius, points, G_N_ELEMENTS (points));
  g_assert_cmpuint (serial, >, 0);
  g_assert_true (bd_document_get_can_undo (doc));
  g_assert_true (gtk_widget_is_sensitive (find_button_labelled (GTK_WIDGET (editor), "_Reset")));
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial)));

  painted = download_result (&w2, &h2);
  g_assert_cmpint (w2, ==, width);
  g_assert_cmpint (h2, ==, height);
  for (gsize i = 0; i < (gsize) width * height; i++)
    changed += painted[i * 4 + 3] != before[i * 4 + 3];
  g_test_message ("the stroke changed %" G_GSIZE_FORMAT " pixels", changed);
  g_assert_cmpuint (changed, >, 0);

  /* Everything under the stroke's middle is gone. */
  for (int y = (int) (cy - radius / 2); y < (int) (cy + radius / 2); y++)
    for (int x = (int) (cx - radius / 2); x < (int) (cx + radius / 2); x++)
      if (x >= 0 && y >= 0 && x < width && y < height)
        g_assert_cmpuint (painted[((gsize) y * width + x) * 4 + 3], ==, 0);

  /* Ctrl+Z's action brings every pixel back, without running the network again. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL));
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial + 1)));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  undone = download_result (&w2, &h2);
  g_assert_cmpmem (undone, (gsize) width * height * 4, before, (gsize) width * height * 4);
  g_assert_true (bd_document_get_can_redo (doc));

  /* And Ctrl+Shift+Z's puts the stroke back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.redo", NULL));
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial + 2)));
  redone = download_result (&w2, &h2);
  g_assert_cmpmem (redone, (gsize) width * height * 4, painted, (gsize) width * height * 4);

  /* Leave the photo as it came for the tests that follow; then nothing is left to reset. */
  bd_document_undo (doc);
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial + 3)));
  g_assert_false (gtk_widget_is_sensitive (find_button_labelled (GTK_WIDGET (editor), "_Reset")));
}

static void
test_adjust_and_background (void)
{
  BdDocument *doc;
  g_autofree guint8 *soft = NULL;
  g_autofree guint8 *hard = NULL;
  g_autofree guint8 *colored = NULL;
  int width, height;
  gsize partial_soft = 0, partial_hard = 0;
  GdkRGBA red = { 1, 0, 0, 1 };

  if (!ensure_opened ())
    return;

  doc = document ();
  soft = download_result (&width, &height);

  /* A threshold leaves only opaque and transparent pixels (feather 0). */
  bd_document_set_threshold (doc, 0.5);
  g_assert_true (bd_main_loop_wait_for (result_settled, NULL));
  hard = download_result (&width, &height);
  for (gsize i = 0; i < (gsize) width * height; i++)
    {
      partial_soft += soft[i * 4 + 3] > 0 && soft[i * 4 + 3] < 255;
      partial_hard += hard[i * 4 + 3] > 0 && hard[i * 4 + 3] < 255;
    }
  g_test_message ("partly transparent pixels: %" G_GSIZE_FORMAT " soft, %" G_GSIZE_FORMAT " thresholded",
                  partial_soft, partial_hard);
  g_assert_cmpuint (partial_hard, ==, 0);

  /* A colour background makes every pixel opaque. */
  bd_document_set_background_color (doc, &red);
  bd_document_set_background_kind (doc, 1 /* BD_BACKGROUND_COLOR */);
  g_assert_true (bd_main_loop_wait_for (result_settled, NULL));
  colored = download_result (&width, &height);
  for (gsize i = 0; i < (gsize) width * height; i++)
    g_assert_cmpuint (colored[i * 4 + 3], ==, 255);

  /* Undo all three edits: transparent, soft again. */
  for (int i = 0; i < 3 && bd_document_get_can_undo (doc); i++)
    bd_document_undo (doc);
  g_assert_true (bd_main_loop_wait_for (result_settled, NULL));
  g_assert_cmpuint (bd_document_get_background_kind (doc), ==, 0);
  g_assert_cmpfloat (bd_document_get_threshold (doc), ==, 0.0);
  g_free (hard);
  hard = download_result (&width, &height);
  g_assert_cmpmem (hard, (gsize) width * height * 4, soft, (gsize) width * height * 4);
}

static gboolean
file_exists (gpointer data)
{
  return g_file_test (data, G_FILE_TEST_EXISTS);
}

static void
test_export (void)
{
  g_autofree char *path = g_build_filename (work_dir, "export.png", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GdkPixbuf) saved = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *rgba = NULL;
  g_autoptr(GDir) dir = NULL;
  const guint8 *pixels;
  int width, height, stride;

  if (!ensure_opened ())
    return;

  bd_editor_save_to_file (bd_window_get_editor (window), file);
  g_assert_true (bd_main_loop_wait_for (file_exists, path));
  bd_main_loop_spin (100);

  saved = gdk_pixbuf_new_from_file (path, &error);
  g_assert_no_error (error);
  g_assert_true (gdk_pixbuf_get_has_alpha (saved));

  rgba = download_result (&width, &height);
  g_assert_cmpint (gdk_pixbuf_get_width (saved), ==, width);
  g_assert_cmpint (gdk_pixbuf_get_height (saved), ==, height);

  /* The file's alpha is the result's, pixel for pixel. */
  pixels = gdk_pixbuf_read_pixels (saved);
  stride = gdk_pixbuf_get_rowstride (saved);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      g_assert_cmpuint (pixels[(gsize) y * stride + x * 4 + 3], ==, rgba[((gsize) y * width + x) * 4 + 3]);

  /* Nothing but the file itself is left behind (the temporary file was renamed). */
  dir = g_dir_open (work_dir, 0, NULL);
  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    g_assert_true (g_str_equal (name, "export.png") || g_str_has_prefix (name, "batch") ||
                   g_str_equal (name, "drag"));
}

static gboolean
clipboard_has_texture (gpointer data)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));

  return gdk_clipboard_get_content (clipboard) != NULL &&
         gdk_content_formats_contain_gtype (gdk_clipboard_get_formats (clipboard), GDK_TYPE_TEXTURE);
}

typedef struct
{
  gboolean    done;
  GdkTexture *texture;
} ClipboardRead;

static void
on_clipboard_texture (GObject      *object,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  ClipboardRead *read = user_data;

  read->texture = gdk_clipboard_read_texture_finish (GDK_CLIPBOARD (object), result, NULL);
  read->done = TRUE;
}

static gboolean
read_done (gpointer data)
{
  return ((ClipboardRead *) data)->done;
}

static void
test_copy (void)
{
  GdkClipboard *clipboard;
  ClipboardRead read = { FALSE, NULL };

  if (!ensure_opened ())
    return;

  clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));
  gdk_clipboard_set_content (clipboard, NULL);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (bd_window_get_editor (window)), "editor.copy", NULL));
  g_assert_true (bd_main_loop_wait_for (clipboard_has_texture, NULL));

  gdk_clipboard_read_texture_async (clipboard, NULL, on_clipboard_texture, &read);
  g_assert_true (bd_main_loop_wait_for (read_done, &read));
  g_assert_nonnull (read.texture);
  g_assert_cmpint (gdk_texture_get_width (read.texture), ==, bd_document_get_width (document ()));
  g_assert_cmpint (gdk_texture_get_height (read.texture), ==, bd_document_get_height (document ()));
  g_object_unref (read.texture);
}

typedef struct
{
  gboolean done;
  gboolean ok;
} Written;

static void
on_provider_written (GObject      *object,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  Written *written = user_data;

  written->ok = gdk_content_provider_write_mime_type_finish (GDK_CONTENT_PROVIDER (object), result, NULL);
  written->done = TRUE;
}

static gboolean
written_done (gpointer data)
{
  return ((Written *) data)->done;
}

/* What a drop target that takes files gets when the result is dragged out: a URI, and at
 * its end a PNG with the result's pixels. */
static void
test_drag_out (void)
{
  g_autofree char *path = g_build_filename (work_dir, "drag", "dragged-cutout.png", NULL);
  g_autoptr(GdkContentProvider) provider = NULL;
  g_autoptr(GdkContentFormats) formats = NULL;
  g_autoptr(GOutputStream) stream = g_memory_output_stream_new_resizable ();
  g_autoptr(GdkPixbuf) saved = NULL;
  g_autoptr(GFile) file = NULL;
  g_autofree char *uri = NULL;
  g_autofree guint8 *rgba = NULL;
  Written written = { FALSE, FALSE };
  int width, height;

  if (!ensure_opened ())
    return;

  provider = bd_drag_provider_new (bd_document_get_result (document ()), path);
  formats = gdk_content_provider_ref_formats (provider);
  g_assert_true (gdk_content_formats_contain_mime_type (formats, "text/uri-list"));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  gdk_content_provider_write_mime_type_async (provider, "text/uri-list", stream, G_PRIORITY_DEFAULT,
                                              NULL, on_provider_written, &written);
  g_assert_true (bd_main_loop_wait_for (written_done, &written));
  g_assert_true (written.ok);
  g_assert_true (g_output_stream_close (stream, NULL, NULL));

  uri = g_strndup (g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (stream)),
                   g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (stream)));
  g_assert_true (g_str_has_suffix (uri, "\r\n"));
  uri[strlen (uri) - 2] = '\0';
  file = g_file_new_for_uri (uri);
  g_assert_cmpstr (g_file_peek_path (file), ==, path);

  saved = gdk_pixbuf_new_from_file (path, NULL);
  g_assert_nonnull (saved);
  g_assert_true (gdk_pixbuf_get_has_alpha (saved));
  rgba = download_result (&width, &height);
  g_assert_cmpint (gdk_pixbuf_get_width (saved), ==, width);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      g_assert_cmpuint (gdk_pixbuf_read_pixels (saved)[(gsize) y * gdk_pixbuf_get_rowstride (saved) + x * 4 + 3],
                        ==, rgba[((gsize) y * width + x) * 4 + 3]);
}

/* Paste with nothing on the clipboard says so on screen, in a toast. */
static void
test_paste_empty (void)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));

  /* Toasts queue: let an earlier one (Copy's) go first. */
  g_assert_true (bd_main_loop_wait_for (no_toast, NULL));
  gdk_clipboard_set_content (clipboard, NULL);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.paste", NULL));
  bd_main_loop_spin (300);
  g_assert_true (toast_shown ("The clipboard holds no image"));

  /* The toast covers none of the floating tool bar's buttons: the bar moves up above it. */
  {
    GtkWidget *overlay = find_widget (GTK_WIDGET (window), ADW_TYPE_TOAST_OVERLAY);
    GtkWidget *toast = NULL, *bar = find_css_class (GTK_WIDGET (window), "floating-bar");
    graphene_rect_t toast_box, bar_box;

    for (GtkWidget *child = gtk_widget_get_first_child (overlay); child; child = gtk_widget_get_next_sibling (child))
      if (g_str_equal (G_OBJECT_TYPE_NAME (child), "AdwToastWidget"))
        toast = child;
    g_assert_nonnull (toast);
    g_assert_nonnull (bar);
    g_assert_true (gtk_widget_get_mapped (bar));
    bd_main_loop_spin (300);
    g_assert_true (gtk_widget_compute_bounds (toast, GTK_WIDGET (window), &toast_box));
    g_assert_true (gtk_widget_compute_bounds (bar, GTK_WIDGET (window), &bar_box));
    g_assert_false (graphene_rect_intersection (&toast_box, &bar_box, NULL));
    {
      g_autofree char *shot = g_test_build_filename (G_TEST_BUILT, "test-gui-toast.png", NULL);
      g_assert_true (bd_window_shot_save (GTK_WINDOW (window), shot, FALSE, NULL));
      g_test_message ("screenshot: %s", shot);
    }
  }
  /* And comes back down once the toast has gone. */
  g_assert_true (bd_main_loop_wait_for (no_toast, NULL));
  g_assert_false (gtk_widget_has_css_class (find_css_class (GTK_WIDGET (window), "floating-bar"), "above-toast"));
}

static AdwAlertDialog *
visible_alert (BdWindow *win)
{
  AdwDialog *dialog = adw_application_window_get_visible_dialog (ADW_APPLICATION_WINDOW (win));

  return ADW_IS_ALERT_DIALOG (dialog) ? ADW_ALERT_DIALOG (dialog) : NULL;
}

static gboolean
no_dialog (gpointer data)
{
  return adw_application_window_get_visible_dialog (ADW_APPLICATION_WINDOW (data)) == NULL;
}

/* The alert that asks before edits are lost, the GNOME way. */
static void
check_unsaved_alert (AdwAlertDialog *alert,
                     const char     *name)
{
  g_assert_nonnull (alert);
  g_assert_cmpstr (adw_alert_dialog_get_heading (alert), ==, "Save Changes?");
  g_test_message ("the alert says: %s", adw_alert_dialog_get_body (alert));
  if (name != NULL)
    g_assert_nonnull (strstr (adw_alert_dialog_get_body (alert), name));
  g_assert_true (adw_alert_dialog_has_response (alert, "cancel"));
  g_assert_true (adw_alert_dialog_has_response (alert, "discard"));
  g_assert_true (adw_alert_dialog_has_response (alert, "save"));
  g_assert_cmpint (adw_alert_dialog_get_response_appearance (alert, "discard"), ==, ADW_RESPONSE_DESTRUCTIVE);
  g_assert_cmpint (adw_alert_dialog_get_response_appearance (alert, "save"), ==, ADW_RESPONSE_SUGGESTED);
  g_assert_cmpstr (adw_alert_dialog_get_close_response (alert), ==, "cancel");
}

/* Ctrl+Q with a painted photo asks first; Cancel keeps everything. */
static void
test_unsaved_quit (void)
{
  g_autofree char *path = g_test_build_filename (G_TEST_BUILT, "test-gui-unsaved.png", NULL);
  g_autoptr(GError) error = NULL;
  BdDocument *doc;
  guint64 serial;

  if (!ensure_opened ())
    return;

  doc = document ();
  serial = paint_through_person (doc);
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial)));

  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  bd_main_loop_spin (300);
  check_unsaved_alert (visible_alert (window), bd_document_get_title (doc));
  g_assert_true (bd_window_shot_save (GTK_WINDOW (window), path, FALSE, &error));
  g_assert_no_error (error);
  g_test_message ("screenshot: %s", path);

  click_response (ADW_DIALOG (visible_alert (window)), "_Cancel");
  g_assert_true (bd_main_loop_wait_for (no_dialog, window));
  g_assert_true (document () == doc);
  g_assert_true (bd_document_get_can_undo (doc));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));
}

static gboolean
title_is (gpointer data)
{
  return g_strcmp0 (bd_document_get_title (document ()), data) == 0;
}

/* Ctrl+V over a painted photo asks first: Cancel keeps it, Discard opens the pasted image. */
static void
test_unsaved_paste (void)
{
  GdkClipboard *clipboard = gtk_widget_get_clipboard (GTK_WIDGET (window));
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *title = NULL;
  BdDocument *doc;

  if (!ensure_opened ())
    return;

  doc = document ();
  if (!bd_document_get_can_undo (doc))
    {
      guint64 serial = paint_through_person (doc);

      g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial)));
    }
  title = g_strdup (bd_document_get_title (doc));

  texture = gdk_texture_new_from_filename (g_ptr_array_index (photos, photos->len > 1 ? 1 : 0), &error);
  g_assert_no_error (error);
  gdk_clipboard_set_texture (clipboard, texture);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.paste", NULL));
  bd_main_loop_spin (500);
  check_unsaved_alert (visible_alert (window), title);
  g_assert_cmpstr (bd_document_get_title (document ()), ==, title);
  click_response (ADW_DIALOG (visible_alert (window)), "_Cancel");
  g_assert_true (bd_main_loop_wait_for (no_dialog, window));
  bd_main_loop_spin (300);
  g_assert_cmpstr (bd_document_get_title (document ()), ==, title);
  g_assert_true (bd_document_get_can_undo (document ()));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.paste", NULL));
  bd_main_loop_spin (500);
  check_unsaved_alert (visible_alert (window), title);
  click_response (ADW_DIALOG (visible_alert (window)), "_Discard");
  g_assert_true (bd_main_loop_wait_for (no_dialog, window));
  g_assert_true (bd_main_loop_wait_for (title_is, (gpointer) "Pasted Image"));
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
  g_assert_false (bd_document_get_can_undo (document ()));
}

static gboolean
batch_idle (gpointer data)
{
  return !bd_batch_page_get_busy (data);
}

/* The batch list's rows under @widget, in order. */
static void
find_rows (GtkWidget *widget,
           GPtrArray *rows)
{
  if (BD_IS_BATCH_ROW (widget))
    {
      g_ptr_array_add (rows, widget);
      return;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child; child = gtk_widget_get_next_sibling (child))
    find_rows (child, rows);
}

static void
test_batch (void)
{
  BdBatchPage *page;
  g_autofree char *bad = g_build_filename (work_dir, "batch-bad.png", NULL);
  g_autofree char *out = g_build_filename (work_dir, "batch-out", NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (out);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_object_unref);
  GListModel *items;
  guint done = 0, failed = 0, exported = 0;

  if (skip_without_photo_and_model ())
    return;
  if (photos->len < 2)
    {
      g_test_skip ("The batch needs two photos");
      return;
    }

  /* Two photos with a broken file between them. */
  g_assert_true (g_file_set_contents (bad, "not a photo", -1, NULL));
  g_assert_cmpint (g_mkdir (out, 0700), ==, 0);
  g_ptr_array_add (files, g_file_new_for_path (g_ptr_array_index (photos, 0)));
  g_ptr_array_add (files, g_file_new_for_path (bad));
  g_ptr_array_add (files, g_file_new_for_path (g_ptr_array_index (photos, 1)));

  bd_window_open_files (window, (GFile **) files->pdata, files->len);
  g_assert_cmpstr (bd_window_get_page (window), ==, "batch");

  page = bd_window_get_batch_page (window);
  g_assert_true (bd_main_loop_wait_for (batch_idle, page));

  items = bd_batch_page_get_items (page);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);

      done += bd_batch_item_get_state (item) == BD_BATCH_ITEM_DONE;
      failed += bd_batch_item_get_state (item) == BD_BATCH_ITEM_FAILED;
      if (bd_batch_item_get_state (item) == BD_BATCH_ITEM_FAILED)
        g_test_message ("the bad file says: %s", bd_batch_item_get_message (item));
    }
  g_assert_cmpuint (done, ==, 2);
  g_assert_cmpuint (failed, ==, 1);

  /* Every row has one height: the failed one (no thumbnail) too. */
  {
    g_autoptr(GPtrArray) rows = g_ptr_array_new ();
    find_rows (GTK_WIDGET (page), rows);
    g_assert_cmpuint (rows->len, ==, 3);
    for (guint i = 1; i < rows->len; i++)
      g_assert_cmpint (gtk_widget_get_height (rows->pdata[i]), ==, gtk_widget_get_height (rows->pdata[0]));
  }
  {
    g_autofree char *shot = g_test_build_filename (G_TEST_BUILT, "test-gui-batch.png", NULL);
    bd_main_loop_spin (300);
    g_assert_true (bd_window_shot_save (GTK_WINDOW (window), shot, FALSE, NULL));
    g_test_message ("screenshot: %s", shot);
  }

  /* Export All's folder dialog opens beside the photos, not at Recent, and says the format. */
  {
    g_autoptr(GtkFileDialog) dialog = bd_batch_page_new_export_dialog (page);
    g_autoptr(GFile) expected = g_file_get_parent (g_ptr_array_index (files, 0));

    g_assert_nonnull (gtk_file_dialog_get_initial_folder (dialog));
    g_assert_true (g_file_equal (gtk_file_dialog_get_initial_folder (dialog), expected));
    g_assert_cmpstr (gtk_file_dialog_get_accept_label (dialog), ==, "_Export as PNG");
  }

  bd_batch_page_export_to_folder (page, folder);
  g_assert_true (bd_main_loop_wait_for (batch_idle, page));

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);

      if (bd_batch_item_get_state (item) == BD_BATCH_ITEM_EXPORTED)
        {
          g_autofree char *path = g_build_filename (out, bd_batch_item_get_message (item), NULL);
          g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new_from_file (path, NULL);

          g_assert_nonnull (pixbuf);
          g_assert_true (gdk_pixbuf_get_has_alpha (pixbuf));
          exported++;
        }
    }
  g_assert_cmpuint (exported, ==, 2);

  /* Clicking a finished row opens it in the editor with its mask: no second removal. */
  {
    g_autoptr(BdBatchItem) item = g_list_model_get_item (items, 2);

    g_signal_emit_by_name (page, "item-activated", item);
    g_assert_cmpstr (bd_window_get_page (window), ==, "editor");
    g_assert_true (bd_main_loop_wait_for (result_settled, NULL));
    g_assert_cmpint (bd_document_get_state (document ()), ==, BD_DOCUMENT_STATE_READY);
    g_assert_true (bd_document_get_mask (document ()) == bd_batch_item_get_mask (item));
  }
}

/* Each photo of the batch keeps its own edits: a stroke on one row and a fill on another
 * survive going back and forth, Undo still knows the stroke, and Export All writes what
 * each row shows. Runs after /gui/batch, on its rows. */
static void
test_batch_edits (void)
{
  BdBatchPage *page = bd_window_get_batch_page (window);
  GListModel *items = bd_batch_page_get_items (page);
  g_autofree char *out = g_build_filename (work_dir, "batch-edits", NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (out);
  g_autoptr(BdBatchItem) a = NULL, b = NULL;
  g_autofree guint8 *stroked = NULL, *filled = NULL, *again = NULL;
  GdkRGBA red = { 1, 0, 0, 1 };
  int width, height, bw, bh;
  guint64 serial;

  if (skip_without_photo_and_model ())
    return;
  if (g_list_model_get_n_items (items) < 3)
    {
      g_test_skip ("The batch of /gui/batch is not there");
      return;
    }

  a = g_list_model_get_item (items, 0);
  b = g_list_model_get_item (items, 2);

  /* Row A: a remove stroke. */
  g_signal_emit_by_name (page, "item-activated", a);
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
  serial = paint_through_person (document ());
  g_assert_cmpuint (serial, >, 0);
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial)));
  stroked = download_result (&width, &height);

  /* Back to the list, row B: a red fill. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-batch", NULL));
  g_signal_emit_by_name (page, "item-activated", b);
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
  bd_document_set_background_color (document (), &red);
  bd_document_set_background_kind (document (), 1 /* BD_BACKGROUND_COLOR */);
  g_assert_true (bd_main_loop_wait_for (result_settled, NULL));
  filled = download_result (&bw, &bh);

  /* Row A again: the stroke is still there, and Undo knows it. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-batch", NULL));
  g_signal_emit_by_name (page, "item-activated", a);
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
  g_assert_true (bd_document_get_can_undo (document ()));
  {
    int w2, h2;

    again = download_result (&w2, &h2);
    g_assert_cmpint (w2, ==, width);
    g_assert_cmpmem (again, (gsize) width * height * 4, stroked, (gsize) width * height * 4);
  }

  /* Export All: each file is what its row shows. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-batch", NULL));
  g_assert_cmpint (g_mkdir (out, 0700), ==, 0);
  bd_batch_page_export_to_folder (page, folder);
  g_assert_true (bd_main_loop_wait_for (batch_idle, page));

  for (guint k = 0; k < 2; k++)
    {
      BdBatchItem *item = k == 0 ? a : b;
      const guint8 *shown = k == 0 ? stroked : filled;
      int w = k == 0 ? width : bw, h = k == 0 ? height : bh;
      g_autofree char *path = NULL;
      g_autoptr(GdkPixbuf) saved = NULL;
      const guint8 *pixels;
      int stride, channels;

      g_assert_cmpint (bd_batch_item_get_state (item), ==, BD_BATCH_ITEM_EXPORTED);
      path = g_build_filename (out, bd_batch_item_get_message (item), NULL);
      saved = gdk_pixbuf_new_from_file (path, NULL);
      g_assert_nonnull (saved);
      g_assert_cmpint (gdk_pixbuf_get_width (saved), ==, w);
      g_assert_cmpint (gdk_pixbuf_get_height (saved), ==, h);
      pixels = gdk_pixbuf_read_pixels (saved);
      stride = gdk_pixbuf_get_rowstride (saved);
      channels = gdk_pixbuf_get_n_channels (saved);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            const guint8 *p = pixels + (gsize) y * stride + x * channels;
            const guint8 *q = shown + ((gsize) y * w + x) * 4;

            g_assert_cmpuint (channels == 4 ? p[3] : 255, ==, q[3]);
            if (q[3] == 255)
              for (int c = 0; c < 3; c++)
                g_assert_cmpint (ABS (p[c] - q[c]), <=, 2);
          }
    }
}

/* Clearing the batch list with two edited rows asks first, counting them. */
static void
test_unsaved_batch_clear (void)
{
  BdBatchPage *page = bd_window_get_batch_page (window);
  GListModel *items = bd_batch_page_get_items (page);
  guint n = g_list_model_get_n_items (items);

  if (skip_without_photo_and_model ())
    return;
  if (n < 3)
    {
      g_test_skip ("The batch of /gui/batch is not there");
      return;
    }

  for (guint i = 0; i < n; i += 2)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);
      guint64 serial;

      g_signal_emit_by_name (page, "item-activated", item);
      g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
      serial = paint_through_person (document ());
      g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial)));
    }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-batch", NULL));
  g_assert_true (bd_window_get_has_unsaved (window));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "batch.clear", NULL));
  bd_main_loop_spin (300);
  check_unsaved_alert (visible_alert (window), NULL);
  g_assert_nonnull (strstr (adw_alert_dialog_get_body (visible_alert (window)), "2 photos have unsaved changes"));
  click_response (ADW_DIALOG (visible_alert (window)), "_Cancel");
  g_assert_true (bd_main_loop_wait_for (no_dialog, window));
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, n);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (page), "batch.clear", NULL));
  bd_main_loop_spin (300);
  click_response (ADW_DIALOG (visible_alert (window)), "_Discard");
  g_assert_true (bd_main_loop_wait_for (no_dialog, window));
  bd_main_loop_spin (200);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, 0);
  g_assert_false (bd_window_get_has_unsaved (window));
}

static gboolean
document_settled (gpointer data)
{
  BdDocument *doc = data;

  return bd_document_get_state (doc) == BD_DOCUMENT_STATE_READY && bd_document_get_result (doc) != NULL &&
         !bd_document_get_busy (doc);
}

static gboolean
pointer_cleared (gpointer data)
{
  return *(gpointer *) data == NULL;
}

static gboolean
document_saved (gpointer data)
{
  return !bd_document_get_modified (data) && !bd_document_get_busy (data);
}

/* BdBatch, the batch list's model, without a window: its queue and export. */

static BdBatch *model_batch;  /* made by /gui/batch-model/queue, used by the next ones */

static gboolean
model_idle (gpointer data)
{
  return !bd_batch_get_busy (data);
}

/* Notes each item as it starts, and checks that no other is being processed meanwhile. */
static void
on_model_item_state (BdBatchItem *item,
                     GParamSpec  *pspec,
                     GPtrArray   *started)
{
  GListModel *items = bd_batch_get_items (model_batch);
  guint working = 0;

  if (bd_batch_item_get_state (item) != BD_BATCH_ITEM_WORKING)
    return;
  g_ptr_array_add (started, item);
  for (guint i = 0; i < g_list_model_get_n_items (items); i++)
    {
      g_autoptr(BdBatchItem) other = g_list_model_get_item (items, i);

      working += bd_batch_item_get_state (other) == BD_BATCH_ITEM_WORKING;
    }
  g_assert_cmpuint (working, ==, 1);
}

/* Photos go through one at a time in the order added; an unreadable file in the middle is
 * marked with why, and the one after it is still done. */
static void
test_batch_model_queue (void)
{
  g_autofree char *bad = g_build_filename (work_dir, "model-bad.jpg", NULL);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) started = g_ptr_array_new ();
  GListModel *items;

  if (skip_without_photo_and_model ())
    return;

  g_assert_true (g_file_set_contents (bad, "not a photo", -1, NULL));
  /* The same photo twice: the export must then find a second name. */
  g_ptr_array_add (files, g_file_new_for_path (g_ptr_array_index (photos, 0)));
  g_ptr_array_add (files, g_file_new_for_path (bad));
  g_ptr_array_add (files, g_file_new_for_path (g_ptr_array_index (photos, 0)));

  model_batch = bd_batch_new (bd_application_get_engine (app));
  items = bd_batch_get_items (model_batch);
  g_assert_false (bd_batch_get_busy (model_batch));
  bd_batch_add_files (model_batch, (GFile **) files->pdata, 1);
  g_assert_true (bd_batch_get_busy (model_batch));
  {
    g_autoptr(BdBatchItem) first = g_list_model_get_item (items, 0);

    g_assert_cmpint (bd_batch_item_get_state (first), ==, BD_BATCH_ITEM_WORKING);
  }
  bd_batch_add_files (model_batch, (GFile **) files->pdata + 1, 2);
  g_assert_cmpuint (bd_batch_get_n_items (model_batch), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);

      g_assert_true (g_file_equal (bd_batch_item_get_file (item), files->pdata[i]));
      g_signal_connect (item, "notify::state", G_CALLBACK (on_model_item_state), started);
    }

  g_assert_true (bd_main_loop_wait_for (model_idle, model_batch));

  /* The first had started before its handler was connected. */
  g_assert_cmpuint (started->len, ==, 2);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);

      g_signal_handlers_disconnect_by_func (item, on_model_item_state, started);
      if (i > 0)
        g_assert_true (started->pdata[i - 1] == item);
      if (i == 1)
        {
          g_assert_cmpint (bd_batch_item_get_state (item), ==, BD_BATCH_ITEM_FAILED);
          g_assert_nonnull (bd_batch_item_get_message (item));
          g_assert_cmpstr (bd_batch_item_get_message (item), !=, "");
          g_assert_false (bd_batch_item_has_mask (item));
        }
      else
        {
          g_assert_cmpint (bd_batch_item_get_state (item), ==, BD_BATCH_ITEM_DONE);
          g_assert_true (bd_batch_item_has_mask (item));
          g_assert_nonnull (bd_batch_item_get_thumbnail (item));
        }
    }
  {
    guint ready, failed, waiting;

    bd_batch_count (model_batch, &ready, &failed, &waiting);
    g_assert_cmpuint (ready, ==, 2);
    g_assert_cmpuint (failed, ==, 1);
    g_assert_cmpuint (waiting, ==, 0);
  }
}

typedef struct
{
  gboolean  finished;
  gboolean  ok;
  guint     exported;
  guint     failed;
  GError   *error;
} ModelExport;

static void
on_model_exported (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  ModelExport *export = user_data;

  export->ok = bd_batch_export_finish (BD_BATCH (object), result, &export->exported, &export->failed,
                                       &export->error);
  export->finished = TRUE;
}

static gboolean
model_export_finished (gpointer data)
{
  return ((ModelExport *) data)->finished;
}

/* The names in @path (hidden ones too: a temporary file would be one). */
static GPtrArray *
folder_names (const char *path)
{
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  return names;
}

/* Cancels @cancellable when @cancel_after photos are written (G_MAXUINT: never). */
typedef struct
{
  GCancellable *cancellable;
  guint         cancel_after;
  guint         written;
  GPtrArray    *done;          /* the items the export was through with, in order */
} CancelAfter;

static void
on_model_export_progress (BdBatch     *batch,
                          BdBatchItem *item,
                          guint        n_done,
                          guint        n_total,
                          CancelAfter *cancel)
{
  /* Each photo once (several are written at once: in the order they finish). */
  g_assert_false (g_ptr_array_find (cancel->done, item, NULL));
  g_ptr_array_add (cancel->done, item);
  g_assert_cmpuint (n_done, ==, cancel->done->len);
  g_assert_cmpuint (n_total, ==, 2);
  if (bd_batch_item_get_state (item) == BD_BATCH_ITEM_EXPORTED && ++cancel->written == cancel->cancel_after)
    g_cancellable_cancel (cancel->cancellable);
}

/* Exports model_batch's items into a new folder @name of work_dir (returned). */
static char *
model_export (const char   *name,
              GCancellable *cancellable,
              guint         cancel_after,
              ModelExport  *export)
{
  char *out = g_build_filename (work_dir, name, NULL);
  g_autoptr(GFile) folder = g_file_new_for_path (out);
  GListModel *items = bd_batch_get_items (model_batch);
  g_autoptr(GPtrArray) done = g_ptr_array_new ();
  CancelAfter cancel = { cancellable, cancel_after, 0, done };
  gulong handler;

  g_assert_cmpint (g_mkdir (out, 0700), ==, 0);
  handler = g_signal_connect (model_batch, "export-progress", G_CALLBACK (on_model_export_progress), &cancel);
  bd_batch_export_async (model_batch, folder, NULL, "png", 90, cancellable, on_model_exported, export);
  g_assert_true (bd_batch_get_exporting (model_batch));
  g_assert_true (bd_batch_get_busy (model_batch));
  g_assert_true (bd_main_loop_wait_for (model_export_finished, export));
  g_assert_false (bd_batch_get_exporting (model_batch));
  g_signal_handler_disconnect (model_batch, handler);

  g_assert_cmpuint (cancel.written, ==, export->exported);
  for (guint i = 0; i < done->len; i++)
    {
      g_autoptr(BdBatchItem) first = g_list_model_get_item (items, 0);
      g_autoptr(BdBatchItem) third = g_list_model_get_item (items, 2);  /* the second failed: not exported */

      g_assert_true (done->pdata[i] == first || done->pdata[i] == third);
    }
  return out;
}

/* The tests after /gui/batch-model/queue work on its batch. */
static gboolean
skip_without_model_batch (void)
{
  if (skip_without_photo_and_model ())
    return TRUE;
  if (model_batch == NULL)
    {
      g_test_skip ("The batch of /gui/batch-model/queue is not there");
      return TRUE;
    }
  return FALSE;
}

/* Export writes every photo with a mask once, named by the CLI's rule (the second of two
 * same-named photos gets "-2"); the failed one is left out. */
static void
test_batch_model_export (void)
{
  GListModel *items;
  g_autofree char *out = NULL;
  g_autofree char *stem = NULL;
  g_autoptr(GPtrArray) names = NULL;
  ModelExport export = { 0 };

  if (skip_without_model_batch ())
    return;

  items = bd_batch_get_items (model_batch);
  out = model_export ("model-export", NULL, G_MAXUINT, &export);
  g_assert_no_error (export.error);
  g_assert_true (export.ok);
  g_assert_cmpuint (export.exported, ==, 2);
  g_assert_cmpuint (export.failed, ==, 0);

  stem = g_path_get_basename (g_ptr_array_index (photos, 0));
  *strrchr (stem, '.') = '\0';
  names = folder_names (out);
  g_assert_cmpuint (names->len, ==, 2);
  for (guint i = 0; i < 3; i += 2)
    {
      g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);
      g_autofree char *expected = g_strdup_printf (i == 0 ? "%s-cutout.png" : "%s-cutout-2.png", stem);
      g_autofree char *path = g_build_filename (out, expected, NULL);
      g_autoptr(GdkPixbuf) saved = NULL;
      g_autoptr(GdkPixbuf) photo = gdk_pixbuf_new_from_file (g_ptr_array_index (photos, 0), NULL);

      g_assert_cmpint (bd_batch_item_get_state (item), ==, BD_BATCH_ITEM_EXPORTED);
      g_assert_cmpstr (bd_batch_item_get_message (item), ==, expected);
      saved = gdk_pixbuf_new_from_file (path, NULL);
      g_assert_nonnull (saved);
      g_assert_true (gdk_pixbuf_get_has_alpha (saved));
      g_assert_nonnull (photo);
      g_assert_cmpint (gdk_pixbuf_get_width (saved), ==, gdk_pixbuf_get_width (photo));
      g_assert_cmpint (gdk_pixbuf_get_height (saved), ==, gdk_pixbuf_get_height (photo));
    }
  {
    g_autoptr(BdBatchItem) bad = g_list_model_get_item (items, 1);

    g_assert_cmpint (bd_batch_item_get_state (bad), ==, BD_BATCH_ITEM_FAILED);
  }
}

/* Cancelling an export stops it: after the first photo, the photos then being written are
 * whole or not there (several are written at once), and none is begun after it; at once,
 * nothing is left but whole photos (no partial or temporary file). A second export while one
 * runs is refused. */
static void
test_batch_model_cancel (void)
{
  GListModel *items;

  if (skip_without_model_batch ())
    return;
  items = bd_batch_get_items (model_batch);

  {
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();
    g_autoptr(BdBatchItem) second = g_list_model_get_item (items, 2);
    g_autofree char *before = g_strdup (bd_batch_item_get_message (second));
    g_autofree char *out = NULL;
    g_autoptr(GPtrArray) names = NULL;
    ModelExport export = { 0 };

    out = model_export ("model-cancel-after-one", cancellable, 1, &export);
    g_assert_false (export.ok);
    g_assert_error (export.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    /* The second was being written beside the first: it may have been finished too. */
    g_assert_cmpuint (export.exported, >=, 1);
    g_assert_cmpuint (export.exported, <=, 2);
    g_assert_cmpuint (export.failed, ==, 0);
    names = folder_names (out);
    g_assert_cmpuint (names->len, ==, export.exported);
    for (guint i = 0; i < names->len; i++)
      {
        g_autofree char *path = g_build_filename (out, names->pdata[i], NULL);
        g_autoptr(GdkPixbuf) saved = gdk_pixbuf_new_from_file (path, NULL);

        g_assert_nonnull (saved);
      }
    /* Not written, the second keeps what it said: its earlier export, not a failure. */
    g_assert_cmpint (bd_batch_item_get_state (second), ==, BD_BATCH_ITEM_EXPORTED);
    if (export.exported == 1)
      g_assert_cmpstr (bd_batch_item_get_message (second), ==, before);
    g_clear_error (&export.error);
  }

  {
    g_autoptr(GCancellable) cancellable = g_cancellable_new ();
    g_autofree char *out = g_build_filename (work_dir, "model-cancel-at-once", NULL);
    g_autoptr(GFile) folder = g_file_new_for_path (out);
    g_autoptr(GPtrArray) names = NULL;
    ModelExport export = { 0 }, refused = { 0 };

    g_assert_cmpint (g_mkdir (out, 0700), ==, 0);
    bd_batch_export_async (model_batch, folder, NULL, "png", 90, cancellable, on_model_exported, &export);
    bd_batch_export_async (model_batch, folder, NULL, "png", 90, NULL, on_model_exported, &refused);
    g_cancellable_cancel (cancellable);
    g_assert_true (bd_main_loop_wait_for (model_export_finished, &export));
    g_assert_true (bd_main_loop_wait_for (model_export_finished, &refused));
    g_assert_error (refused.error, G_IO_ERROR, G_IO_ERROR_BUSY);
    g_assert_error (export.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    /* The first write may have ended before the cancel came: then it is whole and counted.
     * A photo not written is not a failure: its row keeps what it said. */
    g_assert_cmpuint (export.failed, ==, 0);
    for (guint i = 0; i < g_list_model_get_n_items (items); i++)
      {
        g_autoptr(BdBatchItem) item = g_list_model_get_item (items, i);

        g_assert_cmpint (bd_batch_item_get_state (item), !=, BD_BATCH_ITEM_EXPORT_FAILED);
      }
    names = folder_names (out);
    g_assert_cmpuint (names->len, ==, export.exported);
    for (guint i = 0; i < names->len; i++)
      {
        g_autofree char *path = g_build_filename (out, names->pdata[i], NULL);
        g_autoptr(GdkPixbuf) saved = gdk_pixbuf_new_from_file (path, NULL);

        g_assert_nonnull (saved);
      }
    g_assert_false (bd_batch_get_busy (model_batch));
    g_clear_error (&export.error);
    g_clear_error (&refused.error);
  }

  /* Clearing ends the model's work; the items go. */
  bd_batch_clear (model_batch);
  g_assert_cmpuint (bd_batch_get_n_items (model_batch), ==, 0);
  g_clear_object (&model_batch);
}

/* Closing a window with a painted photo asks first: Cancel keeps it open; once the photo
 * has a file, Save writes it there and then the window closes. */
static void
test_unsaved_close (void)
{
  g_autofree char *path = g_build_filename (work_dir, "close-saved.png", NULL);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFile) saved = g_file_new_for_path (path);
  BdWindow *other;
  BdDocument *doc;
  guint64 serial;

  if (skip_without_photo_and_model ())
    return;

  other = bd_window_new (app);
  g_object_add_weak_pointer (G_OBJECT (other), (gpointer *) &other);
  gtk_window_present (GTK_WINDOW (other));
  file = g_file_new_for_path (g_ptr_array_index (photos, 0));
  bd_window_open_files (other, &file, 1);
  doc = bd_editor_get_document (bd_window_get_editor (other));
  g_assert_true (bd_main_loop_wait_for (document_settled, doc));
  serial = paint_through_person (doc);
  g_assert_cmpuint (serial, >, 0);
  g_assert_true (bd_main_loop_wait_for (document_settled, doc));

  gtk_window_close (GTK_WINDOW (other));
  bd_main_loop_spin (300);
  g_assert_nonnull (other);
  check_unsaved_alert (visible_alert (other), bd_document_get_title (doc));
  /* Never saved: Save asks where first. */
  g_assert_cmpstr (adw_alert_dialog_get_response_label (visible_alert (other), "save"), ==, "_Save…");
  click_response (ADW_DIALOG (visible_alert (other)), "_Cancel");
  g_assert_true (bd_main_loop_wait_for (no_dialog, other));
  bd_main_loop_spin (200);
  g_assert_nonnull (other);

  /* Saved once, painted again: Save writes the same file, then the window closes. */
  bd_editor_save_to_file (bd_window_get_editor (other), saved);
  g_assert_true (bd_main_loop_wait_for (document_saved, doc));
  g_assert_cmpint (g_remove (path), ==, 0);
  serial = paint_through_person (doc);
  g_assert_true (bd_document_get_modified (doc));
  g_assert_true (bd_main_loop_wait_for (document_settled, doc));

  gtk_window_close (GTK_WINDOW (other));
  bd_main_loop_spin (300);
  g_assert_nonnull (other);
  check_unsaved_alert (visible_alert (other), bd_document_get_title (doc));
  g_assert_cmpstr (adw_alert_dialog_get_response_label (visible_alert (other), "save"), ==, "_Save");
  click_response (ADW_DIALOG (visible_alert (other)), "_Save");
  g_assert_true (bd_main_loop_wait_for (pointer_cleared, &other));
  g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* Within a few pixels: without a compositor the window's resize borders come off its size. */
/* Records the longest time between two runs of the main loop. */
typedef struct
{
  gint64 last;
  gint64 longest;
} Stall;

static gboolean
on_tick (gpointer data)
{
  Stall *stall = data;
  gint64 now = g_get_monotonic_time ();

  if (stall->last > 0)
    stall->longest = MAX (stall->longest, now - stall->last);
  stall->last = now;
  return G_SOURCE_CONTINUE;
}

/* The window keeps answering while a 50 MP photo loads, is cut out, edited and zoomed: the
 * main loop never waits half a second. (Run with GSK_RENDERER=cairo: under Xvfb, GL and Vulkan
 * are emulated on the CPU and their frames take seconds while the network runs.) */
static void
test_large_photo (void)
{
  g_autofree char *path = g_build_filename (work_dir, "large.jpg", NULL);
  g_autoptr(GdkPixbuf) small = NULL;
  g_autoptr(GdkPixbuf) large = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GValue) value = G_VALUE_INIT;
  Stall stall = { 0, 0 };
  gint64 start;
  guint tick;
  GSList *list;

  if (skip_without_photo_and_model ())
    return;

  /* 8660 × 5773: 50 megapixels. */
  small = gdk_pixbuf_new_from_file (g_ptr_array_index (photos, 0), &error);
  g_assert_no_error (error);
  large = gdk_pixbuf_scale_simple (small, 5773, 8660, GDK_INTERP_BILINEAR);
  g_assert_true (gdk_pixbuf_save (large, path, "jpeg", &error, "quality", "85", NULL));
  g_clear_object (&large);

  file = g_file_new_for_path (path);
  list = g_slist_prepend (NULL, file);
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (list));
  g_slist_free (list);

  tick = g_timeout_add (10, on_tick, &stall);
  start = g_get_monotonic_time ();
  g_assert_true (bd_window_open_value (window, &value));
  g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (0)));
  g_test_message ("50 MP: ready after %.1f s, longest main-loop stall %.0f ms",
                  (g_get_monotonic_time () - start) / 1e6, stall.longest / 1e3);

  /* A brush stroke and its undo on the big photo, with the window still answering. */
  stall.longest = 0;
  {
    graphene_point_t points[2] = { GRAPHENE_POINT_INIT (2000, 3000), GRAPHENE_POINT_INIT (3000, 3000) };
    guint64 serial = bd_document_paint_stroke (document (), BD_MARK_REMOVE, 200, points, 2);

    start = g_get_monotonic_time ();
    g_assert_true (bd_main_loop_wait_for (result_settled, GSIZE_TO_POINTER (serial)));
    g_test_message ("50 MP: stroke shown after %.1f s, longest stall %.0f ms",
                    (g_get_monotonic_time () - start) / 1e6, stall.longest / 1e3);
  }

  /* 100 %: the canvas shows a crop of the full-size result, cut in a worker. */
  bd_canvas_zoom_actual (bd_editor_get_canvas (bd_window_get_editor (window)));
  bd_main_loop_spin (1500);
  bd_canvas_zoom_fit (bd_editor_get_canvas (bd_window_get_editor (window)));
  bd_main_loop_spin (500);
  g_test_message ("50 MP: longest stall with zooming %.0f ms", stall.longest / 1e3);
  g_source_remove (tick);

  g_assert_cmpint (bd_document_get_state (document ()), ==, BD_DOCUMENT_STATE_READY);
  g_assert_cmpint (bd_document_get_width (document ()), ==, 5773);
  g_assert_cmpint (stall.longest, <, 500 * 1000);
}

static gboolean
window_width_near (gpointer data)
{
  return ABS (gtk_widget_get_width (GTK_WIDGET (window)) - GPOINTER_TO_INT (data)) <= 16;
}

static gboolean
menu_offers (GtkWidget *widget, gconstpointer action)
{
  GMenuModel *model;

  if (!GTK_IS_MENU_BUTTON (widget))
    return FALSE;
  model = gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (widget));
  for (int s = 0; model && s < g_menu_model_get_n_items (model); s++)
    {
      g_autoptr(GMenuModel) section = g_menu_model_get_item_link (model, s, G_MENU_LINK_SECTION);
      GMenuModel *items = section ? section : model;
      for (int i = 0; i < g_menu_model_get_n_items (items); i++)
        {
          g_autofree char *name = NULL;
          if (g_menu_model_get_item_attribute (items, i, G_MENU_ATTRIBUTE_ACTION, "s", &name) &&
              g_str_equal (name, action))
            return TRUE;
        }
    }
  return FALSE;
}

/* The GtkMenuButton under @widget whose menu offers @action, or NULL. */
static GtkMenuButton *
find_menu_button_with (GtkWidget  *widget,
                       const char *action)
{
  return (GtkMenuButton *) find_matching (widget, menu_offers, action);
}

static void
test_narrow_and_screenshot (void)
{
  BdEditor *editor = bd_window_get_editor (window);
  g_autofree char *path = g_test_build_filename (G_TEST_BUILT, "test-gui-window.png", NULL);
  g_autoptr(GError) error = NULL;

  if (!ensure_opened ())
    return;

  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 700);
  g_assert_true (bd_main_loop_wait_for (window_width_near, GINT_TO_POINTER (1000)));
  bd_main_loop_spin (300);
  g_assert_null (adw_breakpoint_bin_get_current_breakpoint (ADW_BREAKPOINT_BIN (editor)));

  g_assert_true (bd_window_shot_save (GTK_WINDOW (window), path, FALSE, &error));
  g_assert_no_error (error);
  g_test_message ("screenshot: %s", path);

  /* Wide, the header bar has the buttons; no menu is needed for them. */
  GtkMenuButton *edit_menu = find_menu_button_with (GTK_WIDGET (editor), "editor.undo");
  g_assert_true (edit_menu == NULL || !gtk_widget_get_mapped (GTK_WIDGET (edit_menu)));

  /* A phone-sized window folds the sidebar away, and what the header bar hides (Open, Undo,
   * Redo, Copy) is in a menu on screen instead. */
  gtk_window_set_default_size (GTK_WINDOW (window), 360, 700);
  g_assert_true (bd_main_loop_wait_for (window_width_near, GINT_TO_POINTER (360)));
  bd_main_loop_spin (300);
  g_assert_nonnull (adw_breakpoint_bin_get_current_breakpoint (ADW_BREAKPOINT_BIN (editor)));
  static const char *hidden[] = { "editor.undo", "editor.redo", "editor.copy", "win.open" };
  for (gsize i = 0; i < G_N_ELEMENTS (hidden); i++)
    {
      edit_menu = find_menu_button_with (GTK_WIDGET (editor), hidden[i]);
      g_assert_nonnull (edit_menu);
      g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (edit_menu)));
    }
  /* The floating tool bar, every tool on it, fits the phone's width (the zoom buttons go:
   * pinching zooms). */
  {
    GtkWidget *bar = find_css_class (GTK_WIDGET (editor), "floating-bar");
    int minimum;

    g_assert_nonnull (bar);
    gtk_widget_measure (bar, GTK_ORIENTATION_HORIZONTAL, -1, &minimum, NULL, NULL, NULL);
    g_test_message ("tool bar: %d px in %d", minimum, gtk_widget_get_width (GTK_WIDGET (editor)));
    g_assert_cmpint (minimum, <=, gtk_widget_get_width (GTK_WIDGET (editor)) - 24);
  }
  g_autofree char *narrow = g_test_build_filename (G_TEST_BUILT, "test-gui-narrow.png", NULL);
  g_assert_true (bd_window_shot_save (GTK_WINDOW (window), narrow, FALSE, &error));
  g_test_message ("screenshot: %s", narrow);
}

typedef struct
{
  BdSegmentation *segmentation;
  GError         *error;
  gboolean        done;
} SegmentWait;

static void
on_segmented (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  SegmentWait *wait = data;

  wait->segmentation = bd_engine_segment_finish (BD_ENGINE (source), result, &wait->error);
  wait->done = TRUE;
}

static gboolean
segment_done (gpointer data)
{
  return ((SegmentWait *) data)->done;
}

/* The engine's mask of @photo, with the settings as they are. */
static GBytes *
segment (GdkPixbuf *photo)
{
  BdEngine *engine = bd_application_get_engine (app);
  SegmentWait wait = { 0 };
  GBytes *alpha;

  bd_engine_segment_async (engine, photo, NULL, NULL, NULL, on_segmented, &wait);
  g_assert_true (bd_main_loop_wait_for (segment_done, &wait));
  g_assert_no_error (wait.error);
  alpha = g_bytes_ref (wait.segmentation->alpha);
  bd_segmentation_free (wait.segmentation);

  return alpha;
}

typedef struct
{
  GThread *main_thread;
  gint     calls;
  gint     elsewhere;  /* calls on another thread */
} ProgressCalls;

static void
on_progress_counted (GObject *target,
                     double   fraction)
{
  ProgressCalls *calls = g_object_get_data (target, "calls");

  g_atomic_int_inc (&calls->calls);
  if (g_thread_self () != calls->main_thread)
    g_atomic_int_inc (&calls->elsewhere);
}

/* The engine's progress reaches its caller on the caller's thread, also while that thread
 * is busy outside its main loop (as a test between iterations is) when the worker reports. */
static void
test_engine_progress_thread (void)
{
  BdEngine *engine;
  SegmentWait wait = { 0 };
  ProgressCalls calls = { g_thread_self (), 0, 0 };
  g_autoptr(GObject) target = NULL;
  g_autoptr(GdkPixbuf) photo = NULL;

  if (skip_without_photo_and_model ())
    return;

  engine = bd_application_get_engine (app);
  photo = gdk_pixbuf_new_from_file (g_ptr_array_index (photos, 0), NULL);
  g_assert_nonnull (photo);
  target = g_object_new (G_TYPE_OBJECT, NULL);
  g_object_set_data (target, "calls", &calls);

  bd_engine_segment_async (engine, photo, on_progress_counted, target, NULL, on_segmented, &wait);
  /* Busy without iterating while the worker runs and reports: nothing may run meanwhile. */
  g_usleep (3 * G_USEC_PER_SEC);
  g_assert_cmpint (g_atomic_int_get (&calls.calls), ==, 0);
  g_assert_true (bd_main_loop_wait_for (segment_done, &wait));
  g_assert_no_error (wait.error);
  bd_segmentation_free (wait.segmentation);

  bd_main_loop_spin (100);
  g_assert_cmpint (calls.calls, >, 0);
  g_assert_cmpint (calls.elsewhere, ==, 0);
}

static AdwSwitchRow *
find_switch_row (GtkWidget *widget)
{
  return ADW_SWITCH_ROW (find_widget (widget, ADW_TYPE_SWITCH_ROW));
}

static gboolean
is_combo_row_titled (GtkWidget *widget, gconstpointer title)
{
  return ADW_IS_COMBO_ROW (widget) &&
         g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), title) == 0;
}

static AdwComboRow *
find_combo_row_titled (GtkWidget  *widget,
                       const char *title)
{
  return (AdwComboRow *) find_matching (widget, is_combo_row_titled, title);
}

static gboolean
other_settled (gpointer data)
{
  BdDocument *doc = bd_editor_get_document (bd_window_get_editor (data));
  BdDocumentState state = bd_document_get_state (doc);

  return state == BD_DOCUMENT_STATE_FAILED ||
         (state == BD_DOCUMENT_STATE_READY && !bd_document_get_busy (doc));
}

/* Opens @path in @win's editor and waits until it is done or failed; returns the document. */
static BdDocument *
open_and_settle (BdWindow   *win,
                 const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);

  bd_window_open_files (win, &file, 1);
  g_assert_true (bd_main_loop_wait_for (other_settled, win));
  return bd_editor_get_document (bd_window_get_editor (win));
}

/* A file that is no photo fails to open, and the editor offers another photo, not a second
 * try that would fail the same way. */
static void
test_open_unreadable (void)
{
  g_autofree char *path = g_build_filename (tmp_dir, "not-a-photo.jpg", NULL);
  BdWindow *other;
  BdDocument *doc;
  GtkWidget *editor, *button;

  if (skip_without_photo_and_model ())
    return;

  /* A window of its own: the main one may hold edits, whose alert would wait for an answer. */
  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  editor = GTK_WIDGET (bd_window_get_editor (other));
  g_assert_true (g_file_set_contents (path, "plain text, not a JPEG", -1, NULL));
  doc = open_and_settle (other, path);
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_FAILED);
  /* The words backdrop-cli and the plug-in use for the same file (common/bd-image-io.c). */
  g_test_message ("the editor says: %s", bd_document_get_error_message (doc));
  g_assert_nonnull (strstr (bd_document_get_error_message (doc),
                            "is not an image in a format Backdrop can read (JPEG, PNG, WebP or TIFF)"));
  bd_main_loop_spin (200);
  button = find_button_labelled (editor, "_Open Another Photo…");
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_get_mapped (button));
  g_assert_cmpstr (gtk_actionable_get_action_name (GTK_ACTIONABLE (button)), ==, "win.open");
  button = find_button_labelled (editor, "_Try Again");
  g_assert_true (button == NULL || !gtk_widget_get_mapped (button));
  {
    g_autofree char *shot = g_test_build_filename (G_TEST_BUILT, "test-gui-unreadable.png", NULL);
    gtk_window_set_default_size (GTK_WINDOW (other), 800, 600);
    bd_main_loop_spin (800);   /* past the page transition */
    g_assert_true (bd_window_shot_save (GTK_WINDOW (other), shot, FALSE, NULL));
    g_test_message ("screenshot: %s", shot);
  }
  gtk_window_destroy (GTK_WINDOW (other));
}

/* The next photo opened in a window starts transparent, not on the last photo's fill. */
static void
test_new_photo_fresh_look (void)
{
  BdWindow *other;
  BdDocument *doc;

  if (skip_without_photo_and_model () || photos->len < 2)
    return;

  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  doc = open_and_settle (other, g_ptr_array_index (photos, 0));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  bd_document_set_background_kind (doc, BD_BACKGROUND_COLOR);
  g_assert_cmpuint (bd_document_get_background_kind (doc), ==, BD_BACKGROUND_COLOR);

  /* The fill is an edit: the window asks first; the user lets it go. */
  {
    g_autoptr(GFile) file = g_file_new_for_path (g_ptr_array_index (photos, 1));
    bd_window_open_files (other, &file, 1);
  }
  bd_main_loop_spin (500);
  g_assert_nonnull (visible_alert (other));
  click_response (ADW_DIALOG (visible_alert (other)), "_Discard");
  g_assert_true (bd_main_loop_wait_for (no_dialog, other));
  {
    g_autofree char *name = g_path_get_basename (g_ptr_array_index (photos, 1));

    for (int i = 0; i < 300; i++)
      {
        doc = bd_editor_get_document (bd_window_get_editor (other));
        if (g_strcmp0 (bd_document_get_title (doc), name) == 0 && other_settled (other))
          break;
        bd_main_loop_spin (100);
      }
    g_assert_cmpstr (bd_document_get_title (doc), ==, name);
  }
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  g_assert_cmpuint (bd_document_get_background_kind (doc), ==, BD_BACKGROUND_TRANSPARENT);
  gtk_window_destroy (GTK_WINDOW (other));
}

static gboolean
result_settled_in (gpointer data)
{
  gpointer *args = data;
  BdDocument *doc = args[0];

  return bd_document_get_state (doc) == BD_DOCUMENT_STATE_READY && !bd_document_get_busy (doc) &&
         bd_document_get_result_serial (doc) >= GPOINTER_TO_SIZE (args[1]);
}

/* Mask views */

#define SYN_W 480
#define SYN_H 320

/* A flat green photo and a mask for it: a person (a hard rectangle), and a faint blob
 * (alpha 100) in the background far from the person's edges, where the model was unsure. */
static char *
write_synthetic_photo (GBytes **mask)
{
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, SYN_W, SYN_H);
  char *path = g_build_filename (tmp_dir, "synthetic.png", NULL);
  guint8 *alpha = g_malloc0 (SYN_W * SYN_H);

  gdk_pixbuf_fill (pixbuf, 0x30a040ff);
  g_assert_true (gdk_pixbuf_save (pixbuf, path, "png", NULL, NULL));

  for (int y = 0; y < SYN_H; y++)
    for (int x = 0; x < SYN_W; x++)
      {
        if (x >= 240 && x < 400 && y >= 40)
          alpha[y * SYN_W + x] = 255;
        else if (x >= 40 && x < 100 && y >= 40 && y < 100)
          alpha[y * SYN_W + x] = 100;
      }
  *mask = g_bytes_new_take (alpha, SYN_W * SYN_H);
  return path;
}

/* The canvas of @editor as it draws now, straight RGBA, with its photo's place. */
static guint8 *
render_canvas (BdEditor        *editor,
               graphene_rect_t *photo,
               int             *stride_px)
{
  GtkWidget *canvas = GTK_WIDGET (bd_editor_get_canvas (editor));
  int width, height;
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autoptr(GdkTextureDownloader) downloader = NULL;
  GBytes *bytes;
  gsize stride;

  /* A paintable shows the widget as drawn when it was made, and follows it only as the main
   * loop runs: made once it is drawn. */
  g_assert_true (bd_widget_wait_drawn (canvas));
  paintable = gtk_widget_paintable_new (canvas);
  width = gtk_widget_get_width (canvas);
  height = gtk_widget_get_height (canvas);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  node = gtk_snapshot_free_to_node (g_steal_pointer (&snapshot));
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (gtk_widget_get_native (canvas)),
                                         node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  downloader = gdk_texture_downloader_new (texture);
  gdk_texture_downloader_set_format (downloader, GDK_MEMORY_R8G8B8A8);
  bytes = gdk_texture_downloader_download_bytes (downloader, &stride);
  bd_canvas_get_photo_area (bd_editor_get_canvas (editor), photo);
  *stride_px = stride / 4;
  return g_bytes_unref_to_data (bytes, &stride);
}

/* The canvas's pixel over photo pixel (@x, @y). */
static const guint8 *
canvas_pixel (const guint8          *pixels,
              int                    stride_px,
              const graphene_rect_t *photo,
              int                    x,
              int                    y)
{
  int cx = (int) (photo->origin.x + (x + 0.5) * photo->size.width / SYN_W);
  int cy = (int) (photo->origin.y + (y + 0.5) * photo->size.height / SYN_H);

  return pixels + ((gsize) cy * stride_px + cx) * 4;
}

static gboolean
has_layer (gpointer data)
{
  gpointer *args = data;

  return bd_document_get_preview (args[0], GPOINTER_TO_INT (args[1])) != NULL &&
         !bd_document_get_busy (args[0]);
}

static void
wait_for_layer (BdDocument *doc,
                BdLayer     layer)
{
  gpointer args[2] = { doc, GINT_TO_POINTER (layer) };

  g_assert_true (bd_main_loop_wait_for (has_layer, args));
  bd_main_loop_spin (100);
}

/* The view switch and the unsure marks, driven by their actions and keys' actions: the
 * canvas draws the mask in black and white, then red over what is removed, then marks the
 * faint blob as unsure; brushing the blob away takes its marks away. */
static void
test_mask_views (void)
{
  g_autoptr(GBytes) mask = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  BdWindow *other;
  BdEditor *editor;
  BdCanvas *canvas;
  BdDocument *doc;
  graphene_rect_t area;
  int stride;
  const guint8 *p;
  graphene_point_t blob[2] = { GRAPHENE_POINT_INIT (55, 70), GRAPHENE_POINT_INIT (85, 70) };
  guint64 serial;

  if (skip_without_photo_and_model ())
    return;

  path = write_synthetic_photo (&mask);
  file = g_file_new_for_path (path);
  other = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (other), 900, 700);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  canvas = bd_editor_get_canvas (editor);
  doc = open_and_settle (other, path);
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  /* The network's answer for a flat green photo is anything; this mask is known. */
  bd_document_open_with_mask (doc, file, mask, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpstr (bd_canvas_get_view (canvas), ==, "result");
  g_assert_null (bd_document_get_preview (doc, BD_LAYER_MASK));   /* none made unasked */

  /* V: the mask in black and white. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.next-view", NULL));
  g_assert_cmpstr (bd_canvas_get_view (canvas), ==, "mask");
  wait_for_layer (doc, BD_LAYER_MASK);
  {
    g_autofree guint8 *px = render_canvas (editor, &area, &stride);

    p = canvas_pixel (px, stride, &area, 320, 200);   /* the person */
    g_assert_cmpuint (p[0], ==, 255);
    g_assert_cmpuint (p[1], ==, 255);
    g_assert_cmpuint (p[2], ==, 255);
    p = canvas_pixel (px, stride, &area, 150, 250);   /* the background */
    g_assert_cmpuint (p[0], ==, 0);
    g_assert_cmpuint (p[1], ==, 0);
    g_assert_cmpuint (p[2], ==, 0);
    /* The blob (alpha 100, far from any edge) as the result has it: settled to background by
     * the decisive pass; the unsure areas (below) still show the network's doubt there. */
    p = canvas_pixel (px, stride, &area, 70, 70);
    g_assert_cmpuint (p[0], ==, 0);
    g_assert_cmpuint (p[2], ==, 0);
  }

  /* V again: red over what is removed, the photo as it is where it is kept. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.next-view", NULL));
  g_assert_cmpstr (bd_canvas_get_view (canvas), ==, "overlay");
  wait_for_layer (doc, BD_LAYER_OVERLAY);
  {
    g_autofree guint8 *px = render_canvas (editor, &area, &stride);

    p = canvas_pixel (px, stride, &area, 320, 200);
    g_assert_cmpint (abs (p[0] - 0x30), <=, 2);
    g_assert_cmpint (abs (p[1] - 0xa0), <=, 2);
    g_assert_cmpint (abs (p[2] - 0x40), <=, 2);
    p = canvas_pixel (px, stride, &area, 150, 250);
    g_assert_cmpint (p[0], >, 0x30 + 80);
    g_assert_cmpint (p[1], <, 0xa0 - 50);
  }

  /* U (its action): the blob is marked, the person's hard edge is not. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "canvas.show-unsure", NULL));
  g_assert_true (bd_canvas_get_show_unsure (canvas));
  wait_for_layer (doc, BD_LAYER_UNSURE);
  g_test_message ("unsure: %.2f %% of the photo", 100 * bd_document_get_unsure_fraction (doc));
  g_assert_cmpfloat (fabs (bd_document_get_unsure_fraction (doc) - 60.0 * 60 / (SYN_W * SYN_H)), <, 0.002);
  {
    g_autofree guint8 *px = render_canvas (editor, &area, &stride);
    int marked = 0;

    /* Hatched cyan over the blob: blue above red at every pixel, strongly at some. */
    for (int y = 45; y < 95; y += 3)
      for (int x = 45; x < 95; x += 3)
        {
          p = canvas_pixel (px, stride, &area, x, y);
          g_assert_cmpint (p[2], >, p[0]);
          marked += p[2] > 150;
        }
    g_assert_cmpint (marked, >, 10);
    p = canvas_pixel (px, stride, &area, 150, 250);   /* no mark elsewhere */
    g_assert_cmpint (p[0], >, p[2]);
    p = canvas_pixel (px, stride, &area, 241, 200);   /* nor on the person's edge */
    g_assert_cmpint (abs (p[2] - 0x40), <=, 2);
  }

  /* Brushing the blob away decides it: its marks go. */
  serial = bd_document_paint_stroke (doc, BD_MARK_REMOVE, 40, blob, G_N_ELEMENTS (blob));
  g_assert_true (bd_main_loop_wait_for (result_settled_in, (gpointer[]) { doc, GSIZE_TO_POINTER (serial) }));
  g_assert_cmpfloat (bd_document_get_unsure_fraction (doc), ==, 0.0);

  /* Back to the result; the layers are no longer made. */
  bd_canvas_set_show_unsure (canvas, FALSE);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.next-view", NULL));
  g_assert_cmpstr (bd_canvas_get_view (canvas), ==, "result");
  gtk_window_destroy (GTK_WINDOW (other));
}

/* A photo for the region tool, with its mask: green background; a person (a kept rectangle
 * of skin colour); a passer-by (a blue square kept at 70 %, with a ring kept at 35 % around
 * it) and a yellow bag that the mask removed. */
static char *
write_region_photo (GBytes **mask)
{
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, SYN_W, SYN_H);
  char *path = g_build_filename (tmp_dir, "regions.png", NULL);
  guint8 *alpha = g_malloc0 (SYN_W * SYN_H);
  guint8 *px = gdk_pixbuf_get_pixels (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);

  for (int y = 0; y < SYN_H; y++)
    for (int x = 0; x < SYN_W; x++)
      {
        guint8 *p = px + y * stride + x * 3;
        guint32 rgb = 0x30a040;
        guint8 a = 0;

        if (x >= 240 && x < 400 && y >= 40)
          rgb = 0xc89678, a = 255;
        else if (x >= 34 && x < 106 && y >= 34 && y < 106)
          {
            rgb = 0x3c3cc8;
            a = (x >= 40 && x < 100 && y >= 40 && y < 100) ? 180 : 90;
          }
        else if (x >= 150 && x < 200 && y >= 200 && y < 260)
          rgb = 0xdcc828;
        p[0] = rgb >> 16;
        p[1] = (rgb >> 8) & 0xff;
        p[2] = rgb & 0xff;
        alpha[y * SYN_W + x] = a;
      }
  g_assert_true (gdk_pixbuf_save (pixbuf, path, "png", NULL, NULL));
  *mask = g_bytes_new_take (alpha, SYN_W * SYN_H);
  return path;
}

/* The result's alpha at photo pixel (@x, @y) of @doc. */
static guint8
result_alpha (BdDocument *doc,
              int         x,
              int         y)
{
  g_autoptr(GdkTextureDownloader) downloader = gdk_texture_downloader_new (bd_document_get_result (doc));
  g_autoptr(GBytes) bytes = NULL;
  gsize stride;

  gdk_texture_downloader_set_format (downloader, GDK_MEMORY_R8G8B8A8);
  bytes = gdk_texture_downloader_download_bytes (downloader, &stride);
  return ((const guint8 *) g_bytes_get_data (bytes, NULL))[y * stride + x * 4 + 3];
}

/* Clicks the canvas of @editor over photo pixel (@x, @y) with the region tool, and waits for
 * the result. */
static void
click_region (BdEditor *editor,
              int       x,
              int       y)
{
  BdDocument *doc = bd_editor_get_document (editor);
  graphene_rect_t area;
  guint64 serial = bd_document_get_result_serial (doc);

  bd_canvas_get_photo_area (bd_editor_get_canvas (editor), &area);
  bd_canvas_click_region (bd_editor_get_canvas (editor),
                          area.origin.x + (x + 0.5) * area.size.width / SYN_W,
                          area.origin.y + (y + 0.5) * area.size.height / SYN_H);
  g_assert_true (bd_main_loop_wait_for (result_settled_in, (gpointer[]) { doc, GSIZE_TO_POINTER (serial + 1) }));
}

/* The region tool (W): a click on the passer-by removes it with its soft ring and nothing
 * else, in one undoable step; a click on the removed bag keeps the bag, not the background
 * around it. */
static void
test_region_click (void)
{
  g_autoptr(GBytes) mask = NULL;
  g_autofree guint8 *decided = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  BdWindow *other;
  BdEditor *editor;
  BdDocument *doc;

  if (skip_without_photo_and_model ())
    return;

  path = write_region_photo (&mask);
  file = g_file_new_for_path (path);
  other = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (other), 900, 700);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  doc = open_and_settle (other, path);
  bd_document_open_with_mask (doc, file, mask, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  /* The result is the mask made decisive: the soft passer-by (180, ring 90) shows settled. */
  decided = g_memdup2 (g_bytes_get_data (mask, NULL), g_bytes_get_size (mask));
  g_assert_cmpint (bd_mask_make_decisive (decided, SYN_W, SYN_H, SYN_W, NULL), ==, BD_OK);
  g_assert_cmpuint (result_alpha (doc, 70, 70), ==, decided[70 * SYN_W + 70]);
  g_assert_cmpuint (result_alpha (doc, 36, 70), ==, decided[70 * SYN_W + 36]);
  g_assert_cmpuint (decided[70 * SYN_W + 70], ==, 255);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.tool", "s", "region"));
  g_assert_cmpstr (bd_canvas_get_tool (bd_editor_get_canvas (editor)), ==, "region");

  /* The passer-by goes, ring and all; the person and the background stay as they were. */
  click_region (editor, 70, 70);
  for (int i = 34; i < 106; i += 4)
    {
      g_assert_cmpuint (result_alpha (doc, i, 70), ==, 0);
      g_assert_cmpuint (result_alpha (doc, 70, i), ==, 0);
    }
  g_assert_cmpuint (result_alpha (doc, 300, 200), ==, 255);
  g_assert_cmpuint (result_alpha (doc, 175, 230), ==, 0);
  g_assert_true (bd_document_get_can_undo (doc));

  /* The bag comes back, exactly; the green around it stays removed. */
  click_region (editor, 175, 230);
  g_assert_cmpuint (result_alpha (doc, 150, 200), ==, 255);
  g_assert_cmpuint (result_alpha (doc, 199, 259), ==, 255);
  g_assert_cmpuint (result_alpha (doc, 148, 230), ==, 0);
  g_assert_cmpuint (result_alpha (doc, 175, 262), ==, 0);
  g_assert_cmpuint (result_alpha (doc, 20, 300), ==, 0);

  /* Each click was one step: two undos bring the mask back as it came. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL));
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpuint (result_alpha (doc, 175, 230), ==, 0);
  g_assert_cmpuint (result_alpha (doc, 70, 70), ==, 0);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL));
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpuint (result_alpha (doc, 70, 70), ==, decided[70 * SYN_W + 70]);
  g_assert_cmpuint (result_alpha (doc, 36, 70), ==, decided[70 * SYN_W + 36]);
  g_assert_false (bd_document_get_can_undo (doc));

  /* A click off the photo changes nothing. */
  bd_canvas_click_region (bd_editor_get_canvas (editor), 2, 2);
  g_assert_false (bd_document_get_can_undo (doc));

  /* The photo was never saved: let it go without asking. */
  bd_document_open_with_mask (doc, file, mask, "test", 0);
  gtk_window_destroy (GTK_WINDOW (other));
}

/* Drags the brush of @editor's canvas from photo pixel (@x, @y0) down to (@x, @y1) with a
 * diameter of @size photo pixels, as the pointer would, and waits for the result. */
static void
drag_brush (BdEditor *editor,
            double    x,
            double    y0,
            double    y1,
            double    size)
{
  BdCanvas *canvas = bd_editor_get_canvas (editor);
  BdDocument *doc = bd_editor_get_document (editor);
  graphene_point_t points[8];
  graphene_rect_t area;
  double scale;
  guint64 serial;

  bd_canvas_get_photo_area (canvas, &area);
  scale = area.size.width / SYN_W;
  bd_canvas_set_brush_size (canvas, size * scale);
  for (guint i = 0; i < G_N_ELEMENTS (points); i++)
    points[i] = GRAPHENE_POINT_INIT (area.origin.x + x * scale,
                                     area.origin.y + (y0 + (y1 - y0) * i / (G_N_ELEMENTS (points) - 1)) * scale);
  serial = bd_canvas_paint (canvas, points, G_N_ELEMENTS (points));
  g_assert_cmpuint (serial, >, 0);
  g_assert_true (bd_main_loop_wait_for (result_settled_in, (gpointer[]) { doc, GSIZE_TO_POINTER (serial) }));
}

/* The edge-aware brush: on a photo whose mask missed a patch of the person, a soft keep
 * stroke over the strip and the background beside it (Shift+[ down to hardness 0) keeps the
 * strip and leaves the background removed; undone, the strip goes again; at hardness 100
 * (Shift+]) the same stroke is the plain brush and keeps everything under it. */
static void
test_edge_brush (void)
{
  g_autoptr(GBytes) mask = NULL;
  g_autoptr(GBytes) missed = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  BdWindow *other;
  BdEditor *editor;
  BdCanvas *canvas;
  BdDocument *doc;
  guint8 *alpha;

  if (skip_without_photo_and_model ())
    return;

  /* The person is x 240..400; the mask misses a patch of it at its edge, x 240..280,
   * y 90..190. */
  path = write_region_photo (&mask);
  alpha = g_bytes_unref_to_data (g_steal_pointer (&mask), &(gsize) { 0 });
  for (int y = 90; y < 190; y++)
    for (int x = 240; x < 280; x++)
      alpha[y * SYN_W + x] = 0;
  missed = g_bytes_new_take (alpha, SYN_W * SYN_H);
  file = g_file_new_for_path (path);
  other = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (other), 900, 700);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  canvas = bd_editor_get_canvas (editor);
  doc = open_and_settle (other, path);
  bd_document_open_with_mask (doc, file, missed, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpuint (result_alpha (doc, 260, 140), ==, 0);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.tool", "s", "keep"));
  g_assert_cmpfloat (bd_canvas_get_brush_hardness (canvas), ==, 100);
  for (int i = 0; i < 4; i++)
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.brush-softer", NULL));
  g_assert_cmpfloat (bd_canvas_get_brush_hardness (canvas), ==, 0);

  /* Across the person's edge at x 240: x 225..285 under the brush. */
  drag_brush (editor, 255, 100, 180, 60);
  for (int y = 100; y <= 180; y += 20)
    {
      g_assert_cmpuint (result_alpha (doc, 245, y), >=, 240);
      g_assert_cmpuint (result_alpha (doc, 262, y), >=, 240);
      g_assert_cmpuint (result_alpha (doc, 275, y), >=, 240);
      g_assert_cmpuint (result_alpha (doc, 236, y), <=, 15);
      g_assert_cmpuint (result_alpha (doc, 228, y), <=, 15);
    }
  /* Off the stroke nothing changed. */
  g_assert_cmpuint (result_alpha (doc, 200, 140), ==, 0);
  g_assert_cmpuint (result_alpha (doc, 300, 140), ==, 255);

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL));
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpuint (result_alpha (doc, 262, 140), ==, 0);

  /* The plain brush is still there. */
  for (int i = 0; i < 4; i++)
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.brush-harder", NULL));
  g_assert_cmpfloat (bd_canvas_get_brush_hardness (canvas), ==, 100);
  drag_brush (editor, 255, 100, 180, 60);
  g_assert_cmpuint (result_alpha (doc, 262, 140), ==, 255);
  g_assert_cmpuint (result_alpha (doc, 232, 140), ==, 255);

  bd_document_open_with_mask (doc, file, missed, "test", 0);
  gtk_window_destroy (GTK_WINDOW (other));
}

/* Saves @editor's result to @name in the work folder and loads what was written. */
static GdkPixbuf *
save_and_load (BdEditor   *editor,
               const char *name)
{
  g_autofree char *path = g_build_filename (work_dir, name, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  GdkPixbuf *saved;

  g_unlink (path);
  bd_editor_save_to_file (editor, file);
  g_assert_true (bd_main_loop_wait_for (file_exists, path));
  bd_main_loop_spin (100);
  saved = gdk_pixbuf_new_from_file (path, &error);
  g_assert_no_error (error);
  g_unlink (path);
  return saved;
}

/* Crop to the subject: choosing Square (1:1) in the Crop row frames the person with a margin
 * on the canvas and the saved file is that square; undo takes the crop away; Passport
 * writes 827 x 1063 pixels. */
static void
test_crop (void)
{
  g_autoptr(GBytes) mask = NULL;
  g_autoptr(GBytes) person = NULL;
  g_autofree char *path = NULL;
  g_autoptr(GFile) file = NULL;
  g_autoptr(GdkPixbuf) square = NULL;
  g_autoptr(GdkPixbuf) passport = NULL;
  g_autoptr(GdkPixbuf) whole = NULL;
  GdkRectangle frame;
  AdwComboRow *row;
  BdWindow *other;
  BdEditor *editor;
  BdDocument *doc;
  guint8 *alpha;
  const guint8 *px;
  int stride;

  if (skip_without_photo_and_model ())
    return;

  /* Only the person (x 240..400, y 40..320) is kept. */
  path = write_region_photo (&mask);
  alpha = g_bytes_unref_to_data (g_steal_pointer (&mask), &(gsize) { 0 });
  for (int i = 0; i < SYN_W * SYN_H; i++)
    if (i % SYN_W < 200)
      alpha[i] = 0;
  person = g_bytes_new_take (alpha, SYN_W * SYN_H);
  file = g_file_new_for_path (path);
  other = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (other), 900, 700);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  doc = open_and_settle (other, path);
  bd_document_open_with_mask (doc, file, person, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_false (bd_document_get_crop_frame (doc, &frame));

  row = find_combo_row_titled (GTK_WIDGET (editor), "Crop to Subject");
  g_assert_nonnull (row);
  adw_combo_row_set_selected (row, 2 /* Square (1:1) */);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpuint (bd_document_get_crop (doc), ==, 2);
  /* The person is 160 x 280 and cut by the photo's bottom edge: with a margin of 28 the
   * square is 336 px, taller than the photo, so it ends at that edge and the fill pads
   * the 16 px above the photo. */
  g_assert_true (bd_document_get_crop_frame (doc, &frame));
  g_assert_cmpint (frame.x, ==, 144);
  g_assert_cmpint (frame.y, ==, -16);
  g_assert_cmpint (frame.width, ==, 336);
  g_assert_cmpint (frame.height, ==, 336);

  square = save_and_load (editor, "crop-square.png");
  g_assert_cmpint (gdk_pixbuf_get_width (square), ==, 336);
  g_assert_cmpint (gdk_pixbuf_get_height (square), ==, 336);
  px = gdk_pixbuf_read_pixels (square);
  stride = gdk_pixbuf_get_rowstride (square);
  g_assert_cmpuint (px[(gsize) 8 * stride + 150 * 4 + 3], ==, 0);     /* padding */
  g_assert_cmpuint (px[(gsize) 116 * stride + 116 * 4 + 3], ==, 255); /* photo (260, 100) */
  g_assert_cmpuint (px[(gsize) 116 * stride + 266 * 4 + 3], ==, 0);   /* photo (410, 100) */
  g_assert_cmpuint (px[(gsize) 335 * stride + 200 * 4 + 3], ==, 255); /* photo (344, 319) */

  /* One undoable step. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL));
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpuint (adw_combo_row_get_selected (row), ==, 0);
  g_assert_false (bd_document_get_crop_frame (doc, &frame));
  whole = save_and_load (editor, "crop-none.png");
  g_assert_cmpint (gdk_pixbuf_get_width (whole), ==, SYN_W);
  g_assert_cmpint (gdk_pixbuf_get_height (whole), ==, SYN_H);

  adw_combo_row_set_selected (row, 4 /* Passport */);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  passport = save_and_load (editor, "crop-passport.png");
  g_assert_cmpint (gdk_pixbuf_get_width (passport), ==, 827);
  g_assert_cmpint (gdk_pixbuf_get_height (passport), ==, 1063);

  bd_document_open_with_mask (doc, file, person, "test", 0);
  gtk_window_destroy (GTK_WINDOW (other));
}

static gboolean
is_split_button (GtkWidget *widget, gconstpointer data)
{
  return ADW_IS_SPLIT_BUTTON (widget);
}

static gboolean
recent_has (gpointer data)
{
  gpointer *args = data;
  GMenuModel *menu = args[0];
  const char *uri = args[1];

  for (int i = 0; i < g_menu_model_get_n_items (menu); i++)
    {
      g_autoptr(GVariant) target = g_menu_model_get_item_attribute_value (menu, i, G_MENU_ATTRIBUTE_TARGET,
                                                                         G_VARIANT_TYPE_STRING);

      if (target != NULL && g_str_equal (g_variant_get_string (target, NULL), uri))
        return TRUE;
    }
  return FALSE;
}

static gboolean
document_is_file (gpointer data)
{
  gpointer *args = data;
  GFile *file = bd_document_get_file (args[0]);

  return file != NULL && g_file_equal (file, args[1]) &&
         bd_document_get_state (args[0]) == BD_DOCUMENT_STATE_READY;
}

/* Recent photos: two photos opened one after the other are both in the open button's menu,
 * newest first; choosing the first from the menu opens it again. */
static void
test_recent_files (void)
{
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autoptr(GFile) first_file = NULL;
  g_autoptr(GFile) second_file = NULL;
  g_autofree char *first_uri = NULL;
  g_autofree char *second_uri = NULL;
  g_autoptr(GBytes) mask = NULL;
  g_autoptr(GdkPixbuf) copy = NULL;
  GMenuModel *menu;
  AdwSplitButton *button;
  BdWindow *other;
  BdEditor *editor;
  BdDocument *doc;
  g_autoptr(GVariant) target = NULL;

  if (skip_without_photo_and_model ())
    return;

  first = write_region_photo (&mask);
  second = g_build_filename (tmp_dir, "regions-again.png", NULL);
  copy = gdk_pixbuf_new_from_file (first, NULL);
  g_assert_true (gdk_pixbuf_save (copy, second, "png", NULL, NULL));
  first_file = g_file_new_for_path (first);
  second_file = g_file_new_for_path (second);
  first_uri = g_file_get_uri (first_file);
  second_uri = g_file_get_uri (second_file);

  other = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (other), 900, 700);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  button = (AdwSplitButton *) find_matching (GTK_WIDGET (editor), is_split_button, NULL);
  g_assert_nonnull (button);
  menu = adw_split_button_get_menu_model (button);
  g_assert_nonnull (menu);

  doc = open_and_settle (other, first);
  g_assert_true (bd_main_loop_wait_for (recent_has, (gpointer[]) { menu, first_uri }));
  doc = open_and_settle (other, second);
  g_assert_true (bd_main_loop_wait_for (recent_has, (gpointer[]) { menu, second_uri }));
  g_assert_true (recent_has ((gpointer[]) { menu, first_uri }));
  target = g_menu_model_get_item_attribute_value (menu, 0, G_MENU_ATTRIBUTE_TARGET, G_VARIANT_TYPE_STRING);
  g_assert_cmpstr (g_variant_get_string (target, NULL), ==, second_uri);
  /* A photo dialog starts beside the photo opened last. */
  {
    g_autoptr(GFile) folder = bd_recent_folder ();
    g_autoptr(GFile) expected = g_file_get_parent (second_file);

    g_assert_true (g_file_equal (folder, expected));
  }

  /* The menu's item for the first photo, as a click on it would. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.open-recent", "s", first_uri));
  g_assert_true (bd_main_loop_wait_for (document_is_file, (gpointer[]) { doc, first_file }));

  gtk_window_destroy (GTK_WINDOW (other));
}

static gboolean
is_row_titled (GtkWidget *widget, gconstpointer title)
{
  return ADW_IS_PREFERENCES_ROW (widget) &&
         g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)), title) == 0;
}

/* Edge Softness is relative to the photo: the same slider setting feathers a photo twice
 * the size by twice the pixels, so the two results look alike at the same relative place. */
static void
test_feather_relative (void)
{
  g_autoptr(GBytes) mask = NULL;
  g_autoptr(GBytes) big_mask = NULL;
  g_autofree char *small_path = NULL;
  g_autofree char *big_path = NULL;
  g_autoptr(GFile) small_file = NULL;
  g_autoptr(GFile) big_file = NULL;
  g_autoptr(GdkPixbuf) small = NULL;
  g_autoptr(GdkPixbuf) big = NULL;
  GtkAdjustment *adjustment = NULL;
  GtkWidget *row;
  BdWindow *other;
  BdEditor *editor;
  BdDocument *doc;
  const guint8 *m;
  guint8 *bm;
  guint8 near_small[3];

  if (skip_without_photo_and_model ())
    return;

  /* The region photo, and the same at twice the size with its mask doubled too. */
  small_path = write_region_photo (&mask);
  small = gdk_pixbuf_new_from_file (small_path, NULL);
  big = gdk_pixbuf_scale_simple (small, SYN_W * 2, SYN_H * 2, GDK_INTERP_NEAREST);
  big_path = g_build_filename (tmp_dir, "regions-big.png", NULL);
  g_assert_true (gdk_pixbuf_save (big, big_path, "png", NULL, NULL));
  m = g_bytes_get_data (mask, NULL);
  bm = g_malloc (SYN_W * SYN_H * 4);
  for (int y = 0; y < SYN_H * 2; y++)
    for (int x = 0; x < SYN_W * 2; x++)
      bm[y * SYN_W * 2 + x] = m[(y / 2) * SYN_W + x / 2];
  big_mask = g_bytes_new_take (bm, SYN_W * SYN_H * 4);
  small_file = g_file_new_for_path (small_path);
  big_file = g_file_new_for_path (big_path);

  other = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (other), 900, 700);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  row = find_matching (GTK_WIDGET (editor), is_row_titled, "Edge Softness");
  g_assert_nonnull (row);
  g_object_get (row, "adjustment", &adjustment, NULL);

  doc = open_and_settle (other, small_path);
  bd_document_open_with_mask (doc, small_file, mask, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  gtk_adjustment_set_value (adjustment, 50);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  /* 50 % of 2 % of 480 px. */
  g_assert_cmpfloat_with_epsilon (bd_document_get_feather (doc), 4.8, 1e-9);
  for (int i = 0; i < 3; i++)
    near_small[i] = result_alpha (doc, 236 + 3 * i, 200);
  g_assert_cmpuint (near_small[0], >, 0);
  g_assert_cmpuint (near_small[2], <, 255);

  bd_document_open_with_mask (doc, big_file, big_mask, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, 0);
  gtk_adjustment_set_value (adjustment, 50);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpfloat_with_epsilon (bd_document_get_feather (doc), 9.6, 1e-9);
  for (int i = 0; i < 3; i++)
    {
      int a = result_alpha (doc, 2 * (236 + 3 * i) + 1, 400);

      g_assert_cmpint (ABS (a - near_small[i]), <=, 16);
    }

  /* One undo takes the softness back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.undo", NULL));
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpfloat (bd_document_get_feather (doc), ==, 0);
  g_assert_cmpfloat (gtk_adjustment_get_value (adjustment), ==, 0);

  g_object_unref (adjustment);
  bd_document_open_with_mask (doc, small_file, mask, "test", 0);
  gtk_window_destroy (GTK_WINDOW (other));
}

/* An open file chooser window, or NULL (without a portal, GtkFileDialog shows one). */
static GtkWindow *
file_chooser_shown (void)
{
  GType type = g_type_from_name ("GtkFileChooserDialog");
  g_autoptr(GList) windows = gtk_window_list_toplevels ();

  for (GList *l = windows; l != NULL; l = l->next)
    if (type != 0 && G_TYPE_CHECK_INSTANCE_TYPE (l->data, type) && gtk_widget_get_visible (l->data))
      return l->data;
  return NULL;
}

static gboolean
file_chooser_open (gpointer data)
{
  return file_chooser_shown () != NULL;
}

static gboolean
fill_is (gpointer data)
{
  gpointer *args = data;

  return adw_combo_row_get_selected (args[0]) == GPOINTER_TO_UINT (args[1]) && file_chooser_shown () == NULL;
}

/* A toast still showing when its window closes holds nothing of the window: the window's
 * widgets go with it, and the toast dismissed afterwards finds nothing to run on. */
static void
test_toast_outlives_window (void)
{
  GtkWidget *other = gtk_window_new ();
  GtkWidget *overlay = adw_toast_overlay_new ();
  GtkWidget *label = gtk_label_new ("photo");
  g_autoptr(AdwToast) toast = NULL;

  adw_toast_overlay_set_child (ADW_TOAST_OVERLAY (overlay), label);
  gtk_window_set_child (GTK_WINDOW (other), overlay);
  gtk_window_present (GTK_WINDOW (other));
  g_assert_true (bd_widget_wait_drawn (other));

  toast = g_object_ref (bd_show_toast (label, "Saved"));
  g_object_add_weak_pointer (G_OBJECT (overlay), (gpointer *) &overlay);
  gtk_window_destroy (GTK_WINDOW (other));
  bd_main_loop_spin (50);
  g_assert_null (overlay);

  adw_toast_dismiss (toast);
  bd_main_loop_spin (50);
}

/* Whether the file chooser shows the folder @data (in GTK's Recent view it shows none),
 * named in its path bar: GTK 4.18 names the folders one query each, and a chooser closed
 * before they are through crashes in their callbacks. */
static gboolean
file_chooser_in (gpointer data)
{
  GtkWidget *chooser = GTK_WIDGET (file_chooser_shown ());
  g_autoptr(GFile) folder = NULL;
  g_autofree char *name = g_file_get_basename (data);
  GtkWidget *path_bar = find_widget (chooser, g_type_from_name ("GtkPathBar"));

  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  folder = gtk_file_chooser_get_current_folder (GTK_FILE_CHOOSER (chooser));
  G_GNUC_END_IGNORE_DEPRECATIONS
  return folder != NULL && g_file_equal (folder, data) && path_bar != NULL &&
         has_label (path_bar, name);
}

/* Fill = Image with no image yet opens the file chooser instead of showing transparency;
 * cancelling it leaves the fill as it was, with no edit to undo. The chooser starts in a
 * folder (bd_recent_folder). */
static void
test_fill_image_asks (void)
{
  BdWindow *other;
  BdDocument *doc;
  AdwComboRow *fill;

  if (skip_without_photo_and_model ())
    return;

  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  doc = open_and_settle (other, g_ptr_array_index (photos, 0));
  fill = find_combo_row_titled (GTK_WIDGET (bd_window_get_editor (other)), "Fill");
  g_assert_nonnull (fill);
  g_assert_cmpuint (adw_combo_row_get_selected (fill), ==, BD_BACKGROUND_TRANSPARENT);

  adw_combo_row_set_selected (fill, BD_BACKGROUND_IMAGE);
  g_assert_true (bd_main_loop_wait_for (file_chooser_open, NULL));
  /* In a folder, not GTK's Recent view (closed while it fills, that view crashes GTK). */
  {
    g_autoptr(GFile) expected = bd_recent_folder ();

    g_assert_true (bd_main_loop_wait_for (file_chooser_in, expected));
  }
  g_assert_cmpuint (bd_document_get_background_kind (doc), ==, BD_BACKGROUND_TRANSPARENT);
  g_assert_false (bd_document_get_can_undo (doc));

  gtk_window_close (file_chooser_shown ());
  g_assert_true (bd_main_loop_wait_for (fill_is, (gpointer[]) { fill, GUINT_TO_POINTER (BD_BACKGROUND_TRANSPARENT) }));
  g_assert_cmpuint (bd_document_get_background_kind (doc), ==, BD_BACKGROUND_TRANSPARENT);
  g_assert_false (bd_document_get_can_undo (doc));
  g_assert_false (bd_document_get_modified (doc));
  gtk_window_destroy (GTK_WINDOW (other));
}

/* The preview's pixels as straight RGBA. */
static guint8 *
download_texture (GdkTexture *texture)
{
  g_autoptr(GdkTextureDownloader) downloader = gdk_texture_downloader_new (texture);
  GBytes *bytes;
  gsize stride;

  gdk_texture_downloader_set_format (downloader, GDK_MEMORY_R8G8B8A8);
  bytes = gdk_texture_downloader_download_bytes (downloader, &stride);
  g_assert_cmpuint (stride, ==, (gsize) gdk_texture_get_width (texture) * 4);
  return g_bytes_unref_to_data (bytes, &stride);
}

static gboolean
preview_has (gpointer data)
{
  gpointer *args = data;

  return bd_document_get_preview_serial (args[0]) >= GPOINTER_TO_SIZE (args[1]);
}

static void
on_view_rendered (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  *(GdkTexture **) user_data = bd_document_render_view_finish (BD_DOCUMENT (object), result, NULL);
}

static gboolean
texture_arrived (gpointer data)
{
  return *(GdkTexture **) data != NULL;
}

/* @layer of @doc over photo pixels (@x, @y, 200, 200) at full resolution, straight RGBA. */
static guint8 *
render_view (BdDocument *doc,
             BdLayer     layer,
             int         x,
             int         y)
{
  g_autoptr(GdkTexture) texture = NULL;

  bd_document_render_view_async (doc, layer, x, y, 200, 200, 200, 200, NULL, on_view_rendered, &texture);
  g_assert_true (bd_main_loop_wait_for (texture_arrived, &texture));
  return download_texture (texture);
}

static gboolean
preview_changed (gpointer data)
{
  gpointer *args = data;

  return bd_document_get_preview (args[0], BD_LAYER_RESULT) != args[1];
}

/* The visible part first: on a 12 MP photo, a stroke's part of the preview (what the canvas
 * draws when the photo fits) comes ahead of the whole result, and a region click's first
 * look ahead of its edit; each says what the whole result then says. */
static void
test_stroke_preview_first (void)
{
  const int width = 4000, height = 3000;
  g_autofree char *path = g_build_filename (tmp_dir, "12mp.png", NULL);
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GBytes) mask = NULL;
  g_autofree guint8 *early = NULL;
  g_autofree guint8 *late = NULL;
  guint8 *alpha = g_malloc0 ((gsize) width * height);
  graphene_point_t points[2] = { GRAPHENE_POINT_INIT (1500, 1500), GRAPHENE_POINT_INIT (2500, 1500) };
  BdWindow *other;
  BdDocument *doc;
  guint64 serial;
  gint64 start;
  int pw, ph, differ = 0;
  gboolean ahead;

  if (skip_without_photo_and_model ())
    return;

  gdk_pixbuf_fill (pixbuf, 0x8060c0ff);
  g_assert_true (gdk_pixbuf_save (pixbuf, path, "png", NULL, "compression", "1", NULL));
  for (int y = 500; y < 2500; y++)
    memset (alpha + (gsize) y * width + 1000, 255, 2000);
  mask = g_bytes_new_take (alpha, (gsize) width * height);
  file = g_file_new_for_path (path);

  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  doc = bd_editor_get_document (bd_window_get_editor (other));
  bd_document_open_with_mask (doc, file, mask, "test", 0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));

  start = g_get_monotonic_time ();
  serial = bd_document_paint_stroke (doc, BD_MARK_REMOVE, 100, points, 2);
  g_assert_true (bd_main_loop_wait_for (preview_has, (gpointer[]) { doc, GSIZE_TO_POINTER (serial) }));
  ahead = bd_document_get_result_serial (doc) < serial;
  g_test_message ("12 MP stroke: preview after %.0f ms%s", (g_get_monotonic_time () - start) / 1e3,
                  ahead ? ", ahead of the whole result" : "");
  /* The part is an eighth of the work of the whole (25 against 200 ms here). */
  g_assert_true (ahead);
  early = download_texture (bd_document_get_preview (doc, BD_LAYER_RESULT));
  pw = gdk_texture_get_width (bd_document_get_preview (doc, BD_LAYER_RESULT));
  ph = gdk_texture_get_height (bd_document_get_preview (doc, BD_LAYER_RESULT));
  g_assert_cmpint (pw, ==, 2048);

  /* Under the stroke's middle, nothing is kept any more; beside it the person still is. */
  g_assert_cmpuint (early[((gsize) (1500 * ph / height) * pw + 2000 * pw / width) * 4 + 3], ==, 0);
  g_assert_cmpuint (early[((gsize) (1000 * ph / height) * pw + 2000 * pw / width) * 4 + 3], ==, 255);

  g_assert_true (bd_main_loop_wait_for (result_settled_in, (gpointer[]) { doc, GSIZE_TO_POINTER (serial) }));
  late = download_texture (bd_document_get_preview (doc, BD_LAYER_RESULT));
  for (gsize i = 0; i < (gsize) pw * ph * 4; i++)
    differ += abs (early[i] - late[i]) > 8;
  g_test_message ("%d preview values differ by more than 8 between the early and the whole", differ);
  /* The only differences are on the stroke's soft rim, a shade apart. */
  g_assert_cmpint (differ, <, pw * ph / 100);

  /* Zoomed in on the mask views of a big photo: crops at full resolution, cut in a worker.
   * The stroke (y 1400..1600 from x 1400 to 2600) is black in the mask, red over the photo. */
  bd_document_set_mask_views (doc, TRUE);
  g_assert_true (bd_main_loop_wait_for (has_layer, (gpointer[]) { doc, GINT_TO_POINTER (BD_LAYER_MASK) }));
  {
    g_autofree guint8 *m = render_view (doc, BD_LAYER_MASK, 1900, 1300);
    g_autofree guint8 *o = render_view (doc, BD_LAYER_OVERLAY, 1900, 1300);

    g_assert_cmpuint (m[(10 * 200 + 100) * 4], ==, 255);    /* (2000, 1310): kept */
    g_assert_cmpuint (m[(190 * 200 + 100) * 4], ==, 0);     /* (2000, 1490): brushed away */
    g_assert_cmpint (abs (o[(10 * 200 + 100) * 4] - 0x80), <=, 2);   /* the photo itself */
    g_assert_cmpint (o[(190 * 200 + 100) * 4], >, 0x80 + 40);        /* redder */
    g_assert_cmpint (o[(190 * 200 + 100) * 4 + 1], <, 0x60 - 20);
  }
  bd_document_set_mask_views (doc, FALSE);

  /* A region click: a first look at the preview's size comes before the edit is made. */
  {
    g_autoptr(GdkTexture) before = g_object_ref (bd_document_get_preview (doc, BD_LAYER_RESULT));
    g_autofree guint8 *draft = NULL;
    guint64 done = bd_document_get_result_serial (doc);

    start = g_get_monotonic_time ();
    bd_document_toggle_region_async (doc, 1200, 1000, NULL, NULL, NULL);
    g_assert_true (bd_main_loop_wait_for (preview_changed, (gpointer[]) { doc, before }));
    ahead = bd_document_get_result_serial (doc) == done;
    g_test_message ("12 MP click: preview after %.0f ms%s", (g_get_monotonic_time () - start) / 1e3,
                    ahead ? ", ahead of the edit" : "");
    g_assert_true (ahead);
    draft = download_texture (bd_document_get_preview (doc, BD_LAYER_RESULT));
    g_assert_cmpuint (draft[((gsize) (1000 * ph / height) * pw + 1200 * pw / width) * 4 + 3], ==, 0);
    g_assert_cmpuint (draft[((gsize) (2400 * ph / height) * pw + 2900 * pw / width) * 4 + 3], ==, 0);
    g_assert_true (bd_main_loop_wait_for (result_settled_in, (gpointer[]) { doc, GSIZE_TO_POINTER (done + 1) }));
    g_clear_pointer (&late, g_free);
    late = download_texture (bd_document_get_preview (doc, BD_LAYER_RESULT));
    differ = 0;
    for (gsize i = 0; i < (gsize) pw * ph * 4; i++)
      differ += abs (draft[i] - late[i]) > 8;
    g_test_message ("%d values differ between the first look and the whole", differ);
    g_assert_cmpint (differ, <, pw * ph / 100);
  }

  gtk_window_destroy (GTK_WINDOW (other));
}

static gboolean
is_label_text (GtkWidget *widget, gconstpointer text)
{
  return GTK_IS_LABEL (widget) && g_strcmp0 (gtk_label_get_label (GTK_LABEL (widget)), text) == 0;
}

typedef struct
{
  BdEditor *editor;
  int       seen;        /* times the document was ready before its result */
  gboolean  save_as;     /* Save As enabled then */
  char     *subtitle;    /* the header then */
  gboolean  card;        /* the progress card shown then */
} Premature;

static void
on_ready_state (BdDocument *doc,
                GParamSpec *pspec,
                Premature  *p)
{
  GtkWidget *editor = GTK_WIDGET (p->editor);

  /* The editor's own handler ran first: this is what the user sees now. */
  if (bd_document_get_state (doc) != BD_DOCUMENT_STATE_READY || bd_document_get_result (doc) != NULL)
    return;
  p->seen++;
  p->save_as = gtk_widget_is_sensitive (find_button_labelled (editor, "_Save As…"));
  g_free (p->subtitle);
  p->subtitle = g_strdup (adw_window_title_get_subtitle (ADW_WINDOW_TITLE (find_widget (editor, ADW_TYPE_WINDOW_TITLE))));
  p->card = gtk_widget_get_visible (gtk_widget_get_parent (find_matching (editor, is_label_text,
                                                                         "Preparing the Result…")));
}


static gboolean
saving_shown (gpointer data)
{
  GtkWidget *label = find_matching (data, is_label_text, "Saving the Result…");

  /* The card around it, shown or not (the window need not show the editor page). */
  return label != NULL && gtk_widget_get_visible (gtk_widget_get_parent (label));
}

typedef struct
{
  BdEditor   *editor;
  BdDocument *doc;
  gint64      shown_at;   /* when "Saving the Result…" was first seen; 0: never */
  gboolean    save_as;    /* Save As enabled then */
} SaveWatch;

/* Until saved and the card gone; notes when the card showed. */
static gboolean
watch_save (gpointer data)
{
  SaveWatch *w = data;
  gboolean shown = saving_shown (w->editor);

  if (shown && w->shown_at == 0)
    {
      w->shown_at = g_get_monotonic_time ();
      w->save_as = gtk_widget_is_sensitive (find_button_labelled (GTK_WIDGET (w->editor), "_Save As…"));
    }
  return !bd_document_get_modified (w->doc) && bd_document_get_saved_file (w->doc) != NULL && !shown;
}

/* A big photo (24 MP): while the mask is known but the result not yet made, the header does
 * not say done and Save As is off, a card says the result is being prepared; a save that
 * takes a while says so until it is done. */
static void
test_big_photo_honest (void)
{
  const int width = 6000, height = 4000;
  g_autofree char *path = g_build_filename (tmp_dir, "24mp.jpg", NULL);
  g_autofree char *out = g_build_filename (work_dir, "24mp-cutout.png", NULL);
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  g_autoptr(GFile) file = NULL;
  g_autoptr(GFile) target = NULL;
  g_autoptr(GBytes) mask = NULL;
  guint8 *alpha = g_malloc ((gsize) width * height);
  guint8 *px = gdk_pixbuf_get_pixels (pixbuf);
  Premature p = { 0 };
  BdWindow *other;
  BdDocument *doc;
  gulong id;

  if (skip_without_photo_and_model ())
    return;

  /* Noise, so that the PNG takes its time as a real photo's does. */
  for (gsize i = 0; i < (gsize) gdk_pixbuf_get_rowstride (pixbuf) * height; i++)
    px[i] = g_test_rand_int_range (0, 256);
  g_assert_true (gdk_pixbuf_save (pixbuf, path, "jpeg", NULL, "quality", "90", NULL));
  for (gsize i = 0; i < (gsize) width * height; i++)
    alpha[i] = (i % width) > width / 3 ? 255 : 0;
  mask = g_bytes_new_take (alpha, (gsize) width * height);
  file = g_file_new_for_path (path);

  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  p.editor = bd_window_get_editor (other);
  doc = bd_editor_get_document (p.editor);
  id = g_signal_connect (doc, "notify::state", G_CALLBACK (on_ready_state), &p);
  bd_document_open_with_mask (doc, file, mask, "test", 1.0);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_signal_handler_disconnect (doc, id);

  g_assert_cmpint (p.seen, ==, 1);
  g_test_message ("before the result: Save As %s, header “%s”", p.save_as ? "on" : "off", p.subtitle);
  g_assert_false (p.save_as);
  g_assert_cmpstr (p.subtitle, ==, "Preparing the result…");
  g_assert_true (p.card);
  g_free (p.subtitle);

  /* With the result: done, and Save As on. */
  g_assert_true (gtk_widget_is_sensitive (find_button_labelled (GTK_WIDGET (p.editor), "_Save As…")));
  {
    GtkWidget *label = find_matching (GTK_WIDGET (p.editor), is_label_text, "Preparing the Result…");

    g_assert_true (label == NULL || !gtk_widget_get_visible (gtk_widget_get_parent (label)));
  }

  /* An edit, then a save that takes seconds: the card says so, then goes. */
  bd_document_set_feather (doc, 2);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  target = g_file_new_for_path (out);
  {
    SaveWatch w = { p.editor, doc, 0, TRUE };
    gint64 start = g_get_monotonic_time ();
    double seconds;

    bd_editor_save_to_file (p.editor, target);
    g_assert_true (bd_main_loop_wait_for (watch_save, &w));
    seconds = (g_get_monotonic_time () - start) / 1e6;
    g_test_message ("24 MP PNG saved in %.2f s; the card showed %s", seconds,
                    w.shown_at ? "while saving" : "not at all");
    /* Past 0.3 s it must say so (and offer no second Save As); sooner, nothing flashes. */
    if (seconds > 0.5)
      {
        g_assert_cmpint (w.shown_at, !=, 0);
        g_assert_false (w.save_as);
      }
    else if (seconds < 0.25)
      g_assert_cmpint (w.shown_at, ==, 0);
  }
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  gtk_window_destroy (GTK_WINDOW (other));
}

static gboolean
is_segmenting (gpointer data)
{
  return bd_document_get_state (data) == BD_DOCUMENT_STATE_SEGMENTING;
}

/* Remove the Background Again (after Keep Passers-By or the device changed) keeps the brush
 * strokes, the history and the unsaved state; stopped, it leaves the photo as it was. */
static void
test_rerun_keeps_marks (void)
{
  BdWindow *other;
  BdEditor *editor;
  BdDocument *doc;
  GBytes *first_mask;
  guint64 serial;
  g_autofree guint8 *painted = NULL;
  g_autofree guint8 *again = NULL;
  int width, height;

  if (skip_without_photo_and_model ())
    return;

  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  editor = bd_window_get_editor (other);
  doc = open_and_settle (other, g_ptr_array_index (photos, 0));
  serial = paint_through_person (doc);
  g_assert_true (bd_main_loop_wait_for (result_settled_in, (gpointer[]) { doc, GSIZE_TO_POINTER (serial) }));
  {
    g_autoptr(GdkTextureDownloader) d = gdk_texture_downloader_new (bd_document_get_result (doc));
    gsize stride;

    painted = g_bytes_unref_to_data (gdk_texture_downloader_download_bytes (d, &stride), &stride);
    width = bd_document_get_width (doc);
    height = bd_document_get_height (doc);
  }
  first_mask = bd_document_get_mask (doc);
  g_assert_true (bd_document_get_modified (doc));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.rerun", NULL));
  g_assert_true (bd_main_loop_wait_for (is_segmenting, doc));
  g_assert_true (bd_document_get_modified (doc));   /* quitting now still asks */
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  g_assert_true (bd_document_get_mask (doc) != first_mask);   /* the network ran again */
  g_assert_true (bd_document_get_can_undo (doc));
  g_assert_true (bd_document_get_modified (doc));
  {
    g_autoptr(GdkTextureDownloader) d = gdk_texture_downloader_new (bd_document_get_result (doc));
    gsize stride;

    again = g_bytes_unref_to_data (gdk_texture_downloader_download_bytes (d, &stride), &stride);
  }
  /* Same model, same photo, same strokes: the same result. */
  g_assert_cmpmem (again, (gsize) width * height * 4, painted, (gsize) width * height * 4);

  /* Stopped halfway: back to the photo as it was, strokes and all. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.rerun", NULL));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (editor), "editor.cancel", NULL));
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  g_assert_true (bd_document_get_can_undo (doc));

  /* Keep Passers-By changed in Preferences: a toast offers it for this photo; its button
   * removes the background again, the strokes staying. */
  {
    GSettings *settings = bd_application_get_settings (app);
    gboolean all = g_settings_get_boolean (settings, "keep-all-people");
    GtkWidget *button;

    g_settings_set_boolean (settings, "keep-all-people", !all);
    bd_main_loop_spin (300);
    button = find_button_labelled (GTK_WIDGET (other), "_Apply to This Photo");
    g_assert_nonnull (button);
    g_assert_true (gtk_widget_get_mapped (button));
    g_signal_emit_by_name (button, "clicked");
    g_assert_true (bd_main_loop_wait_for (is_segmenting, doc));
    g_assert_true (bd_main_loop_wait_for (other_settled, other));
    g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
    g_assert_true (bd_document_get_can_undo (doc));
    g_settings_set_boolean (settings, "keep-all-people", all);
    bd_main_loop_spin (300);
  }

  bd_document_undo (doc);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_false (bd_document_get_modified (doc));
  gtk_window_destroy (GTK_WINDOW (other));
}

/* Without a usable NVIDIA card, Preferences do not offer it, and a graphics card chosen
 * anyway (an older setting) fails with words a user can act on, not the runtime's. */
static void
test_no_gpu (void)
{
  GSettings *settings = bd_application_get_settings (app);
  AdwDialog *dialog;
  AdwComboRow *row;
  GListModel *items;
  BdWindow *other;
  BdDocument *doc;

  if (skip_without_photo_and_model ())
    return;
  if (bd_device_count (BD_DEVICE_CUDA) > 0)
    {
      g_test_skip ("this machine has a usable NVIDIA GPU");
      return;
    }

  dialog = bd_preferences_dialog_new ();
  adw_dialog_present (dialog, GTK_WIDGET (window));
  bd_main_loop_spin (300);
  row = find_combo_row_titled (GTK_WIDGET (dialog), "Run On");
  g_assert_nonnull (row);
  items = adw_combo_row_get_model (row);
  g_assert_cmpuint (g_list_model_get_n_items (items), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GtkStringObject) item = g_list_model_get_item (items, i);
      g_assert_null (strstr (gtk_string_object_get_string (item), "Graphics"));
    }
  /* The two rows still set the setting. */
  adw_combo_row_set_selected (row, 0);
  g_assert_cmpstr (g_settings_get_string (settings, "device"), ==, "auto");
  adw_combo_row_set_selected (row, 1);
  g_assert_cmpstr (g_settings_get_string (settings, "device"), ==, "cpu");
  adw_dialog_force_close (dialog);

  g_settings_set_string (settings, "device", "gpu");
  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  doc = open_and_settle (other, g_ptr_array_index (photos, 0));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_FAILED);
  g_test_message ("the editor says: %s", bd_document_get_error_message (doc));
  g_assert_nonnull (strstr (bd_document_get_error_message (doc), "No usable NVIDIA graphics card"));
  g_assert_null (strstr (bd_document_get_error_message (doc), "CUDA"));
  /* The photo is there: trying again, on the processor now, works. */
  g_settings_set_string (settings, "device", "cpu");
  g_assert_nonnull (find_button_labelled (GTK_WIDGET (bd_window_get_editor (other)), "_Try Again"));
  bd_document_retry (doc);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  gtk_window_destroy (GTK_WINDOW (other));
}

/* The graphics card to use: offered in Preferences only where there is a choice (here, with
 * no card, only because one was chosen earlier), it reaches the engine, and a card that is not
 * there is named as the problem, not the driver. */
static void
test_gpu_index (void)
{
  GSettings *settings = bd_application_get_settings (app);
  BdEngine *engine = bd_application_get_engine (app);
  AdwDialog *dialog;
  AdwComboRow *row;
  BdWindow *other;
  BdDocument *doc;

  if (skip_without_photo_and_model ())
    return;
  if (bd_device_count (BD_DEVICE_CUDA) > 1)
    {
      g_test_skip ("this machine has a choice of NVIDIA GPUs");
      return;
    }

  /* One card or none, never chosen: no row to show. */
  g_settings_set_string (settings, "device", "auto");
  g_settings_reset (settings, "gpu-index");
  dialog = bd_preferences_dialog_new ();
  adw_dialog_present (dialog, GTK_WIDGET (window));
  bd_main_loop_spin (300);
  row = find_combo_row_titled (GTK_WIDGET (dialog), "Graphics Card");
  g_assert_nonnull (row);
  g_assert_false (gtk_widget_get_visible (GTK_WIDGET (row)));
  adw_dialog_force_close (dialog);

  /* Card 2 chosen earlier: listed, so that it can be changed back. */
  g_settings_set_int (settings, "gpu-index", 2);
  g_assert_cmpint (bd_engine_get_gpu_index (engine), ==, 2);
  dialog = bd_preferences_dialog_new ();
  adw_dialog_present (dialog, GTK_WIDGET (window));
  bd_main_loop_spin (300);
  row = find_combo_row_titled (GTK_WIDGET (dialog), "Graphics Card");
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (row)));
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (row)));
  g_assert_cmpuint (g_list_model_get_n_items (adw_combo_row_get_model (row)), ==, 3);
  g_assert_cmpuint (adw_combo_row_get_selected (row), ==, 2);
  {
    g_autofree char *shot = g_test_build_filename (G_TEST_BUILT, "test-gui-gpu-index.png", NULL);
    g_assert_true (bd_window_shot_save (GTK_WINDOW (window), shot, FALSE, NULL));
    g_test_message ("screenshot: %s", shot);
  }
  g_settings_set_string (settings, "device", "cpu");
  g_assert_false (gtk_widget_get_sensitive (GTK_WIDGET (row)));
  g_settings_set_string (settings, "device", "gpu");
  g_assert_true (gtk_widget_get_sensitive (GTK_WIDGET (row)));

  /* Insisting on a card that is not there: the editor names the card. */
  other = bd_window_new (app);
  gtk_window_present (GTK_WINDOW (other));
  doc = open_and_settle (other, g_ptr_array_index (photos, 0));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_FAILED);
  g_test_message ("the editor says: %s", bd_document_get_error_message (doc));
  g_assert_nonnull (strstr (bd_document_get_error_message (doc), "graphics card chosen"));

  /* Automatic with that card missing runs on the processor. */
  g_settings_set_string (settings, "device", "auto");
  bd_document_retry (doc);
  g_assert_true (bd_main_loop_wait_for (other_settled, other));
  g_assert_cmpint (bd_document_get_state (doc), ==, BD_DOCUMENT_STATE_READY);
  g_assert_nonnull (strstr (bd_document_get_device_description (doc), "CPU"));
  gtk_window_destroy (GTK_WINDOW (other));

  /* Back to the first card from the row. */
  adw_combo_row_set_selected (row, 0);
  g_assert_cmpint (g_settings_get_int (settings, "gpu-index"), ==, 0);
  g_assert_cmpint (bd_engine_get_gpu_index (engine), ==, 0);
  adw_dialog_force_close (dialog);
}

/* "Keep Passers-By" in Preferences reaches the setting, the engine and the mask: on the
 * test photo the default mask leaves out faint regions apart from the subject. */
static void
test_keep_passers_by (void)
{
  GSettings *settings = bd_application_get_settings (app);
  BdEngine *engine = bd_application_get_engine (app);
  g_autofree char *path = g_test_build_filename (G_TEST_BUILT, "test-gui-preferences.png", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GdkPixbuf) photo = NULL;
  g_autoptr(GBytes) subject = NULL, everyone = NULL;
  AdwDialog *dialog;
  AdwSwitchRow *row;
  const guint8 *a, *b;
  gsize size, differing = 0;

  if (!ensure_opened ())
    return;

  g_assert_false (g_settings_get_boolean (settings, "keep-all-people"));
  g_assert_false (bd_engine_get_all_people (engine));

  dialog = bd_preferences_dialog_new ();
  adw_dialog_present (dialog, GTK_WIDGET (window));
  bd_main_loop_spin (500);
  row = find_switch_row (GTK_WIDGET (dialog));
  g_assert_nonnull (row);
  g_assert_false (adw_switch_row_get_active (row));
  adw_switch_row_set_active (row, TRUE);
  g_assert_true (g_settings_get_boolean (settings, "keep-all-people"));
  g_assert_true (bd_engine_get_all_people (engine));
  bd_main_loop_spin (300);
  g_assert_true (bd_window_shot_save (GTK_WINDOW (window), path, FALSE, &error));
  g_assert_no_error (error);
  g_test_message ("screenshot: %s", path);

  photo = gdk_pixbuf_new_from_file (g_ptr_array_index (photos, 0), &error);
  g_assert_no_error (error);
  everyone = segment (photo);
  adw_switch_row_set_active (row, FALSE);
  g_assert_false (bd_engine_get_all_people (engine));
  subject = segment (photo);
  adw_dialog_force_close (dialog);

  a = g_bytes_get_data (subject, &size);
  b = g_bytes_get_data (everyone, NULL);
  g_assert_cmpuint (g_bytes_get_size (everyone), ==, size);
  for (gsize i = 0; i < size; i++)
    {
      /* Only ever removed, never added. */
      g_assert_cmpuint (a[i], <=, b[i]);
      differing += a[i] != b[i];
    }
  g_test_message ("pixels left out without passers-by: %" G_GSIZE_FORMAT, differing);
  g_assert_cmpuint (differing, >, 0);
}

/* Setup */

static void
remove_tree (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);

  if (dir != NULL)
    for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
      {
        g_autofree char *child = g_build_filename (path, name, NULL);

        remove_tree (child);
      }

  g_remove (path);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

static void
find_photos (void)
{
  const char *folder = g_getenv ("BACKDROP_TEST_PHOTOS");
  g_autoptr(GDir) dir = NULL;

  photos = g_ptr_array_new_with_free_func (g_free);
  if (folder == NULL || (dir = g_dir_open (folder, 0, NULL)) == NULL)
    return;

  for (const char *name; (name = g_dir_read_name (dir)) != NULL;)
    if (g_str_has_suffix (name, ".webp") || g_str_has_suffix (name, ".jpg") ||
        g_str_has_suffix (name, ".png"))
      g_ptr_array_add (photos, g_build_filename (folder, name, NULL));

  g_ptr_array_sort (photos, compare_strings);
}

static char *
find_model (void)
{
  const char *candidates[] = { g_getenv ("BACKDROP_MODEL"), g_getenv ("BACKDROP_TEST_SHIPPED_MODEL") };
  bd_synthetic_spec spec;
  char *path;

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (candidates[i] != NULL && g_file_test (candidates[i], G_FILE_TEST_IS_REGULAR))
      return g_strdup (candidates[i]);

  path = g_build_filename (tmp_dir, "random.bdm", NULL);
  bd_synthetic_spec_init (&spec, 5, 8, 256, 1);
  if (!bd_synthetic_model_write (&spec, path))
    g_clear_pointer (&path, g_free);
  return path;
}

/* The settings of the earlier application ID come over once; a value set here since stays. */
static void
test_settings_migrate (void)
{
  g_autoptr(GSettings) now = g_settings_new (APP_ID);
  g_autoptr(GSettingsSchema) legacy =
    g_settings_schema_source_lookup (g_settings_schema_source_get_default (), APP_ID ".keys", TRUE);
  g_autoptr(GSettings) old = NULL;
  static const char *const keys[] = { "settings-migrated", "jpeg-quality", "export-format", "window-width" };

  g_assert_nonnull (legacy);
  old = g_settings_new_full (legacy, NULL, APP_OLD_SETTINGS_PATH);
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    g_settings_reset (now, keys[i]);

  g_settings_set_int (old, "jpeg-quality", 77);
  g_settings_set_string (old, "export-format", "webp");
  g_settings_set_int (old, "window-width", 800);
  g_settings_set_int (now, "window-width", 1234);   /* set under the new ID since */
  g_assert_true (bd_settings_migrate (now, APP_OLD_SETTINGS_PATH));
  g_assert_cmpint (g_settings_get_int (now, "jpeg-quality"), ==, 77);
  {
    g_autofree char *format = g_settings_get_string (now, "export-format");

    g_assert_cmpstr (format, ==, "webp");
  }
  g_assert_cmpint (g_settings_get_int (now, "window-width"), ==, 1234);
  g_assert_true (g_settings_get_boolean (now, "settings-migrated"));

  /* Once only: a later change under the old ID is not copied again. */
  g_settings_set_int (old, "jpeg-quality", 50);
  g_settings_reset (now, "jpeg-quality");
  g_assert_false (bd_settings_migrate (now, APP_OLD_SETTINGS_PATH));
  g_assert_cmpint (g_settings_get_int (now, "jpeg-quality"), ==, 92);

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_settings_reset (now, keys[i]);
      g_settings_reset (old, keys[i]);
    }
}

static void
test_no_display (void)
{
  g_test_skip ("No display: run under xvfb-run");
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *model = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);

  /* Private folders, so the test neither reads nor leaves anything in the user's. */
  tmp_dir = g_dir_make_tmp ("backdrop-test-gui-XXXXXX", NULL);
  work_dir = g_build_filename (tmp_dir, "work", NULL);
  g_mkdir (work_dir, 0700);
  {
    g_autofree char *cache = g_build_filename (tmp_dir, "cache", NULL);
    g_autofree char *config = g_build_filename (tmp_dir, "config", NULL);

    g_autofree char *data = g_build_filename (tmp_dir, "data", NULL);

    g_setenv ("XDG_CACHE_HOME", cache, TRUE);
    g_setenv ("XDG_CONFIG_HOME", config, TRUE);
    g_setenv ("XDG_DATA_HOME", data, TRUE);   /* recently-used.xbel */
  }
  if (g_getenv ("GSETTINGS_BACKEND") == NULL)
    g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);

  find_photos ();
  model = find_model ();
  if (photos->len == 0)
    skip_reason = g_strdup_printf ("No photos in %s (BACKDROP_TEST_PHOTOS)",
                                   g_getenv ("BACKDROP_TEST_PHOTOS") ? g_getenv ("BACKDROP_TEST_PHOTOS") : "(unset)");
  else if (model == NULL)
    skip_reason = g_strdup ("No model, and none could be written");
  else
    g_setenv ("BACKDROP_MODEL", model, TRUE);

  g_test_add_func ("/gui/settings-migrate", test_settings_migrate);
  if (!gtk_init_check ())
    {
      g_test_add_func ("/gui/no-display", test_no_display);
      return g_test_run ();
    }

  app = bd_application_new ();
  g_application_set_flags (G_APPLICATION (app), G_APPLICATION_NON_UNIQUE | G_APPLICATION_HANDLES_OPEN);
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, &error));
  g_assert_no_error (error);

  /* The CPU backend: the test machine may have no GPU, and the result must not depend on it. */
  g_settings_set_string (bd_application_get_settings (app), "device", "cpu");

  window = bd_window_new (app);
  gtk_window_set_default_size (GTK_WINDOW (window), 1000, 700);
  gtk_window_present (GTK_WINDOW (window));

  if (model != NULL)
    g_test_message ("model: %s", model);

  g_test_add_func ("/gui/open-drop", test_open_drop);
  g_test_add_func ("/gui/brush-undo-redo", test_brush_undo_redo);
  g_test_add_func ("/gui/adjust-and-background", test_adjust_and_background);
  g_test_add_func ("/gui/export", test_export);
  g_test_add_func ("/gui/copy", test_copy);
  g_test_add_func ("/gui/drag-out", test_drag_out);
  g_test_add_func ("/gui/paste-empty", test_paste_empty);
  g_test_add_func ("/gui/unsaved-quit", test_unsaved_quit);
  g_test_add_func ("/gui/unsaved-paste", test_unsaved_paste);
  g_test_add_func ("/gui/batch", test_batch);
  g_test_add_func ("/gui/batch-edits", test_batch_edits);
  g_test_add_func ("/gui/unsaved-batch-clear", test_unsaved_batch_clear);
  g_test_add_func ("/gui/batch-model/queue", test_batch_model_queue);
  g_test_add_func ("/gui/batch-model/export", test_batch_model_export);
  g_test_add_func ("/gui/batch-model/cancel", test_batch_model_cancel);
  g_test_add_func ("/gui/unsaved-close", test_unsaved_close);
  g_test_add_func ("/gui/narrow-and-screenshot", test_narrow_and_screenshot);
  g_test_add_func ("/gui/large-photo", test_large_photo);
  g_test_add_func ("/gui/keep-passers-by", test_keep_passers_by);
  g_test_add_func ("/gui/open-unreadable", test_open_unreadable);
  g_test_add_func ("/gui/no-gpu", test_no_gpu);
  g_test_add_func ("/gui/gpu-index", test_gpu_index);
  g_test_add_func ("/gui/new-photo-fresh-look", test_new_photo_fresh_look);
  g_test_add_func ("/gui/mask-views", test_mask_views);
  g_test_add_func ("/gui/region-click", test_region_click);
  g_test_add_func ("/gui/edge-brush", test_edge_brush);
  g_test_add_func ("/gui/crop", test_crop);
  g_test_add_func ("/gui/recent-files", test_recent_files);
  g_test_add_func ("/gui/feather-relative", test_feather_relative);
  g_test_add_func ("/gui/fill-image-asks", test_fill_image_asks);
  g_test_add_func ("/gui/toast-outlives-window", test_toast_outlives_window);
  g_test_add_func ("/gui/engine-progress-thread", test_engine_progress_thread);
  g_test_add_func ("/gui/stroke-preview-first", test_stroke_preview_first);
  g_test_add_func ("/gui/big-photo-honest", test_big_photo_honest);
  g_test_add_func ("/gui/rerun-keeps-marks", test_rerun_keeps_marks);

  status = g_test_run ();

  gtk_window_destroy (GTK_WINDOW (window));
  g_clear_object (&app);
  if (g_getenv ("BACKDROP_TEST_KEEP") == NULL)
    remove_tree (tmp_dir);
  g_free (tmp_dir);
  g_free (work_dir);
  g_free (skip_reason);
  g_ptr_array_unref (photos);

  return status;
}
