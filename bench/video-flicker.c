/* SPDX-License-Identifier: Apache-2.0 */
/* Flicker and accuracy of video masks, per-frame against the temporal filter
 * (video/bd-video-stream.c), on the DAVIS clips of ../shared/datasets/davis-people-train
 * played as video (every second frame of each clip, as the set holds them).
 *
 *   video-flicker DAVIS_DIR [--device cpu|cuda] [--input-size N] [--latency N] [--steadiness K]
 *
 * Flicker: the mean absolute change of alpha (0..255) from one frame to the next on pixels
 * that are background in both frames' labels and whose photo did not change, in two senses:
 * the pixel's own luma within 3 levels, and the mean luma change over the 5x5 pixels around
 * it within 3 levels (in a panning shot a flat pixel keeps its value while the scene moves
 * under it; the window tells the two apart). IoU: the mask at half opacity against the
 * label, per frame. */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bd-image-io.h"
#include "bd-library.h"
#include "bd-video-stream.h"

typedef struct {
	double flicker_sum, iou_sum, flicker_win_sum;
	guint64 still_pixels, still_win_pixels;
	guint frames, worse_frames;
	double worst_drop;
} tally;

static guint8 *
rgba_of (GdkPixbuf *p, guint w, guint h)
{
	guint8 *out = g_malloc ((gsize) w * h * 4);
	int n = gdk_pixbuf_get_n_channels (p), stride = gdk_pixbuf_get_rowstride (p);
	const guint8 *px = gdk_pixbuf_read_pixels (p);
	for (guint y = 0; y < h; y++)
		for (guint x = 0; x < w; x++) {
			const guint8 *s = px + (gsize) y * stride + (gsize) x * n;
			guint8 *d = out + ((gsize) y * w + x) * 4;
			d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = 255;
		}
	return out;
}

static inline int
luma (const guint8 *p)
{
	return (77 * p[0] + 150 * p[1] + 29 * p[2] + 128) >> 8;
}

static double
iou (const guint8 *alpha, const guint8 *label, gsize n)
{
	guint64 inter = 0, uni = 0;
	for (gsize i = 0; i < n; i++) {
		gboolean a = alpha[i] >= 128, b = label[i] >= 128;
		inter += a && b;
		uni += a || b;
	}
	return uni ? (double) inter / uni : 1.0;
}

