/* SPDX-License-Identifier: Apache-2.0 */
/* The batch engine (common/bd-batch-run.h, and its bd-decode-ahead.h) without a network: compute inverts each photo,
 * slowly and unevenly so that lanes finish out of order. Every photo is reported once, in
 * input order, broken ones with their own error; every good one is written, and correctly;
 * no more photos are in flight than the bound; a cancel leaves only whole files. */
#include "bd-batch-run.h"
#include "bd-decode-ahead.h"
#include "bd-image-io.h"

#include <glib/gstdio.h>
#include <string.h>

static char *tmpdir;

/* Photo @i's pixels: a pattern of its own, so that a result saved under another photo's
 * name shows. */
static GdkPixbuf *
pattern (guint i, int w, int h)
{
	GdkPixbuf *p = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, w, h);
	guint8 *px = gdk_pixbuf_get_pixels (p);
	int stride = gdk_pixbuf_get_rowstride (p);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w * 3; x++)
			px[y * stride + x] = (guint8) ((x * 7 + y * 13 + i * 29) ^ ((x * y + i) * 2654435761u >> 13));
	return p;
}

typedef struct {
	const char   *out_dir;
	GCancellable *cancel;
	guint         cancel_after;   /* cancel when this many are reported; 0: never */
	guint         refuse;         /* prepare fails for this index (G_MAXUINT: none) */
	GMutex        lock;
	GHashTable   *lanes_used;     /* session pointers compute saw */
	guint         computing, most_computing;
	guint         prepared, reported, most_in_flight;
	GArray       *order;          /* reported indexes */
	GPtrArray    *errors;         /* per report: the message, or NULL */
	GPtrArray    *outputs;        /* per report: the output */
} run;

static gboolean
prepare (BdBatchPhoto *photo, gpointer data, GError **error)
{
	run *r = data;
	r->prepared++;
	r->most_in_flight = MAX (r->most_in_flight, r->prepared - r->reported);
	if (photo->index == r->refuse) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS, "refused %u", photo->index);
		return FALSE;
	}
	g_autofree char *base = g_path_get_basename (photo->input);
	photo->output = g_strdup_printf ("%s/%s-out.png", r->out_dir, base);
	photo->flags = BD_SAVE_NO_REPLACE;
	return TRUE;
}

static GdkPixbuf *
invert (bd_session *session, GdkPixbuf *pixels, const BdBatchPhoto *photo, gpointer data, GError **error)
{
	run *r = data;
	g_mutex_lock (&r->lock);
	g_hash_table_add (r->lanes_used, session);
	r->computing++;
	r->most_computing = MAX (r->most_computing, r->computing);
	g_mutex_unlock (&r->lock);
	/* Uneven work: photo 1 is slow, so that photo 2 on another lane finishes first. */
	g_usleep (photo->index % 3 == 1 ? 60000 : 5000);
	GdkPixbuf *result = gdk_pixbuf_add_alpha (pixels, FALSE, 0, 0, 0);
	guint8 *px = gdk_pixbuf_get_pixels (result);
	gsize n = (gsize) gdk_pixbuf_get_rowstride (result) * (gsize) gdk_pixbuf_get_height (result);
	for (gsize i = 0; i < n; i++)
		if (i % 4 != 3)
			px[i] = 255 - px[i];
	g_mutex_lock (&r->lock);
	r->computing--;
	g_mutex_unlock (&r->lock);
	return result;
}

static void
report (const BdBatchPhoto *photo, const GError *error, const BdBatchProgress *progress, gpointer data)
{
	run *r = data;
	r->reported++;
	g_assert_cmpuint (progress->reported, ==, r->reported);
	g_assert_cmpuint (progress->total, >, photo->index);
	g_assert_cmpfloat (progress->photos_per_s, >=, 0);
	g_array_append_val (r->order, photo->index);
	g_ptr_array_add (r->errors, error ? g_strdup (error->message) : NULL);
	g_ptr_array_add (r->outputs, g_strdup (photo->output));
	if (r->cancel_after && r->reported == r->cancel_after)
		g_cancellable_cancel (r->cancel);
}

