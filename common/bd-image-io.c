/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"

#include "bd-image-io.h"

#include "backdrop.h"
#include "bd-decode-private.h"
#include "bd-library.h"

#include <errno.h>
#include <gio/gunixoutputstream.h>
#include <fcntl.h>
#include <glib/gi18n-lib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK (bd-io-error-quark, bd_io_error)

typedef struct {
	int      width, height;
	gboolean too_large;
} header_info;

/* Called once the header is read: a photo over the limit is refused. Loaders that can scale
 * decode it at 1x1 meanwhile, and the rest of the file is not fed to them. */
static void
on_size_prepared (GdkPixbufLoader *loader, int width, int height, gpointer data)
{
	header_info *info = data;
	info->width = width;
	info->height = height;
	if (width > 0 && height > 0 && (guint64) width * (guint64) height > BD_MAX_PIXELS) {
		info->too_large = TRUE;
		gdk_pixbuf_loader_set_size (loader, 1, 1);
	}
}

/* The library's limit, in the words every program uses (bd-library.h), as an I/O error. */
static gboolean
size_allowed (int width, int height, const char *name, GError **error)
{
	g_autoptr (GError) local = NULL;
	if (bd_library_check_size (name, width, height, &local))
		return TRUE;
	g_set_error_literal (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE, local->message);
	return FALSE;
}

/* The formats Backdrop reads, known by their first bytes, never by the name. Only these
 * reach a decoder: gdk-pixbuf would otherwise sniff and run any loader installed (ani, icns,
 * ico, qtif, tga, xpm...), each one more parser exposed to untrusted files. */
typedef enum { FORMAT_NONE, FORMAT_JPEG, FORMAT_PNG, FORMAT_WEBP, FORMAT_TIFF } photo_format;

static photo_format
sniff (const guint8 *d, gsize n)
{
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return FORMAT_JPEG;
	if (n >= 8 && memcmp (d, "\x89PNG\r\n\x1a\n", 8) == 0)
		return FORMAT_PNG;
	if (n >= 12 && memcmp (d, "RIFF", 4) == 0 && memcmp (d + 8, "WEBP", 4) == 0)
		return FORMAT_WEBP;
	if (n >= 4 && (memcmp (d, "II*\0", 4) == 0 || memcmp (d, "MM\0*", 4) == 0))
		return FORMAT_TIFF;
	return FORMAT_NONE;
}

/* TIFF and animated WebP through their gdk-pixbuf loaders, named, not sniffed; both report a
 * file that ends early from their close. */
static GdkPixbuf *
decode_with_loader (const char *type, const guint8 *data, gsize size, const char *name, GError **error)
{
	g_autoptr (GError) local = NULL;
	g_autoptr (GdkPixbufLoader) loader = gdk_pixbuf_loader_new_with_type (type, &local);
	if (!loader) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED,
		             _("%s is a %s image, and this system lacks the decoder for it"), name, type);
		return NULL;
	}
	header_info info = { 0 };
	g_signal_connect (loader, "size-prepared", G_CALLBACK (on_size_prepared), &info);
	gsize chunk = 1 << 20;
	for (gsize done = 0; done < size && !info.too_large; done += chunk)
		if (!gdk_pixbuf_loader_write (loader, data + done, MIN (chunk, size - done), &local))
			break;
	gboolean closed = gdk_pixbuf_loader_close (loader, local ? NULL : &local);
	if (info.too_large) {
		size_allowed (info.width, info.height, name, error);
		return NULL;
	}
	GdkPixbuf *pixbuf = gdk_pixbuf_loader_get_pixbuf (loader);
	if (local || !closed || !pixbuf) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s could not be read: %s"),
		             name, local ? local->message : _("unknown error"));
		return NULL;
	}
	if (gdk_pixbuf_get_bits_per_sample (pixbuf) != 8 || gdk_pixbuf_get_colorspace (pixbuf) != GDK_COLORSPACE_RGB) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED, _("%s has a pixel format Backdrop cannot use"), name);
		return NULL;
	}
	/* Upright as the camera meant it (TIFF's orientation tag). */
	return gdk_pixbuf_apply_embedded_orientation (pixbuf);
}

