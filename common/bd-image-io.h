/* SPDX-License-Identifier: Apache-2.0 */
/* Photo files for the programs (CLI, app): decode JPEG, PNG, WebP and TIFF (known by their
 * first bytes; nothing else reaches a decoder), honouring EXIF orientation and the library's
 * size limit; encode by the file name's extension (PNG and WebP keep alpha, JPEG flattens onto
 * white), never leaving a half-written file. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <gio/gio.h>

G_BEGIN_DECLS

#define BD_IO_ERROR (bd_io_error_quark ())

typedef enum {
	BD_IO_ERROR_UNSUPPORTED, /* not an image, or a format we cannot write */
	BD_IO_ERROR_TOO_LARGE,
	BD_IO_ERROR_CORRUPT,
	BD_IO_ERROR_WRITE,
	BD_IO_ERROR_EXISTS,      /* the output exists and replacing it was not allowed */
} BdIoError;

typedef enum {
	BD_SAVE_NO_REPLACE = 0,      /* fail with BD_IO_ERROR_EXISTS if the file exists, even if it
	                              * appears while we write (claimed atomically) */
	BD_SAVE_REPLACE    = 1 << 0, /* replace it, keeping its permissions */
	BD_SAVE_MASK       = 1 << 1, /* the image is a mask (R = G = B, opaque): a PNG is written as
	                              * 8-bit greyscale */
} BdSaveFlags;

GQuark     bd_io_error_quark (void);

/* Decoded, upright, 8-bit RGB or RGBA. Checks the header's size before decoding. */
GdkPixbuf *bd_image_load     (const char *path, GError **error);
GdkPixbuf *bd_image_load_bytes (GBytes *bytes, GError **error);
/* bd_image_load for any GFile: a local one is mapped, another (GVfs) read whole first. Blocks:
 * for worker threads. */
GdkPixbuf *bd_image_load_file (GFile *file, GCancellable *cancellable, GError **error);

/* Writes an RGBA (or RGB) pixbuf to @file, format from its name's extension (.png .webp .jpg
 * .jpeg); @jpeg_quality 1..100. Through gdk_pixbuf_save_to_stream: a local file by a locked
 * temporary file renamed into place, any other (GVfs) by g_file_replace or g_file_create.
 * Nothing is left at @file on failure, nor a temporary file; an existing file is replaced
 * only with BD_SAVE_REPLACE, keeping its permissions. @cancellable stops the encoding
 * (G_IO_ERROR_CANCELLED). Blocks: for worker threads. */
gboolean   bd_image_save_file (GdkPixbuf *rgba, GFile *file, int jpeg_quality, BdSaveFlags flags,
                               GCancellable *cancellable, GError **error);

/* bd_image_save_file for a local @path. */
gboolean   bd_image_save_full (GdkPixbuf *rgba, const char *path, int jpeg_quality, BdSaveFlags flags,
                               GCancellable *cancellable, GError **error);

/* bd_image_save_full with BD_SAVE_REPLACE: for a name the user confirmed in a file dialog. */
gboolean   bd_image_save     (GdkPixbuf *rgba, const char *path, int jpeg_quality, GError **error);

/* Removes the temporary files that killed runs left in @dir (".backdrop-tmp-XXXXXX" that no
 * live writer holds locked); returns how many. */
guint      bd_image_remove_leftovers (const char *dir);

/* TRUE when @path's extension names a format bd_image_save writes. */
gboolean   bd_image_format_supported (const char *path);

G_END_DECLS
