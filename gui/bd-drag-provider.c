/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bd-drag-provider.h"
#include "bd-image-io.h"
#include "bd-pixels.h"

struct _BdDragProvider
{
  GdkContentProvider  parent_instance;

  GdkTexture         *texture;
  char               *path;
  gboolean            written;
};

G_DEFINE_FINAL_TYPE (BdDragProvider, bd_drag_provider, GDK_TYPE_CONTENT_PROVIDER)

static GdkContentFormats *
bd_drag_provider_ref_formats (GdkContentProvider *provider)
{
  return gdk_content_formats_new ((const char *[]) { "text/uri-list" }, 1);
}

static void
write_file_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  BdDragProvider *self = source_object;
  g_autoptr(GdkTextureDownloader) downloader = gdk_texture_downloader_new (self->texture);
  g_autoptr(GBytes) rgba = NULL;
  g_autoptr(GdkPixbuf) pixbuf = NULL;
  g_autofree char *dir = g_path_get_dirname (self->path);
  GError *error = NULL;
  gsize stride;

  gdk_texture_downloader_set_format (downloader, GDK_MEMORY_R8G8B8A8);
  rgba = gdk_texture_downloader_download_bytes (downloader, &stride);
  pixbuf = bd_pixels_to_pixbuf (rgba, gdk_texture_get_width (self->texture),
                                gdk_texture_get_height (self->texture));

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_task_return_new_error (task, G_IO_ERROR, g_io_error_from_errno (errno),
                               "Could not make %s", dir);
      return;
    }

  if (!bd_image_save (pixbuf, self->path, 95, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
on_uri_written (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (object), result, NULL, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/* Streams belong to the main thread: the file is written in a worker, the URI here. */
static void
write_uri (GTask *task)
{
  BdDragProvider *self = g_task_get_source_object (task);
  GOutputStream *stream = g_task_get_task_data (task);
  g_autoptr(GFile) file = g_file_new_for_path (self->path);
  g_autofree char *uri = g_file_get_uri (file);
  char *line = g_strconcat (uri, "\r\n", NULL);

  g_object_set_data_full (G_OBJECT (task), "line", line, g_free);
  g_output_stream_write_all_async (stream, line, strlen (line), g_task_get_priority (task),
                                   g_task_get_cancellable (task), on_uri_written, task);
}

static void
on_file_written (GObject      *object,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  BdDragProvider *self = BD_DRAG_PROVIDER (object);
  GTask *task = user_data;
  GError *error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }

  self->written = TRUE;
  write_uri (task);
}

static void
bd_drag_provider_write_mime_type_async (GdkContentProvider  *provider,
                                        const char          *mime_type,
                                        GOutputStream       *stream,
                                        int                  io_priority,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  BdDragProvider *self = BD_DRAG_PROVIDER (provider);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(GTask) writer = NULL;

  g_task_set_source_tag (task, bd_drag_provider_write_mime_type_async);
  g_task_set_priority (task, io_priority);
  g_task_set_task_data (task, g_object_ref (stream), g_object_unref);

  if (!g_str_equal (mime_type, "text/uri-list"))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                               "Cannot provide %s", mime_type);
      g_object_unref (task);
      return;
    }

  if (self->written)
    {
      write_uri (task);
      return;
    }

  writer = g_task_new (self, cancellable, on_file_written, task);
  g_task_run_in_thread (writer, write_file_thread);
}

static gboolean
bd_drag_provider_write_mime_type_finish (GdkContentProvider  *provider,
                                         GAsyncResult        *result,
                                         GError             **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

GdkContentProvider *
bd_drag_provider_new (GdkTexture *texture,
                      const char *path)
{
  BdDragProvider *self;

  g_return_val_if_fail (GDK_IS_TEXTURE (texture), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  self = g_object_new (BD_TYPE_DRAG_PROVIDER, NULL);
  self->texture = g_object_ref (texture);
  self->path = g_strdup (path);
  return GDK_CONTENT_PROVIDER (self);
}

static void
bd_drag_provider_finalize (GObject *object)
{
  BdDragProvider *self = BD_DRAG_PROVIDER (object);

  g_clear_object (&self->texture);
  g_free (self->path);

  G_OBJECT_CLASS (bd_drag_provider_parent_class)->finalize (object);
}

static void
bd_drag_provider_class_init (BdDragProviderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GdkContentProviderClass *provider_class = GDK_CONTENT_PROVIDER_CLASS (klass);

  object_class->finalize = bd_drag_provider_finalize;
  provider_class->ref_formats = bd_drag_provider_ref_formats;
  provider_class->write_mime_type_async = bd_drag_provider_write_mime_type_async;
  provider_class->write_mime_type_finish = bd_drag_provider_write_mime_type_finish;
}

static void
bd_drag_provider_init (BdDragProvider *self)
{
}
