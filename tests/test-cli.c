/* SPDX-License-Identifier: Apache-2.0 */
/* backdrop-cli end to end: real photos from ../shared/datasets (skipped when absent) into
 * cut-outs, masks and composites, and bad inputs: a clear message, a non-zero exit, and no
 * partial output left behind. */
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *cli;
static char *tmpdir, *model, *datasets;
static gboolean shipped_model;

typedef struct {
	int   status;
	char *err;
} run_result;

/* backdrop-cli --model @m with the arguments up to a NULL; its exit status (128 + the signal
 * when one ended it) and standard error. */
static run_result
run_cli_args (const char *m, const char *first, va_list args)
{
	g_autoptr (GPtrArray) argv = g_ptr_array_new ();
	g_ptr_array_add (argv, (char *) cli);
	g_ptr_array_add (argv, "--model");
	g_ptr_array_add (argv, (char *) m);
	for (const char *a = first; a; a = va_arg (args, const char *))
		g_ptr_array_add (argv, (char *) a);
	g_ptr_array_add (argv, NULL);
	run_result r = { 0 };
	int wait = 0;
	g_autoptr (GError) error = NULL;
	g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
	                             NULL, &r.err, &wait, &error));
	r.status = WIFEXITED (wait) ? WEXITSTATUS (wait) : WIFSIGNALED (wait) ? 128 + WTERMSIG (wait) : -1;
	g_test_message ("backdrop-cli → %d: %s", r.status, r.err);
	return r;
}

