/* backdrop-cli end to end: real photos from ../shared/datasets (skipped when absent) into
 * cut-outs, masks and composites, and bad inputs: a clear message, a non-zero exit, and no
 * partial output left behind. */
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

static const char *cli;
static char *tmpdir, *model, *datasets;
static gboolean shipped_model;

typedef struct {
	int   status;
	char *err;
} run_result;

static run_result
run_cli (const char *first, ...)
{
	g_autoptr (GPtrArray) argv = g_ptr_array_new ();
	g_ptr_array_add (argv, (char *) cli);
	g_ptr_array_add (argv, "--model");
	g_ptr_array_add (argv, model);
	va_list args;
	va_start (args, first);
	for (const char *a = first; a; a = va_arg (args, const char *))
		g_ptr_array_add (argv, (char *) a);
	va_end (args);
	g_ptr_array_add (argv, NULL);
	run_result r = { 0 };
	int wait = 0;
	g_autoptr (GError) error = NULL;
	g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
	                             NULL, &r.err, &wait, &error));
	r.status = WIFEXITED (wait) ? WEXITSTATUS (wait) : -1;
	g_test_message ("backdrop-cli → %d: %s", r.status, r.err);
	return r;
}

static char *
path_in (const char *name)
{
	return g_build_filename (tmpdir, name, NULL);
}

/* No file of @prefix's name, nor a temporary one beside it, may exist. */
static void
assert_no_output (const char *path)
{
	g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
	g_autofree char *dir = g_path_get_dirname (path), *base = g_path_get_basename (path);
	g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
	if (!d)
		return;
	for (const char *n; (n = g_dir_read_name (d));)
		if (g_str_has_prefix (n, base))
			g_error ("left behind: %s/%s", dir, n);
}

static int
compare_names (gconstpointer a, gconstpointer b)
{
	return g_strcmp0 (*(char *const *) a, *(char *const *) b);
}

static char *
first_photo (const char *set, const char *ext, int index)
{
	g_autofree char *dir = g_build_filename (datasets, set, "images", NULL);
	g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
	if (!d)
		return NULL;
	g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
	for (const char *n; (n = g_dir_read_name (d));)
		if (g_str_has_suffix (n, ext))
			g_ptr_array_add (names, g_strdup (n));
	g_ptr_array_sort (names, compare_names);
	return names->len > (guint) index ? g_build_filename (dir, names->pdata[index], NULL) : NULL;
}

static gboolean
have_data (void)
{
	if (!datasets || !g_file_test (datasets, G_FILE_TEST_IS_DIR)) {
		g_test_skip ("../shared/datasets is absent: no real photos to test on");
		return FALSE;
	}
	return TRUE;
}

static void
test_real_photos (void)
{
	if (!have_data ())
		return;
	g_autofree char *photo = first_photo ("ccp-person", ".webp", 0);
	g_assert_nonnull (photo);
	g_autoptr (GdkPixbuf) in = gdk_pixbuf_new_from_file (photo, NULL);
	g_autofree char *bg = first_photo ("davis-no-people", ".jpg", 0);

	struct { const char *out; const char *kind; const char *background; gboolean alpha; } cases[] = {
		{ "cutout.png", "cutout", NULL, TRUE },
		{ "cutout.webp", "cutout", NULL, TRUE },
		{ "cutout.jpg", "cutout", NULL, FALSE },
		{ "mask.png", "mask", NULL, TRUE },
		{ "on-colour.png", "composite", "#3366ff", TRUE },
		{ "on-blur.jpg", "composite", "blur:20", FALSE },
		{ "on-image.png", "composite", bg, TRUE },
	};
	for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
		if (!cases[i].background && !g_strcmp0 (cases[i].kind, "composite"))
			continue;
		g_autofree char *out = path_in (cases[i].out);
		run_result r = cases[i].background
			? run_cli ("--output", cases[i].kind, "--background", cases[i].background, photo, "-o", out, NULL)
			: run_cli ("--output", cases[i].kind, photo, "-o", out, NULL);
		g_assert_cmpint (r.status, ==, 0);
		g_assert_nonnull (strstr (r.err, "using CPU"));
		g_free (r.err);
		g_autoptr (GError) error = NULL;
		g_autoptr (GdkPixbuf) res = gdk_pixbuf_new_from_file (out, &error);
		g_assert_no_error (error);
		g_assert_cmpint (gdk_pixbuf_get_width (res), ==, gdk_pixbuf_get_width (in));
		g_assert_cmpint (gdk_pixbuf_get_height (res), ==, gdk_pixbuf_get_height (in));
		g_assert_cmpint (gdk_pixbuf_get_has_alpha (res), ==, cases[i].alpha);
		if (!g_strcmp0 (cases[i].out, "cutout.png") && shipped_model) {
			/* A real cut-out: some pixels kept, some removed. */
			const guint8 *p = gdk_pixbuf_read_pixels (res);
			int stride = gdk_pixbuf_get_rowstride (res), w = gdk_pixbuf_get_width (res), h = gdk_pixbuf_get_height (res);
			int opaque = 0, clear = 0;
			for (int y = 0; y < h; y++)
				for (int x = 0; x < w; x++) {
					guint8 a = p[y * stride + x * 4 + 3];
					opaque += a > 250;
					clear += a < 5;
				}
			g_assert_cmpint (opaque, >, 0);
			g_assert_cmpint (clear, >, 0);
		}
	}
}