static void
run_init (run *r, const char *out_dir)
{
	memset (r, 0, sizeof *r);
	r->out_dir = out_dir;
	r->refuse = G_MAXUINT;
	r->cancel = g_cancellable_new ();
	g_mutex_init (&r->lock);
	r->lanes_used = g_hash_table_new (NULL, NULL);
	r->order = g_array_new (FALSE, FALSE, sizeof (guint));
	r->errors = g_ptr_array_new_with_free_func (g_free);
	r->outputs = g_ptr_array_new_with_free_func (g_free);
	g_mkdir (out_dir, 0755);
}

static void
run_clear (run *r)
{
	g_object_unref (r->cancel);
	g_mutex_clear (&r->lock);
	g_hash_table_unref (r->lanes_used);
	g_array_unref (r->order);
	g_ptr_array_unref (r->errors);
	g_ptr_array_unref (r->outputs);
}

static const BdBatchFuncs funcs = { .prepare = prepare, .compute = invert, .report = report };

/* @n inputs in a folder of their own; those in @broken ("text" or "half") unreadable. */
static GPtrArray *
make_inputs (const char *name, guint n, const char *const *broken, int w, int h)
{
	g_autofree char *dir = g_build_filename (tmpdir, name, NULL);
	g_mkdir (dir, 0755);
	GPtrArray *inputs = g_ptr_array_new_with_free_func (g_free);
	for (guint i = 0; i < n; i++) {
		char *path = g_strdup_printf ("%s/p%03u.png", dir, i);
		g_autoptr (GdkPixbuf) p = pattern (i, w, h);
		gchar *png = NULL;
		gsize len = 0;
		g_assert_true (gdk_pixbuf_save_to_buffer (p, &png, &len, "png", NULL, NULL));
		if (broken && broken[i] && !strcmp (broken[i], "text"))
			g_assert_true (g_file_set_contents (path, "not a photo at all", -1, NULL));
		else if (broken && broken[i] && !strcmp (broken[i], "half"))
			g_assert_true (g_file_set_contents (path, png, (gssize) len / 2, NULL));
		else
			g_assert_true (g_file_set_contents (path, png, (gssize) len, NULL));
		g_free (png);
		g_ptr_array_add (inputs, path);
	}
	return inputs;
}

/* The folder @dir holds no temporary file, and only whole images. */
static guint
count_whole_files (const char *dir)
{
	g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
	guint n = 0;
	for (const char *name; d && (name = g_dir_read_name (d));) {
		if (g_str_has_prefix (name, ".backdrop-tmp-"))
			g_error ("left behind: %s/%s", dir, name);
		g_autofree char *path = g_build_filename (dir, name, NULL);
		g_autoptr (GError) error = NULL;
		g_autoptr (GdkPixbuf) p = gdk_pixbuf_new_from_file (path, &error);
		if (!p)
			g_error ("%s is not whole: %s", path, error->message);
		n++;
	}
	return n;
}

