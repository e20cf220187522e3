/* SPDX-License-Identifier: Apache-2.0 */
/* One photo through the whole CPU engine, as bd_session_run does it for every program:
 * letterbox, both network passes (the photo and its mirror image at 9/8), edge-aware
 * upsampling, the main-subject and decisive passes. The session is made once and kept, as in
 * a folder; the median of the runs after a first one (which lays out the memory). With
 * --device cuda the same on the GPU; --pinned then hands it the photo and takes the mask in
 * page-locked memory (bd_session_host_alloc), to tell what the copies from pageable memory
 * cost a photo. --composite also times bd_session_composite of the photo and its mask over a
 * colour into RGBA (an element's composed frame), into page-locked memory with --pinned.
 *
 *   session-run MODEL PHOTO [--runs N] [--threads N] [--exact] [--device cpu|cuda] [--pinned]
 *               [--composite]
 *
 * Prints: size, device, median_ms, min_ms, load_ms (opening the model and making the session),
 * first_ms (the first run, which lays out and first touches the memory), and
 * composite_median_ms with --composite
 * (docs/PERFORMANCE.md, "The CPU engine"). */
#include "backdrop.h"
#include "bench-clock.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
	if (argc < 3) {
		fprintf (stderr, "usage: session-run MODEL PHOTO [--runs N] [--threads N] [--exact] [--device cpu|cuda] "
		         "[--pinned] [--composite]\n");
		return 2;
	}
	int runs = 10, threads = 0;
	bd_precision precision = BD_PRECISION_FAST;
	bd_device device = BD_DEVICE_CPU;
	bool pinned = false, composite = false;
	for (int i = 3; i < argc; i++) {
		if (!strcmp (argv[i], "--runs") && i + 1 < argc)
			runs = atoi (argv[++i]);
		else if (!strcmp (argv[i], "--threads") && i + 1 < argc)
			threads = atoi (argv[++i]);
		else if (!strcmp (argv[i], "--exact"))
			precision = BD_PRECISION_EXACT;
		else if (!strcmp (argv[i], "--device") && i + 1 < argc && !strcmp (argv[i + 1], "cpu"))
			device = BD_DEVICE_CPU, i++;
		else if (!strcmp (argv[i], "--device") && i + 1 < argc && !strcmp (argv[i + 1], "cuda"))
			device = BD_DEVICE_CUDA, i++;
		else if (!strcmp (argv[i], "--pinned"))
			pinned = true;
		else if (!strcmp (argv[i], "--composite"))
			composite = true;
		else {
			fprintf (stderr, "session-run: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (runs < 1 || runs > 1000) {
		fprintf (stderr, "session-run: --runs must be within 1..1000\n");
		return 2;
	}
	GError *gerr = NULL;
	GdkPixbuf *loaded = gdk_pixbuf_new_from_file (argv[2], &gerr);
	if (!loaded) {
		fprintf (stderr, "session-run: %s\n", gerr->message);
		return 1;
	}
	GdkPixbuf *rgb = loaded;   /* gdk-pixbuf gives 8-bit RGB or RGBA */
	bd_image photo = {
		gdk_pixbuf_read_pixels (rgb), (uint32_t) gdk_pixbuf_get_width (rgb), (uint32_t) gdk_pixbuf_get_height (rgb),
		(size_t) gdk_pixbuf_get_rowstride (rgb), gdk_pixbuf_get_has_alpha (rgb) ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8,
	};
	bd_model *model = NULL;
	bd_session *session = NULL;
	bd_error err = { 0 };
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = device;
	o.precision = precision;
	o.threads = threads;
	double load_start = now_ms ();
	if (bd_model_open (argv[1], &model, &err) != BD_OK || bd_session_new (model, &o, &session, &err) != BD_OK) {
		fprintf (stderr, "session-run: %s\n", err.message);
		return 1;
	}
	double load_ms = now_ms () - load_start, first_ms = 0;
	size_t mask_bytes = (size_t) photo.width * photo.height, photo_bytes = photo.stride * photo.height;
	uint8_t *alpha = pinned ? bd_session_host_alloc (session, mask_bytes) : malloc (mask_bytes);
	uint8_t *pinned_photo = pinned ? bd_session_host_alloc (session, photo_bytes) : NULL;
	double *ms = calloc ((size_t) runs, sizeof *ms);
	if (!alpha || !ms || (pinned && !pinned_photo))
		return 1;
	if (pinned) {
		memcpy (pinned_photo, photo.pixels, photo_bytes);
		photo.pixels = pinned_photo;
	}
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms ();
		if (bd_session_run (session, &photo, NULL, alpha, photo.width, &err) != BD_OK) {
			fprintf (stderr, "session-run: %s\n", err.message);
			return 1;
		}
		if (r >= 0)
			ms[r] = now_ms () - t0;
		else
			first_ms = now_ms () - t0;
	}
	qsort (ms, (size_t) runs, sizeof *ms, cmp_double);
	printf ("photo=%ux%u device=\"%s\" precision=%s%s runs=%d median_ms=%.2f min_ms=%.2f load_ms=%.2f "
	        "first_ms=%.2f", photo.width, photo.height, bd_session_device_description (session),
	        precision == BD_PRECISION_FAST ? "fast" : "exact", pinned ? " pinned" : "", runs, ms[runs / 2], ms[0],
	        load_ms, first_ms);
	if (composite) {
		size_t out_bytes = mask_bytes * 4;
		uint8_t *out = pinned ? bd_session_host_alloc (session, out_bytes) : malloc (out_bytes);
		bd_background colour = { .kind = BD_BACKGROUND_COLOR, .color = { 30, 140, 90, 255 } };
		if (!out)
			return 1;
		for (int r = -1; r < runs; r++) {
			double t0 = now_ms ();
			if (bd_session_composite (session, &photo, alpha, photo.width, &colour, out, (size_t) photo.width * 4,
			                          &err) != BD_OK) {
				fprintf (stderr, "session-run: %s\n", err.message);
				return 1;
			}
			if (r >= 0)
				ms[r] = now_ms () - t0;
		}
		qsort (ms, (size_t) runs, sizeof *ms, cmp_double);
		printf (" composite_median_ms=%.2f", ms[runs / 2]);
		if (pinned)
			bd_session_host_free (session, out);
		else
			free (out);
	}
	printf ("\n");
	free (ms);
	if (pinned) {
		bd_session_host_free (session, alpha);
		bd_session_host_free (session, pinned_photo);
	} else
		free (alpha);
	bd_session_free (session);
	bd_model_free (model);
	g_object_unref (loaded);
	return 0;
}