int
main (int argc, char **argv)
{
	const char *dir = NULL, *device = "cpu";
	guint input_size = 0, latency = 0;
	float steadiness = BD_VIDEO_DEFAULT_STEADINESS;
	for (int i = 1; i < argc; i++) {
		if (!strcmp (argv[i], "--device") && i + 1 < argc)
			device = argv[++i];
		else if (!strcmp (argv[i], "--input-size") && i + 1 < argc)
			input_size = (guint) atoi (argv[++i]);
		else if (!strcmp (argv[i], "--latency") && i + 1 < argc)
			latency = (guint) atoi (argv[++i]);
		else if (!strcmp (argv[i], "--steadiness") && i + 1 < argc)
			steadiness = (float) atof (argv[++i]);
		else
			dir = argv[i];
	}
	if (!dir) {
		fprintf (stderr, "usage: video-flicker DAVIS_DIR [--device D] [--input-size N] [--latency N] [--steadiness K]\n");
		return 2;
	}
	g_autofree char *images = g_build_filename (dir, "images", NULL);
	GDir *d = g_dir_open (images, 0, NULL);
	if (!d) {
		fprintf (stderr, "no %s\n", images);
		return 77;
	}
	GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
	const char *name;
	while ((name = g_dir_read_name (d)))
		if (g_str_has_suffix (name, ".webp"))
			g_ptr_array_add (names, g_strdup (name));
	g_dir_close (d);
	g_ptr_array_sort_values (names, (GCompareFunc) g_strcmp0);

	bd_session_options so;
	bd_session_options_init (&so);
	so.input_size = input_size;
	if (!bd_library_parse_device (device, &so.device, &so.device_index)) {
		fprintf (stderr, "bad device %s\n", device);
		return 2;
	}
	g_autofree char *model_path = bd_library_default_model ();
	bd_model *model;
	bd_session *session;
	bd_error err = { 0 };
	if (bd_model_open (model_path, &model, &err) != BD_OK || bd_session_new (model, &so, &session, &err) != BD_OK) {
		fprintf (stderr, "%s\n", err.message);
		return 1;
	}
	printf ("device %s, input size %u, latency %u, steadiness %.2f, %u frames\n",
	        bd_session_device_description (session), input_size ? input_size : bd_model_input_size (model),
	        latency, steadiness, names->len);

	tally per_frame = { 0 }, steady = { 0 };
	double seconds = 0, filter_seconds = 0;
	guint i = 0;
	while (i < names->len) {
		/* One clip: the names up to the frame number. */
		const char *first = names->pdata[i];
		gsize stem = strrchr (first, '-') - first;
		guint end = i;
		while (end < names->len && !strncmp (names->pdata[end], first, stem + 1))
			end++;
		g_autofree char *p0 = g_build_filename (images, first, NULL);
		GdkPixbuf *pb0 = bd_image_load (p0, NULL);
		guint w = (guint) gdk_pixbuf_get_width (pb0), h = (guint) gdk_pixbuf_get_height (pb0);
		g_object_unref (pb0);
		gsize n = (gsize) w * h;
		BdVideoStream *s = bd_video_stream_new (session, w, h);
		BdVideoSettings set = { .output = BD_VIDEO_OUTPUT_MASK, .threshold = -1, .latency = latency,
		                        .steadiness = steadiness };
		bd_video_stream_set (s, &set);
		guint8 *prev_raw = g_malloc (n), *prev_alpha = g_malloc (n), *prev_rgba = NULL, *prev_label = g_malloc (n);
		guint out_index = i;
		for (guint k = i; k <= end; k++) {
			if (k < end) {
				g_autofree char *path = g_build_filename (images, names->pdata[k], NULL);
				GdkPixbuf *pb = bd_image_load (path, NULL);
				guint8 *rgba = rgba_of (pb, w, h);
				g_object_unref (pb);
				gint64 t0 = g_get_monotonic_time ();
				g_autoptr (GError) e = NULL;
				if (!bd_video_stream_push (s, rgba, (gsize) w * 4, rgba, g_free, &e)) {
					fprintf (stderr, "%s\n", e->message);
					return 1;
				}
				seconds += (g_get_monotonic_time () - t0) / 1e6;
			}
			BdVideoFrame *f;
			gint64 t1 = g_get_monotonic_time ();
			while ((f = bd_video_stream_next (s, k == end))) {
				filter_seconds += (g_get_monotonic_time () - t1) / 1e6;
				guint8 *rgba = bd_video_frame_get_tag (f);
				/* Per-frame: the network's mask made decisive, as a photo's is by default. */
				guint8 *raw = g_memdup2 (bd_video_frame_get_raw_alpha (f), n);
				const guint8 *alpha = bd_video_frame_get_alpha (f);
				bd_mask_make_decisive (raw, w, h, w, NULL);
				g_autofree char *mname = g_strdup (names->pdata[out_index]);
				strcpy (strrchr (mname, '.'), ".png");
				g_autofree char *mpath = g_build_filename (dir, "masks", mname, NULL);
				GdkPixbuf *mp = bd_image_load (mpath, NULL);
				guint8 *label = g_malloc (n);
				int mc = gdk_pixbuf_get_n_channels (mp), ms = gdk_pixbuf_get_rowstride (mp);
				for (guint y = 0; y < h; y++)
					for (guint x = 0; x < w; x++)
						label[(gsize) y * w + x] = gdk_pixbuf_read_pixels (mp)[(gsize) y * ms + (gsize) x * mc];
				g_object_unref (mp);
				double a = iou (raw, label, n), b = iou (alpha, label, n);
				per_frame.iou_sum += a;
				steady.iou_sum += b;
				per_frame.frames++;
				steady.frames++;
				if (b < a - 0.005)
					steady.worse_frames++;
				steady.worst_drop = MAX (steady.worst_drop, a - b);
				if (prev_rgba) {
					/* The 5x5 window means of the luma change, by a summed-area table. */
					guint32 *sat = g_new0 (guint32, (gsize) (w + 1) * (h + 1));
					for (guint y = 0; y < h; y++)
						for (guint x = 0; x < w; x++) {
							gsize j = (gsize) y * w + x;
							sat[(gsize) (y + 1) * (w + 1) + x + 1] = (guint32) abs (luma (rgba + 4 * j) - luma (prev_rgba + 4 * j))
								+ sat[(gsize) y * (w + 1) + x + 1] + sat[(gsize) (y + 1) * (w + 1) + x] - sat[(gsize) y * (w + 1) + x];
						}
					for (guint y = 2; y + 2 < h; y++)
						for (guint x = 2; x + 2 < w; x++) {
							gsize j = (gsize) y * w + x;
							guint32 box = sat[(gsize) (y + 3) * (w + 1) + x + 3] - sat[(gsize) (y - 2) * (w + 1) + x + 3]
							            - sat[(gsize) (y + 3) * (w + 1) + x - 2] + sat[(gsize) (y - 2) * (w + 1) + x - 2];
							if (label[j] >= 128 || prev_label[j] >= 128 || box > 3 * 25)
								continue;
							per_frame.flicker_win_sum += abs ((int) raw[j] - (int) prev_raw[j]);
							steady.flicker_win_sum += abs ((int) alpha[j] - (int) prev_alpha[j]);
							per_frame.still_win_pixels++;
						}
					g_free (sat);
					for (gsize j = 0; j < n; j++) {
						if (label[j] >= 128 || prev_label[j] >= 128 ||
						    abs (luma (rgba + 4 * j) - luma (prev_rgba + 4 * j)) > 3)
							continue;
						per_frame.flicker_sum += abs ((int) raw[j] - (int) prev_raw[j]);
						steady.flicker_sum += abs ((int) alpha[j] - (int) prev_alpha[j]);
						per_frame.still_pixels++;
						steady.still_pixels++;
					}
				}
				memcpy (prev_raw, raw, n);
				memcpy (prev_alpha, alpha, n);
				memcpy (prev_label, label, n);
				g_free (label);
				g_free (raw);
				g_free (prev_rgba);
				prev_rgba = g_memdup2 (rgba, n * 4);
				bd_video_frame_free (f);
				out_index++;
				t1 = g_get_monotonic_time ();
			}
		}
		printf ("  %.*s: %u frames\n", (int) stem, first, end - i);
		g_free (prev_raw); g_free (prev_alpha); g_free (prev_rgba); g_free (prev_label);
		bd_video_stream_free (s);
		i = end;
	}
	double f0 = per_frame.flicker_sum / MAX (1, per_frame.still_pixels);
	double f1 = steady.flicker_sum / MAX (1, steady.still_pixels);
	double g0 = per_frame.flicker_win_sum / MAX (1, per_frame.still_win_pixels);
	double g1 = steady.flicker_win_sum / MAX (1, per_frame.still_win_pixels);
	printf ("flicker (mean |Δalpha|, levels) on still background, pixel's own change <= 3: per-frame %.3f, "
	        "filtered %.3f (%.2f of per-frame; %" G_GUINT64_FORMAT " pixels)\n", f0, f1, f1 / f0, per_frame.still_pixels);
	printf ("flicker on still background, 5x5 window's mean change <= 3: per-frame %.3f, filtered %.3f "
	        "(%.2f of per-frame; %" G_GUINT64_FORMAT " pixels)\n", g0, g1, g1 / g0, per_frame.still_win_pixels);
	printf ("mean IoU: per-frame %.4f, filtered %.4f; frames where filtered is lower by > 0.005: %u of %u "
	        "(largest drop %.4f)\n", per_frame.iou_sum / per_frame.frames, steady.iou_sum / steady.frames,
	        steady.worse_frames, steady.frames, steady.worst_drop);
	printf ("network: %.1f ms a frame; temporal filter: %.1f ms a frame\n", 1000 * seconds / MAX (1, per_frame.frames),
	        1000 * filter_seconds / MAX (1, per_frame.frames));
	bd_session_free (session);
	bd_model_free (model);
	g_ptr_array_unref (names);
	return 0;
}