/* Broken files in the middle, one photo refused before decoding; 1 and 3 lanes alike. */
static void
test_order_and_errors (void)
{
	enum { N = 14 };
	const char *broken[N] = { [3] = "text", [4] = "half", [9] = "half" };
	g_autoptr (GPtrArray) inputs = make_inputs ("order-in", N, broken, 64, 48);
	const guint lanes[] = { 1, 3 };
	for (gsize k = 0; k < G_N_ELEMENTS (lanes); k++) {
		g_autofree char *out = g_strdup_printf ("%s/order-out-%u", tmpdir, lanes[k]);
		run r;
		run_init (&r, out);
		r.refuse = 7;
		bd_session *sessions[3] = { (bd_session *) &sessions[0], (bd_session *) &sessions[1],
		                            (bd_session *) &sessions[2] };
		BdBatchOptions options = { .sessions = sessions, .lanes = lanes[k], .look_ahead = 1, .encoders = 1 };
		bd_batch_run ((const char *const *) inputs->pdata, N, &options, &funcs, &r, r.cancel);

		g_assert_cmpuint (r.order->len, ==, N);
		for (guint i = 0; i < N; i++) {
			g_assert_cmpuint (g_array_index (r.order, guint, i), ==, i);
			const char *message = r.errors->pdata[i];
			if (i == 3 || i == 4 || i == 9 || i == 7) {
				g_assert_nonnull (message);
				g_test_message ("photo %u: %s", i, message);
				g_autofree char *name = g_path_get_basename (inputs->pdata[i]);
				if (i == 7)
					g_assert_cmpstr (message, ==, "refused 7");
				else
					g_assert_nonnull (strstr (message, name));   /* its own error */
				if (r.outputs->pdata[i])
					g_assert_false (g_file_test (r.outputs->pdata[i], G_FILE_TEST_EXISTS));
				continue;
			}
			g_assert_null (message);
			/* Written, under its own name, with its own pixels inverted. */
			g_autoptr (GdkPixbuf) got = gdk_pixbuf_new_from_file (r.outputs->pdata[i], NULL);
			g_assert_nonnull (got);
			g_autoptr (GdkPixbuf) want = pattern (i, 64, 48);
			const guint8 *a = gdk_pixbuf_read_pixels (got), *b = gdk_pixbuf_read_pixels (want);
			for (int y = 0; y < 48; y++)
				for (int x = 0; x < 64; x++)
					for (int c = 0; c < 3; c++)
						g_assert_cmpuint (a[y * gdk_pixbuf_get_rowstride (got) + x * 4 + c], ==,
						                  255 - b[y * gdk_pixbuf_get_rowstride (want) + x * 3 + c]);
		}
		g_assert_cmpuint (count_whole_files (out), ==, N - 4);
		/* Lanes: each ran, side by side; never more photos in flight than the bound. */
		g_assert_cmpuint (g_hash_table_size (r.lanes_used), ==, lanes[k]);
		g_assert_cmpuint (r.most_computing, ==, lanes[k]);
		g_assert_cmpuint (r.most_in_flight, <=, lanes[k] + 1 + 1);
		g_assert_cmpuint (r.most_in_flight, >=, 2);   /* and decoding ahead did happen */
		run_clear (&r);
	}
}

/* compute hands the photo on untouched; finish inverts it on an encoder's thread. */
static GdkPixbuf *
pass_on (bd_session *session, GdkPixbuf *pixels, const BdBatchPhoto *photo, gpointer data, GError **error)
{
	return g_object_ref (pixels);
}

static GThread *main_thread;

static GdkPixbuf *
invert_later (GdkPixbuf *computed, const BdBatchPhoto *photo, gpointer data, GError **error)
{
	g_assert_true (g_thread_self () != main_thread);
	if (photo->index == 5) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "finish refused %u", photo->index);
		return NULL;
	}
	return invert (NULL, computed, photo, data, error);
}

/* A step on the encoders before each save (the CLI's cut-outs are composed there): its result
 * is what is saved, its failure is that photo's error, in order, with no file left; several
 * run at once. */
