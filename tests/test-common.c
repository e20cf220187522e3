/* SPDX-License-Identifier: Apache-2.0 */
/* The glue every program shares (common/): the image types read, and the desktop file that
 * announces them; how results are named; pixbufs as the library's images; the library's
 * size limit in words; saving through GIO to any GFile. */
#include "bd-image-io.h"
#include "bd-image-types.h"
#include "bd-library.h"
#include "bd-output-name.h"
#include "bd-pixbuf.h"

#include <glib/gstdio.h>
#include <string.h>

static char *tmpdir;

/* The desktop file claims exactly the types the programs read: a file manager must not offer
 * Backdrop for a photo it then refuses (it claimed AVIF, HEIF, BMP and GIF). Found by its
 * extension, so that renaming the application ID keeps the test. */
static void
test_desktop_file_types (void)
{
	g_autofree char *data = g_build_filename (g_getenv ("BACKDROP_SOURCE_ROOT"), "data", NULL);
	g_autoptr (GDir) dir = g_dir_open (data, 0, NULL);
	g_assert_nonnull (dir);
	guint checked = 0;
	for (const char *name; (name = g_dir_read_name (dir));) {
		if (!g_str_has_suffix (name, ".desktop.in"))
			continue;
		g_autofree char *path = g_build_filename (data, name, NULL);
		g_autoptr (GKeyFile) desktop = g_key_file_new ();
		g_autoptr (GError) error = NULL;
		g_assert_true (g_key_file_load_from_file (desktop, path, G_KEY_FILE_NONE, &error));
		g_assert_no_error (error);
		gsize n_claimed = 0, n_types = 0;
		g_auto (GStrv) claimed = g_key_file_get_string_list (desktop, "Desktop Entry", "MimeType", &n_claimed,
		                                                       &error);
		g_assert_no_error (error);
		const BdImageType *types = bd_image_types (&n_types);
		for (gsize i = 0; i < n_claimed; i++) {
			gboolean read = FALSE;
			for (gsize t = 0; t < n_types; t++)
				read |= g_str_equal (claimed[i], types[t].mime_type);
			if (!read)
				g_error ("%s claims %s, which Backdrop does not read", name, claimed[i]);
		}
		for (gsize t = 0; t < n_types; t++)
			if (!g_strv_contains ((const char *const *) claimed, types[t].mime_type))
				g_error ("%s does not claim %s, which Backdrop reads", name, types[t].mime_type);
		checked++;
	}
	g_assert_cmpuint (checked, ==, 1);
}

static void
test_type_names (void)
{
	const struct { const char *name; gboolean read; } cases[] = {
		{ "a.jpg", TRUE }, { "A.JPEG", TRUE }, { "b.Jpe", TRUE }, { "c.png", TRUE }, { "d.webp", TRUE },
		{ "e.tif", TRUE }, { "f.TIFF", TRUE }, { "Q.TIF.JPEG", TRUE }, { "g.avif", FALSE }, { "h.heic", FALSE },
		{ "i.bmp", FALSE }, { "j.gif", FALSE }, { "a.jpg.txt", FALSE }, { ".png", FALSE }, { "png", FALSE },
	};
	for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
		if (bd_image_types_match_name (cases[i].name) != cases[i].read)
			g_error ("%s: read %d, expected %d", cases[i].name, !cases[i].read, cases[i].read);
}

static gboolean
in_table (const char *name, gpointer data)
{
	return g_hash_table_contains (data, name);
}

