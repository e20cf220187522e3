/* SPDX-License-Identifier: Apache-2.0 */
/* Glue between gdk-pixbuf and libbackdrop's plain C types: image views, errors, and the one
 * compositing step that the editor, the batch list and the exports share. */
#pragma once

#include <gio/gio.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

#include "backdrop.h"
#include "bd-image-io.h"  /* bd_image_load_file, bd_image_save_file: the programs' one way */
#include "bd-library.h"   /* BD_LIBRARY_ERROR: codes are the library's bd_status values */
#include "bd-output-name.h"
#include "bd-pixbuf.h"    /* bd_pixbuf_view */

G_BEGIN_DECLS

/* Turns a failed library call into a GError; returns TRUE when @status is BD_OK. */
gboolean    bd_pixels_check           (bd_status       status,
                                       const bd_error *error,
                                       GError        **out_error);

/* @photo with @alpha (@photo's size, rows as wide as the photo) over @background.
 * With @premultiplied the bytes suit GDK_MEMORY_R8G8B8A8_PREMULTIPLIED (for display),
 * otherwise they are straight RGBA (for files). Runs in any thread. */
GBytes     *bd_pixels_composite       (GdkPixbuf           *photo,
                                       const guint8        *alpha,
                                       const bd_background *background,
                                       gboolean             premultiplied,
                                       GError             **error);

/* The part (@x, @y, @width, @height) of @pixels (@channels bytes a pixel, rows @stride
 * apart) resampled to @out_width x @out_height by the library's bd_resample(): averaged
 * when it shrinks, repeated when it grows; premultiplied pixels too. Any thread. */
GBytes     *bd_pixels_resample        (const guint8   *pixels,
                                       gsize           stride,
                                       int             channels,
                                       int             x,
                                       int             y,
                                       int             width,
                                       int             height,
                                       int             out_width,
                                       int             out_height);

/* Straight RGBA bytes from bd_pixels_composite() as a pixbuf, for bd_image_save_file(). */
GdkPixbuf  *bd_pixels_to_pixbuf       (GBytes         *rgba,
                                       int             width,
                                       int             height);

/* A small picture of the cut-out (long side @size) on a transparent background; NULL when
 * there is no memory for it. */
GdkPixbuf  *bd_pixels_thumbnail       (GdkPixbuf      *photo,
                                       const guint8   *alpha,
                                       int             size);

G_END_DECLS