static void
test_finish (void)
{
	enum { N = 9 };
	static const BdBatchFuncs later = { .prepare = prepare, .compute = pass_on, .finish = invert_later,
	                                    .report = report };
	g_autoptr (GPtrArray) inputs = make_inputs ("finish-in", N, NULL, 64, 48);
	g_autofree char *out = g_build_filename (tmpdir, "finish-out", NULL);
	run r;
	run_init (&r, out);
	main_thread = g_thread_self ();
	BdBatchOptions options = { .lanes = 1, .look_ahead = 2, .encoders = 3 };
	bd_batch_run ((const char *const *) inputs->pdata, N, &options, &later, &r, r.cancel);

	g_assert_cmpuint (r.order->len, ==, N);
	for (guint i = 0; i < N; i++) {
		g_assert_cmpuint (g_array_index (r.order, guint, i), ==, i);
		if (i == 5) {
			g_assert_cmpstr (r.errors->pdata[i], ==, "finish refused 5");
			g_assert_false (g_file_test (r.outputs->pdata[i], G_FILE_TEST_EXISTS));
			continue;
		}
		g_assert_null (r.errors->pdata[i]);
		g_autoptr (GdkPixbuf) got = gdk_pixbuf_new_from_file (r.outputs->pdata[i], NULL);
		g_autoptr (GdkPixbuf) want = pattern (i, 64, 48);
		g_assert_nonnull (got);
		g_assert_true (gdk_pixbuf_get_has_alpha (got));
		const guint8 *a = gdk_pixbuf_read_pixels (got), *b = gdk_pixbuf_read_pixels (want);
		g_assert_cmpuint (a[0], ==, 255 - b[0]);
		g_assert_cmpuint (a[gdk_pixbuf_get_rowstride (got) * 47 + 63 * 4 + 2], ==,
		                  255 - b[gdk_pixbuf_get_rowstride (want) * 47 + 63 * 3 + 2]);
	}
	g_assert_cmpuint (count_whole_files (out), ==, N - 1);
	/* The slow photos' finishes overlapped: more than one ran at a time. */
	g_assert_cmpuint (r.most_computing, >=, 2);
	run_clear (&r);
}

/* Cancelled after the third report, with large results saving: the photos reported are the
 * first ones in order, each saved one is whole, the others are gone, no temporary file is
 * left, and photos no lane took up are not reported. */
static void
test_cancel (void)
{
	enum { N = 24 };
	g_autoptr (GPtrArray) inputs = make_inputs ("cancel-in", N, NULL, 1000, 750);
	g_autofree char *out = g_build_filename (tmpdir, "cancel-out", NULL);
	run r;
	run_init (&r, out);
	r.cancel_after = 3;
	bd_session *sessions[2] = { (bd_session *) &sessions[0], (bd_session *) &sessions[1] };
	BdBatchOptions options = { .sessions = sessions, .lanes = 2, .look_ahead = 2, .encoders = 2 };
	bd_batch_run ((const char *const *) inputs->pdata, N, &options, &funcs, &r, r.cancel);

	g_assert_cmpuint (r.order->len, >=, 3);
	g_assert_cmpuint (r.order->len, <=, 3 + 2 + 2 + 2);   /* at most the photos then in flight */
	guint saved = 0;
	for (guint i = 0; i < r.order->len; i++) {
		/* In order; after the cancel, a photo no lane took up may be missing. */
		guint index = g_array_index (r.order, guint, i);
		if (i < 3)
			g_assert_cmpuint (index, ==, i);
		else
			g_assert_cmpuint (index, >, g_array_index (r.order, guint, i - 1));
		const char *message = r.errors->pdata[i];
		gboolean exists = g_file_test (r.outputs->pdata[i], G_FILE_TEST_EXISTS);
		if (message)
			g_test_message ("photo %u: %s", i, message);
		g_assert_true (message ? !exists : exists);
		saved += exists;
		if (i >= 3 && message)
			g_assert_nonnull (strstr (message, "ancel"));
	}
	g_assert_cmpuint (count_whole_files (out), ==, saved);
	g_assert_cmpuint (saved, <, N);
	run_clear (&r);
}

/* No inputs, and a run cancelled before it starts: nothing reported, nothing written. */
static void
test_empty_and_cancelled (void)
{
	g_autoptr (GPtrArray) inputs = make_inputs ("pre-in", 5, NULL, 16, 16);
	g_autofree char *out = g_build_filename (tmpdir, "pre-out", NULL);
	run r;
	run_init (&r, out);
	BdBatchOptions options = { .lanes = 1 };
	bd_batch_run (NULL, 0, &options, &funcs, &r, r.cancel);
	g_assert_cmpuint (r.order->len, ==, 0);
	g_cancellable_cancel (r.cancel);
	bd_batch_run ((const char *const *) inputs->pdata, 5, &options, &funcs, &r, r.cancel);
	g_assert_cmpuint (r.order->len, ==, 0);
	g_assert_cmpuint (count_whole_files (out), ==, 0);
	run_clear (&r);
}