/* STEM-KIND.EXT, then -2, -3 while taken (bd-output-name.h). */
static void
test_output_name (void)
{
	const struct { const char *source, *kind, *ext, *want; } cases[] = {
		{ "portrait.jpg", BD_OUTPUT_CUTOUT, "png", "portrait-cutout.png" },
		{ "/photos/2024/a.b.jpeg", BD_OUTPUT_MASK, "png", "a.b-mask.png" },
		{ "noext", BD_OUTPUT_COMPOSITE, "jpg", "noext-composite.jpg" },
		{ ".hidden", BD_OUTPUT_CUTOUT, "webp", ".hidden-cutout.webp" },
		{ "", BD_OUTPUT_CUTOUT, "png", "photo-cutout.png" },
		{ NULL, BD_OUTPUT_CUTOUT, "png", "photo-cutout.png" },
	};
	for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
		g_autofree char *got = bd_output_name (cases[i].source, cases[i].kind, cases[i].ext, NULL, NULL);
		g_assert_cmpstr (got, ==, cases[i].want);
	}
	g_autoptr (GHashTable) taken = g_hash_table_new (g_str_hash, g_str_equal);
	g_hash_table_add (taken, "a-cutout.png");
	g_hash_table_add (taken, "a-cutout-2.png");
	g_autofree char *third = bd_output_name ("a.png", BD_OUTPUT_CUTOUT, "png", in_table, taken);
	g_assert_cmpstr (third, ==, "a-cutout-3.png");
	g_autofree char *free_name = bd_output_name ("a.png", BD_OUTPUT_MASK, "png", in_table, taken);
	g_assert_cmpstr (free_name, ==, "a-mask.png");
}

static void
test_pixbuf_view (void)
{
	g_autoptr (GdkPixbuf) rgb = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 5, 3);
	g_autoptr (GdkPixbuf) rgba = gdk_pixbuf_new (GDK_COLORSPACE_RGB, TRUE, 8, 7, 2);
	bd_image v;
	g_assert_true (bd_pixbuf_view (rgb, &v, NULL));
	g_assert_true (v.pixels == gdk_pixbuf_read_pixels (rgb));
	g_assert_cmpuint (v.width, ==, 5);
	g_assert_cmpuint (v.height, ==, 3);
	g_assert_cmpuint (v.stride, ==, (gsize) gdk_pixbuf_get_rowstride (rgb));
	g_assert_cmpint (v.format, ==, BD_PIXEL_RGB8);
	g_assert_true (bd_pixbuf_view (rgba, &v, NULL));
	g_assert_cmpint (v.format, ==, BD_PIXEL_RGBA8);
	g_assert_cmpuint (v.width, ==, 7);

	/* A mask with rows wider than the image: each pixel grey, opaque, no alpha channel. */
	guint8 alpha[3 * 8];
	for (gsize i = 0; i < sizeof alpha; i++)
		alpha[i] = (guint8) (i * 10);
	g_autoptr (GError) error = NULL;
	g_autoptr (GdkPixbuf) mask = bd_pixbuf_new_mask (alpha, 5, 3, 8, &error);
	g_assert_no_error (error);
	g_assert_false (gdk_pixbuf_get_has_alpha (mask));
	const guint8 *m = gdk_pixbuf_read_pixels (mask);
	int ms = gdk_pixbuf_get_rowstride (mask);
	for (int y = 0; y < 3; y++)
		for (int x = 0; x < 5; x++)
			for (int c = 0; c < 3; c++)
				g_assert_cmpuint (m[y * ms + x * 3 + c], ==, alpha[y * 8 + x]);

	g_assert_null (bd_pixbuf_new_result (0, 4, &error));
	g_assert_error (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY);
}

/* One message for a photo over the limit, whoever reads it (CLI, app, plug-in). */
static void
test_size_limit (void)
{
	g_autoptr (GError) error = NULL;
	g_assert_true (bd_library_check_size ("a", 12000, 10000, &error));   /* 120 MP exactly */
	g_assert_no_error (error);
	g_assert_false (bd_library_check_size ("big.tif", 11000, 11000, &error));
	g_assert_error (error, BD_LIBRARY_ERROR, BD_ERR_TOO_LARGE);
	g_assert_cmpstr (error->message, ==, "“big.tif” is 11000×11000 pixels; Backdrop handles photos up to 120 megapixels.");
}

/* A GFile that is not native, as a GVfs location (sftp://, smb://) is: it has no path, so
 * bd_image_save_file takes its GIO way, and it forwards the calls that way makes to a local
 * file, so that the result can be checked. */
#define TEST_TYPE_REMOTE_FILE (test_remote_file_get_type ())
G_DECLARE_FINAL_TYPE (TestRemoteFile, test_remote_file, TEST, REMOTE_FILE, GObject)

