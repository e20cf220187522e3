/* SPDX-License-Identifier: Apache-2.0 */
/* The video stream (video/bd-video-stream.c) on a DAVIS clip with the shipped model: the
 * network's mask stays soft for the temporal filter, and what leaves is decisive, as a
 * photo's mask is. Skipped without ../shared/datasets. */
#include "bd-video-stream.h"

#include <string.h>

static const char *root;

/* The first @count frames of the DAVIS clip `lucia` as RGBA, all of one size. */
static GPtrArray *
clip_frames (guint count, guint *width, guint *height)
{
	g_autofree char *dir = g_build_filename (root, "..", "shared", "datasets", "davis-people-train", "images", NULL);
	GPtrArray *frames = g_ptr_array_new_with_free_func (g_free);
	for (guint i = 0; i < count; i++) {
		g_autofree char *name = g_strdup_printf ("lucia-%05u.webp", 2 * i);
		g_autofree char *path = g_build_filename (dir, name, NULL);
		g_autoptr (GdkPixbuf) p = gdk_pixbuf_new_from_file (path, NULL);
		if (!p) {
			g_ptr_array_unref (frames);
			return NULL;
		}
		g_autoptr (GdkPixbuf) rgba = gdk_pixbuf_add_alpha (p, FALSE, 0, 0, 0);
		*width = (guint) gdk_pixbuf_get_width (rgba);
		*height = (guint) gdk_pixbuf_get_height (rgba);
		guint8 *px = g_malloc ((gsize) *width * *height * 4);
		for (guint y = 0; y < *height; y++)
			memcpy (px + (gsize) y * *width * 4, gdk_pixbuf_read_pixels (rgba) + (gsize) y * gdk_pixbuf_get_rowstride (rgba),
			        (gsize) *width * 4);
		g_ptr_array_add (frames, px);
	}
	return frames;
}

static void
test_soft_then_decisive (void)
{
	guint w = 0, h = 0;
	g_autoptr (GPtrArray) frames = clip_frames (4, &w, &h);
	if (!frames) {
		g_test_skip ("../shared/datasets/davis-people-train is absent");
		return;
	}
	g_autofree char *path = g_build_filename (root, "data", "backdrop-portrait.bdm", NULL);
	bd_model *model = NULL;
	bd_session *session = NULL;
	bd_error err = { 0 };
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	g_assert_cmpint (bd_model_open (path, &model, &err), ==, BD_OK);
	g_assert_cmpint (bd_session_new (model, &o, &session, &err), ==, BD_OK);
	gsize n = (gsize) w * h;
	g_autofree guint8 *check = g_malloc (n);

	/* Without the filter, what leaves is the network's mask made decisive; with it, the
	 * steadied mask made decisive (deciding it again changes nothing). Some frame's network
	 * mask is soft where the decisive pass settles it, or the filter would have nothing the
	 * decisive pass hides. */
	gboolean some_soft = FALSE;
	for (int steady = 0; steady < 2; steady++) {
		BdVideoStream *s = bd_video_stream_new (session, w, h);
		BdVideoSettings set = { .output = BD_VIDEO_OUTPUT_MASK, .threshold = -1, .latency = 1,
		                        .steadiness = steady ? BD_VIDEO_DEFAULT_STEADINESS : 0 };
		bd_video_stream_set (s, &set);
		guint left = 0;
		for (guint i = 0; i <= frames->len; i++) {
			g_autoptr (GError) e = NULL;
			if (i < frames->len)
				g_assert_true (bd_video_stream_push (s, frames->pdata[i], (gsize) w * 4, NULL, NULL, &e));
			BdVideoFrame *f;
			while ((f = bd_video_stream_next (s, i == frames->len))) {
				const guint8 *raw = bd_video_frame_get_raw_alpha (f), *alpha = bd_video_frame_get_alpha (f);
				memcpy (check, raw, n);
				g_assert_cmpint (bd_mask_make_decisive (check, w, h, w, &err), ==, BD_OK);
				some_soft = some_soft || memcmp (check, raw, n) != 0;
				if (!steady)
					g_assert_cmpmem (alpha, n, check, n);
				memcpy (check, alpha, n);
				g_assert_cmpint (bd_mask_make_decisive (check, w, h, w, &err), ==, BD_OK);
				g_assert_cmpmem (check, n, alpha, n);
				bd_video_frame_free (f);
				left++;
			}
		}
		g_assert_cmpuint (left, ==, frames->len);
		bd_video_stream_free (s);
	}
	g_assert_true (some_soft);
	bd_session_free (session);
	bd_model_free (model);
}

