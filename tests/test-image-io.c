/* SPDX-License-Identifier: Apache-2.0 */
/* The programs' photo decoding and saving (common/bd-image-io.c): every format cut short is
 * refused, complete files with extra data after their end load, only the documented formats
 * reach a decoder, WebP decodes to libwebp's own pixels, and saving never replaces a file
 * unless asked, keeps permissions, and leaves no temporary file behind. */
#include "bd-image-io.h"

#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>

static char *tmpdir;

/* A photo-like picture (gradients and noise) so that compressed data spans the whole file. */
static GdkPixbuf *
picture (int w, int h, gboolean alpha)
{
	GdkPixbuf *p = gdk_pixbuf_new (GDK_COLORSPACE_RGB, alpha, 8, w, h);
	guint8 *px = gdk_pixbuf_get_pixels (p);
	int stride = gdk_pixbuf_get_rowstride (p), n = alpha ? 4 : 3;
	GRand *rand = g_rand_new_with_seed (7);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			guint8 *q = px + y * stride + x * n;
			q[0] = (guint8) (x * 255 / w);
			q[1] = (guint8) (y * 255 / h);
			q[2] = (guint8) g_rand_int_range (rand, 0, 256);
			if (alpha)
				q[3] = (guint8) (128 + (x + y) % 128);
		}
	g_rand_free (rand);
	return p;
}

static GBytes *
encode (GdkPixbuf *p, const char *type)
{
	gchar *buf = NULL;
	gsize len = 0;
	g_autoptr (GError) error = NULL;
	if (!gdk_pixbuf_save_to_buffer (p, &buf, &len, type, &error, NULL))
		g_error ("cannot make a %s: %s", type, error->message);
	return g_bytes_new_take (buf, len);
}

static char *
write_file (const char *name, const void *data, gsize len)
{
	char *path = g_build_filename (tmpdir, name, NULL);
	g_assert_true (g_file_set_contents (path, data, (gssize) len, NULL));
	return path;
}

/* Loads @len bytes of @data as a file and from memory; both must agree. */
static GdkPixbuf *
load (const void *data, gsize len, GError **error)
{
	g_autofree char *path = write_file ("photo", data, len);
	g_autoptr (GBytes) bytes = g_bytes_new (data, len);
	g_autoptr (GError) from_memory = NULL;
	g_autoptr (GdkPixbuf) m = bd_image_load_bytes (bytes, &from_memory);
	GdkPixbuf *p = bd_image_load (path, error);
	g_assert_true ((p == NULL) == (m == NULL));
	return p;
}

/* Each format, cut at 10, 50, 90 and 99% of its bytes, and one byte short: except a PNG, whose
 * last 12 bytes are the empty IEND chunk after complete image data; libpng reads the image
 * and stops there, so a PNG cut inside IEND alone loads whole (and right). */
static void
test_truncated (void)
{
	g_autoptr (GdkPixbuf) rgb = picture (320, 240, FALSE), rgba = picture (320, 240, TRUE);
	struct { const char *type; GdkPixbuf *p; } formats[] = {
		{ "jpeg", rgb }, { "png", rgb }, { "png", rgba }, { "tiff", rgb }, { "webp", rgba },
	};
	for (gsize f = 0; f < G_N_ELEMENTS (formats); f++) {
		g_autoptr (GBytes) b = encode (formats[f].p, formats[f].type);
		gsize len = g_bytes_get_size (b);
		const guint8 *d = g_bytes_get_data (b, NULL);
		g_autoptr (GError) error = NULL;
		g_autoptr (GdkPixbuf) whole = load (d, len, &error);
		g_assert_no_error (error);
		g_assert_cmpint (gdk_pixbuf_get_width (whole), ==, 320);
		const double cuts[] = { 0.10, 0.50, 0.90, 0.99, -1 };
		for (gsize c = 0; c < G_N_ELEMENTS (cuts); c++) {
			gsize n = cuts[c] < 0 ? len - 1 : (gsize) (len * cuts[c]);
			if (cuts[c] < 0 && !strcmp (formats[f].type, "png"))
				n = len - 13;   /* the last byte of image data */
			g_autoptr (GError) e = NULL;
			g_autoptr (GdkPixbuf) p = load (d, n, &e);
			if (p)
				g_error ("%s of %zu bytes cut to %zu loaded", formats[f].type, len, n);
			g_assert_nonnull (e);
			g_test_message ("%s cut to %zu of %zu: %s", formats[f].type, n, len, e->message);
		}
	}
}