struct _TestRemoteFile {
	GObject       parent_instance;
	GFile        *inner;
	GCancellable *cancel_on_open;   /* cancelled once a stream is open: a failure mid-write */
};

static void test_remote_file_iface_init (GFileIface *iface);
G_DEFINE_FINAL_TYPE_WITH_CODE (TestRemoteFile, test_remote_file, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_FILE, test_remote_file_iface_init))

static GFile *
remote_new (GFile *inner)
{
	TestRemoteFile *f = g_object_new (TEST_TYPE_REMOTE_FILE, NULL);
	f->inner = g_object_ref (inner);
	return G_FILE (f);
}

#define INNER(file) (TEST_REMOTE_FILE (file)->inner)

static GFile *remote_dup (GFile *file) { return remote_new (INNER (file)); }
static guint remote_hash (GFile *file) { return g_file_hash (INNER (file)); }
static gboolean remote_equal (GFile *a, GFile *b) { return g_file_equal (INNER (a), INNER (b)); }
static gboolean remote_is_native (GFile *file) { return FALSE; }
static char *remote_get_path (GFile *file) { return NULL; }
static char *remote_get_basename (GFile *file) { return g_file_get_basename (INNER (file)); }
static char *remote_get_uri (GFile *file)
{
	g_autofree char *path = g_file_get_path (INNER (file));
	return g_strconcat ("test-remote://", path, NULL);
}
static char *remote_get_parse_name (GFile *file) { return remote_get_uri (file); }
static char *remote_get_uri_scheme (GFile *file) { return g_strdup ("test-remote"); }
static gboolean remote_has_uri_scheme (GFile *file, const char *scheme) { return !g_strcmp0 (scheme, "test-remote"); }

static GFileInputStream *
remote_read (GFile *file, GCancellable *cancellable, GError **error)
{
	return g_file_read (INNER (file), cancellable, error);
}

static GFileOutputStream *
remote_create (GFile *file, GFileCreateFlags flags, GCancellable *cancellable, GError **error)
{
	GFileOutputStream *out = g_file_create (INNER (file), flags, cancellable, error);
	if (out && TEST_REMOTE_FILE (file)->cancel_on_open)
		g_cancellable_cancel (TEST_REMOTE_FILE (file)->cancel_on_open);
	return out;
}

static GFileOutputStream *
remote_replace (GFile *file, const char *etag, gboolean backup, GFileCreateFlags flags, GCancellable *cancellable,
                GError **error)
{
	GFileOutputStream *out = g_file_replace (INNER (file), etag, backup, flags, cancellable, error);
	if (out && TEST_REMOTE_FILE (file)->cancel_on_open)
		g_cancellable_cancel (TEST_REMOTE_FILE (file)->cancel_on_open);
	return out;
}

static gboolean
remote_delete (GFile *file, GCancellable *cancellable, GError **error)
{
	return g_file_delete (INNER (file), cancellable, error);
}

static void
test_remote_file_finalize (GObject *object)
{
	g_clear_object (&TEST_REMOTE_FILE (object)->inner);
	g_clear_object (&TEST_REMOTE_FILE (object)->cancel_on_open);
	G_OBJECT_CLASS (test_remote_file_parent_class)->finalize (object);
}

static void
test_remote_file_class_init (TestRemoteFileClass *klass)
{
	G_OBJECT_CLASS (klass)->finalize = test_remote_file_finalize;
}

static void
test_remote_file_init (TestRemoteFile *self)
{
}

static void
test_remote_file_iface_init (GFileIface *iface)
{
	iface->dup = remote_dup;
	iface->hash = remote_hash;
	iface->equal = remote_equal;
	iface->is_native = remote_is_native;
	iface->get_path = remote_get_path;
	iface->get_basename = remote_get_basename;
	iface->get_uri = remote_get_uri;
	iface->get_parse_name = remote_get_parse_name;
	iface->get_uri_scheme = remote_get_uri_scheme;
	iface->has_uri_scheme = remote_has_uri_scheme;
	iface->read_fn = remote_read;
	iface->create = remote_create;
	iface->replace = remote_replace;
	iface->delete_file = remote_delete;
}