static GdkPixbuf *
decode (const guint8 *data, gsize size, const char *name, GError **error)
{
	if (size == 0) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s is empty (0 bytes)"), name);
		return NULL;
	}
	switch (sniff (data, size)) {
	case FORMAT_JPEG:
		return bd_decode_jpeg (data, size, name, size_allowed, error);
	case FORMAT_PNG:
		return bd_decode_png (data, size, name, size_allowed, error);
	case FORMAT_WEBP:
		if (bd_webp_is_animated (data, size))
			return decode_with_loader ("webp", data, size, name, error);
		return bd_decode_webp (data, size, name, size_allowed, error);
	case FORMAT_TIFF: {
		/* libtiff decodes the whole file when the loader closes, whatever size it was told:
		 * its header is read here first, so a 30000x30000 file allocates nothing. */
		guint32 w = bd_tiff_tag (data, size, 256, 0), h = bd_tiff_tag (data, size, 257, 0);
		if (w == 0 || h == 0) {
			g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT,
			             _("%s could not be read: the TIFF file is truncated or damaged (no image size found)"), name);
			return NULL;
		}
		if (!size_allowed ((int) MIN (w, (guint32) G_MAXINT), (int) MIN (h, (guint32) G_MAXINT), name, error))
			return NULL;
		return decode_with_loader ("tiff", data, size, name, error);
	}
	case FORMAT_NONE:
		break;
	}
	g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED,
	             _("%s is not an image in a format Backdrop can read (JPEG, PNG, WebP or TIFF)"), name);
	return NULL;
}

GdkPixbuf *
bd_image_load (const char *path, GError **error)
{
	g_autofree char *name = g_filename_display_name (path);
	GStatBuf st;
	if (g_stat (path, &st) != 0) {
		int e = errno;
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), _("Cannot open %s: %s"), name, g_strerror (e));
		return NULL;
	}
	if (!S_ISREG (st.st_mode)) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED, _("%s is not a file"), name);
		return NULL;
	}
	g_autoptr (GMappedFile) file = g_mapped_file_new (path, FALSE, error);
	if (!file)
		return NULL;
	return decode ((const guint8 *) g_mapped_file_get_contents (file), g_mapped_file_get_length (file), name, error);
}

GdkPixbuf *
bd_image_load_bytes (GBytes *bytes, GError **error)
{
	gsize size = 0;
	const guint8 *data = g_bytes_get_data (bytes, &size);
	return decode (data, size, _("The pasted image"), error);
}

GdkPixbuf *
bd_image_load_file (GFile *file, GCancellable *cancellable, GError **error)
{
	g_autofree char *path = g_file_get_path (file);
	if (path)
		return bd_image_load (path, error);
	/* Not local (GVfs): read whole, then decoded like a local file's mapped bytes. */
	g_autoptr (GBytes) contents = g_file_load_bytes (file, cancellable, NULL, error);
	if (!contents)
		return NULL;
	g_autofree char *name = g_file_get_parse_name (file);
	gsize size = 0;
	const guint8 *data = g_bytes_get_data (contents, &size);
	return decode (data, size, name, error);
}

static const char *
format_for (const char *path)
{
	const char *dot = strrchr (path, '.');
	if (!dot || strchr (dot, '/'))
		return NULL;
	if (!g_ascii_strcasecmp (dot, ".png"))
		return "png";
	if (!g_ascii_strcasecmp (dot, ".webp"))
		return "webp";
	if (!g_ascii_strcasecmp (dot, ".jpg") || !g_ascii_strcasecmp (dot, ".jpeg"))
		return "jpeg";
	return NULL;
}

gboolean
bd_image_format_supported (const char *path)
{
	return format_for (path) != NULL;
}

/* JPEG has no alpha: flatten onto white, as a printed cut-out would look. */
static GdkPixbuf *
flatten (GdkPixbuf *rgba)
{
	int w = gdk_pixbuf_get_width (rgba), h = gdk_pixbuf_get_height (rgba);
	GdkPixbuf *rgb = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, w, h);
	if (!rgb)
		return NULL;
	const guint8 *src = gdk_pixbuf_read_pixels (rgba);
	guint8 *dst = gdk_pixbuf_get_pixels (rgb);
	int ss = gdk_pixbuf_get_rowstride (rgba), ds = gdk_pixbuf_get_rowstride (rgb);
	int sc = gdk_pixbuf_get_n_channels (rgba);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const guint8 *s = src + (gsize) y * ss + (gsize) x * sc;
			guint8 *d = dst + (gsize) y * ds + (gsize) x * 3;
			guint a = sc == 4 ? s[3] : 255;
			for (int k = 0; k < 3; k++)
				d[k] = (guint8) ((s[k] * a + 255 * (255 - a) + 127) / 255);
		}
	return rgb;
}

/* Temporary files are hidden, short (a name of 255 bytes still gets one) and recognisable,
 * and locked while written: a leftover that nobody holds belongs to a killed run. */
#define TEMP_PREFIX ".backdrop-tmp-"
#define TEMP_TEMPLATE TEMP_PREFIX "XXXXXX"

/* A temporary file in @dir, open and locked. The lock is taken after the file exists, so a
 * cleaner (bd_image_remove_leftovers) may have removed it in between: then try again. */
