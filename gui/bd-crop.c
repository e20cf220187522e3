/* SPDX-License-Identifier: Apache-2.0 */
/* Crop to the subject (see bd-crop.h). The crop is part of the document's look, so it is
 * undone and redone like any setting; the canvas shows it as a frame, saving applies it. */
#include "config.h"

#include <math.h>

#include "bd-crop.h"

gboolean
bd_crop_subject_box (const guint8 *alpha,
                     int           width,
                     int           height,
                     gsize         row_stride,
                     int           step,
                     GdkRectangle *box)
{
  int x0 = width, y0 = height, x1 = -1, y1 = -1;

  for (int y = 0; y < height; y++)
    {
      const guint8 *row = alpha + (gsize) y * row_stride;
      int first = -1, last = -1;

      for (int x = 0; x < width; x++)
        if (row[(gsize) x * step] >= 128)
          {
            first = x;
            break;
          }
      if (first < 0)
        continue;
      for (int x = width - 1; x >= first; x--)
        if (row[(gsize) x * step] >= 128)
          {
            last = x;
            break;
          }
      x0 = MIN (x0, first);
      x1 = MAX (x1, last);
      y0 = MIN (y0, y);
      y1 = y;
    }

  if (x1 < 0)
    return FALSE;
  *box = (GdkRectangle) { x0, y0, x1 - x0 + 1, y1 - y0 + 1 };
  return TRUE;
}

void
bd_crop_frame (BdCrop              crop,
               const GdkRectangle *box,
               int                 width,
               int                 height,
               GdkRectangle       *frame,
               int                *out_width,
               int                *out_height)
{
  double margin = BD_CROP_MARGIN * MAX (box->width, box->height);
  double cx = box->x + box->width / 2.0, cy = box->y + box->height / 2.0;
  double w = box->width + 2 * margin, h = box->height + 2 * margin;
  double aspect = 0;   /* width / height; 0: any */
  double x, y;

  switch (crop)
    {
    case BD_CROP_NONE:
      *frame = (GdkRectangle) { 0, 0, width, height };
      *out_width = width;
      *out_height = height;
      return;
    case BD_CROP_SQUARE:
      aspect = 1.0;
      break;
    case BD_CROP_PORTRAIT:
      aspect = 4.0 / 5.0;
      break;
    case BD_CROP_PASSPORT:
      aspect = (double) BD_CROP_PASSPORT_WIDTH / BD_CROP_PASSPORT_HEIGHT;
      break;
    case BD_CROP_SUBJECT:
    default:
      break;
    }

  if (aspect > 0)
    {
      if (w / h < aspect)
        w = h * aspect;
      else
        h = w / aspect;
      /* Too big for the photo: smaller, the same shape. */
      if (w > width)
        w = width, h = w / aspect;
      if (h > height)
        h = height, w = h * aspect;
    }
  else
    {
      w = MIN (w, width);
      h = MIN (h, height);
    }

  x = CLAMP (cx - w / 2, 0, width - w);
  y = CLAMP (cy - h / 2, 0, height - h);
  frame->x = (int) lround (x);
  frame->y = (int) lround (y);
  frame->width = MAX (1, MIN ((int) lround (w), width - frame->x));
  frame->height = MAX (1, MIN ((int) lround (h), height - frame->y));

  *out_width = crop == BD_CROP_PASSPORT ? BD_CROP_PASSPORT_WIDTH : frame->width;
  *out_height = crop == BD_CROP_PASSPORT ? BD_CROP_PASSPORT_HEIGHT : frame->height;
}

GdkPixbuf *
bd_crop_apply (GdkPixbuf    *pixbuf,
               const guint8 *alpha,
               BdCrop        crop)
{
  int width = gdk_pixbuf_get_width (pixbuf), height = gdk_pixbuf_get_height (pixbuf);
  GdkRectangle box, frame;
  int out_width, out_height;
  g_autoptr(GdkPixbuf) part = NULL;

  if (crop == BD_CROP_NONE || alpha == NULL || !bd_crop_subject_box (alpha, width, height, width, 1, &box))
    return g_object_ref (pixbuf);

  bd_crop_frame (crop, &box, width, height, &frame, &out_width, &out_height);
  part = gdk_pixbuf_new_subpixbuf (pixbuf, frame.x, frame.y, frame.width, frame.height);
  if (out_width != frame.width || out_height != frame.height)
    return gdk_pixbuf_scale_simple (part, out_width, out_height, GDK_INTERP_HYPER);
  return gdk_pixbuf_copy (part);
}