/* Files in @dir other than the ones named. */
static guint
count_files (const char *dir)
{
	g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
	guint n = 0;
	while (d && g_dir_read_name (d))
		n++;
	return n;
}

/* The GIO way, for files that are not local: written and read back; an existing file is
 * refused without BD_SAVE_REPLACE, and replaced (its permissions kept) with it; a cancelled
 * save leaves the old file as it was, and a new file not at all. */
static void
test_save_remote (void)
{
	g_autofree char *dir = g_build_filename (tmpdir, "remote", NULL);
	g_assert_cmpint (g_mkdir (dir, 0755), ==, 0);
	g_autofree char *path = g_build_filename (dir, "r-cutout.png", NULL);
	g_autoptr (GFile) local = g_file_new_for_path (path);
	g_autoptr (GFile) remote = remote_new (local);
	g_autoptr (GdkPixbuf) first = gdk_pixbuf_new (GDK_COLORSPACE_RGB, TRUE, 8, 12, 9);
	g_autoptr (GdkPixbuf) second = gdk_pixbuf_new (GDK_COLORSPACE_RGB, TRUE, 8, 20, 5);
	gdk_pixbuf_fill (first, 0x336699ff);
	gdk_pixbuf_fill (second, 0x99663380);
	g_autoptr (GError) error = NULL;

	g_assert_true (bd_image_save_file (first, remote, 90, BD_SAVE_NO_REPLACE, NULL, &error));
	g_assert_no_error (error);
	g_autoptr (GdkPixbuf) back = bd_image_load_file (remote, NULL, &error);
	g_assert_no_error (error);
	g_assert_cmpint (gdk_pixbuf_get_width (back), ==, 12);

	g_assert_false (bd_image_save_file (second, remote, 90, BD_SAVE_NO_REPLACE, NULL, &error));
	g_assert_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS);
	g_assert_nonnull (strstr (error->message, "test-remote://"));
	g_clear_error (&error);

	g_assert_cmpint (g_chmod (path, 0600), ==, 0);
	g_assert_true (bd_image_save_file (second, remote, 90, BD_SAVE_REPLACE, NULL, &error));
	g_assert_no_error (error);
	GStatBuf st;
	g_assert_cmpint (g_stat (path, &st), ==, 0);
	g_assert_cmpint (st.st_mode & 0777, ==, 0600);
	g_autoptr (GdkPixbuf) replaced = bd_image_load_file (remote, NULL, &error);
	g_assert_cmpint (gdk_pixbuf_get_width (replaced), ==, 20);

	/* Cancelled once the stream is open, as a failure mid-write would stop it. */
	g_autofree char *before = NULL, *after = NULL;
	gsize before_len, after_len;
	g_assert_true (g_file_get_contents (path, &before, &before_len, NULL));
	GCancellable *cancel = g_cancellable_new ();
	TEST_REMOTE_FILE (remote)->cancel_on_open = g_object_ref (cancel);
	g_assert_false (bd_image_save_file (first, remote, 90, BD_SAVE_REPLACE, cancel, &error));
	g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error (&error);
	g_assert_true (g_file_get_contents (path, &after, &after_len, NULL));
	g_assert_cmpmem (before, before_len, after, after_len);

	g_autofree char *never_path = g_build_filename (dir, "never-cutout.png", NULL);
	g_autoptr (GFile) never_local = g_file_new_for_path (never_path);
	g_autoptr (GFile) never = remote_new (never_local);
	g_object_unref (cancel);
	cancel = g_cancellable_new ();
	TEST_REMOTE_FILE (never)->cancel_on_open = g_object_ref (cancel);
	g_assert_false (bd_image_save_file (first, never, 90, BD_SAVE_NO_REPLACE, cancel, &error));
	g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
	g_clear_error (&error);
	g_object_unref (cancel);
	g_assert_false (g_file_test (never_path, G_FILE_TEST_EXISTS));
	/* Nothing else in the folder: no temporary file of GIO's either. */
	g_assert_cmpuint (count_files (dir), ==, 1);
	g_unlink (path);
	g_rmdir (dir);
}