static int
open_temp (const char *dir, char **out_path)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		char *tmp = g_build_filename (dir, TEMP_TEMPLATE, NULL);
		int fd = g_mkstemp_full (tmp, O_RDWR | O_CLOEXEC, 0666);   /* the umask applies */
		if (fd < 0) {
			g_free (tmp);
			return -1;
		}
		struct stat st;
		if (flock (fd, LOCK_EX) == 0 && fstat (fd, &st) == 0 && st.st_nlink > 0) {
			*out_path = tmp;
			return fd;
		}
		close (fd);
		g_free (tmp);
	}
	errno = EAGAIN;
	return -1;
}

/* Moves @tmp to @path unless @path exists, atomically: two runs writing one name cannot both
 * succeed, and neither replaces the other's file. */
static int
claim_name (const char *tmp, const char *path)
{
	if (renameat2 (AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	/* A file system without RENAME_NOREPLACE: a hard link claims the name just as surely. */
	if (link (tmp, path) == 0)
		return unlink (tmp), 0;
	return -1;
}

/* @image in @format to @out; @flags' BD_SAVE_MASK writes a PNG as greyscale. */
static gboolean
encode (GdkPixbuf *image, const char *format, int jpeg_quality, BdSaveFlags flags, GOutputStream *out,
        GCancellable *cancellable, GError **error)
{
	g_autofree char *quality = g_strdup_printf ("%d", CLAMP (jpeg_quality, 1, 100));
	if (g_str_equal (format, "png") && (flags & BD_SAVE_MASK))
		return bd_encode_png_grey (out, image, cancellable, error);
	if (g_str_equal (format, "jpeg"))
		return gdk_pixbuf_save_to_stream (image, out, "jpeg", cancellable, error, "quality", quality, NULL);
	if (g_str_equal (format, "webp"))
		return gdk_pixbuf_save_to_stream (image, out, "webp", cancellable, error, "quality", "95", NULL);
	return bd_encode_png_rgba (out, image, cancellable, error);
}

/* A local file: written to a locked temporary file beside it, renamed over it only once
 * complete (or, without BD_SAVE_REPLACE, moved to the name only if that is still free), so
 * that a failure, a crash or a SIGKILL never leaves a half-written image at @path nor
 * destroys an older one, and bd_image_remove_leftovers can tell a killed run's temporary
 * file from a live one. GIO's g_file_replace writes a file that does not exist yet in place,
 * and its temporary names are not ours to clean: it serves the files that are not local. */
static gboolean
save_local (GdkPixbuf *image, const char *path, const char *format, int jpeg_quality, BdSaveFlags flags,
            GCancellable *cancellable, GError **error)
{
	g_autofree char *name = g_filename_display_name (path);
	/* Refused before any work when replacing is not allowed (the final claim checks again). */
	GStatBuf old;
	gboolean exists = g_lstat (path, &old) == 0;
	if (exists && !(flags & BD_SAVE_REPLACE)) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS, _("%s already exists"), name);
		return FALSE;
	}
	if (exists && !S_ISREG (old.st_mode)) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_WRITE, _("Cannot write %s: it is not a regular file"), name);
		return FALSE;
	}
	g_autofree char *dir = g_path_get_dirname (path);
	g_autofree char *tmp = NULL;
	int fd = open_temp (dir, &tmp);
	if (fd < 0) {
		int e = errno;
		g_autofree char *dir_name = g_filename_display_name (dir);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_WRITE, _("Cannot write into %s: %s"), dir_name, g_strerror (e));
		return FALSE;
	}
	/* Replacing keeps the old file's permissions: a private (0600) image stays private. */
	if (exists)
		(void) fchmod (fd, old.st_mode & 07777);
	g_autoptr (GError) local = NULL;
	/* The stream leaves the descriptor open: the lock must outlive the rename. */
	g_autoptr (GOutputStream) out = g_unix_output_stream_new (fd, FALSE);
	gboolean ok = encode (image, format, jpeg_quality, flags, out, cancellable, &local) &&
	              g_output_stream_close (out, cancellable, &local);
	if (ok && fsync (fd) != 0 && errno != EINVAL) {
		ok = FALSE;
		g_set_error_literal (&local, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
	}
	if (ok && g_cancellable_set_error_if_cancelled (cancellable, &local))
		ok = FALSE;
	if (ok) {
		int rc = flags & BD_SAVE_REPLACE ? g_rename (tmp, path) : claim_name (tmp, path);
		if (rc != 0) {
			int e = errno;
			ok = FALSE;
			if (e == EEXIST) {
				g_unlink (tmp);
				close (fd);
				g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS, _("%s already exists"), name);
				return FALSE;
			}
			g_set_error_literal (&local, G_FILE_ERROR, g_file_error_from_errno (e), g_strerror (e));
		}
	}
	if (!ok)
		g_unlink (tmp);
	/* Closing drops the lock, after the name is final or the file gone. */
	if (close (fd) != 0 && ok) {
		ok = FALSE;
		g_set_error_literal (&local, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
	}
	if (!ok)
		g_propagate_error (error, g_steal_pointer (&local));
	return ok;
}

