/* SPDX-License-Identifier: Apache-2.0 */
/* JPEG through libjpeg directly: its own word on a file that ends early ("Premature end of
 * JPEG file", also a file cut after an embedded EXIF thumbnail) refuses the photo, while data
 * after the end-of-image marker (phones' motion photos) is none of its business. */
#include "config.h"

#include "bd-decode-private.h"
#include "bd-image-io.h"

#include <glib/gi18n-lib.h>
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf               jump;
	gboolean              truncated;
	char                  message[JMSG_LENGTH_MAX];
} jpeg_errors;

static void
on_error_exit (j_common_ptr cinfo)
{
	jpeg_errors *e = (jpeg_errors *) cinfo->err;
	cinfo->err->format_message (cinfo, e->message);
	longjmp (e->jump, 1);
}

/* Warnings (level -1) are corrupt-data reports; the one for missing data is fatal to us. The
 * library prints nothing. */
static void
on_message (j_common_ptr cinfo, int level)
{
	jpeg_errors *e = (jpeg_errors *) cinfo->err;
	if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF)
		e->truncated = TRUE;
}

/* The EXIF orientation (1..8): APP1 "Exif\0\0" holds a TIFF header whose first IFD has it
 * as tag 0x0112. 1 when absent or malformed. */
static int
orientation_of (j_decompress_ptr cinfo)
{
	for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next)
		if (m->marker == JPEG_APP0 + 1 && m->data_length > 6 && memcmp (m->data, "Exif\0\0", 6) == 0) {
			guint32 v = bd_tiff_tag (m->data + 6, m->data_length - 6, 0x0112, 1);
			return v >= 1 && v <= 8 ? (int) v : 1;
		}
	return 1;
}

/* Adobe's CMYK JPEGs store inverted ink; others plain. */
static void
cmyk_to_rgb (const JSAMPLE *in, guint8 *out, JDIMENSION width, gboolean inverted)
{
	for (JDIMENSION x = 0; x < width; x++, in += 4, out += 3) {
		guint c = in[0], m = in[1], y = in[2], k = in[3];
		if (!inverted) {
			c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
		}
		out[0] = (guint8) ((c * k + 127) / 255);
		out[1] = (guint8) ((m * k + 127) / 255);
		out[2] = (guint8) ((y * k + 127) / 255);
	}
}

GdkPixbuf *
bd_decode_jpeg (const guint8 *data, gsize size, const char *name, BdDecodeSizeCheck check, GError **error)
{
	struct jpeg_decompress_struct cinfo;
	jpeg_errors err = { 0 };
	/* Written between setjmp and longjmp: volatile, so their values survive the jump. */
	GdkPixbuf *volatile pixbuf = NULL;
	JSAMPLE *volatile cmyk_row = NULL;
	cinfo.err = jpeg_std_error (&err.pub);
	err.pub.error_exit = on_error_exit;
	err.pub.emit_message = on_message;
	if (setjmp (err.jump)) {
		g_clear_object ((GdkPixbuf **) &pixbuf);
		g_free (cmyk_row);
		jpeg_destroy_decompress (&cinfo);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s could not be read: %s"), name, err.message);
		return NULL;
	}
	jpeg_create_decompress (&cinfo);
	jpeg_mem_src (&cinfo, data, (unsigned long) size);
	jpeg_save_markers (&cinfo, JPEG_APP0 + 1, 0xffff);
	jpeg_read_header (&cinfo, TRUE);
	/* Saved markers live in the image's memory pool, which jpeg_finish_decompress frees. */
	volatile int orientation = orientation_of (&cinfo);
	if (!check (cinfo.image_width, cinfo.image_height, name, error) || cinfo.image_width > G_MAXINT ||
	    cinfo.image_height > G_MAXINT) {
		jpeg_destroy_decompress (&cinfo);
		return NULL;
	}
	gboolean cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
	cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
	jpeg_start_decompress (&cinfo);
	int w = (int) cinfo.output_width, h = (int) cinfo.output_height;
	pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, w, h);
	if (cmyk)
		cmyk_row = g_try_malloc ((gsize) w * 4);
	if (!pixbuf || (cmyk && !cmyk_row)) {
		g_clear_object ((GdkPixbuf **) &pixbuf);
		g_free (cmyk_row);
		jpeg_destroy_decompress (&cinfo);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE, _("Not enough memory to open %s (%d×%d pixels)"),
		             name, w, h);
		return NULL;
	}
	guint8 *pixels = gdk_pixbuf_get_pixels (pixbuf);
	gsize stride = (gsize) gdk_pixbuf_get_rowstride (pixbuf);
	while (cinfo.output_scanline < cinfo.output_height) {
		guint8 *row = pixels + cinfo.output_scanline * stride;
		JSAMPROW target = cmyk ? cmyk_row : row;
		jpeg_read_scanlines (&cinfo, &target, 1);
		if (cmyk)
			cmyk_to_rgb (cmyk_row, row, cinfo.output_width, cinfo.saw_Adobe_marker);
	}
	/* Reads up to the end-of-image marker: a file cut just before it is truncated too. */
	jpeg_finish_decompress (&cinfo);
	jpeg_destroy_decompress (&cinfo);
	g_free (cmyk_row);
	if (err.truncated) {
		g_object_unref (pixbuf);
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_CORRUPT, _("%s is a truncated JPEG file"), name);
		return NULL;
	}
	if (orientation == 1)
		return pixbuf;
	char value[2] = { (char) ('0' + orientation), '\0' };
	gdk_pixbuf_set_option (pixbuf, "orientation", value);
	GdkPixbuf *upright = gdk_pixbuf_apply_embedded_orientation (pixbuf);
	g_object_unref (pixbuf);
	if (!upright)
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE, _("Not enough memory to open %s (%d×%d pixels)"),
		             name, w, h);
	return upright;
}
