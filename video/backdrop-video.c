/* SPDX-License-Identifier: Apache-2.0 */
/* backdrop-video: remove or replace the background of a video file.
 *
 *   backdrop-video [OPTIONS] INPUT OUTPUT
 *
 * OUTPUT's extension picks the container: .webm or .mkv (VP9; a cut-out keeps its alpha),
 * .mp4, .m4v or .mov (H.264; composites and masks). The audio comes along. The video is
 * written to a temporary file beside OUTPUT and renamed into place when complete: Ctrl+C or
 * an error leave nothing behind, and the input is never written over. */
#include <errno.h>
#include <glib.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bd-library.h"
#include "video-encode.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_CANCELLED = 130 };

static char *opt_output = "cutout", *opt_background, *opt_device = "auto", *opt_model, *opt_speed = "balanced";
static double opt_threshold = -1, opt_feather = 0, opt_steadiness = BD_VIDEO_DEFAULT_STEADINESS;
static int opt_latency = 1, opt_input_size = 0, opt_crf = 0, opt_threads = 0, opt_lanes = -1;
static gboolean opt_all_people, opt_overwrite, opt_quiet, opt_version, opt_stage_times;
static char **opt_files;

static const GOptionEntry entries[] = {
	{ "output", 0, 0, G_OPTION_ARG_STRING, &opt_output, N_("What to write: cutout (default), mask or composite"), N_("KIND") },
	{ "background", 'b', 0, G_OPTION_ARG_STRING, &opt_background, N_("For composites: a colour (#rrggbb, white…), blur[:RADIUS] or an image file"), N_("BG") },
	{ "device", 0, 0, G_OPTION_ARG_STRING, &opt_device, N_("auto (default), cpu, cuda or cuda:N (the GPU numbered N, from 0)"), N_("DEVICE") },
	{ "model", 'm', 0, G_OPTION_ARG_FILENAME, &opt_model, N_("Model file (default: the shipped model)"), N_("FILE") },
	{ "threshold", 't', 0, G_OPTION_ARG_DOUBLE, &opt_threshold, N_("Make the mask hard: opaque above T (0..1)"), N_("T") },
	{ "feather", 0, 0, G_OPTION_ARG_DOUBLE, &opt_feather, N_("Soften the mask's edge by PIXELS"), N_("PIXELS") },
	{ "keep-passers-by", 0, 0, G_OPTION_ARG_NONE, &opt_all_people, N_("Keep everyone found, passers-by too, not only the main subject"), NULL },
	{ "latency", 0, 0, G_OPTION_ARG_INT, &opt_latency, N_("Frames of look-ahead that steady the mask, 0..2 (default 1)"), N_("N") },
	{ "steadiness", 0, 0, G_OPTION_ARG_DOUBLE, &opt_steadiness, N_("Temporal filter where the picture is still, 0 (a mask per frame) to 1 (default 0.75)"), N_("K") },
	{ "input-size", 0, 0, G_OPTION_ARG_INT, &opt_input_size, N_("Long side the network sees (default: the model's); smaller is faster and coarser"), N_("PIXELS") },
	{ "crf", 0, 0, G_OPTION_ARG_INT, &opt_crf, N_("Video quality, lower is better (default 31 for VP9, 20 for H.264)"), N_("N") },
	{ "speed", 0, 0, G_OPTION_ARG_STRING, &opt_speed, N_("Encoding: balanced (default), small (slower, smaller files) or fast (sooner, larger files)"), N_("SPEED") },
	{ "threads", 0, 0, G_OPTION_ARG_INT, &opt_threads, N_("CPU threads (default: one per core)"), N_("N") },
	{ "overwrite", 0, 0, G_OPTION_ARG_NONE, &opt_overwrite, N_("Replace OUTPUT if it exists (never the input)"), NULL },
	{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, N_("Print errors only"), NULL },
	{ "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, N_("Print the version and exit"), NULL },
	/* For benchmarks (bench/video-gpu.sh), not users: how long each stage of the pipeline
	 * worked, and how many network lanes run beside the stream's session (default: 2 on a
	 * GPU, 0 on the CPU). */
	{ "stage-times", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &opt_stage_times, NULL, NULL },
	{ "lanes", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &opt_lanes, NULL, NULL },
	{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_files, NULL, N_("INPUT OUTPUT") },
	{ NULL },
};

static volatile sig_atomic_t cancelled;

static void
on_signal (int sig)
{
	cancelled = 1;
}

typedef struct {
	gint64 start;
	gint64 last;
} progress_state;

static void
progress (double fraction, guint64 frames, gpointer user_data)
{
	progress_state *p = user_data;
	gint64 now = g_get_monotonic_time ();
	if (now - p->last < 500000)
		return;
	p->last = now;
	double fps = frames / MAX (1e-6, (now - p->start) / 1e6);
	/* Back to the start of the line, outside the message: translations keep no control codes. */
	fputc ('\r', stderr);
	if (fraction >= 0)
		fprintf (stderr, _("%3.0f%%  %llu frames, %.1f frames/s "), 100 * fraction, (unsigned long long) frames, fps);
	else
		fprintf (stderr, _("%llu frames, %.1f frames/s "), (unsigned long long) frames, fps);
}

/* TRUE when @a and @b name one file (through links too). */
static gboolean
same_file (const char *a, const char *b)
{
	GStatBuf sa, sb;
	return g_stat (a, &sa) == 0 && g_stat (b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int
main (int argc, char **argv)
{
	setlocale (LC_ALL, "");
	bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
	bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
	textdomain (GETTEXT_PACKAGE);

	g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
	g_option_context_set_summary (ctx, _("Remove or replace the background of a video."));
	g_option_context_set_description (ctx, _(
		"OUTPUT's extension picks the format: .webm or .mkv (VP9; a cut-out keeps its\n"
		"transparency), .mp4, .m4v or .mov (H.264, for composites and masks). The sound is\n"
		"kept. Ctrl+C stops and leaves no file behind.\n\n"
		"Examples:\n"
		"  backdrop-video talk.mp4 talk-cutout.webm\n"
		"  backdrop-video --output composite --background blur talk.mp4 talk-blurred.mp4\n"
		"  backdrop-video --output composite --background beach.jpg talk.mp4 talk-beach.mp4"));
	g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
	g_autoptr (GError) error = NULL;
	if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
		fprintf (stderr, "backdrop-video: %s\n%s\n", error->message, _("Try “backdrop-video --help”."));
		return EXIT_USAGE;
	}
	if (opt_version) {
		printf ("backdrop-video %s (libbackdrop %s)\n", BD_VERSION_STRING, bd_version ());
		return EXIT_OK;
	}

	BdVideoSettings settings = { .threshold = (float) opt_threshold, .feather = (float) opt_feather,
	                             .all_people = opt_all_people, .steadiness = (float) opt_steadiness };
	const char *usage_error = NULL;
	gboolean alpha_ok = FALSE;
	if (!opt_files || !opt_files[0] || !opt_files[1] || opt_files[2])
		usage_error = _("Give an INPUT and an OUTPUT file.");
	else if (!g_strcmp0 (opt_output, "cutout"))
		settings.output = BD_VIDEO_OUTPUT_CUTOUT;
	else if (!g_strcmp0 (opt_output, "mask"))
		settings.output = BD_VIDEO_OUTPUT_MASK;
	else if (!g_strcmp0 (opt_output, "composite"))
		settings.output = BD_VIDEO_OUTPUT_COMPOSITE;
	else
		usage_error = _("--output must be cutout, mask or composite.");
	if (!usage_error && !bd_video_container (opt_files[1], &alpha_ok))
		usage_error = _("OUTPUT must end in .webm, .mkv, .mp4, .m4v or .mov.");
	if (!usage_error && settings.output == BD_VIDEO_OUTPUT_CUTOUT && !alpha_ok)
		usage_error = _("MP4 and MOV carry no transparency: write a cut-out to .webm, or use --output composite.");
	if (!usage_error && settings.output != BD_VIDEO_OUTPUT_COMPOSITE && opt_background)
		usage_error = _("--background goes with --output composite.");
	if (!usage_error && (opt_latency < 0 || opt_latency > BD_VIDEO_MAX_LATENCY))
		usage_error = _("--latency must be 0, 1 or 2.");
	if (!usage_error && !(opt_steadiness >= 0 && opt_steadiness <= 1))
		usage_error = _("--steadiness must be within 0..1.");
	BdEncodeSpeed speed = BD_ENCODE_BALANCED;
	if (!usage_error && !g_strcmp0 (opt_speed, "small"))
		speed = BD_ENCODE_SMALL;
	else if (!usage_error && !g_strcmp0 (opt_speed, "fast"))
		speed = BD_ENCODE_FAST;
	else if (!usage_error && g_strcmp0 (opt_speed, "balanced"))
		usage_error = _("--speed must be balanced, small or fast.");
	if (!usage_error && opt_lanes > 8)
		usage_error = _("--lanes must be within 0..8.");
	if (!usage_error && (opt_threshold > 1 || opt_feather < 0 || opt_feather > 500))
		usage_error = _("--threshold must be at most 1 and --feather within 0..500.");
	bd_session_options sopts;
	bd_session_options_init (&sopts);
	sopts.threads = opt_threads;
	sopts.input_size = (uint32_t) MAX (0, opt_input_size);
	if (!usage_error && !bd_library_parse_device (opt_device, &sopts.device, &sopts.device_index))
		usage_error = _("--device must be auto, cpu, cuda or cuda:N.");
	if (usage_error) {
		fprintf (stderr, "backdrop-video: %s\n%s\n", usage_error, _("Try “backdrop-video --help”."));
		return EXIT_USAGE;
	}
	settings.latency = (guint) opt_latency;
	const char *input = opt_files[0], *output = opt_files[1];

	/* The input stays as it is, whatever the options. */
	if (!g_file_test (input, G_FILE_TEST_IS_REGULAR)) {
		fprintf (stderr, "backdrop-video: ");
		fprintf (stderr, _("%s is not a file"), input);
		fputc ('\n', stderr);
		return EXIT_FAILED;
	}
	if (same_file (input, output)) {
		fprintf (stderr, "backdrop-video: %s\n", _("OUTPUT is the input itself: choose another name."));
		return EXIT_FAILED;
	}
	if (g_file_test (output, G_FILE_TEST_EXISTS) && !opt_overwrite) {
		fprintf (stderr, "backdrop-video: ");
		fprintf (stderr, _("%s exists; --overwrite replaces it"), output);
		fputc ('\n', stderr);
		return EXIT_FAILED;
	}

	bd_background background;
	bd_image background_image;
	g_autoptr (GdkPixbuf) background_pixbuf = NULL;
	if (settings.output == BD_VIDEO_OUTPUT_COMPOSITE) {
		if (!bd_background_parse (opt_background, &background, &background_image, &background_pixbuf, &error)) {
			fprintf (stderr, "backdrop-video: %s\n", error->message);
			return EXIT_USAGE;
		}
		if (background.kind == BD_BACKGROUND_IMAGE)
			background.image = &background_image;
		settings.background = &background;
	}

	g_autofree char *model_path = opt_model ? g_strdup (opt_model) : bd_library_default_model ();
	bd_model *model = NULL;
	bd_session *session = NULL;
	bd_error err = { 0 };
	if (bd_model_open (model_path, &model, &err) != BD_OK || bd_session_new (model, &sopts, &session, &err) != BD_OK) {
		bd_library_set_error (&error, &err, model ? NULL : model_path);
		fprintf (stderr, "backdrop-video: %s\n", error->message);
		bd_model_free (model);
		return EXIT_FAILED;
	}
	if (!opt_quiet)
		fprintf (stderr, _("Running on %s\n"), bd_session_device_description (session));
	/* On a GPU the network runs on lanes of their own, two frames at once, while the stream's
	 * session steadies and composes the frames before them: one frame at a time, the host's
	 * copies and steps left the GPU idle most of each frame (docs/PERFORMANCE.md, "Video"). */
	bd_session **lanes = NULL;
	guint n_lanes = 0;
	int want_lanes = opt_lanes >= 0 ? opt_lanes : bd_session_device (session) == BD_DEVICE_CUDA ? 2 : 0;
	if (want_lanes > 0) {
		bd_session_options lane_options = sopts;
		lane_options.device = bd_session_device (session);
		if (!bd_library_new_sessions (model, &lane_options, FALSE, (guint) want_lanes, &lanes, &n_lanes, &error)) {
			fprintf (stderr, "backdrop-video: %s\n", error->message);
			bd_session_free (session);
			bd_model_free (model);
			return EXIT_FAILED;
		}
	}

	/* A temporary file beside OUTPUT (one file system, so the rename is atomic), with the
	 * output's extension hidden inside it so that nothing mistakes it for a finished video. */
	g_autofree char *dir = g_path_get_dirname (output);
	g_autofree char *tmp = g_build_filename (dir, ".backdrop-video-XXXXXX", NULL);
	int fd = g_mkstemp (tmp);
	if (fd < 0) {
		int e = errno;
		fprintf (stderr, "backdrop-video: ");
		fprintf (stderr, _("Cannot write in %s: %s"), dir, g_strerror (e));
		fputc ('\n', stderr);
		return EXIT_FAILED;
	}
	mode_t mask = umask (0);
	umask (mask);
	fchmod (fd, 0666 & ~mask);
	close (fd);

	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset (&sa.sa_mask);
	sigaction (SIGINT, &sa, NULL);
	sigaction (SIGTERM, &sa, NULL);

	progress_state ps = { .start = g_get_monotonic_time () };
	BdTranscodeStats stats = { 0 };
	BdTranscodeJob job = {
		.input = input, .path = tmp, .name = output, .session = session, .settings = &settings,
		.lanes = lanes, .n_lanes = n_lanes,
		.crf = opt_crf, .speed = speed, .cancel = &cancelled, .progress = opt_quiet ? NULL : progress, .user_data = &ps,
		.stats = &stats,
	};
	guint64 frames = 0;
	gboolean ok = bd_video_transcode (&job, &frames, &error);
	if (ok && cancelled) {
		ok = FALSE;
		g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
	}
	if (ok && !opt_overwrite && g_file_test (output, G_FILE_TEST_EXISTS)) {
		ok = FALSE;
		g_set_error (&error, G_IO_ERROR, G_IO_ERROR_EXISTS, _("%s appeared while the video was made; --overwrite replaces it"), output);
	}
	if (ok && g_rename (tmp, output) != 0) {
		ok = FALSE;
		g_set_error (&error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot write %s: %s"), output, g_strerror (errno));
	}
	if (!ok)
		g_unlink (tmp);
	bd_library_free_sessions (lanes);
	bd_session_free (session);
	bd_model_free (model);
	if (!opt_quiet)
		fputc ('\n', stderr);
	if (opt_stage_times)
		fprintf (stderr, "stages busy: reading %.2f s, network %.2f s a lane (%u lanes), steadying %.2f s "
		         "(output %.2f s), encoding %.2f s, of %.2f s\n", stats.reading, stats.network, stats.lanes,
		         stats.steadying, stats.output, stats.encoding, stats.seconds);
	if (!ok) {
		fprintf (stderr, "backdrop-video: %s\n", error->message);
		return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ? EXIT_CANCELLED : EXIT_FAILED;
	}
	if (!opt_quiet) {
		double seconds = (g_get_monotonic_time () - ps.start) / 1e6;
		fprintf (stderr, _("%s: %llu frames in %.1f s (%.1f frames/s)\n"), output, (unsigned long long) frames, seconds,
		         frames / MAX (1e-6, seconds));
	}
	return EXIT_OK;
}