/* APP1 "Exif" holding a thumbnail, a complete little JPEG with its own end marker. */
static GByteArray *
jpeg_with_thumbnail (void)
{
	g_autoptr (GdkPixbuf) big = picture (400, 300, FALSE), small = picture (40, 30, FALSE);
	g_autoptr (GBytes) main_jpeg = encode (big, "jpeg"), thumb = encode (small, "jpeg");
	gsize tlen = g_bytes_get_size (thumb), mlen = g_bytes_get_size (main_jpeg);
	const guint8 *m = g_bytes_get_data (main_jpeg, NULL);
	GByteArray *out = g_byte_array_new ();
	g_byte_array_append (out, m, 2);   /* SOI */
	guint seglen = 2 + 6 + 8 + (guint) tlen;
	guint8 head[] = { 0xff, 0xe1, (guint8) (seglen >> 8), (guint8) seglen, 'E', 'x', 'i', 'f', 0, 0,
	                  'I', 'I', 0x2a, 0, 8, 0, 0, 0 };
	g_byte_array_append (out, head, sizeof head);
	g_byte_array_append (out, g_bytes_get_data (thumb, NULL), (guint) tlen);
	g_byte_array_append (out, m + 2, (guint) mlen - 2);
	return out;
}

static void
test_jpeg_ends (void)
{
	/* Cut right after the thumbnail: the old heuristic found an end marker near the end. */
	g_autoptr (GByteArray) j = jpeg_with_thumbnail ();
	g_autoptr (GError) error = NULL;
	g_autoptr (GdkPixbuf) whole = load (j->data, j->len, &error);
	g_assert_no_error (error);
	g_assert_cmpint (gdk_pixbuf_get_width (whole), ==, 400);
	gsize seglen = (gsize) j->data[4] << 8 | j->data[5];
	for (gsize cut = 2 + 2 + seglen; cut < 2 + 2 + seglen + 600 && cut < j->len; cut += 97) {
		g_autoptr (GError) e = NULL;
		g_autoptr (GdkPixbuf) p = load (j->data, cut, &e);
		if (p)
			g_error ("a JPEG cut after its EXIF thumbnail (%zu of %u bytes) loaded", cut, j->len);
	}
	/* A motion photo: a complete JPEG with a video after its end marker. */
	g_autoptr (GByteArray) motion = g_byte_array_new ();
	g_byte_array_append (motion, j->data, j->len);
	guint8 video[64 * 1024];
	for (gsize i = 0; i < sizeof video; i++)
		video[i] = (guint8) (i * 2654435761u >> 13);
	g_byte_array_append (motion, video, sizeof video);
	g_autoptr (GdkPixbuf) p = load (motion->data, motion->len, &error);
	g_assert_no_error (error);
	g_assert_cmpint (gdk_pixbuf_get_height (p), ==, 300);
}

/* Formats that gdk-pixbuf can read but we do not document never reach its loaders. */
static void
test_other_formats (void)
{
	g_autoptr (GdkPixbuf) p = picture (32, 32, FALSE);
	const char *types[] = { "bmp", "ico" };
	for (gsize i = 0; i < G_N_ELEMENTS (types); i++) {
		g_autoptr (GBytes) b = encode (p, types[i]);
		g_autoptr (GError) e = NULL;
		g_autoptr (GdkPixbuf) r = load (g_bytes_get_data (b, NULL), g_bytes_get_size (b), &e);
		g_assert_null (r);
		g_assert_error (e, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED);
	}
	const char xpm[] = "/* XPM */\nstatic char *x[] = {\"1 1 1 1\", \"a c #ff0000\", \"a\"};\n";
	const char tga_like[] = { 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 24, 0, 1, 2, 3 };
	g_autoptr (GError) e1 = NULL, e2 = NULL;
	g_assert_null (load (xpm, sizeof xpm, &e1));
	g_assert_error (e1, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED);
	g_assert_null (load (tga_like, sizeof tga_like, &e2));
	g_assert_error (e2, BD_IO_ERROR, BD_IO_ERROR_UNSUPPORTED);
}