/* Decoding ahead alone: a photo started twice is handed out twice, one forgotten or never
 * started is not handed out, errors come with the photo's own name, and freeing with photos
 * still held drops them. */
static void
test_decode_ahead (void)
{
	const char *broken[3] = { [1] = "half" };
	g_autoptr (GPtrArray) inputs = make_inputs ("ahead-in", 3, broken, 40, 30);
	const char *good = inputs->pdata[0], *bad = inputs->pdata[1], *other = inputs->pdata[2];
	g_autoptr (GFile) good_file = g_file_new_for_path (good);
	g_autoptr (GFile) other_file = g_file_new_for_path (other);
	BdDecodeAhead *ahead = bd_decode_ahead_new (2);
	bd_decode_ahead_start (ahead, NULL, good);
	bd_decode_ahead_start (ahead, NULL, good);
	bd_decode_ahead_start (ahead, NULL, bad);
	bd_decode_ahead_start (ahead, other_file, NULL);
	bd_decode_ahead_start (ahead, good_file, NULL);   /* by file: another name, decoded apart */
	for (int i = 0; i < 2; i++) {
		GdkPixbuf *photo = NULL;
		g_autoptr (GError) error = NULL;
		g_assert_true (bd_decode_ahead_take (ahead, NULL, good, &photo, &error));
		g_assert_no_error (error);
		g_assert_cmpint (gdk_pixbuf_get_width (photo), ==, 40);
		g_object_unref (photo);
	}
	GdkPixbuf *photo = NULL;
	g_autoptr (GError) error = NULL;
	g_assert_false (bd_decode_ahead_take (ahead, NULL, good, &photo, &error));   /* both taken */
	g_assert_true (bd_decode_ahead_take (ahead, NULL, bad, &photo, &error));
	g_assert_null (photo);
	g_assert_nonnull (error);
	g_assert_nonnull (strstr (error->message, bad));   /* the name as given */
	g_clear_error (&error);
	g_assert_true (bd_decode_ahead_take (ahead, other_file, NULL, &photo, &error));
	g_assert_nonnull (photo);
	g_clear_object (&photo);
	bd_decode_ahead_forget (ahead, NULL, other);   /* never started by that name: nothing */
	bd_decode_ahead_start (ahead, NULL, other);
	bd_decode_ahead_forget (ahead, NULL, other);
	g_assert_false (bd_decode_ahead_take (ahead, NULL, other, &photo, &error));
	g_assert_no_error (error);
	bd_decode_ahead_free (ahead);   /* good_file's photo, never taken, goes with it */
}

static void
remove_tree (const char *path)
{
	if (g_file_test (path, G_FILE_TEST_IS_DIR)) {
		g_autoptr (GDir) d = g_dir_open (path, 0, NULL);
		for (const char *n; d && (n = g_dir_read_name (d));) {
			g_autofree char *p = g_build_filename (path, n, NULL);
			remove_tree (p);
		}
		g_rmdir (path);
	} else {
		g_unlink (path);
	}
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp ("backdrop-test-batch-XXXXXX", NULL);
	g_test_add_func ("/batch-run/order-and-errors", test_order_and_errors);
	g_test_add_func ("/batch-run/cancel", test_cancel);
	g_test_add_func ("/batch-run/empty-and-cancelled", test_empty_and_cancelled);
	g_test_add_func ("/batch-run/decode-ahead", test_decode_ahead);
	g_test_add_func ("/batch-run/finish", test_finish);
	int status = g_test_run ();
	remove_tree (tmpdir);
	return status;
}