static void
count_release (gpointer tag)
{
	(*(guint *) tag)++;
}

/* A frame's tag is released when the caller frees it, though the stream keeps the frame as its
 * last for the filter; the frames' buffers are used again, and a frame made in place comes out
 * as a pushed copy of the same photo does. */
static void
test_frames_and_tags (void)
{
	enum { W = 48, H = 32 };
	g_autofree char *path = g_build_filename (root, "data", "backdrop-portrait.bdm", NULL);
	bd_model *model = NULL;
	bd_session *session = NULL;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.input_size = 64;
	g_assert_cmpint (bd_model_open (path, &model, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (model, &o, &session, NULL), ==, BD_OK);
	guint8 photo[W * H * 4];
	for (gsize i = 0; i < sizeof photo; i++)
		photo[i] = (guint8) (i * 7 + i / 97);
	BdVideoStream *s = bd_video_stream_new (session, W, H);
	BdVideoSettings set = { .output = BD_VIDEO_OUTPUT_MASK, .threshold = -1, .steadiness = 0.75f };
	bd_video_stream_set (s, &set);
	guint released = 0;
	guint8 *seen[6] = { NULL };
	guint8 first_mask[W * H];
	for (guint i = 0; i < 6; i++) {
		g_autoptr (GError) e = NULL;
		if (i % 2 == 0)
			g_assert_true (bd_video_stream_push (s, photo, W * 4, &released, count_release, &e));
		else {
			BdVideoFrame *made = bd_video_stream_frame_new (s, &released, count_release, &e);
			g_assert_nonnull (made);
			memcpy (bd_video_frame_get_pixels (made), photo, sizeof photo);
			g_assert_true (bd_video_stream_add_frame (s, made, &e));
		}
		BdVideoFrame *f = bd_video_stream_next (s, FALSE);
		g_assert_nonnull (f);
		g_assert_cmpuint (released, ==, i);
		/* A still photo: every frame's steadied mask is the first's. */
		if (i == 0)
			memcpy (first_mask, bd_video_frame_get_alpha (f), sizeof first_mask);
		else
			g_assert_cmpmem (bd_video_frame_get_alpha (f), sizeof first_mask, first_mask, sizeof first_mask);
		seen[i] = bd_video_frame_get_pixels (f);
		bd_video_frame_free (f);
		g_assert_cmpuint (released, ==, i + 1);
	}
	/* Two frames' buffers take turns: the one out and the stream's last. */
	g_assert_true (seen[2] == seen[0] || seen[2] == seen[1]);
	bd_video_stream_free (s);
	bd_session_free (session);
	bd_model_free (model);
}

/* Two frames prepared side by side, as the element's lanes do: each is filled by the thread
 * that prepares it, the first one late. */
typedef struct {
	BdVideoStream *stream;
	BdVideoFrame  *frame;
	bd_session    *session;
	const guint8  *photo;
	gsize          bytes;
	gulong         delay_us;
	gint          *filled_first;   /* set by the first frame's thread once its pixels are in */
	gboolean       saw_first_filled;
} FillJob;

static gpointer
fill_and_prepare (gpointer data)
{
	FillJob *j = data;
	g_usleep (j->delay_us);
	memcpy (bd_video_frame_get_pixels (j->frame), j->photo, j->bytes);
	if (j->filled_first && j->delay_us)
		g_atomic_int_set (j->filled_first, 1);
	bd_video_stream_frame_filled (j->stream, j->frame);
	g_autoptr (GError) e = NULL;
	g_assert_true (bd_video_stream_prepare_frame (j->stream, j->frame, j->session, &e));
	/* The second frame's preparation compares it with the first: it waited for it. */
	j->saw_first_filled = j->filled_first && g_atomic_int_get (j->filled_first);
	return NULL;
}

/* Frames filled later on other threads (bd_video_stream_frame_fill_later) come out as pushed
 * copies of the same photos do, the next frame's preparation waiting for the one before. */
static void
test_filled_later (void)
{
	enum { W = 48, H = 32, N = 6 };
	g_autofree char *path = g_build_filename (root, "data", "backdrop-portrait.bdm", NULL);
	bd_model *model = NULL;
	bd_session *session = NULL, *lane[2] = { NULL, NULL };
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.input_size = 64;
	o.threads = 1;
	g_assert_cmpint (bd_model_open (path, &model, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (model, &o, &session, NULL), ==, BD_OK);
	for (int i = 0; i < 2; i++)
		g_assert_cmpint (bd_session_new (model, &o, &lane[i], NULL), ==, BD_OK);
	static guint8 photos[N][W * H * 4];
	for (guint f = 0; f < N; f++)
		for (gsize i = 0; i < W * H * 4; i++)   /* a still half and a moving half */
			photos[f][i] = (guint8) (i * 7 + i / 97 + ((i / 4) % W >= W / 2 ? 9 * f : 0));
	BdVideoSettings set = { .output = BD_VIDEO_OUTPUT_MASK, .threshold = -1, .steadiness = 0.75f, .latency = 1 };
	guint8 expect[N][W * H], got[N][W * H];
	for (int pass = 0; pass < 2; pass++) {
		BdVideoStream *s = bd_video_stream_new (session, W, H);
		bd_video_stream_set (s, &set);
		guint out = 0;
		for (guint f = 0; f < N; f += 2) {
			g_autoptr (GError) e = NULL;
			if (pass == 0) {
				g_assert_true (bd_video_stream_push (s, photos[f], W * 4, NULL, NULL, &e));
				g_assert_true (bd_video_stream_push (s, photos[f + 1], W * 4, NULL, NULL, &e));
			} else {
				gint filled_first = 0;
				FillJob jobs[2];
				GThread *threads[2];
				for (int k = 0; k < 2; k++) {
					BdVideoFrame *frame = bd_video_stream_frame_new (s, NULL, NULL, &e);
					g_assert_nonnull (frame);
					bd_video_stream_frame_fill_later (s, frame);
					jobs[k] = (FillJob) { s, frame, lane[k], photos[f + k], sizeof photos[0], k == 0 ? 30000 : 0,
					                      &filled_first, FALSE };
				}
				for (int k = 1; k >= 0; k--)   /* the second frame's thread first */
					threads[k] = g_thread_new ("lane", fill_and_prepare, &jobs[k]);
				for (int k = 0; k < 2; k++) {
					g_thread_join (threads[k]);
					g_assert_true (bd_video_stream_add_frame (s, jobs[k].frame, &e));
				}
				g_assert_true (jobs[1].saw_first_filled);
			}
			BdVideoFrame *left;
			while ((left = bd_video_stream_next (s, f + 2 == N))) {
				memcpy (pass == 0 ? expect[out] : got[out], bd_video_frame_get_alpha (left), W * H);
				out++;
				bd_video_frame_free (left);
			}
		}
		g_assert_cmpuint (out, ==, N);
		bd_video_stream_free (s);
	}
	g_assert_cmpmem (got, sizeof got, expect, sizeof expect);
	for (int i = 0; i < 2; i++)
		bd_session_free (lane[i]);
	bd_session_free (session);
	bd_model_free (model);
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	root = g_getenv ("BACKDROP_SOURCE_ROOT");
	g_assert_nonnull (root);
	g_test_add_func ("/video/stream/soft-then-decisive", test_soft_then_decisive);
	g_test_add_func ("/video/stream/frames-and-tags", test_frames_and_tags);
	g_test_add_func ("/video/stream/filled-later", test_filled_later);
	return g_test_run ();
}