/* A lossy WebP (colour stored at half size), with and without alpha, loads as libwebp's own
 * decoder gives it, byte for byte: gdk-pixbuf's loader scales the colour planes up another
 * way, and the network was trained on libwebp's pixels. */
static void
test_webp_pixels (void)
{
	for (int alpha = 0; alpha < 2; alpha++) {
		g_autoptr (GdkPixbuf) p = picture (161, 97, alpha);   /* odd sizes: half-size colour rounds */
		const guint8 *px = gdk_pixbuf_read_pixels (p);
		int stride = gdk_pixbuf_get_rowstride (p), n = alpha ? 4 : 3;
		uint8_t *webp = NULL;
		size_t len = alpha ? WebPEncodeRGBA (px, 161, 97, stride, 80, &webp)
		                   : WebPEncodeRGB (px, 161, 97, stride, 80, &webp);
		g_assert_cmpuint (len, >, 0);
		int w = 0, h = 0;
		uint8_t *ref = alpha ? WebPDecodeRGBA (webp, len, &w, &h) : WebPDecodeRGB (webp, len, &w, &h);
		g_assert_nonnull (ref);
		g_autoptr (GError) error = NULL;
		g_autoptr (GdkPixbuf) got = load (webp, len, &error);
		g_assert_no_error (error);
		g_assert_cmpint (gdk_pixbuf_get_width (got), ==, w);
		g_assert_cmpint (gdk_pixbuf_get_height (got), ==, h);
		g_assert_cmpint (gdk_pixbuf_get_has_alpha (got), ==, alpha);
		const guint8 *gp = gdk_pixbuf_read_pixels (got);
		int gs = gdk_pixbuf_get_rowstride (got);
		for (int y = 0; y < h; y++)
			if (memcmp (gp + (gsize) y * gs, ref + (gsize) y * w * n, (gsize) w * n) != 0)
				g_error ("WebP (alpha %d) row %d differs from libwebp's decode", alpha, y);
		WebPFree (ref);
		WebPFree (webp);
	}
}

/* An animated WebP (which WebPDecode refuses) still loads: its first frame, through the loader. */
static void
test_webp_animated (void)
{
	g_autoptr (GdkPixbuf) a = picture (64, 48, TRUE), b = picture (64, 48, TRUE);
	gdk_pixbuf_fill (b, 0x20408080);
	WebPAnimEncoderOptions options;
	g_assert_true (WebPAnimEncoderOptionsInit (&options));
	WebPAnimEncoder *enc = WebPAnimEncoderNew (64, 48, &options);
	g_assert_nonnull (enc);
	GdkPixbuf *frames[] = { a, b };
	for (int f = 0; f < 2; f++) {
		WebPPicture pic;
		g_assert_true (WebPPictureInit (&pic));
		pic.use_argb = 1;
		pic.width = 64;
		pic.height = 48;
		g_assert_true (WebPPictureImportRGBA (&pic, gdk_pixbuf_read_pixels (frames[f]),
		                                      gdk_pixbuf_get_rowstride (frames[f])));
		WebPConfig config;
		g_assert_true (WebPConfigInit (&config));
		g_assert_true (WebPAnimEncoderAdd (enc, &pic, f * 100, &config));
		WebPPictureFree (&pic);
	}
	g_assert_true (WebPAnimEncoderAdd (enc, NULL, 200, NULL));
	WebPData data;
	WebPDataInit (&data);
	g_assert_true (WebPAnimEncoderAssemble (enc, &data));
	WebPAnimEncoderDelete (enc);
	WebPBitstreamFeatures features;
	g_assert_cmpint (WebPGetFeatures (data.bytes, data.size, &features), ==, VP8_STATUS_OK);
	g_assert_true (features.has_animation);
	g_autoptr (GError) error = NULL;
	g_autoptr (GdkPixbuf) got = load (data.bytes, data.size, &error);
	g_assert_no_error (error);
	g_assert_cmpint (gdk_pixbuf_get_width (got), ==, 64);
	g_assert_cmpint (gdk_pixbuf_get_height (got), ==, 48);
	/* The first frame's gradients, not the second's flat colour. */
	const guint8 *px = gdk_pixbuf_read_pixels (got);
	int stride = gdk_pixbuf_get_rowstride (got), n = gdk_pixbuf_get_n_channels (got);
	g_assert_cmpint (abs ((int) px[0] - (int) px[47 * stride + 63 * n]), >, 100);
	WebPDataClear (&data);
}

