/* SPDX-License-Identifier: Apache-2.0 */
/* One photo through the whole CPU engine, as bd_session_run does it for every program:
 * letterbox, both network passes (the photo and its mirror image at 9/8), edge-aware
 * upsampling, the main-subject and decisive passes. The session is made once and kept, as in
 * a folder; the median of the runs after a first one (which lays out the memory).
 *
 *   session-run MODEL PHOTO [--runs N] [--threads N] [--exact]
 *
 * Prints: size, device, median_ms, min_ms (docs/PERFORMANCE.md, "The CPU engine"). */
#include "backdrop.h"
#include "bench-clock.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
	if (argc < 3) {
		fprintf (stderr, "usage: session-run MODEL PHOTO [--runs N] [--threads N] [--exact]\n");
		return 2;
	}
	int runs = 10, threads = 0;
	bd_precision precision = BD_PRECISION_FAST;
	for (int i = 3; i < argc; i++) {
		if (!strcmp (argv[i], "--runs") && i + 1 < argc)
			runs = atoi (argv[++i]);
		else if (!strcmp (argv[i], "--threads") && i + 1 < argc)
			threads = atoi (argv[++i]);
		else if (!strcmp (argv[i], "--exact"))
			precision = BD_PRECISION_EXACT;
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
	o.device = BD_DEVICE_CPU;
	o.precision = precision;
	o.threads = threads;
	if (bd_model_open (argv[1], &model, &err) != BD_OK || bd_session_new (model, &o, &session, &err) != BD_OK) {
		fprintf (stderr, "session-run: %s\n", err.message);
		return 1;
	}
	uint8_t *alpha = malloc ((size_t) photo.width * photo.height);
	double *ms = calloc ((size_t) runs, sizeof *ms);
	if (!alpha || !ms)
		return 1;
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms ();
		if (bd_session_run (session, &photo, NULL, alpha, photo.width, &err) != BD_OK) {
			fprintf (stderr, "session-run: %s\n", err.message);
			return 1;
		}
		if (r >= 0)
			ms[r] = now_ms () - t0;
	}
	qsort (ms, (size_t) runs, sizeof *ms, cmp_double);
	printf ("photo=%ux%u device=\"%s\" precision=%s runs=%d median_ms=%.1f min_ms=%.1f\n", photo.width, photo.height,
	        bd_session_device_description (session), precision == BD_PRECISION_FAST ? "fast" : "exact", runs,
	        ms[runs / 2], ms[0]);
	free (ms);
	free (alpha);
	bd_session_free (session);
	bd_model_free (model);
	g_object_unref (loaded);
	return 0;
}
