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
  guint8 *out = g_malloc (out_stride * out_height);
  g_autofree int *col_start = g_new (int, out_width + 1);
  g_autofree guint32 *sums = g_new (guint32, out_stride);

  /* Output column i averages source columns col_start[i] .. col_start[i + 1] - 1 (at least
   * one); rows likewise. */
  for (int i = 0; i <= out_width; i++)
    col_start[i] = x + (int) ((gint64) i * width / out_width);

  for (int j = 0; j < out_height; j++)
    {
      int y0 = y + (int) ((gint64) j * height / out_height);
      int y1 = MAX (y0 + 1, y + (int) ((gint64) (j + 1) * height / out_height));
      guint8 *o = out + (gsize) j * out_stride;

      memset (sums, 0, out_stride * sizeof (guint32));
      for (int sy = y0; sy < y1; sy++)
        {
          const guint8 *row = pixels + (gsize) sy * stride;

          for (int i = 0; i < out_width; i++)
            {
              int x0 = col_start[i], x1 = MAX (x0 + 1, col_start[i + 1]);

              for (int sx = x0; sx < x1; sx++)
                for (int c = 0; c < channels; c++)
                  sums[i * channels + c] += row[(gsize) sx * channels + c];
            }
        }

      for (int i = 0; i < out_width; i++)
        {
          guint32 n = (guint32) (y1 - y0) * MAX (1, col_start[i + 1] - col_start[i]);

          for (int c = 0; c < channels; c++)
            o[i * channels + c] = (sums[i * channels + c] + n / 2) / n;
        }
    }

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
  int stride = gdk_pixbuf_get_rowstride (photo);
  const guint8 *pixels = gdk_pixbuf_read_pixels (photo);
  double scale = (double) size / MAX (width, height);
  int tw = MAX (1, (int) (width * scale + 0.5));
  int th = MAX (1, (int) (height * scale + 0.5));
  g_autoptr(GdkPixbuf) cutout = NULL;
  int out_stride;
  guint8 *out;

  /* A box filter over each thumbnail pixel's source area: good enough for a list icon and it
   * needs no second full-size copy of the photo. */
  cutout = gdk_pixbuf_new (GDK_COLORSPACE_RGB, TRUE, 8, tw, th);
  out = gdk_pixbuf_get_pixels (cutout);
  out_stride = gdk_pixbuf_get_rowstride (cutout);

  for (int ty = 0; ty < th; ty++)
    {
      int y0 = (int) ((double) ty / th * height);
      int y1 = MAX (y0 + 1, (int) ((double) (ty + 1) / th * height));

      for (int tx = 0; tx < tw; tx++)
        {
          int x0 = (int) ((double) tx / tw * width);
          int x1 = MAX (x0 + 1, (int) ((double) (tx + 1) / tw * width));
          guint64 sum[4] = { 0 };
          guint64 n = 0;
          guint8 *o = out + ty * out_stride + tx * 4;

          /* Sample at most 8x8 points per thumbnail pixel. */
          int sy = MAX (1, (y1 - y0) / 8), sx = MAX (1, (x1 - x0) / 8);

          for (int y = y0; y < y1; y += sy)
            for (int x = x0; x < x1; x += sx)
              {
                const guint8 *p = pixels + (gsize) y * stride + (gsize) x * n_channels;
                guint a = alpha[(gsize) y * width + x];

                sum[0] += p[0] * a;
                sum[1] += p[1] * a;
                sum[2] += p[2] * a;
                sum[3] += a;
                n++;
              }

          o[3] = sum[3] / n;
          for (int c = 0; c < 3; c++)
            o[c] = sum[3] > 0 ? sum[c] / sum[3] : 0;
        }
    }

  return g_steal_pointer (&cutout);
}
