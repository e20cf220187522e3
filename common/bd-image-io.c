#include "bd-image-io.h"

#include "backdrop.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_QUARK (bd-io-error-quark, bd_io_error)

/* gdk-pixbuf decodes a truncated JPEG without complaint, filling the rest with grey; a whole
 * JPEG ends with the end-of-image marker (some writers add a little padding after it). */
static gboolean
jpeg_is_complete (const guint8 *data, gsize size)
{
	gsize tail = size < 4096 ? size : 4096;
	for (gsize i = size - 1; i > size - tail; i--)
		if (data[i - 1] == 0xff && data[i] == 0xd9)
			return TRUE;
	return FALSE;
}

typedef struct {
	int      width, height;
	gboolean too_large;
} header_info;

/* Called once the header is read: a photo over the limit is refused. Loaders that can scale
 * decode it at 1x1 meanwhile; files are checked before decoding anyway (check_file_size). */
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

static GdkPixbuf *
decode (const guint8 *data, gsize size, const char *name, GError **error)
{
	if (size == 0) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s is empty (0 bytes)"), name);
		return NULL;
	}
	g_autoptr (GdkPixbufLoader) loader = gdk_pixbuf_loader_new ();
	g_autoptr (GError) local = NULL;
	header_info info = { 0 };
	g_signal_connect (loader, "size-prepared", G_CALLBACK (on_size_prepared), &info);
	gsize chunk = 1 << 20;
	for (gsize done = 0; done < size && !info.too_large; done += chunk)
		if (!gdk_pixbuf_loader_write (loader, data + done, MIN (chunk, size - done), &local))
			break;
	gboolean closed = gdk_pixbuf_loader_close (loader, local ? NULL : &local);
	if (!info.too_large && (local || !closed)) {
		gboolean unknown = g_error_matches (local, GDK_PIXBUF_ERROR, GDK_PIXBUF_ERROR_UNKNOWN_TYPE);
		g_set_error (error, BD_IO_ERROR, unknown ? BD_IO_ERROR_UNSUPPORTED : BD_IO_ERROR_CORRUPT,
		             unknown ? _("%s is not an image in a format Backdrop can read") : _("%s could not be read: %s"),
		             name, local ? local->message : _("unknown error"));
		return NULL;
	}
	if (info.too_large) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE,
		             _("%s is %d×%d pixels; Backdrop handles photos up to %d megapixels"),
		             name, info.width, info.height, (int) (BD_MAX_PIXELS / 1000000));
		return NULL;
	}
	GdkPixbuf *pixbuf = gdk_pixbuf_loader_get_pixbuf (loader);
	GdkPixbufFormat *format = gdk_pixbuf_loader_get_format (loader);
	if (!pixbuf) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s could not be read"), name);
		return NULL;
	}
	g_autofree char *format_name = format ? gdk_pixbuf_format_get_name (format) : NULL;
	if (g_strcmp0 (format_name, "jpeg") == 0 && !jpeg_is_complete (data, size)) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s is a truncated JPEG file"), name);
		return NULL;
	}
	if (gdk_pixbuf_get_bits_per_sample (pixbuf) != 8 || gdk_pixbuf_get_colorspace (pixbuf) != GDK_COLORSPACE_RGB) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED, _("%s has a pixel format Backdrop cannot use"), name);
		return NULL;
	}
	/* Upright as the camera meant it. */
	return gdk_pixbuf_apply_embedded_orientation (pixbuf);
}

/* For files, the header alone is read first, so a 30000x30000 bomb is refused before any
 * decoder allocates its pixels. */
static gboolean
check_file_size (const char *path, const char *name, GError **error)
{
	int width = 0, height = 0;
	if (!gdk_pixbuf_get_file_info (path, &width, &height))
		return TRUE;   /* the decoder says what is wrong */
	if (width > 0 && height > 0 && (guint64) width * (guint64) height > BD_MAX_PIXELS) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE,
		             _("%s is %d×%d pixels; Backdrop handles photos up to %d megapixels"),
		             name, width, height, (int) (BD_MAX_PIXELS / 1000000));
		return FALSE;
	}
	return TRUE;
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
	if (!check_file_size (path, name, error))
		return NULL;
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

static gboolean
write_fd (const gchar *buf, gsize count, GError **error, gpointer data)
{
	int fd = GPOINTER_TO_INT (data);
	while (count > 0) {
		ssize_t n = write (fd, buf, count);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g_set_error_literal (error, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
			return FALSE;
		}
		buf += n;
		count -= (gsize) n;
	}
	return TRUE;
}

gboolean
bd_image_save (GdkPixbuf *rgba, const char *path, int jpeg_quality, GError **error)
{
	g_autofree char *name = g_filename_display_name (path);
	const char *format = format_for (path);
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

	/* A temporary file beside the target, renamed over it only once complete: a failure
	 * or a crash never leaves a half-written image, nor destroys an older one. */
	g_autofree char *tmp = g_strconcat (path, ".XXXXXX", NULL);
	int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		g_autofree char *dir = g_path_get_dirname (path);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_WRITE, _("Cannot write into %s: %s"), dir, g_strerror (e));
		return FALSE;
	}
	g_autofree char *quality = g_strdup_printf ("%d", CLAMP (jpeg_quality, 1, 100));
	g_autoptr (GError) local = NULL;
	gboolean ok;
	if (g_str_equal (format, "jpeg"))
		ok = gdk_pixbuf_save_to_callback (image, write_fd, GINT_TO_POINTER (fd), "jpeg", &local,
		                                  "quality", quality, NULL);
	else if (g_str_equal (format, "webp"))
		ok = gdk_pixbuf_save_to_callback (image, write_fd, GINT_TO_POINTER (fd), "webp", &local,
		                                  "quality", "95", NULL);
	else
		ok = gdk_pixbuf_save_to_callback (image, write_fd, GINT_TO_POINTER (fd), "png", &local, NULL);
	if (ok && fsync (fd) != 0 && errno != EINVAL) {
		ok = FALSE;
		g_set_error_literal (&local, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
	}
	if (close (fd) != 0 && ok) {
		ok = FALSE;
		g_set_error_literal (&local, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
	}
	if (ok && g_rename (tmp, path) != 0) {
		ok = FALSE;
		g_set_error_literal (&local, G_FILE_ERROR, g_file_error_from_errno (errno), g_strerror (errno));
	}
	if (!ok) {
		g_unlink (tmp);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_WRITE, _("Cannot write %s: %s"), name,
		             local ? local->message : _("unknown error"));
	}
	return ok;
}
