/* SPDX-License-Identifier: Apache-2.0 */
/* The photo decoders behind bd_image_load (bd-image-io.c), and the one encoder behind
 * bd_image_save_full that gdk-pixbuf lacks: one file per format that needs more than
 * gdk-pixbuf gives. gdk-pixbuf's JPEG and PNG loaders fill a truncated file's
 * missing rows with grey and report success; libjpeg and libpng themselves say the data
 * ended early, so those two formats are decoded with them directly. Its WebP loader upsamples
 * the colour differently from libwebp's own decoder (bd-decode-webp.c): WebP is decoded with
 * libwebp directly too, but for animations (the loader gives their first frame). */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <gio/gio.h>

G_BEGIN_DECLS

/* Called with the size once the header is read, before any pixel memory is taken: FALSE
 * (with @error set) refuses the photo. */
typedef gboolean (*BdDecodeSizeCheck) (int width, int height, const char *name, GError **error);

/* 8-bit RGB, upright (EXIF orientation applied). @name is for messages. */
GdkPixbuf *bd_decode_jpeg (const guint8 *data, gsize size, const char *name,
                           BdDecodeSizeCheck check, GError **error);

/* 8-bit RGB, or RGBA when the file has transparency. */
GdkPixbuf *bd_decode_png  (const guint8 *data, gsize size, const char *name,
                           BdDecodeSizeCheck check, GError **error);

/* 8-bit RGB, or RGBA when the file has transparency; a still image (bd_webp_is_animated). */
GdkPixbuf *bd_decode_webp (const guint8 *data, gsize size, const char *name,
                           BdDecodeSizeCheck check, GError **error);
gboolean   bd_webp_is_animated (const guint8 *data, gsize size);

/* @image (a mask: R = G = B) as an 8-bit greyscale PNG written to @out (bd-encode-png.c). */
gboolean   bd_encode_png_grey (GOutputStream *out, GdkPixbuf *image, GCancellable *cancellable,
                               GError **error);

/* @image (RGB or RGBA, 8-bit) as PNG: the "up" row filter, libdeflate at level 1: a 1 MP
 * cut-out 2.2 times faster than libpng at zlib level 1, in 3% fewer bytes (bench/encode-png). */
gboolean   bd_encode_png_rgba (GOutputStream *out, GdkPixbuf *image, GCancellable *cancellable,
                               GError **error);

/* The value of @tag in the first IFD of the TIFF header at @tiff (@size bytes, either byte
 * order), when it is one SHORT or LONG; else @fallback. For TIFF files and EXIF blocks. */
guint32    bd_tiff_tag (const guint8 *tiff, gsize size, guint tag, guint32 fallback);

G_END_DECLS
