/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "bd-image-io.h"
#include "bd-pixels.h"

gboolean
bd_pixels_check (bd_status       status,
                 const bd_error *error,
                 GError        **out_error)
{
  if (status == BD_OK)
    return TRUE;

  if (status == BD_ERR_CANCELLED)
    g_set_error_literal (out_error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "Cancelled");
  else
    g_set_error_literal (out_error, BD_LIBRARY_ERROR, status,
                         error != NULL && error->message[0] != '\0'
                           ? error->message : bd_status_name (status));
  return FALSE;
}

GBytes *
bd_pixels_composite (GdkPixbuf           *photo,
                     const guint8        *alpha,
                     const bd_background *background,
                     gboolean             premultiplied,
                     GError             **error)
{
  bd_image view;
  bd_error bd_err = { 0 };
  gsize width = gdk_pixbuf_get_width (photo);
  gsize height = gdk_pixbuf_get_height (photo);
  gsize size;
  guint8 *out;

  if (!g_size_checked_mul (&size, width, height) || !g_size_checked_mul (&size, size, 4))
    {
      g_set_error_literal (error, BD_LIBRARY_ERROR, BD_ERR_TOO_LARGE,
                           _("The photo is too large."));
      return NULL;
    }

  out = g_try_malloc (size);
  if (out == NULL)
    {
      g_set_error_literal (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY,
                           _("There is not enough memory for this photo."));
      return NULL;
    }

  if (!bd_pixbuf_view (photo, &view, error))
    {
      g_free (out);
      return NULL;
    }
  if (!bd_pixels_check (bd_composite (&view, alpha, width, background, out, width * 4, &bd_err),
                        &bd_err, error))
    {
      g_free (out);
      return NULL;
    }

  if (premultiplied)
    {
      for (gsize i = 0; i < size; i += 4)
        {
          guint a = out[i + 3];

          if (a == 255)
            continue;
          out[i + 0] = (out[i + 0] * a + 127) / 255;
          out[i + 1] = (out[i + 1] * a + 127) / 255;
          out[i + 2] = (out[i + 2] * a + 127) / 255;
        }
    }

  return g_bytes_new_take (out, size);
}

GBytes *
bd_pixels_resample (const guint8 *pixels,
                    gsize         stride,
                    int           channels,
                    int           x,
                    int           y,
                    int           width,
                    int           height,
                    int           out_width,
                    int           out_height)
{
  gsize out_stride = (gsize) out_width * channels;
  guint8 *out = g_malloc0 (out_stride * out_height);
  bd_error error = { 0 };

  /* Fails only on arguments no caller passes (an empty or inverted part); a view stays
   * blank rather than the program stopping. */
  if (bd_resample (pixels + (gsize) y * stride + (gsize) x * channels, width, height, stride, channels,
                   out, out_width, out_height, out_stride, &error) != BD_OK)
    g_critical ("bd_pixels_resample: %s", error.message);

  return g_bytes_new_take (out, out_stride * out_height);
}

GdkPixbuf *
bd_pixels_to_pixbuf (GBytes *rgba,
                     int     width,
                     int     height)
{
  return gdk_pixbuf_new_from_bytes (rgba, GDK_COLORSPACE_RGB, TRUE, 8, width, height, width * 4);
}

GdkPixbuf *
bd_pixels_thumbnail (GdkPixbuf    *photo,
                     const guint8 *alpha,
                     int           size)
{
  int width = gdk_pixbuf_get_width (photo);
  int height = gdk_pixbuf_get_height (photo);
  int n_channels = gdk_pixbuf_get_n_channels (photo);
  double scale = (double) size / MAX (width, height);
  int tw = MAX (1, (int) (width * scale + 0.5));
  int th = MAX (1, (int) (height * scale + 0.5));
  g_autoptr(GBytes) small_photo = NULL;
  g_autoptr(GBytes) small_alpha = NULL;
  g_autoptr(GdkPixbuf) small = NULL;
  g_autoptr(GBytes) rgba = NULL;
  bd_background transparent = { .kind = BD_BACKGROUND_TRANSPARENT };

  /* The photo and its mask brought down by the library's resampler, then cut out at that
   * size: the edge's colours are the subject's, not the background's. */
  small_photo = bd_pixels_resample (gdk_pixbuf_read_pixels (photo), gdk_pixbuf_get_rowstride (photo),
                                    n_channels, 0, 0, width, height, tw, th);
  small_alpha = bd_pixels_resample (alpha, width, 1, 0, 0, width, height, tw, th);
  small = gdk_pixbuf_new_from_bytes (small_photo, GDK_COLORSPACE_RGB, n_channels == 4, 8, tw, th,
                                     tw * n_channels);
  rgba = bd_pixels_composite (small, g_bytes_get_data (small_alpha, NULL), &transparent, FALSE, NULL);
  if (rgba == NULL)
    return NULL;
  return bd_pixels_to_pixbuf (rgba, tw, th);
}
