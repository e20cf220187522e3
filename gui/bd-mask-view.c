/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include <string.h>

#include "bd-mask-view.h"

/* How strongly the overlay's red covers what is removed. */
#define OVERLAY_STRENGTH 0.55

GBytes *
bd_mask_view_overlay (const guint8 *rgb,
                      gsize         stride,
                      int           channels,
                      const guint8 *alpha,
                      int           width,
                      int           height)
{
  guint8 *out = g_malloc ((gsize) width * height * 3);
  int weight[256];

  /* Red's weight in 1/256ths, by the mask's value: all of OVERLAY_STRENGTH where nothing
   * is kept, none where all is. */
  for (int a = 0; a < 256; a++)
    weight[a] = (int) ((255 - a) / 255.0 * OVERLAY_STRENGTH * 256 + 0.5);

  for (int y = 0; y < height; y++)
    {
      const guint8 *src = rgb + (gsize) y * stride;
      const guint8 *m = alpha + (gsize) y * width;
      guint8 *dest = out + (gsize) y * width * 3;

      for (int x = 0; x < width; x++, src += channels, dest += 3)
        {
          int w = weight[m[x]];

          dest[0] = (src[0] * (256 - w) + 255 * w) >> 8;
          dest[1] = (src[1] * (256 - w)) >> 8;
          dest[2] = (src[2] * (256 - w)) >> 8;
        }
    }

  return g_bytes_new_take (out, (gsize) width * height * 3);
}

/* In place, along one line of @n values @step apart: 1 where a 1 lies within @r. */
static void
dilate_line (guint8 *line,
             gsize   step,
             int     n,
             int     r,
             int    *last)
{
  int prev = -1 - r;

  /* Distance to the nearest 1 on the left, then on the right; @last is scratch. */
  for (int i = 0; i < n; i++)
    {
      if (line[i * step])
        prev = i;
      last[i] = prev;
    }
  prev = n + r;
  for (int i = n - 1; i >= 0; i--)
    {
      if (line[i * step])
        prev = i;
      line[i * step] = (i - last[i] <= r) || (prev - i <= r);
    }
}

GBytes *
bd_mask_view_unsure (const guint8 *alpha,
                     int           width,
                     int           height,
                     int           band,
                     double       *fraction)
{
  gsize n = (gsize) width * height, count = 0;
  g_autofree guint8 *near = g_malloc0 (n);
  g_autofree int *scratch = g_new (int, MAX (width, height));
  guint32 *out = g_malloc0 (n * 4);
  gboolean any_edge = FALSE;
  /* Premultiplied cyan, in two strengths for the hatching: apart from skin, the red of the
   * overlay and the black and white of the mask. */
  const guint8 strong[4] = { 0, 200 * 230 / 255, 230, 230 };
  const guint8 faint[4] = { 0, 200 * 120 / 255, 120, 120 };
  guint32 strong_px, faint_px;

  memcpy (&strong_px, strong, 4);
  memcpy (&faint_px, faint, 4);

  /* The edge of the mask cut at 0.5: pixels whose right or lower neighbour is on the
   * other side. */
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        gsize i = (gsize) y * width + x;
        gboolean in = alpha[i] >= 128;

        if ((x + 1 < width && (alpha[i + 1] >= 128) != in) ||
            (y + 1 < height && (alpha[i + width] >= 128) != in))
          {
            near[i] = 1;
            any_edge = TRUE;
          }
      }

  /* Within @band of it (a square's distance), by rows and then by columns. */
  if (any_edge && band > 0)
    {
      for (int y = 0; y < height; y++)
        dilate_line (near + (gsize) y * width, 1, width, band, scratch);
      for (int x = 0; x < width; x++)
        dilate_line (near + x, width, height, band, scratch);
    }

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        gsize i = (gsize) y * width + x;

        if (alpha[i] > BD_MASK_UNSURE_LOW && alpha[i] < BD_MASK_UNSURE_HIGH && !near[i])
          {
            out[i] = ((x + y) / 4) % 2 ? strong_px : faint_px;
            count++;
          }
      }

  if (fraction != NULL)
    *fraction = n > 0 ? (double) count / n : 0.0;

  return g_bytes_new_take (out, n * 4);
}