/* --all-people keeps what the default leaves out, and only adds: on the first CCP photo the
 * shipped model finds regions apart from the subject (a passer-by's faint ghost). */
static void
test_all_people (void)
{
	if (!have_data ())
		return;
	if (!shipped_model) {
		g_test_skip ("needs the shipped model: a synthetic one finds no people");
		return;
	}
	g_autofree char *photo = first_photo ("ccp-person", ".webp", 0);
	g_autofree char *subject = path_in ("subject.png"), *everyone = path_in ("everyone.png");
	run_result r = run_cli ("--output", "mask", photo, "-o", subject, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	r = run_cli ("--output", "mask", "--all-people", photo, "-o", everyone, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	g_autoptr (GdkPixbuf) a = gdk_pixbuf_new_from_file (subject, NULL);
	g_autoptr (GdkPixbuf) b = gdk_pixbuf_new_from_file (everyone, NULL);
	g_assert_nonnull (a);
	g_assert_nonnull (b);
	int w = gdk_pixbuf_get_width (a), h = gdk_pixbuf_get_height (a), an = gdk_pixbuf_get_n_channels (a),
	    bn = gdk_pixbuf_get_n_channels (b), differing = 0;
	g_assert_cmpint (gdk_pixbuf_get_width (b), ==, w);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			guint8 va = gdk_pixbuf_read_pixels (a)[y * gdk_pixbuf_get_rowstride (a) + x * an];
			guint8 vb = gdk_pixbuf_read_pixels (b)[y * gdk_pixbuf_get_rowstride (b) + x * bn];
			g_assert_cmpuint (va, <=, vb);
			differing += va != vb;
		}
	g_test_message ("pixels kept only with --all-people: %d", differing);
	g_assert_cmpint (differing, >, 0);
}

/* A folder of photos with a bad one among them: the rest are written, the bad one is listed. */
static void
test_batch (void)
{
	if (!have_data ())
		return;
	g_autofree char *in_dir = path_in ("batch-in"), *out_dir = path_in ("batch-out");
	g_mkdir (in_dir, 0755);
	for (int i = 0; i < 3; i++) {
		g_autofree char *src = first_photo ("ccp-person", ".webp", i);
		g_autofree char *name = g_path_get_basename (src), *dst = g_build_filename (in_dir, name, NULL);
		g_autofree char *data = NULL;
		gsize len;
		g_assert_true (g_file_get_contents (src, &data, &len, NULL));
		g_assert_true (g_file_set_contents (dst, data, (gssize) len, NULL));
	}
	g_autofree char *bad = g_build_filename (in_dir, "broken.jpg", NULL);
	g_assert_true (g_file_set_contents (bad, "not a jpeg", -1, NULL));
	run_result r = run_cli ("--output", "mask", in_dir, "--output-dir", out_dir, NULL);
	g_assert_cmpint (r.status, ==, 1);
	g_assert_nonnull (strstr (r.err, "1 of 4 photos failed"));
	g_assert_nonnull (strstr (r.err, "broken.jpg"));
	g_free (r.err);
	int written = 0;
	g_autoptr (GDir) d = g_dir_open (out_dir, 0, NULL);
	for (const char *n; (n = g_dir_read_name (d));) {
		g_assert_true (g_str_has_suffix (n, ".png"));
		g_assert_false (g_str_has_prefix (n, "broken"));
		written++;
	}
	g_assert_cmpint (written, ==, 3);
}

/* A JPEG whose EXIF says "rotate 90°": the outputs are upright, so width and height swap. */
static void
test_exif_orientation (void)
{
	g_autoptr (GdkPixbuf) p = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 64, 40);
	gdk_pixbuf_fill (p, 0x808080ff);
	gchar *jpeg = NULL;
	gsize len = 0;
	g_assert_true (gdk_pixbuf_save_to_buffer (p, &jpeg, &len, "jpeg", NULL, NULL));
	/* APP1 "Exif": a little-endian TIFF header and one IFD entry, Orientation (0x0112) = 6. */
	static const guint8 app1[] = {
		0xff, 0xe1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0,
		'I', 'I', 0x2a, 0x00, 0x08, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x06, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
	};
	g_autoptr (GByteArray) b = g_byte_array_new ();
	g_byte_array_append (b, (guint8 *) jpeg, 2);
	g_byte_array_append (b, app1, sizeof app1);
	g_byte_array_append (b, (guint8 *) jpeg + 2, (guint) len - 2);
	g_free (jpeg);
	g_autofree char *in = path_in ("rotated.jpg"), *out = path_in ("rotated-mask.png");
	g_assert_true (g_file_set_contents (in, (char *) b->data, (gssize) b->len, NULL));
	run_result r = run_cli ("--output", "mask", in, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	g_autoptr (GdkPixbuf) res = gdk_pixbuf_new_from_file (out, NULL);
	g_assert_cmpint (gdk_pixbuf_get_width (res), ==, 40);
	g_assert_cmpint (gdk_pixbuf_get_height (res), ==, 64);
}

static guint32
crc32_of (const guint8 *p, gsize n)
{
	guint32 c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

/* A valid PNG claiming 30000x30000 pixels, with one tiny compressed chunk of data. */
static void
write_huge_png (const char *path)
{
	g_autoptr (GByteArray) png = g_byte_array_new ();
	static const guint8 signature[] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	g_byte_array_append (png, signature, sizeof signature);
	guint8 ihdr[13] = { 0 };
	guint32 side = GUINT32_TO_BE (30000);
	memcpy (ihdr, &side, 4);
	memcpy (ihdr + 4, &side, 4);
	ihdr[8] = 8;   /* bit depth */
	ihdr[9] = 2;   /* RGB */
	static const guint8 idat[] = { 0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01 };
	struct { const char *type; const guint8 *data; guint32 len; } chunks[] = {
		{ "IHDR", ihdr, sizeof ihdr }, { "IDAT", idat, sizeof idat }, { "IEND", NULL, 0 },
	};
	for (gsize i = 0; i < G_N_ELEMENTS (chunks); i++) {
		guint32 len = GUINT32_TO_BE (chunks[i].len);
		g_byte_array_append (png, (guint8 *) &len, 4);
		guint start = png->len;
		g_byte_array_append (png, (const guint8 *) chunks[i].type, 4);
		if (chunks[i].len)
			g_byte_array_append (png, chunks[i].data, chunks[i].len);
		guint32 crc = GUINT32_TO_BE (crc32_of (png->data + start, png->len - start));
		g_byte_array_append (png, (guint8 *) &crc, 4);
	}
	g_assert_true (g_file_set_contents (path, (char *) png->data, png->len, NULL));
}

static void
test_bad_inputs (void)
{
	g_autofree char *out = path_in ("never.png");
	g_autofree char *text = path_in ("notes.png"), *empty = path_in ("empty.jpg");
	g_autofree char *huge = path_in ("huge.png"), *truncated = path_in ("truncated.jpg");
	g_assert_true (g_file_set_contents (text, "hello, this is text\n", -1, NULL));
	g_assert_true (g_file_set_contents (empty, "", 0, NULL));
	write_huge_png (huge);
	/* A real JPEG cut in half. */
	g_autoptr (GdkPixbuf) p = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 300, 200);
	gdk_pixbuf_fill (p, 0x336699ff);
	gchar *jpeg = NULL;
	gsize len = 0;
	g_assert_true (gdk_pixbuf_save_to_buffer (p, &jpeg, &len, "jpeg", NULL, "quality", "100", NULL));
	g_assert_true (g_file_set_contents (truncated, jpeg, (gssize) len / 2, NULL));
	g_free (jpeg);

	struct { const char *input; const char *message; } cases[] = {
		{ "/nonexistent/photo.jpg", "No such file" },
		{ text, "not an image" },
		{ empty, "empty" },
		{ huge, "30000×30000" },
		{ truncated, "truncated" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
		run_result r = run_cli (cases[i].input, "-o", out, NULL);
		g_assert_cmpint (r.status, ==, 1);
		if (!strstr (r.err, cases[i].message))
			g_error ("%s: expected “%s” in: %s", cases[i].input, cases[i].message, r.err);
		g_free (r.err);
		assert_no_output (out);
	}

	/* A folder nobody, not even root, can write into. */
	g_autofree char *photo = path_in ("small.png");
	g_assert_true (gdk_pixbuf_save (p, photo, "png", NULL, NULL));
	run_result r = run_cli (photo, "-o", "/proc/self/cutout.png", NULL);
	g_assert_cmpint (r.status, ==, 1);
	g_assert_nonnull (strstr (r.err, "Cannot write"));
	g_free (r.err);

	/* Never over an input unless asked. */
	g_autofree char *before = NULL, *after = NULL;
	g_assert_true (g_file_get_contents (photo, &before, NULL, NULL));
	r = run_cli (photo, "-o", photo, NULL);
	g_assert_cmpint (r.status, ==, 1);
	g_assert_nonnull (strstr (r.err, "overwrite its input"));
	g_free (r.err);
	g_assert_true (g_file_get_contents (photo, &after, NULL, NULL));
	g_assert_cmpstr (before, ==, after);

	/* The command line, the model and the device. */
	r = run_cli (photo, NULL);
	g_assert_cmpint (r.status, ==, 2);
	g_free (r.err);
	r = run_cli ("--output", "sketch", photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 2);
	g_free (r.err);
	r = run_cli ("--output", "composite", "--background", "blur:-3", photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 2);
	g_free (r.err);
	g_autofree char *gif = path_in ("cutout.gif");
	r = run_cli (photo, "-o", gif, NULL);
	g_assert_cmpint (r.status, ==, 2);
	g_free (r.err);
	const char *argv_bad_model[] = { cli, "--model", text, photo, "-o", out, NULL };
	int wait = 0;
	char *err = NULL;
	g_assert_true (g_spawn_sync (NULL, (char **) argv_bad_model, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
	                             NULL, &err, &wait, NULL));
	g_assert_cmpint (WEXITSTATUS (wait), ==, 3);
	g_assert_nonnull (strstr (err, "Backdrop model"));
	g_free (err);
	assert_no_output (out);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	cli = g_getenv ("BACKDROP_CLI");
	const char *root = g_getenv ("BACKDROP_SOURCE_ROOT");
	g_assert_nonnull (cli);
	g_assert_nonnull (root);
	datasets = g_build_filename (root, "..", "shared", "datasets", NULL);
	tmpdir = g_dir_make_tmp ("backdrop-test-cli-XXXXXX", NULL);
	/* The shipped model when there is one, else a small random network: these tests check the
	 * program's plumbing, test-network checks the numbers. */
	g_autofree char *shipped = g_build_filename (root, "data", "backdrop-portrait.bdm", NULL);
	if (g_file_test (shipped, G_FILE_TEST_EXISTS)) {
		model = g_strdup (shipped);
		shipped_model = TRUE;
	} else {
		model = path_in ("synthetic.bdm");
		const char *maker = g_getenv ("BACKDROP_MAKE_MODEL");
		const char *args[] = { maker, "--depth", "4", "--width", "8", model, NULL };
		int wait = 0;
		g_assert_true (g_spawn_sync (NULL, (char **) args, NULL, 0, NULL, NULL, NULL, NULL, &wait, NULL));
		g_assert_cmpint (wait, ==, 0);
	}
	g_test_add_func ("/cli/real-photos", test_real_photos);
	g_test_add_func ("/cli/all-people", test_all_people);
	g_test_add_func ("/cli/batch", test_batch);
	g_test_add_func ("/cli/exif-orientation", test_exif_orientation);
	g_test_add_func ("/cli/bad-inputs", test_bad_inputs);
	int ret = g_test_run ();
	g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
	if (system (cmd) != 0)
		g_warning ("could not remove %s", tmpdir);
	return ret;
}