/* A file that is not local (sftp://, smb://... through GVfs): g_file_replace, which keeps the
 * old file's permissions and, where the backend writes beside it, replaces it only at close;
 * without BD_SAVE_REPLACE g_file_create, which fails if the name is taken. On failure the
 * stream is closed with a cancelled GCancellable, which abandons a replacement, and a file
 * this call created is deleted. */
static gboolean
save_remote (GdkPixbuf *image, GFile *file, const char *format, int jpeg_quality, BdSaveFlags flags,
             GCancellable *cancellable, GError **error)
{
	g_autoptr (GError) local = NULL;
	gboolean replace = (flags & BD_SAVE_REPLACE) != 0;
	g_autoptr (GFileOutputStream) out = replace
		? g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, cancellable, &local)
		: g_file_create (file, G_FILE_CREATE_NONE, cancellable, &local);
	if (!out) {
		if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_EXISTS)) {
			g_autofree char *name = g_file_get_parse_name (file);
			g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS, _("%s already exists"), name);
		} else {
			g_propagate_error (error, g_steal_pointer (&local));
		}
		return FALSE;
	}
	if (encode (image, format, jpeg_quality, flags, G_OUTPUT_STREAM (out), cancellable, &local) &&
	    !g_cancellable_set_error_if_cancelled (cancellable, &local) &&
	    g_output_stream_close (G_OUTPUT_STREAM (out), cancellable, &local))
		return TRUE;
	g_autoptr (GCancellable) abandon = g_cancellable_new ();
	g_cancellable_cancel (abandon);
	g_output_stream_close (G_OUTPUT_STREAM (out), abandon, NULL);
	if (!replace)
		g_file_delete (file, NULL, NULL);
	g_propagate_error (error, g_steal_pointer (&local));
	return FALSE;
}

gboolean
bd_image_save_file (GdkPixbuf *rgba, GFile *file, int jpeg_quality, BdSaveFlags flags,
                    GCancellable *cancellable, GError **error)
{
	g_autofree char *path = g_file_get_path (file);
	g_autofree char *name = g_file_get_parse_name (file);
	g_autofree char *base = g_file_get_basename (file);
	const char *format = base ? format_for (base) : NULL;
	if (!format) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED,
		             _("Cannot write %s: the name must end in .png, .webp, .jpg or .jpeg"), name);
		return FALSE;
	}
	g_autoptr (GdkPixbuf) image = g_str_equal (format, "jpeg") ? flatten (rgba) : g_object_ref (rgba);
	if (!image) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_WRITE, _("Out of memory writing %s"), name);
		return FALSE;
	}
	g_autoptr (GError) local = NULL;
	gboolean ok = path ? save_local (image, path, format, jpeg_quality, flags, cancellable, &local)
	                   : save_remote (image, file, format, jpeg_quality, flags, cancellable, &local);
	if (ok)
		return TRUE;
	/* The domain's own errors as they are; any other becomes "Cannot write NAME: why". */
	if (local->domain == BD_IO_ERROR || g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
		g_propagate_error (error, g_steal_pointer (&local));
	else
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_WRITE, _("Cannot write %s: %s"), name, local->message);
	return FALSE;
}

gboolean
bd_image_save_full (GdkPixbuf *rgba, const char *path, int jpeg_quality, BdSaveFlags flags,
                    GCancellable *cancellable, GError **error)
{
	g_autoptr (GFile) file = g_file_new_for_path (path);
	return bd_image_save_file (rgba, file, jpeg_quality, flags, cancellable, error);
}

gboolean
bd_image_save (GdkPixbuf *rgba, const char *path, int jpeg_quality, GError **error)
{
	return bd_image_save_full (rgba, path, jpeg_quality, BD_SAVE_REPLACE, NULL, error);
}

guint
bd_image_remove_leftovers (const char *dir)
{
	g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
	guint removed = 0;
	if (!d)
		return 0;
	for (const char *n; (n = g_dir_read_name (d));) {
		if (!g_str_has_prefix (n, TEMP_PREFIX) || strlen (n) != strlen (TEMP_TEMPLATE))
			continue;
		g_autofree char *path = g_build_filename (dir, n, NULL);
		int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		/* Held by a live writer: leave it. Unlinked only while we hold the lock. */
		if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && flock (fd, LOCK_EX | LOCK_NB) == 0 &&
		    unlink (path) == 0)
			removed++;
		close (fd);
	}
	return removed;
}
