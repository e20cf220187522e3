/* SPDX-License-Identifier: Apache-2.0 */
/* PNG written by hand around libdeflate, then sent to the stream bd_image_save_file opened.
 *
 * Every row takes the "up" filter (the difference from the row above): libpng's adaptive
 * choice, trying five filters on every row as gdk-pixbuf's saver does, cost more than it saved
 * once the network got fast. The filtered rows go through libdeflate in one call: a 1 MP
 * cut-out in 14.3 ms at its level 1 against 31.4 ms through libpng at zlib's level 1 (ours
 * until 2026-11-26), in 3% fewer bytes; 108 against 154 ms and 16% fewer bytes at 9 MP
 * (bench/encode-png, docs/PERFORMANCE.md). libdeflate compresses a whole buffer only, so the
 * filtered copy of the photo and its compressed bytes are held at once (about twice the
 * photo's pixels; 96 MB for a 12 MP cut-out).
 *
 * Masks as 8-bit greyscale: gdk-pixbuf writes only RGB(A), and a mask saved as opaque RGBA
 * shows nothing to the tools that read a mask from alpha or a single channel. A mask is
 * mostly long runs, so level 6 costs about what level 1 does there (1.2 ms at 1 MP) and
 * writes the smaller file. */
#include "config.h"

#include "bd-decode-private.h"

#include <glib/gi18n-lib.h>
#include <libdeflate.h>
#include <string.h>

enum { CUTOUT_LEVEL = 1, MASK_LEVEL = 6 };

/* IDAT chunks of at most this many bytes: one write each. */
#define IDAT_MAX (8u << 20)

static void
put_be32 (guint8 *p, guint32 v)
{
	p[0] = (guint8) (v >> 24);
	p[1] = (guint8) (v >> 16);
	p[2] = (guint8) (v >> 8);
	p[3] = (guint8) v;
}

/* One chunk: length, type, @data, and the CRC of type and data. */
static gboolean
write_chunk (GOutputStream *out, const char type[4], const guint8 *data, guint32 length,
             GCancellable *cancellable, GError **error)
{
	guint8 head[8], tail[4];
	put_be32 (head, length);
	memcpy (head + 4, type, 4);
	guint32 crc = libdeflate_crc32 (0, head + 4, 4);
	crc = libdeflate_crc32 (crc, data, length);
	put_be32 (tail, crc);
	return g_output_stream_write_all (out, head, sizeof head, NULL, cancellable, error) &&
	       (length == 0 || g_output_stream_write_all (out, data, length, NULL, cancellable, error)) &&
	       g_output_stream_write_all (out, tail, sizeof tail, NULL, cancellable, error);
}

/* @image's first @channels channels (1: its red, which is a mask's grey) as a PNG of colour
 * type @colour_type, compressed at @level. */
static gboolean
encode_png (GOutputStream *out, GdkPixbuf *image, guint channels, guint8 colour_type, int level,
            GCancellable *cancellable, GError **error)
{
	gsize w = (gsize) gdk_pixbuf_get_width (image), h = (gsize) gdk_pixbuf_get_height (image);
	gsize from = (gsize) gdk_pixbuf_get_n_channels (image), stride = (gsize) gdk_pixbuf_get_rowstride (image);
	const guint8 *px = gdk_pixbuf_read_pixels (image);
	gsize row = 1 + w * channels, size = row * h;
	g_autofree guint8 *filtered = g_try_malloc (size);
	struct libdeflate_compressor *deflater = libdeflate_alloc_compressor (level);
	gsize bound = deflater ? libdeflate_zlib_compress_bound (deflater, size) : 0;
	g_autofree guint8 *packed = deflater ? g_try_malloc (bound) : NULL;
	if (!filtered || !deflater || !packed) {
		if (deflater)
			libdeflate_free_compressor (deflater);
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_NOMEM, _("Out of memory"));
		return FALSE;
	}
	for (gsize y = 0; y < h; y++) {
		guint8 *dst = filtered + y * row;
		const guint8 *src = px + y * stride, *above = y ? src - stride : NULL;
		dst[0] = 2;   /* up; on the first row the row above counts as zeros */
		dst++;
		if (channels == from) {
			if (above)
				for (gsize i = 0; i < w * channels; i++)
					dst[i] = (guint8) (src[i] - above[i]);
			else
				memcpy (dst, src, w * channels);
		} else {
			for (gsize x = 0; x < w; x++)
				for (guint c = 0; c < channels; c++)
					dst[x * channels + c] = (guint8) (src[x * from + c] - (above ? above[x * from + c] : 0));
		}
	}
	gsize length = libdeflate_zlib_compress (deflater, filtered, size, packed, bound);
	libdeflate_free_compressor (deflater);
	if (length == 0) {   /* cannot happen with the bound's room, but never write a broken file */
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "libdeflate: the image did not fit its buffer");
		return FALSE;
	}

	static const guint8 signature[8] = { 137, 'P', 'N', 'G', '\r', '\n', 26, '\n' };
	guint8 header[13];
	put_be32 (header, (guint32) w);
	put_be32 (header + 4, (guint32) h);
	header[8] = 8;             /* bits a sample */
	header[9] = colour_type;
	header[10] = header[11] = header[12] = 0;   /* deflate, adaptive filters, no interlace */
	if (!g_output_stream_write_all (out, signature, sizeof signature, NULL, cancellable, error) ||
	    !write_chunk (out, "IHDR", header, sizeof header, cancellable, error))
		return FALSE;
	for (gsize at = 0; at < length; at += IDAT_MAX) {
		guint32 n = (guint32) MIN (length - at, (gsize) IDAT_MAX);
		if (!write_chunk (out, "IDAT", packed + at, n, cancellable, error))
			return FALSE;
	}
	return write_chunk (out, "IEND", NULL, 0, cancellable, error);
}

gboolean
bd_encode_png_grey (GOutputStream *out, GdkPixbuf *image, GCancellable *cancellable, GError **error)
{
	return encode_png (out, image, 1, 0, MASK_LEVEL, cancellable, error);
}

gboolean
bd_encode_png_rgba (GOutputStream *out, GdkPixbuf *image, GCancellable *cancellable, GError **error)
{
	gboolean alpha = gdk_pixbuf_get_n_channels (image) == 4;
	return encode_png (out, image, alpha ? 4 : 3, alpha ? 6 : 2, CUTOUT_LEVEL, cancellable, error);
}