/* A TIFF whose header claims 30000x30000 is refused before libtiff allocates anything. */
static void
test_huge_tiff (void)
{
	g_autoptr (GdkPixbuf) p = picture (16, 16, FALSE);
	g_autoptr (GBytes) b = encode (p, "tiff");
	g_autoptr (GByteArray) t = g_byte_array_new ();
	g_byte_array_append (t, g_bytes_get_data (b, NULL), (guint) g_bytes_get_size (b));
	g_assert_true (t->data[0] == 'I');
	guint32 ifd = t->data[4] | t->data[5] << 8 | t->data[6] << 16 | (guint32) t->data[7] << 24;
	guint count = t->data[ifd] | t->data[ifd + 1] << 8;
	for (guint i = 0; i < count; i++) {
		guint8 *e = t->data + ifd + 2 + 12 * i;
		guint tag = e[0] | e[1] << 8, type = e[2] | e[3] << 8;
		if (tag == 256 || tag == 257) {
			g_assert_true (type == 3 || type == 4);   /* SHORT or LONG, little-endian */
			memset (e + 8, 0, 4);
			e[8] = 30000 & 0xff;
			e[9] = 30000 >> 8;
		}
	}
	g_autoptr (GError) e = NULL;
	g_assert_null (load (t->data, t->len, &e));
	g_assert_error (e, BD_IO_ERROR, BD_IO_ERROR_TOO_LARGE);
	g_assert_nonnull (strstr (e->message, "30000×30000"));
}

static void
assert_no_temporary (void)
{
	g_autoptr (GDir) d = g_dir_open (tmpdir, 0, NULL);
	for (const char *n; (n = g_dir_read_name (d));)
		if (g_str_has_prefix (n, ".backdrop-tmp-"))
			g_error ("temporary file left: %s", n);
}

static void
test_save (void)
{
	g_autoptr (GdkPixbuf) p = picture (64, 48, TRUE);
	g_autofree char *out = g_build_filename (tmpdir, "out.png", NULL);
	g_unlink (out);
	g_autoptr (GError) error = NULL;
	g_assert_true (bd_image_save_full (p, out, 90, BD_SAVE_NO_REPLACE, NULL, &error));
	g_assert_no_error (error);
	/* A second write of the name is refused and changes nothing. */
	g_autofree char *before = NULL;
	gsize before_len;
	g_assert_true (g_file_get_contents (out, &before, &before_len, NULL));
	g_autoptr (GdkPixbuf) other = picture (10, 10, TRUE);
	g_assert_false (bd_image_save_full (other, out, 90, BD_SAVE_NO_REPLACE, NULL, &error));
	g_assert_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS);
	g_clear_error (&error);
	g_autofree char *after = NULL;
	gsize after_len;
	g_assert_true (g_file_get_contents (out, &after, &after_len, NULL));
	g_assert_cmpmem (before, before_len, after, after_len);
	/* Replacing keeps a private file private. */
	g_assert_cmpint (g_chmod (out, 0600), ==, 0);
	g_assert_true (bd_image_save_full (other, out, 90, BD_SAVE_REPLACE, NULL, &error));
	GStatBuf st;
	g_assert_cmpint (g_stat (out, &st), ==, 0);
	g_assert_cmpint (st.st_mode & 0777, ==, 0600);
	/* A name of 255 bytes, the most a folder holds, still gets its temporary file. */
	g_autofree char *base = g_strnfill (251, 'n');
	g_autofree char *longname = g_strconcat (base, ".png", NULL);
	g_autofree char *longpath = g_build_filename (tmpdir, longname, NULL);
	g_assert_true (bd_image_save_full (p, longpath, 90, BD_SAVE_NO_REPLACE, NULL, &error));
	g_assert_no_error (error);
	/* Cancelled: nothing written, nothing left. */
	g_autoptr (GCancellable) cancel = g_cancellable_new ();
	g_cancellable_cancel (cancel);
	g_autofree char *never = g_build_filename (tmpdir, "never.png", NULL);
	g_assert_false (bd_image_save_full (p, never, 90, BD_SAVE_NO_REPLACE, cancel, &error));
	g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error (&error);
	g_assert_false (g_file_test (never, G_FILE_TEST_EXISTS));
	assert_no_temporary ();
}