/* Saving to a GFile: a local one through the temporary file (a mask as 8-bit greyscale PNG),
 * and one that no GVfs backend serves fails with GIO's reason, leaving nothing. */
static void
test_save_file (void)
{
	guint8 alpha[16 * 8];
	for (gsize i = 0; i < sizeof alpha; i++)
		alpha[i] = (guint8) i;
	g_autoptr (GError) error = NULL;
	g_autoptr (GdkPixbuf) mask = bd_pixbuf_new_mask (alpha, 16, 8, 16, &error);
	g_autofree char *path = g_build_filename (tmpdir, "m-mask.png", NULL);
	g_autoptr (GFile) file = g_file_new_for_path (path);
	g_assert_true (bd_image_save_file (mask, file, 90, BD_SAVE_MASK, NULL, &error));
	g_assert_no_error (error);
	g_autofree char *png = NULL;
	gsize len = 0;
	g_assert_true (g_file_get_contents (path, &png, &len, NULL));
	g_assert_cmpuint (len, >, 26);
	g_assert_cmpuint ((guint8) png[24], ==, 8);   /* IHDR: bit depth */
	g_assert_cmpuint ((guint8) png[25], ==, 0);   /* IHDR: colour type greyscale */
	g_autoptr (GdkPixbuf) back = bd_image_load_file (file, NULL, &error);
	g_assert_no_error (error);
	g_assert_cmpuint (gdk_pixbuf_read_pixels (back)[gdk_pixbuf_get_rowstride (back) * 3 + 3 * 5], ==, 3 * 16 + 5);

	g_autoptr (GFile) nowhere = g_file_new_for_uri ("backdrop-test-nowhere:///m-mask.png");
	g_assert_false (bd_image_save_file (mask, nowhere, 90, BD_SAVE_REPLACE, NULL, &error));
	g_assert_nonnull (error);
	g_test_message ("%s", error->message);
	g_assert_nonnull (strstr (error->message, "backdrop-test-nowhere:///m-mask.png"));
	g_clear_error (&error);
	g_assert_false (bd_image_save_file (mask, nowhere, 90, BD_SAVE_NO_REPLACE, NULL, &error));
	g_assert_nonnull (error);
}

/* Device names: cuda:N by number, cuda:all for every GPU only where a program asks for it. */
static void
test_device_names (void)
{
	const struct { const char *text; gboolean ok; bd_device device; int index; gboolean all; } cases[] = {
		{ "auto", TRUE, BD_DEVICE_AUTO, 0, FALSE }, { "cpu", TRUE, BD_DEVICE_CPU, 0, FALSE },
		{ "cuda", TRUE, BD_DEVICE_CUDA, 0, FALSE }, { "gpu", TRUE, BD_DEVICE_CUDA, 0, FALSE },
		{ "cuda:0", TRUE, BD_DEVICE_CUDA, 0, FALSE }, { "cuda:3", TRUE, BD_DEVICE_CUDA, 3, FALSE },
		{ "cuda:all", TRUE, BD_DEVICE_CUDA, 0, TRUE }, { "cuda:", FALSE, 0, 0, FALSE }, { "cuda:-1", FALSE, 0, 0, FALSE },
		{ "cuda:all0", FALSE, 0, 0, FALSE }, { "cuda:ALL", FALSE, 0, 0, FALSE }, { "all", FALSE, 0, 0, FALSE },
		{ "cuda:99999999999", FALSE, 0, 0, FALSE },
		{ NULL, FALSE, 0, 0, FALSE },
	};
	for (gsize i = 0; i < G_N_ELEMENTS (cases); i++) {
		bd_device device = BD_DEVICE_CPU;
		int index = -1;
		gboolean all = TRUE;
		gboolean ok = bd_library_parse_devices (cases[i].text, &device, &index, &all);
		if (ok != cases[i].ok)
			g_error ("%s: parsed %d, expected %d", cases[i].text, ok, cases[i].ok);
		if (ok) {
			g_assert_cmpint (device, ==, cases[i].device);
			g_assert_cmpint (index, ==, cases[i].index);
			g_assert_cmpint (all, ==, cases[i].all);
		}
		/* The one-device parser (the video tools) takes the same names but cuda:all. */
		g_assert_cmpint (bd_library_parse_device (cases[i].text, &device, &index), ==, ok && !cases[i].all);
	}
}

