/* SPDX-License-Identifier: Apache-2.0 */
/* Crop to the subject: the box of what is kept, a margin around it, an aspect preset. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef enum {
  BD_CROP_NONE,
  BD_CROP_SUBJECT,    /* the subject and its margin, any aspect */
  BD_CROP_SQUARE,     /* 1:1 */
  BD_CROP_PORTRAIT,   /* 4:5 */
  BD_CROP_PASSPORT,   /* 35 x 45 mm at 600 dpi: written as 827 x 1063 pixels */
} BdCrop;

#define BD_CROP_LAST BD_CROP_PASSPORT

/* Around the subject, this share of its longer side. */
#define BD_CROP_MARGIN 0.10

#define BD_CROP_PASSPORT_WIDTH  827
#define BD_CROP_PASSPORT_HEIGHT 1063

/* The box of the pixels at or above half alpha; @alpha's pixel (x, y) is at
 * @alpha[y * @row_stride + x * @step]. FALSE when nothing is kept. */
gboolean   bd_crop_subject_box (const guint8       *alpha,
                                int                 width,
                                int                 height,
                                gsize               row_stride,
                                int                 step,
                                GdkRectangle       *box);

/* The frame of @crop around @box in a @width x @height photo: the box grown by the margin,
 * then the shorter way grown to the aspect, centred on the box and moved into the photo
 * where it fits; larger than the photo it reaches past its edges (the fill pads it).
 * @out_width, @out_height: the size to write. */
void       bd_crop_frame       (BdCrop              crop,
                                const GdkRectangle *box,
                                int                 width,
                                int                 height,
                                GdkRectangle       *frame,
                                int                *out_width,
                                int                *out_height);

/* @pixbuf cropped as @crop says around the subject of @alpha (a plane of its size), RGBA,
 * padded with @fill (0xRRGGBBAA) past the photo's edges; a new reference to @pixbuf itself
 * for BD_CROP_NONE or when nothing is kept. */
GdkPixbuf *bd_crop_apply       (GdkPixbuf          *pixbuf,
                                const guint8       *alpha,
                                BdCrop              crop,
                                guint32             fill);

G_END_DECLS