static run_result
run_cli (const char *first, ...)
{
	va_list args;
	va_start (args, first);
	run_result r = run_cli_args (model, first, args);
	va_end (args);
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

/* Real photos and the shipped model, which finds their people (a synthetic one does not). */
static gboolean
have_data_and_model (void)
{
	if (!have_data ())
		return FALSE;
	if (!shipped_model) {
		g_test_skip ("needs the shipped model: a synthetic one finds no people");
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
		{ "mask.png", "mask", NULL, FALSE },   /* 8-bit greyscale, checked below */
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
		if (!g_strcmp0 (cases[i].kind, "mask")) {
			/* IHDR: bit depth 8, colour type 0 (greyscale), as tools that take a mask expect. */
			g_autofree char *png = NULL;
			gsize len = 0;
			g_assert_true (g_file_get_contents (out, &png, &len, NULL));
			g_assert_cmpuint (len, >, 26);
			g_assert_cmpmem (png + 12, 4, "IHDR", 4);
			g_assert_cmpint (png[24], ==, 8);
			g_assert_cmpint (png[25], ==, 0);
		}
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
	if (!have_data_and_model ())
		return;
	g_autofree char *photo = first_photo ("ccp-person", ".webp", 0);
	g_autofree char *subject = path_in ("subject.png"), *everyone = path_in ("everyone.png");
	run_result r = run_cli ("--output", "mask", photo, "-o", subject, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	r = run_cli ("--output", "mask", "--keep-passers-by", photo, "-o", everyone, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	/* The option's earlier name does the same. */
	g_autofree char *everyone_old = path_in ("everyone-all-people.png");
	r = run_cli ("--output", "mask", "--all-people", photo, "-o", everyone_old, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	g_autofree char *new_bytes = NULL, *old_bytes = NULL;
	gsize new_len, old_len;
	g_assert_true (g_file_get_contents (everyone, &new_bytes, &new_len, NULL));
	g_assert_true (g_file_get_contents (everyone_old, &old_bytes, &old_len, NULL));
	g_assert_cmpmem (new_bytes, new_len, old_bytes, old_len);
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
	g_test_message ("pixels kept only with --keep-passers-by: %d", differing);
	g_assert_cmpint (differing, >, 0);
}

/* The share of pixels at least half opaque in both masks of those in either (first channel). */
static double
mask_iou (GdkPixbuf *a, GdkPixbuf *b)
{
	int w = gdk_pixbuf_get_width (a), h = gdk_pixbuf_get_height (a);
	g_assert_cmpint (gdk_pixbuf_get_width (b), ==, w);
	g_assert_cmpint (gdk_pixbuf_get_height (b), ==, h);
	const guint8 *pa = gdk_pixbuf_read_pixels (a), *pb = gdk_pixbuf_read_pixels (b);
	int sa = gdk_pixbuf_get_rowstride (a), sb = gdk_pixbuf_get_rowstride (b);
	int na = gdk_pixbuf_get_n_channels (a), nb = gdk_pixbuf_get_n_channels (b);
	long both = 0, either = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			gboolean in_a = pa[y * sa + x * na] >= 128, in_b = pb[y * sb + x * nb] >= 128;
			both += in_a && in_b;
			either += in_a || in_b;
		}
	return either ? (double) both / (double) either : 1.0;
}

static GdkPixbuf *
mask_of (const char *photo, const char *name, gboolean as_it_stands)
{
	g_autofree char *out = path_in (name);
	run_result r = as_it_stands ? run_cli ("--output", "mask", "--as-it-stands", photo, "-o", out, NULL)
	                            : run_cli ("--output", "mask", photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	GdkPixbuf *mask = gdk_pixbuf_new_from_file (out, NULL);
	g_assert_nonnull (mask);
	return mask;
}

static void assert_same_pixels (const char *a, const char *b);

/* A person lying down: the first CCP photo turned a quarter to the right, and to the left,
 * gets, turned back, the standing photo's mask (the network alone misses most of her: a
 * third of it); the standing photo itself is not turned. */
static void
test_lying_down (void)
{
	if (!have_data_and_model ())
		return;
	g_autofree char *photo = first_photo ("ccp-person", ".webp", 0);
	g_assert_nonnull (photo);
	g_autoptr (GdkPixbuf) in = gdk_pixbuf_new_from_file (photo, NULL);
	g_autoptr (GdkPixbuf) standing = mask_of (photo, "standing-mask.png", FALSE);
	g_autoptr (GdkPixbuf) standing_as_is = mask_of (photo, "standing-as-is-mask.png", TRUE);
	g_assert_cmpfloat (mask_iou (standing, standing_as_is), ==, 1.0);

	const GdkPixbufRotation turns[2][2] = {
		{ GDK_PIXBUF_ROTATE_CLOCKWISE, GDK_PIXBUF_ROTATE_COUNTERCLOCKWISE },
		{ GDK_PIXBUF_ROTATE_COUNTERCLOCKWISE, GDK_PIXBUF_ROTATE_CLOCKWISE },
	};
	for (int i = 0; i < 2; i++) {
		g_autoptr (GdkPixbuf) lying = gdk_pixbuf_rotate_simple (in, turns[i][0]);
		const char *way = i ? "left" : "right";
		g_autofree char *lying_path = path_in (i ? "lying-left.png" : "lying-right.png");
		g_autofree char *mask_name = g_strdup_printf ("lying-%s-mask.png", way);
		g_autofree char *as_is_name = g_strdup_printf ("lying-%s-as-is-mask.png", way);
		g_assert_true (gdk_pixbuf_save (lying, lying_path, "png", NULL, NULL));
		g_autoptr (GdkPixbuf) lying_mask = mask_of (lying_path, mask_name, FALSE);
		g_autoptr (GdkPixbuf) lying_as_is = mask_of (lying_path, as_is_name, TRUE);
		g_autoptr (GdkPixbuf) back = gdk_pixbuf_rotate_simple (lying_mask, turns[i][1]);
		g_autoptr (GdkPixbuf) back_as_is = gdk_pixbuf_rotate_simple (lying_as_is, turns[i][1]);
		double found = mask_iou (back, standing), as_is = mask_iou (back_as_is, standing);
		g_test_message ("lying down, turned to the %s, against the standing photo's mask: IoU %.3f, %.3f as it stands",
		                way, found, as_is);
		g_assert_cmpfloat (found, >=, 0.95);
		g_assert_cmpfloat (as_is, <, found);
	}

	/* One session, photos lying down of two sizes in turn (the buffers and plans of each
	 * size's runs made, then used again): each mask is the one a call of its own gives. */
	g_autofree char *in_dir = path_in ("lying-in"), *out_dir = path_in ("lying-out");
	g_mkdir (in_dir, 0755);
	g_autoptr (GdkPixbuf) lying = gdk_pixbuf_rotate_simple (in, GDK_PIXBUF_ROTATE_CLOCKWISE);
	g_autoptr (GdkPixbuf) small = gdk_pixbuf_scale_simple (lying, gdk_pixbuf_get_width (lying) / 2,
	                                                       gdk_pixbuf_get_height (lying) / 2, GDK_INTERP_BILINEAR);
	const char *names[3] = { "a-small", "b-large", "c-small" };
	for (int i = 0; i < 3; i++) {
		g_autofree char *file = g_strdup_printf ("%s/%s.png", in_dir, names[i]);
		g_assert_true (gdk_pixbuf_save (i == 1 ? lying : small, file, "png", NULL, NULL));
	}
	run_result r = run_cli ("--output", "mask", in_dir, "--output-dir", out_dir, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	g_autofree char *small_photo = g_build_filename (in_dir, "a-small.png", NULL);
	g_autoptr (GdkPixbuf) small_alone = mask_of (small_photo, "small-alone-mask.png", FALSE);
	g_autofree char *large_alone = path_in ("lying-right-mask.png");
	for (int i = 0; i < 3; i++) {
		g_autofree char *mask = g_strdup_printf ("%s/%s-mask.png", out_dir, names[i]);
		g_autofree char *alone = i == 1 ? g_strdup (large_alone) : path_in ("small-alone-mask.png");
		assert_same_pixels (mask, alone);
	}
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
	g_assert_nonnull (strstr (r.err, "[1/4] "));
	g_assert_nonnull (strstr (r.err, "broken.jpg"));
	/* Saved on worker threads, reported in input order, with the rate and the time left. */
	const char *at = r.err;
	for (int i = 2; i <= 4; i++) {
		g_autofree char *line = g_strdup_printf ("[%d/4] ", i);
		at = strstr (at, line);
		g_assert_nonnull (at);
		const char *end = strchr (at, '\n');
		g_assert_nonnull (end);
		g_autofree char *text = g_strndup (at, (gsize) (end - at));
		g_assert_nonnull (strstr (text, "photos/s"));
		g_assert_nonnull (strstr (text, "s left)"));
	}
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

/* @a and @b decode to the same size and the same bytes. */
static void
assert_same_pixels (const char *a, const char *b)
{
	g_autoptr (GError) error = NULL;
	g_autoptr (GdkPixbuf) pa = gdk_pixbuf_new_from_file (a, &error);
	g_assert_no_error (error);
	g_autoptr (GdkPixbuf) pb = gdk_pixbuf_new_from_file (b, &error);
	g_assert_no_error (error);
	guint la, lb;
	const guint8 *da = gdk_pixbuf_get_pixels_with_length (pa, &la);
	const guint8 *db = gdk_pixbuf_get_pixels_with_length (pb, &lb);
	g_assert_cmpint (gdk_pixbuf_get_width (pa), ==, gdk_pixbuf_get_width (pb));
	g_assert_cmpint (gdk_pixbuf_get_height (pa), ==, gdk_pixbuf_get_height (pb));
	g_assert_cmpint (gdk_pixbuf_get_n_channels (pa), ==, gdk_pixbuf_get_n_channels (pb));
	g_assert_cmpmem (da, la, db, lb);
}

/* A folder's masks are finished, and its cut-outs composed, on the save threads, a lone
 * photo's on its session's: the files are the same, for every kind of output and with a
 * threshold and feather. */
static void
test_folder_like_lone (void)
{
	if (!have_data ())
		return;
	g_autofree char *in_dir = path_in ("like-in");
	g_mkdir (in_dir, 0755);
	g_autoptr (GPtrArray) inputs = g_ptr_array_new_with_free_func (g_free);
	for (int i = 0; i < 2; i++) {
		g_autofree char *src = first_photo ("ccp-person", ".webp", 10 + i);
		g_autofree char *name = g_path_get_basename (src);
		char *dst = g_build_filename (in_dir, name, NULL);
		g_autofree char *data = NULL;
		gsize len;
		g_assert_true (g_file_get_contents (src, &data, &len, NULL));
		g_assert_true (g_file_set_contents (dst, data, (gssize) len, NULL));
		g_ptr_array_add (inputs, dst);
	}
	static const char *const kinds[][6] = {
		{ "mask", "mask", NULL },
		{ "cutout", "cutout", NULL },
		{ "composite", "composite", "--background", "blur:12", "--threshold", "0.4" },
		{ "cutout", "cutout-feather", "--feather", "3", "--all-people", NULL },
	};
	for (gsize k = 0; k < G_N_ELEMENTS (kinds); k++) {
		g_autofree char *out_dir = g_strdup_printf ("%s/like-out-%s", tmpdir, kinds[k][1]);
		const char *e0 = kinds[k][2], *e1 = e0 ? kinds[k][3] : NULL, *e2 = e0 ? kinds[k][4] : NULL,
		           *e3 = e2 ? kinds[k][5] : NULL;
		run_result r = run_cli ("--output", kinds[k][0], "--output-dir", out_dir, in_dir, e0, e1, e2, e3, NULL);
		g_assert_cmpint (r.status, ==, 0);
		g_free (r.err);
		for (guint i = 0; i < inputs->len; i++) {
			g_autofree char *base = g_path_get_basename (inputs->pdata[i]);
			*strrchr (base, '.') = '\0';
			g_autofree char *in_folder = g_strdup_printf ("%s/%s-%s.png", out_dir, base, kinds[k][0]);
			g_autofree char *lone = g_strdup_printf ("%s/%s-%s-lone.png", tmpdir, base, kinds[k][1]);
			r = run_cli ("--output", kinds[k][0], "-o", lone, (const char *) inputs->pdata[i], e0, e1, e2, e3, NULL);
			g_assert_cmpint (r.status, ==, 0);
			g_free (r.err);
			assert_same_pixels (in_folder, lone);
		}
	}
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

	/* A PNG cut in half, a BMP (gdk-pixbuf reads it; we do not), an icon. */
	g_autofree char *png_half = path_in ("half.png"), *bmp = path_in ("photo.bmp"), *ico = path_in ("photo.png.ico");
	{
		g_autoptr (GdkPixbuf) noisy = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 200, 150);
		guint8 *px = gdk_pixbuf_get_pixels (noisy);
		for (int i = 0; i < gdk_pixbuf_get_rowstride (noisy) * 150; i++)
			px[i] = (guint8) (i * 2654435761u >> 11);
		gchar *buf = NULL;
		gsize n = 0;
		g_assert_true (gdk_pixbuf_save_to_buffer (noisy, &buf, &n, "png", NULL, NULL));
		g_assert_true (g_file_set_contents (png_half, buf, (gssize) n / 2, NULL));
		g_free (buf);
		g_assert_true (gdk_pixbuf_save (noisy, bmp, "bmp", NULL, NULL));
		g_autoptr (GdkPixbuf) icon = gdk_pixbuf_scale_simple (noisy, 32, 32, GDK_INTERP_BILINEAR);
		g_assert_true (gdk_pixbuf_save (icon, ico, "ico", NULL, NULL));
	}
	struct { const char *input; const char *message; } cases[] = {
		{ "/nonexistent/photo.jpg", "No such file" },
		{ text, "not an image" },
		{ empty, "empty" },
		{ huge, "30000×30000" },
		{ truncated, "truncated" },
		{ png_half, "truncated PNG" },
		{ bmp, "not an image in a format Backdrop can read" },
		{ ico, "not an image in a format Backdrop can read" },
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
	/* A GPU by number: cuda:N with N from 0; anything else is a command-line error. */
	static const char *const bad_devices[] = { "cuda:", "cuda:x", "cuda:-1", "cuda:1.5", "cuda:99999999999", "gpu2" };
	for (gsize i = 0; i < G_N_ELEMENTS (bad_devices); i++) {
		r = run_cli ("--device", bad_devices[i], photo, "-o", out, NULL);
		g_assert_cmpint (r.status, ==, 2);
		g_assert_nonnull (strstr (r.err, "--device"));
		g_free (r.err);
	}
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

/* A synthetic model of @depth written to @path by bench's make-synthetic-model. */
static void
make_model (const char *path, const char *depth, const char *width, const char *size)
{
	const char *maker = g_getenv ("BACKDROP_MAKE_MODEL");
	const char *args[] = { maker, "--depth", depth, "--width", width, "--size", size, path, NULL };
	int wait = 0;
	g_assert_true (g_spawn_sync (NULL, (char **) args, NULL, 0, NULL, NULL, NULL, NULL, &wait, NULL));
	g_assert_cmpint (wait, ==, 0);
}

/* backdrop-cli with --model @m rather than the test's model. */
static run_result
run_cli_model (const char *m, const char *first, ...)
{
	va_list args;
	va_start (args, first);
	run_result r = run_cli_args (m, first, args);
	va_end (args);
	return r;
}

static char *
small_photo (const char *name, int w, int h)
{
	g_autoptr (GdkPixbuf) p = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, w, h);
	guint8 *px = gdk_pixbuf_get_pixels (p);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w * 3; x++)
			px[y * gdk_pixbuf_get_rowstride (p) + x] = (guint8) (x * 7 + y * 13);
	char *path = path_in (name);
	const char *type = g_str_has_suffix (name, ".png") ? "png" : "jpeg";
	g_assert_true (gdk_pixbuf_save (p, path, type, NULL, NULL));
	return path;
}

static char *
contents_of (const char *path, gsize *len)
{
	char *data = NULL;
	g_assert_true (g_file_get_contents (path, &data, len, NULL));
	return data;
}

/* Models of every depth the format allows: depth 6..8 overflowed the loader's table and
 * killed the CLI (exit 139). A header bit flipped is refused as damage. */
static void
test_model_files (void)
{
	g_autofree char *photo = small_photo ("depth.png", 40, 30), *out = path_in ("depth-out.png");
	const char *depths[] = { "6", "7", "8" };
	for (gsize i = 0; i < G_N_ELEMENTS (depths); i++) {
		g_autofree char *m = path_in ("deep.bdm");
		make_model (m, depths[i], "2", "128");
		g_unlink (out);
		run_result r = run_cli_model (m, photo, "-o", out, NULL);
		if (r.status != 0)
			g_error ("depth %s: exit %d: %s", depths[i], r.status, r.err);
		g_free (r.err);
	}
	g_autofree char *m = path_in ("flipped.bdm");
	make_model (m, "3", "4", "64");
	gsize len;
	g_autofree char *b = contents_of (m, &len);
	b[40] ^= 0x40;   /* a bit of the first mean */
	g_assert_true (g_file_set_contents (m, b, (gssize) len, NULL));
	g_unlink (out);
	run_result r = run_cli_model (m, photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 3);
	g_assert_nonnull (strstr (r.err, "damaged"));
	g_free (r.err);
	assert_no_output (out);
}

/* No output replaces an input: a folder holding a.jpg and a-cutout.png (an earlier result,
 * processed again) written into itself, the background image, the model, each by another
 * name for the same file. */
static void
test_outputs_never_replace_inputs (void)
{
	g_autofree char *dir = path_in ("same-folder");
	g_mkdir (dir, 0755);
	g_autofree char *a_jpg = g_build_filename (dir, "a.jpg", NULL);
	g_autofree char *a_png = g_build_filename (dir, "a-cutout.png", NULL);
	g_autofree char *src_jpg = small_photo ("src.jpg", 48, 32), *src_png = small_photo ("src.png", 48, 32);
	gsize jl, pl;
	g_autofree char *jd = contents_of (src_jpg, &jl), *pd = contents_of (src_png, &pl);
	g_assert_true (g_file_set_contents (a_jpg, jd, (gssize) jl, NULL));
	g_assert_true (g_file_set_contents (a_png, pd, (gssize) pl, NULL));
	const char *modes[] = { NULL, "--overwrite" };
	for (gsize i = 0; i < G_N_ELEMENTS (modes); i++) {
		run_result r = modes[i] ? run_cli (modes[i], "--output-dir", dir, a_jpg, a_png, NULL)
		                        : run_cli ("--output-dir", dir, a_jpg, a_png, NULL);
		g_assert_cmpint (r.status, ==, 1);
		g_free (r.err);
		gsize after_len;
		g_autofree char *after = contents_of (a_png, &after_len);
		g_assert_cmpmem (after, after_len, pd, pl);
	}
	/* The background image, named with a "./" of its own. */
	g_autofree char *bg = small_photo ("bg.png", 64, 64), *bg_other = g_build_filename (tmpdir, ".", "bg.png", NULL);
	gsize bl;
	g_autofree char *bd = contents_of (bg, &bl);
	run_result r = run_cli ("--output", "composite", "--background", bg, "--overwrite", src_jpg, "-o", bg_other, NULL);
	g_assert_cmpint (r.status, ==, 1);
	g_assert_nonnull (strstr (r.err, "this run reads"));
	g_free (r.err);
	gsize bl2;
	g_autofree char *bd2 = contents_of (bg, &bl2);
	g_assert_cmpmem (bd, bl, bd2, bl2);
	/* The model, through a hard link with an image's name. */
	g_autofree char *own_model = path_in ("own-model.bdm"), *model_link = path_in ("model-link.png");
	gsize ml;
	g_autofree char *md = contents_of (model, &ml);
	g_assert_true (g_file_set_contents (own_model, md, (gssize) ml, NULL));
	g_assert_cmpint (link (own_model, model_link), ==, 0);
	r = run_cli_model (own_model, "--overwrite", src_jpg, "-o", model_link, NULL);
	g_assert_cmpint (r.status, ==, 1);
	g_assert_nonnull (strstr (r.err, "this run reads"));
	g_free (r.err);
	gsize ml2;
	g_autofree char *md2 = contents_of (own_model, &ml2);
	g_assert_cmpmem (md, ml, md2, ml2);
	g_unlink (model_link);
}

/* An existing output is kept unless --overwrite; replacing keeps its permissions; two runs
 * into one name at once: exactly one writes it. */
static void
test_existing_outputs (void)
{
	g_autofree char *photo = small_photo ("exist.jpg", 40, 30), *out = path_in ("exist-out.png");
	g_assert_true (g_file_set_contents (out, "an earlier result", -1, NULL));
	g_assert_cmpint (g_chmod (out, 0600), ==, 0);
	run_result r = run_cli (photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 1);
	g_assert_nonnull (strstr (r.err, "already exists"));
	g_free (r.err);
	gsize len;
	g_autofree char *kept = contents_of (out, &len);
	g_assert_cmpstr (kept, ==, "an earlier result");
	r = run_cli ("--overwrite", photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	GStatBuf st;
	g_assert_cmpint (g_stat (out, &st), ==, 0);
	g_assert_cmpint (st.st_mode & 0777, ==, 0600);
	g_autoptr (GdkPixbuf) res = gdk_pixbuf_new_from_file (out, NULL);
	g_assert_nonnull (res);

	/* Two runs at once into one name. */
	g_autofree char *race = path_in ("race.png");
	const char *argv[] = { cli, "--model", model, photo, "-o", race, NULL };
	GPid pids[2];
	int errs[2];
	for (int i = 0; i < 2; i++)
		g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD |
		                                         G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, &pids[i], NULL, NULL,
		                                         &errs[i], NULL));
	int ok = 0;
	for (int i = 0; i < 2; i++) {
		int status = 0;
		g_assert_cmpint (waitpid (pids[i], &status, 0), ==, pids[i]);
		close (errs[i]);
		ok += WIFEXITED (status) && WEXITSTATUS (status) == 0;
	}
	g_assert_cmpint (ok, ==, 1);
}

/* SIGINT and SIGTERM: the summary, exit 130 and 143, no unfinished file. A killed run's
 * temporary file is recognisable and the next run into that folder removes it. */
static void
test_signals (void)
{
	g_autofree char *in = path_in ("many"), *out = path_in ("many-out");
	g_mkdir (in, 0755);
	g_autofree char *one = small_photo ("many-one.jpg", 600, 400);
	gsize len;
	g_autofree char *data = contents_of (one, &len);
	for (int i = 0; i < 200; i++) {
		g_autofree char *name = g_strdup_printf ("%s/p%03d.jpg", in, i);
		g_assert_true (g_file_set_contents (name, data, (gssize) len, NULL));
	}
	const int sigs[] = { SIGINT, SIGTERM };
	for (gsize k = 0; k < G_N_ELEMENTS (sigs); k++) {
		const char *argv[] = { cli, "--model", model, "--overwrite", in, "--output-dir", out, NULL };
		GPid pid;
		int err_fd;
		g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD |
		                                         G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, &pid, NULL, NULL,
		                                         &err_fd, NULL));
		g_usleep (1500 * 1000);
		kill (pid, sigs[k]);
		int status = 0;
		GString *err = g_string_new (NULL);
		char buf[4096];
		ssize_t n;
		while ((n = read (err_fd, buf, sizeof buf)) > 0)
			g_string_append_len (err, buf, n);
		close (err_fd);
		g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
		g_test_message ("signal %d: %s", sigs[k], err->str);
		g_assert_true (WIFEXITED (status));
		g_assert_cmpint (WEXITSTATUS (status), ==, 128 + sigs[k]);
		g_assert_nonnull (strstr (err->str, "interrupted"));
		g_string_free (err, TRUE);
		g_autoptr (GDir) d = g_dir_open (out, 0, NULL);
		int written = 0;
		for (const char *nm; d && (nm = g_dir_read_name (d));) {
			g_assert_false (g_str_has_prefix (nm, ".backdrop-tmp-"));
			g_autofree char *p = g_build_filename (out, nm, NULL);
			g_autoptr (GdkPixbuf) img = gdk_pixbuf_new_from_file (p, NULL);
			g_assert_nonnull (img);   /* every file there is whole */
			written++;
		}
		g_assert_cmpint (written, <, 200);
	}
	/* What SIGKILL leaves, the next run removes. */
	g_autofree char *left = g_build_filename (out, ".backdrop-tmp-Q1w2E3", NULL);
	g_assert_true (g_file_set_contents (left, "half an image", -1, NULL));
	g_autofree char *photo = small_photo ("after-kill.jpg", 40, 30);
	run_result r = run_cli (photo, "--output-dir", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_assert_nonnull (strstr (r.err, "removed 1 unfinished file"));
	g_free (r.err);
	g_assert_false (g_file_test (left, G_FILE_TEST_EXISTS));
}

/* Results are named by the rule of bd-output-name.h, the app's too: STEM-KIND.EXT, and
 * STEM-KIND-2.EXT for a second photo of the same name (from another folder). A folder's files
 * of other types (bd-image-types.h) are skipped, whatever the case of the extension. */
static void
test_output_names (void)
{
	g_autofree char *one = path_in ("names-one"), *two = path_in ("names-two"), *out = path_in ("names-out");
	g_mkdir (one, 0755);
	g_mkdir (two, 0755);
	g_autofree char *src = small_photo ("names-src.jpg", 40, 30);
	gsize len;
	g_autofree char *data = contents_of (src, &len);
	const char *files[][2] = { { one, "p.jpg" }, { two, "p.jpg" }, { two, "Q.TIF.JPEG" }, { two, "notes.txt" } };
	for (gsize i = 0; i < G_N_ELEMENTS (files); i++) {
		g_autofree char *f = g_build_filename (files[i][0], files[i][1], NULL);
		g_assert_true (g_file_set_contents (f, data, (gssize) len, NULL));
	}
	run_result r = run_cli ("--output", "mask", one, two, "--output-dir", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	r = run_cli ("--format", "webp", one, "--output-dir", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	const char *want[] = { "p-mask.png", "p-mask-2.png", "Q.TIF-mask.png", "p-cutout.webp" };
	for (gsize i = 0; i < G_N_ELEMENTS (want); i++) {
		g_autofree char *f = g_build_filename (out, want[i], NULL);
		g_assert_true (g_file_test (f, G_FILE_TEST_IS_REGULAR));
	}
	g_autoptr (GDir) d = g_dir_open (out, 0, NULL);
	guint n = 0;
	while (g_dir_read_name (d))
		n++;
	g_assert_cmpuint (n, ==, G_N_ELEMENTS (want));
}

/* Names of up to 255 bytes, and options that are not numbers. */
static void
test_names_and_numbers (void)
{
	g_autofree char *photo = small_photo ("names.jpg", 40, 30);
	g_autofree char *base = g_strnfill (251, 'x'), *longname = g_strconcat (base, ".png", NULL);
	g_autofree char *out = path_in (longname);
	run_result r = run_cli (photo, "-o", out, NULL);
	g_assert_cmpint (r.status, ==, 0);
	g_free (r.err);
	g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
	g_autofree char *never = path_in ("nan.png");
	const char *bad[][2] = { { "--threshold", "nan" }, { "--feather", "nan" }, { "--threshold", "-nan" } };
	for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
		r = run_cli (bad[i][0], bad[i][1], photo, "-o", never, NULL);
		g_assert_cmpint (r.status, ==, 2);
		g_free (r.err);
		assert_no_output (never);
	}
}

/* Every file of @dir, by name, with its contents. */
static GHashTable *
folder_contents (const char *dir)
{
	GHashTable *files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_bytes_unref);
	g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
	g_assert_nonnull (d);
	for (const char *n; (n = g_dir_read_name (d));) {
		g_autofree char *p = g_build_filename (dir, n, NULL);
		gsize len;
		char *data = contents_of (p, &len);
		g_hash_table_insert (files, g_strdup (n), g_bytes_new_take (data, len));
	}
	return files;
}

/* A folder with broken files in the middle through one lane and through two side by side
 * (the path cuda:all takes, here on the CPU): the same files, byte for byte, each error
 * against its own photo, every line in input order, every good photo written. */
static void
test_lanes (void)
{
	g_autofree char *in = path_in ("lanes-in");
	g_mkdir (in, 0755);
	enum { N = 9 };
	for (int i = 0; i < N; i++) {
		g_autofree char *name = g_strdup_printf ("lanes-in/p%d.%s", i, i % 2 ? "png" : "jpg");
		g_autofree char *made = small_photo (name, 90 + 17 * i, 60 + 11 * i);
	}
	g_autofree char *broken_text = path_in ("lanes-in/p3.png"), *broken_half = path_in ("lanes-in/p6.jpg");
	g_assert_true (g_file_set_contents (broken_text, "no photo here", -1, NULL));
	gsize len;
	g_autofree char *whole = contents_of (broken_half, &len);
	g_assert_true (g_file_set_contents (broken_half, whole, (gssize) len / 3, NULL));
	g_autoptr (GHashTable) first = NULL;
	for (int lanes = 1; lanes <= 2; lanes++) {
		g_autofree char *out = g_strdup_printf ("%s/lanes-out-%d", tmpdir, lanes);
		g_autofree char *lanes_arg = g_strdup_printf ("%d", lanes);
		run_result r = run_cli ("--device", "cpu", "--lanes", lanes_arg, "--output", "composite", "-b", "blur:4", in,
		                        "--output-dir", out, NULL);
		g_assert_cmpint (r.status, ==, 1);
		g_assert_nonnull (strstr (r.err, "2 of 9 photos failed"));
		/* The device is named once; two sessions share its cores. */
		g_autofree char *using = g_strdup_printf ("using CPU (%u thread", MAX (g_get_num_processors () / lanes, 1));
		g_assert_nonnull (strstr (r.err, using));
		g_assert_null (strstr (r.err, " + "));
		const char *at = r.err;
		for (int i = 0; i < N; i++) {
			g_autofree char *line = g_strdup_printf ("[%d/%d] %s/p%d.%s", i + 1, N, in, i, i % 2 ? "png" : "jpg");
			at = strstr (at, line);
			if (!at)
				g_error ("no “%s” after the previous photo's line in: %s", line, r.err);
			const char *end = strchr (at, '\n');
			g_autofree char *text = g_strndup (at, (gsize) (end - at));
			if (i == 3)
				g_assert_nonnull (strstr (text, "not an image"));
			else if (i == 6)
				g_assert_nonnull (strstr (text, "truncated"));
			else
				g_assert_nonnull (strstr (text, "→"));
		}
		g_free (r.err);
		GHashTable *files = folder_contents (out);
		g_assert_cmpuint (g_hash_table_size (files), ==, N - 2);
		if (!first) {
			first = files;
			continue;
		}
		GHashTableIter it;
		gpointer name, bytes;
		g_hash_table_iter_init (&it, first);
		while (g_hash_table_iter_next (&it, &name, &bytes)) {
			GBytes *other = g_hash_table_lookup (files, name);
			if (!other || !g_bytes_equal (bytes, other))
				g_error ("%s differs between one lane and two", (const char *) name);
		}
		g_hash_table_unref (files);
	}
}

/* cuda:all fails as cuda does when no GPU is usable, and runs where cuda runs; a GPU number
 * past the last is refused with the library's reason; a misspelt one is a usage error. */
static void
test_devices (void)
{
	g_autofree char *photo = small_photo ("devices.jpg", 40, 30), *out = path_in ("devices-out.png");
	run_result cuda = run_cli ("--device", "cuda", photo, "-o", out, NULL);
	g_unlink (out);
	run_result all = run_cli ("--device", "cuda:all", photo, "-o", out, NULL);
	if (cuda.status == 3) {
		g_assert_cmpint (all.status, ==, 3);
		g_assert_nonnull (strstr (all.err, "Could not use the GPU: "));
		g_assert_cmpstr (all.err, ==, cuda.err);   /* the same reason, in the same words */
		assert_no_output (out);
	} else {
		/* A folder over every GPU: the same bytes as on the first (a GPU past the first
		 * whose kernels were never given their shared memory failed every photo). */
		g_assert_cmpint (cuda.status, ==, 0);
		g_assert_cmpint (all.status, ==, 0);
		g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
		g_unlink (out);
		g_autofree char *in = path_in ("devices-in"), *one = path_in ("devices-one"), *every = path_in ("devices-all");
		g_mkdir (in, 0755);
		for (int i = 0; i < 8; i++) {
			g_autofree char *name = g_strdup_printf ("devices-in/p%d.jpg", i);
			g_autofree char *made = small_photo (name, 300 + 20 * i, 200 + 10 * i);
		}
		run_result r = run_cli ("--device", "cuda", "--output", "mask", in, "--output-dir", one, NULL);
		g_assert_cmpint (r.status, ==, 0);
		g_free (r.err);
		r = run_cli ("--device", "cuda:all", "--output", "mask", in, "--output-dir", every, NULL);
		g_assert_cmpint (r.status, ==, 0);
		g_free (r.err);
		g_autoptr (GHashTable) a = folder_contents (one), b = folder_contents (every);
		g_assert_cmpuint (g_hash_table_size (a), ==, 8);
		g_assert_cmpuint (g_hash_table_size (b), ==, 8);
		GHashTableIter it;
		gpointer name, bytes;
		g_hash_table_iter_init (&it, a);
		while (g_hash_table_iter_next (&it, &name, &bytes))
			if (!g_bytes_equal (bytes, g_hash_table_lookup (b, name)))
				g_error ("%s differs between cuda and cuda:all", (const char *) name);
	}
	g_free (cuda.err);
	g_free (all.err);
	run_result far = run_cli ("--device", "cuda:99999", photo, "-o", out, NULL);
	g_assert_cmpint (far.status, ==, 3);
	g_assert_nonnull (strstr (far.err, "Could not use the GPU: "));
	g_free (far.err);
	assert_no_output (out);
	static const char *const bad[] = { "cuda:al", "cuda:ALL", "cuda:all:0", "all" };
	for (gsize i = 0; i < G_N_ELEMENTS (bad); i++) {
		run_result r = run_cli ("--device", bad[i], photo, "-o", out, NULL);
		g_assert_cmpint (r.status, ==, 2);
		g_assert_nonnull (strstr (r.err, "cuda:all"));   /* the message names the choices */
		g_free (r.err);
	}
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
	g_test_add_func ("/cli/folder-like-lone", test_folder_like_lone);
	g_test_add_func ("/cli/exif-orientation", test_exif_orientation);
	g_test_add_func ("/cli/lying-down", test_lying_down);
	g_test_add_func ("/cli/bad-inputs", test_bad_inputs);
	g_test_add_func ("/cli/model-files", test_model_files);
	g_test_add_func ("/cli/outputs-never-replace-inputs", test_outputs_never_replace_inputs);
	g_test_add_func ("/cli/existing-outputs", test_existing_outputs);
	g_test_add_func ("/cli/signals", test_signals);
	g_test_add_func ("/cli/names-and-numbers", test_names_and_numbers);
	g_test_add_func ("/cli/output-names", test_output_names);
	g_test_add_func ("/cli/lanes", test_lanes);
	g_test_add_func ("/cli/devices", test_devices);
	int ret = g_test_run ();
	g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
	if (system (cmd) != 0)
		g_warning ("could not remove %s", tmpdir);
	return ret;
}
