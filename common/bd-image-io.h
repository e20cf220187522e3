/* Photo files for the programs (CLI, app): decode with gdk-pixbuf, honouring EXIF orientation
 * and the library's size limit; encode by the file name's extension (PNG and WebP keep alpha,
 * JPEG flattens onto white), always through a temporary file renamed into place. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>

G_BEGIN_DECLS

#define BD_IO_ERROR (bd_io_error_quark ())

typedef enum {
	BD_IO_ERROR_UNSUPPORTED, /* not an image, or a format we cannot write */
	BD_IO_ERROR_TOO_LARGE,
	BD_IO_ERROR_CORRUPT,
	BD_IO_ERROR_WRITE,
} BdIoError;

GQuark     bd_io_error_quark (void);

/* Decoded, upright, 8-bit RGB or RGBA. Checks the header's size before decoding. */
GdkPixbuf *bd_image_load     (const char *path, GError **error);
GdkPixbuf *bd_image_load_bytes (GBytes *bytes, GError **error);

/* Writes an RGBA pixbuf to @path, format from its extension (.png .webp .jpg .jpeg);
 * @jpeg_quality 1..100. Nothing is left at @path on failure. */
gboolean   bd_image_save     (GdkPixbuf *rgba, const char *path, int jpeg_quality, GError **error);

/* TRUE when @path's extension names a format bd_image_save writes. */
gboolean   bd_image_format_supported (const char *path);

G_END_DECLS