/* PNG is lossless: RGBA and RGB pictures (odd widths, so rows have padding) come back the
 * same, through our libpng writer; a mask comes back grey. */
static void
assert_same_pixels (GdkPixbuf *back, GdkPixbuf *p, int channels)
{
	int w = gdk_pixbuf_get_width (p), h = gdk_pixbuf_get_height (p);
	g_assert_cmpint (gdk_pixbuf_get_n_channels (back), ==, channels);
	g_assert_cmpint (gdk_pixbuf_get_width (back), ==, w);
	g_assert_cmpint (gdk_pixbuf_get_height (back), ==, h);
	for (int y = 0; y < h; y++)
		g_assert_cmpmem (gdk_pixbuf_read_pixels (back) + (gsize) y * gdk_pixbuf_get_rowstride (back), (gsize) w * channels,
		                 gdk_pixbuf_read_pixels (p) + (gsize) y * gdk_pixbuf_get_rowstride (p), (gsize) w * channels);
}

/* Our PNG writer (bd-encode-png.c) is lossless, as libpng reads it back: RGB, RGBA, a mask as
 * greyscale, and a picture of noise whose compressed data needs several IDAT chunks (libpng
 * checks every chunk's CRC). */
static void
test_png_round_trip (void)
{
	for (int alpha = 0; alpha < 2; alpha++) {
		g_autoptr (GdkPixbuf) p = picture (67, 41, alpha);
		g_autofree char *out = g_strdup_printf ("%s/round-%d.png", tmpdir, alpha);
		g_autoptr (GError) error = NULL;
		g_assert_true (bd_image_save_full (p, out, 90, BD_SAVE_REPLACE, NULL, &error));
		g_assert_no_error (error);
		g_autoptr (GdkPixbuf) back = gdk_pixbuf_new_from_file (out, &error);
		g_assert_no_error (error);
		assert_same_pixels (back, p, alpha ? 4 : 3);
	}

	/* A mask: R = G = B, written as one grey channel, read back as RGB. */
	g_autoptr (GdkPixbuf) p = picture (53, 29, FALSE);
	guint8 *px = gdk_pixbuf_get_pixels (p);
	for (int y = 0; y < 29; y++)
		for (int x = 0; x < 53; x++) {
			guint8 *q = px + y * gdk_pixbuf_get_rowstride (p) + x * 3;
			q[0] = q[1] = q[2];
		}
	g_autofree char *mask = g_build_filename (tmpdir, "round-mask.png", NULL);
	g_autoptr (GError) error = NULL;
	g_assert_true (bd_image_save_full (p, mask, 90, BD_SAVE_REPLACE | BD_SAVE_MASK, NULL, &error));
	g_assert_no_error (error);
	g_autofree char *bytes = NULL;
	gsize len = 0;
	g_assert_true (g_file_get_contents (mask, &bytes, &len, NULL));
	g_assert_cmpuint (len, >, 26);
	g_assert_cmpuint ((guint8) bytes[25], ==, 0);   /* IHDR: colour type greyscale */
	g_autoptr (GdkPixbuf) grey = gdk_pixbuf_new_from_file (mask, &error);
	g_assert_no_error (error);
	assert_same_pixels (grey, p, 3);

	/* 2400x1000 RGBA of noise: about 9.6 MB compressed, two IDAT chunks of at most 8 MiB. */
	g_autoptr (GdkPixbuf) noise = gdk_pixbuf_new (GDK_COLORSPACE_RGB, TRUE, 8, 2400, 1000);
	GRand *rand = g_rand_new_with_seed (11);
	guint8 *n = gdk_pixbuf_get_pixels (noise);
	for (gsize i = 0; i < (gsize) gdk_pixbuf_get_rowstride (noise) * 1000; i++)
		n[i] = (guint8) g_rand_int (rand);
	g_rand_free (rand);
	g_autofree char *big = g_build_filename (tmpdir, "round-big.png", NULL);
	g_assert_true (bd_image_save_full (noise, big, 90, BD_SAVE_REPLACE, NULL, &error));
	g_assert_no_error (error);
	g_autofree char *big_bytes = NULL;
	g_assert_true (g_file_get_contents (big, &big_bytes, &len, NULL));
	g_assert_cmpuint (len, >, 8u << 20);
	g_autoptr (GdkPixbuf) big_back = gdk_pixbuf_new_from_file (big, &error);
	g_assert_no_error (error);
	assert_same_pixels (big_back, noise, 4);
	assert_no_temporary ();
}

