/* SPDX-License-Identifier: Apache-2.0 */
#include "preview-paint.h"

#define GREY 128   /* what a transparent pixel of the layer shows */

void
bd_preview_paint (const guint8 *photo,
                  gint          width,
                  gint          height,
                  gint          channels,
                  gsize         stride,
                  const guint8 *alpha,
                  guint8       *out)
{
  static const guint red[3] = { 230, 30, 30 };

  for (gint y = 0; y < height; y++)
    for (gint x = 0; x < width; x++)
      {
        const guint8 *p = photo + (gsize) y * stride + (gsize) x * channels;
        guint8       *o = out + ((gsize) y * width + x) * 3;
        guint         seen = channels == 4 ? p[3] : 255;
        /* How much is removed, at most half red: 0 .. 127. */
        guint         tint = (255 - alpha[(gsize) y * width + x]) / 2;

        for (gint c = 0; c < 3; c++)
          {
            guint v = (p[c] * seen + GREY * (255 - seen) + 127) / 255;

            o[c] = (guint8) ((v * (255 - tint) + red[c] * tint + 127) / 255);
          }
      }
}