/* Lanes on the CPU share its threads; cuda:all without a usable GPU fails as cuda does, with
 * the GPU's reason, and leaves nothing open. */
static void
test_new_sessions (void)
{
	g_autofree char *path = g_build_filename (g_getenv ("BACKDROP_SOURCE_ROOT"), "data", "backdrop-portrait.bdm", NULL);
	if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
		g_test_skip ("the shipped model is absent");
		return;
	}
	bd_model *model = NULL;
	g_autoptr (GError) error = NULL;
	g_assert_true (bd_library_open_model (path, &model, &error));
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	bd_session **sessions = NULL;
	guint n = 0;
	g_assert_true (bd_library_new_sessions (model, &o, FALSE, 2, &sessions, &n, &error));
	g_assert_no_error (error);
	g_assert_cmpuint (n, ==, 2);
	g_assert_nonnull (sessions[0]);
	g_assert_nonnull (sessions[1]);
	g_assert_null (sessions[2]);
	g_assert_true (sessions[0] != sessions[1]);
	g_autofree char *want = g_strdup_printf ("CPU (%u thread", MAX (g_get_num_processors () / 2, 1));
	g_assert_true (g_str_has_prefix (bd_session_device_description (sessions[1]), want));
	bd_library_free_sessions (sessions);

	if (bd_device_count (BD_DEVICE_CUDA) == 0) {
		g_assert_false (bd_library_new_sessions (model, &o, TRUE, 1, &sessions, &n, &error));
		g_assert_null (sessions);
		g_assert_cmpuint (n, ==, 0);
		g_assert_nonnull (error);
		g_test_message ("%s", error->message);
		g_assert_true (g_str_has_prefix (error->message, "Could not use the GPU: "));
	} else {
		g_assert_true (bd_library_new_sessions (model, &o, TRUE, 1, &sessions, &n, &error));
		g_assert_cmpuint (n, ==, (guint) bd_device_count (BD_DEVICE_CUDA));
		for (guint i = 0; i < n; i++)
			g_assert_cmpint (bd_session_device (sessions[i]), ==, BD_DEVICE_CUDA);
		bd_library_free_sessions (sessions);
		/* Two lanes a card: twice the sessions. */
		g_assert_true (bd_library_new_sessions (model, &o, TRUE, 2, &sessions, &n, &error));
		g_assert_cmpuint (n, ==, 2 * (guint) bd_device_count (BD_DEVICE_CUDA));
		for (guint i = 0; i < n; i++)
			g_assert_cmpint (bd_session_device (sessions[i]), ==, BD_DEVICE_CUDA);
		bd_library_free_sessions (sessions);
	}
	bd_model_free (model);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp ("backdrop-test-common-XXXXXX", NULL);
	g_test_add_func ("/common/image-types/desktop-file", test_desktop_file_types);
	g_test_add_func ("/common/image-types/names", test_type_names);
	g_test_add_func ("/common/output-name", test_output_name);
	g_test_add_func ("/common/pixbuf/view", test_pixbuf_view);
	g_test_add_func ("/common/library/size-limit", test_size_limit);
	g_test_add_func ("/common/library/device-names", test_device_names);
	g_test_add_func ("/common/library/new-sessions", test_new_sessions);
	g_test_add_func ("/common/image-io/save-file", test_save_file);
	g_test_add_func ("/common/image-io/save-remote", test_save_remote);
	int status = g_test_run ();
	g_autoptr (GDir) d = g_dir_open (tmpdir, 0, NULL);
	for (const char *n; d && (n = g_dir_read_name (d));) {
		g_autofree char *p = g_build_filename (tmpdir, n, NULL);
		g_unlink (p);
	}
	g_rmdir (tmpdir);
	return status;
}
