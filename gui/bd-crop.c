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

/* Where a frame of @size along one axis of @limit pixels starts: inside the photo where it
 * fits, else reaching past it (the fill pads it: the subject is never cut) on the side the
 * subject does not touch — a person cut by the photo's bottom edge stays cut there. */
static double
place (double   centre,
       double   size,
       gboolean touches_start,
       gboolean touches_end,
       int      limit)
{
  if (size <= limit)
    return CLAMP (centre - size / 2, 0, limit - size);
  if (touches_end && !touches_start)
    return limit - size;
  if (touches_start && !touches_end)
    return 0;
  return centre - size / 2;
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
    }
  else
    {
      w = MIN (w, width);
      h = MIN (h, height);
    }

  x = place (cx, w, box->x <= 0, box->x + box->width >= width, width);
  y = place (cy, h, box->y <= 0, box->y + box->height >= height, height);
  frame->x = (int) lround (x);
  frame->y = (int) lround (y);
  frame->width = MAX (1, (int) lround (w));
  frame->height = MAX (1, (int) lround (h));

  *out_width = crop == BD_CROP_PASSPORT ? BD_CROP_PASSPORT_WIDTH : frame->width;
  *out_height = crop == BD_CROP_PASSPORT ? BD_CROP_PASSPORT_HEIGHT : frame->height;
}

GdkPixbuf *
bd_crop_apply (GdkPixbuf    *pixbuf,
               const guint8 *alpha,
               BdCrop        crop,
               guint32       fill)
{
  int width = gdk_pixbuf_get_width (pixbuf), height = gdk_pixbuf_get_height (pixbuf);
  GdkRectangle box, frame, inside, photo = { 0, 0, width, height };
  int out_width, out_height;
  g_autoptr(GdkPixbuf) part = NULL;

  if (crop == BD_CROP_NONE || alpha == NULL || !bd_crop_subject_box (alpha, width, height, width, 1, &box))
    return g_object_ref (pixbuf);

  bd_crop_frame (crop, &box, width, height, &frame, &out_width, &out_height);
  part = gdk_pixbuf_new (GDK_COLORSPACE_RGB, TRUE, 8, frame.width, frame.height);
  if (part == NULL)
    return g_object_ref (pixbuf);
  gdk_pixbuf_fill (part, fill);
  if (gdk_rectangle_intersect (&frame, &photo, &inside))
    {
      g_autoptr(GdkPixbuf) rgba = gdk_pixbuf_get_has_alpha (pixbuf) ? g_object_ref (pixbuf)
                                                                   : gdk_pixbuf_add_alpha (pixbuf, FALSE, 0, 0, 0);

      gdk_pixbuf_copy_area (rgba, inside.x, inside.y, inside.width, inside.height,
                            part, inside.x - frame.x, inside.y - frame.y);
    }
  if (out_width != frame.width || out_height != frame.height)
    return gdk_pixbuf_scale_simple (part, out_width, out_height, GDK_INTERP_HYPER);
  return g_steal_pointer (&part);
}