/* A killed run's temporary file is removed by the next; a live writer's (locked) is not. */
static void
test_leftovers (void)
{
	g_autofree char *dead = g_build_filename (tmpdir, ".backdrop-tmp-AbC123", NULL);
	g_autofree char *live = g_build_filename (tmpdir, ".backdrop-tmp-XyZ789", NULL);
	g_autofree char *mine = g_build_filename (tmpdir, ".backdrop-tmp-notes.txt", NULL);
	g_assert_true (g_file_set_contents (dead, "half a png", -1, NULL));
	g_assert_true (g_file_set_contents (live, "being written", -1, NULL));
	g_assert_true (g_file_set_contents (mine, "a user's file", -1, NULL));
	int fd = g_open (live, O_RDWR, 0);
	g_assert_cmpint (fd, >=, 0);
	/* flock locks belong to the open file: a child holds it, as another process would. */
	int ready[2];
	g_assert_cmpint (pipe (ready), ==, 0);
	pid_t child = fork ();
	if (child == 0) {
		flock (fd, LOCK_EX);
		char c = 1;
		if (write (ready[1], &c, 1) != 1)
			_exit (1);
		pause ();
		_exit (0);
	}
	close (fd);
	char c;
	g_assert_cmpint (read (ready[0], &c, 1), ==, 1);
	g_assert_cmpuint (bd_image_remove_leftovers (tmpdir), ==, 1);
	g_assert_false (g_file_test (dead, G_FILE_TEST_EXISTS));
	g_assert_true (g_file_test (live, G_FILE_TEST_EXISTS));
	g_assert_true (g_file_test (mine, G_FILE_TEST_EXISTS));
	kill (child, SIGKILL);
	waitpid (child, NULL, 0);
	g_assert_cmpuint (bd_image_remove_leftovers (tmpdir), ==, 1);
	g_assert_false (g_file_test (live, G_FILE_TEST_EXISTS));
	g_unlink (mine);
	close (ready[0]);
	close (ready[1]);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp ("backdrop-test-image-io-XXXXXX", NULL);
	g_test_add_func ("/common/image-io/truncated", test_truncated);
	g_test_add_func ("/common/image-io/jpeg-ends", test_jpeg_ends);
	g_test_add_func ("/common/image-io/other-formats", test_other_formats);
	g_test_add_func ("/common/image-io/webp-pixels", test_webp_pixels);
	g_test_add_func ("/common/image-io/webp-animated", test_webp_animated);
	g_test_add_func ("/common/image-io/huge-tiff", test_huge_tiff);
	g_test_add_func ("/common/image-io/save", test_save);
	g_test_add_func ("/common/image-io/png-round-trip", test_png_round_trip);
	g_test_add_func ("/common/image-io/leftovers", test_leftovers);
	int ret = g_test_run ();
	g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
	if (system (cmd) != 0)
		g_warning ("could not remove %s", tmpdir);
	return ret;
}
