/* SPDX-License-Identifier: Apache-2.0 */
/* backdrop-cli: remove or replace the background of photos from the shell. */
#include "config.h"

#include "backdrop.h"
#include "bd-background.h"
#include "bd-batch-run.h"
#include "bd-image-io.h"
#include "bd-image-types.h"
#include "bd-library.h"
#include "bd-output-name.h"
#include "bd-pixbuf.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum {
	EXIT_OK = 0,
	EXIT_SOME_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_SETUP = 3,
};

typedef enum { OUTPUT_CUTOUT, OUTPUT_MASK, OUTPUT_COMPOSITE } output_kind;

typedef struct {
	output_kind    kind;
	bd_background  background;
	GdkPixbuf     *background_pixbuf;
	bd_image       background_image;
	bd_run_options run;
	float          threshold, feather;
	int            quality;
	gboolean       quiet;
} job;

static char *opt_output_file, *opt_output_dir, *opt_format, *opt_output = "cutout", *opt_background;
static char *opt_device = "auto", *opt_model, *opt_precision = "fast";
static double opt_threshold = -1, opt_feather = 0;
static int opt_quality = 92, opt_threads = 0, opt_lanes = 0;
static gboolean opt_no_refine, opt_as_it_stands, opt_all_people, opt_quiet, opt_version, opt_overwrite, opt_overwrite_inputs;
static char **opt_inputs;

static const GOptionEntry entries[] = {
	{ "output-file", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output_file, N_("Write the result to FILE (one input only)"), N_("FILE") },
	{ "output-dir", 'd', 0, G_OPTION_ARG_FILENAME, &opt_output_dir, N_("Write results into DIR, named after the inputs"), N_("DIR") },
	{ "format", 'f', 0, G_OPTION_ARG_STRING, &opt_format, N_("File format with --output-dir: png (default), webp or jpg"), N_("FORMAT") },
	{ "output", 0, 0, G_OPTION_ARG_STRING, &opt_output, N_("What to write: cutout (default), mask or composite"), N_("KIND") },
	{ "background", 'b', 0, G_OPTION_ARG_STRING, &opt_background, N_("For composites: a colour (#rrggbb, white…), blur[:RADIUS] or an image file"), N_("BG") },
	{ "device", 0, 0, G_OPTION_ARG_STRING, &opt_device, N_("auto (default), cpu, cuda, cuda:N (the GPU numbered N, from 0) or cuda:all (every GPU)"), N_("DEVICE") },
	{ "precision", 0, 0, G_OPTION_ARG_STRING, &opt_precision, N_("fast (default) or exact"), N_("PRECISION") },
	{ "model", 'm', 0, G_OPTION_ARG_FILENAME, &opt_model, N_("Model file (default: the shipped model)"), N_("FILE") },
	{ "threshold", 't', 0, G_OPTION_ARG_DOUBLE, &opt_threshold, N_("Make the mask hard: opaque above T (0..1)"), N_("T") },
	{ "feather", 0, 0, G_OPTION_ARG_DOUBLE, &opt_feather, N_("Soften the mask's edge by PIXELS"), N_("PIXELS") },
	{ "no-refine", 0, 0, G_OPTION_ARG_NONE, &opt_no_refine, N_("Plain upsampling instead of edge-aware refinement"), NULL },
	{ "as-it-stands", 0, 0, G_OPTION_ARG_NONE, &opt_as_it_stands, N_("Do not also look at the photo turned a quarter for people lying down or sideways"), NULL },
	{ "keep-passers-by", 0, 0, G_OPTION_ARG_NONE, &opt_all_people, N_("Keep everyone found, passers-by too, not only the main subject"), NULL },
	/* The option's first name, kept for scripts; the app and the plug-in say "Keep passers-by". */
	{ "all-people", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &opt_all_people, NULL, NULL },
	{ "quality", 0, 0, G_OPTION_ARG_INT, &opt_quality, N_("JPEG quality, 1..100 (default 92)"), N_("Q") },
	{ "threads", 0, 0, G_OPTION_ARG_INT, &opt_threads, N_("CPU threads (default: one per core)"), N_("N") },
	/* Sessions side by side on each device (0: chosen below): lets the tests run several lanes
	 * on the CPU, and measures whether more lanes pay. Not for users. */
	{ "lanes", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_INT, &opt_lanes, NULL, NULL },
	{ "overwrite", 0, 0, G_OPTION_ARG_NONE, &opt_overwrite, N_("Replace output files that already exist (never an input)"), NULL },
	{ "overwrite-inputs", 0, 0, G_OPTION_ARG_NONE, &opt_overwrite_inputs, N_("Also let a photo's output replace that photo itself"), NULL },
	{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, N_("Print errors and the device only"), NULL },
	{ "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, N_("Print the version and exit"), NULL },
	{ G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_inputs, NULL, N_("INPUT…") },
	{ NULL }
};

static const char *description = N_(
	"Writes a cut-out (PNG or WebP keep transparency; JPEG is flattened onto white),\n"
	"the mask alone, or a composite over a new background. An INPUT may be a folder:\n"
	"its images are processed. One failed photo does not stop the others.\n"
	"An existing file is never replaced unless --overwrite is given, and an output never\n"
	"replaces an input (another photo, the background image, the model); --overwrite-inputs\n"
	"lets a photo's result replace that photo itself. Ctrl+C stops after removing the\n"
	"unfinished file and prints the summary.\n"
	"\n"
	"Examples:\n"
	"  backdrop-cli portrait.jpg -o cutout.png\n"
	"  backdrop-cli --output composite --background blur:30 portrait.jpg -o blurred.jpg\n"
	"  backdrop-cli --output mask photos/ --output-dir masks/\n"
	"\n"
	"Exit status:\n"
	"  0  every photo was processed\n"
	"  1  some photos failed (the summary lists them)\n"
	"  2  the command line is wrong\n"
	"  3  nothing could start: the model or the device is unusable\n"
	"  130, 143  interrupted by SIGINT (Ctrl+C) or SIGTERM");

static void
say (const job *j, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
say (const job *j, const char *format, ...)
{
	if (j && j->quiet)
		return;
	va_list args;
	va_start (args, format);
	vfprintf (stderr, format, args);
	va_end (args);
}

static gboolean
parse_background (job *j, const char *spec, GError **error)
{
	/* Without --background a composite goes on white (common/bd-background.h). */
	return bd_background_parse (spec, &j->background, &j->background_image, &j->background_pixbuf, error);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
	return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Inputs as given, folders replaced by the images inside them (the types of bd-image-types.h;
 * other files are skipped), in name order. */
static GPtrArray *
expand_inputs (char **inputs, GError **error)
{
	GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
	for (char **in = inputs; *in; in++) {
		if (!g_file_test (*in, G_FILE_TEST_IS_DIR)) {
			g_ptr_array_add (files, g_strdup (*in));
			continue;
		}
		g_autoptr (GDir) dir = g_dir_open (*in, 0, error);
		if (!dir) {
			g_ptr_array_unref (files);
			return NULL;
		}
		GPtrArray *found = g_ptr_array_new ();
		for (const char *name; (name = g_dir_read_name (dir));)
			if (bd_image_types_match_name (name))
				g_ptr_array_add (found, g_build_filename (*in, name, NULL));
		g_ptr_array_sort (found, compare_strings);
		for (guint i = 0; i < found->len; i++)
			g_ptr_array_add (files, found->pdata[i]);
		g_ptr_array_free (found, TRUE);
	}
	return files;
}

/* Files no output may write over: every photo, the background image, the model; known by
 * device and inode, so another name for the same file (a link, "./a.png") is caught too. */
typedef struct {
	dev_t       dev;
	ino_t       ino;
	const char *path;
} file_id;

static void
protect (GArray *ids, const char *path)
{
	GStatBuf st;
	if (path && g_stat (path, &st) == 0)
		g_array_append_val (ids, ((file_id) { st.st_dev, st.st_ino, path }));
}

/* Whether @output may be written for @input: FALSE with @error when it is a protected file
 * (other than @input itself with --overwrite-inputs) or exists without --overwrite.
 * *@replace says whether the save may replace a file. */
static gboolean
output_allowed (const char *input, const char *output, GArray *protected, gboolean *replace, GError **error)
{
	*replace = FALSE;
	GStatBuf out, in;
	if (g_stat (output, &out) != 0)
		return TRUE;   /* the save claims the name atomically, should it appear meanwhile */
	gboolean own = g_stat (input, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
	if (own) {
		if (opt_overwrite_inputs) {
			*replace = TRUE;
			return TRUE;
		}
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS,
		             _("%s would overwrite its input (use --overwrite-inputs to allow it)"), output);
		return FALSE;
	}
	for (guint i = 0; i < protected->len; i++) {
		const file_id *id = &g_array_index (protected, file_id, i);
		if (id->dev == out.st_dev && id->ino == out.st_ino) {
			if (g_strcmp0 (output, id->path) == 0)
				g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS,
				             _("%s is read by this run, and no output replaces an input"), output);
			else
				g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS,
				             _("%s would overwrite %s, which this run reads"), output, id->path);
			return FALSE;
		}
	}
	if (!opt_overwrite) {
		g_set_error (error, BD_IO_ERROR, BD_IO_ERROR_EXISTS,
		             _("%s already exists (use --overwrite to replace it)"), output);
		return FALSE;
	}
	*replace = TRUE;
	return TRUE;
}

/* SIGINT and SIGTERM are taken by a thread of their own (sigwait), never by a handler: it
 * cancels the run, which stops the network between layers and the encoder between writes,
 * removes the unfinished file, and prints the summary. A second signal ends at once. */
static GCancellable *interrupt;
static gint interrupt_signal;
static sigset_t stop_signals;

static gpointer
watch_signals (gpointer data)
{
	int sig;
	if (sigwait (&stop_signals, &sig) != 0)
		return NULL;
	g_atomic_int_set (&interrupt_signal, sig);
	g_cancellable_cancel (interrupt);
	if (sigwait (&stop_signals, &sig) == 0)
		_exit (128 + sig);
	return NULL;
}

/* On a thread of its own: the CUDA runtime's start, which the first session would make. */
static gpointer
start_cuda (gpointer data)
{
	bd_device_count (BD_DEVICE_CUDA);
	return NULL;
}

static int
on_progress (float fraction, void *data)
{
	return g_cancellable_is_cancelled (data);
}

/* The cut-out or composite of @photo with its mask @alpha; on @session's threads, or with
 * none on the calling thread alone. */
static GdkPixbuf *
compose (const job *j, bd_session *session, GdkPixbuf *photo, const guint8 *alpha, GError **error)
{
	int w = gdk_pixbuf_get_width (photo), h = gdk_pixbuf_get_height (photo);
	bd_image image;
	if (!bd_pixbuf_view (photo, &image, error))
		return NULL;
	g_autoptr (GdkPixbuf) result = bd_pixbuf_new_result (w, h, error);
	if (!result)
		return NULL;
	bd_background transparent = { .kind = BD_BACKGROUND_TRANSPARENT };
	const bd_background *bg = j->kind == OUTPUT_CUTOUT ? &transparent : &j->background;
	guint8 *out = gdk_pixbuf_get_pixels (result);
	size_t out_stride = (size_t) gdk_pixbuf_get_rowstride (result);
	bd_error err = { 0 };
	if ((session ? bd_session_composite (session, &image, alpha, (size_t) w, bg, out, out_stride, &err)
	             : bd_composite_in_thread (&image, alpha, (size_t) w, bg, out, out_stride, &err)) != BD_OK) {
		bd_library_set_error (error, &err, NULL);
		return NULL;
	}
	return g_steal_pointer (&result);
}

#define ALPHA_KEY "backdrop-cli-alpha"

/* What is saved for @photo and its finished mask @alpha: the mask, or the cut-out or
 * composite (on @session's threads, or with none on the calling thread). */
static GdkPixbuf *
result_for (const job *j, bd_session *session, GdkPixbuf *photo, const guint8 *alpha, GError **error)
{
	if (j->kind == OUTPUT_MASK)
		return bd_pixbuf_new_mask (alpha, gdk_pixbuf_get_width (photo), gdk_pixbuf_get_height (photo),
		                           (gsize) gdk_pixbuf_get_width (photo), error);
	return compose (j, session, photo, alpha, error);
}

/* The result for a decoded @photo, ready to save; on a lane's thread, with that lane's
 * @session. With @finish_later the lane runs the network alone and the photo comes back with
 * its raw mask attached, for finish_saved. */
static GdkPixbuf *
compute (const job *j, bd_session *session, GdkPixbuf *photo, gboolean finish_later, GError **error)
{
	int w = gdk_pixbuf_get_width (photo), h = gdk_pixbuf_get_height (photo);
	bd_image image;
	if (!bd_pixbuf_view (photo, &image, error))   /* never: bd_image_load gives 8-bit RGB(A) */
		return NULL;
	g_autofree guint8 *alpha = g_try_malloc ((gsize) w * h);
	if (!alpha) {
		g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY, _("Out of memory for a %d×%d photo"), w, h);
		return NULL;
	}
	bd_run_options run = j->run;
	if (finish_later)
		run.main_subject_only = run.decisive = 0;   /* finish_saved makes both passes */
	bd_error err = { 0 };
	if (bd_session_run (session, &image, &run, alpha, (size_t) w, &err) != BD_OK ||
	    (!finish_later && (j->threshold >= 0 || j->feather > 0) &&
	     bd_session_mask_adjust (session, alpha, (uint32_t) w, (uint32_t) h, (size_t) w, j->threshold,
	                            j->feather, &err) != BD_OK)) {
		bd_library_set_error (error, &err, NULL);
		return NULL;
	}
	if (!finish_later)
		return result_for (j, session, photo, alpha, error);
	g_object_set_data_full (G_OBJECT (photo), ALPHA_KEY, g_steal_pointer (&alpha), g_free);
	return g_object_ref (photo);
}

/* Names given to this run's outputs (full paths), so that two inputs of one name (from two
 * folders) do not write over each other. */
typedef struct {
	const char *dir;
	GHashTable *used;
} output_names;

static gboolean
name_taken (const char *name, gpointer data)
{
	const output_names *names = data;
	g_autofree char *path = g_build_filename (names->dir, name, NULL);
	return g_hash_table_contains (names->used, path);
}

/* The rule every program follows (bd-output-name.h): "a-cutout.png", then "a-cutout-2.png". */
static char *
output_name (const char *input, const char *kind, const char *ext, output_names *names)
{
	g_autofree char *name = bd_output_name (input, kind, ext, name_taken, names);
	char *path = g_build_filename (names->dir, name, NULL);
	g_hash_table_add (names->used, g_strdup (path));
	return path;
}

/* What the run needs to name, check and report its photos, and what it has done so far. */
typedef struct {
	const job    *j;
	const char   *kind_name, *ext;
	output_names *names;
	GArray       *protected;
	gboolean      finish_later;  /* masks finished on the encoders (finish_saved) */
	guint         done;
	GPtrArray    *failed;
} run_state;

/* Before a photo is decoded, in input order: its output's name, and whether it may be written. */
static gboolean
prepare_photo (BdBatchPhoto *photo, gpointer data, GError **error)
{
	run_state *r = data;
	photo->output = opt_output_file ? g_strdup (opt_output_file)
	                                : output_name (photo->input, r->kind_name, r->ext, r->names);
	gboolean replace = FALSE;
	if (!output_allowed (photo->input, photo->output, r->protected, &replace, error))
		return FALSE;
	photo->flags = (replace ? BD_SAVE_REPLACE : BD_SAVE_NO_REPLACE) | (r->j->kind == OUTPUT_MASK ? BD_SAVE_MASK : 0);
	photo->quality = r->j->quality;
	return TRUE;
}

static GdkPixbuf *
compute_photo (bd_session *session, GdkPixbuf *pixels, const BdBatchPhoto *photo, gpointer data, GError **error)
{
	const run_state *r = data;
	return compute (r->j, session, pixels, r->finish_later, error);
}

/* On an encoder, for a photo that compute left with its raw mask: the passes bd_session_run
 * would have made (main subject, then decisive), the threshold and feather, then the result,
 * all on this thread. */
static GdkPixbuf *
finish_saved (GdkPixbuf *computed, const BdBatchPhoto *photo, gpointer data, GError **error)
{
	const run_state *r = data;
	const job *j = r->j;
	guint8 *alpha = g_object_get_data (G_OBJECT (computed), ALPHA_KEY);
	if (!alpha)
		return g_object_ref (computed);
	uint32_t w = (uint32_t) gdk_pixbuf_get_width (computed), h = (uint32_t) gdk_pixbuf_get_height (computed);
	bd_error err = { 0 };
	if ((j->run.main_subject_only && bd_mask_drop_passers_by (alpha, w, h, w, &err) != BD_OK) ||
	    (j->run.decisive && bd_mask_make_decisive (alpha, w, h, w, &err) != BD_OK) ||
	    ((j->threshold >= 0 || j->feather > 0) &&
	     bd_mask_adjust (alpha, w, h, w, j->threshold, j->feather, &err) != BD_OK)) {
		bd_library_set_error (error, &err, NULL);
		return NULL;
	}
	return result_for (j, NULL, computed, alpha, error);
}

/* One line per photo, in input order: its result, or why it failed. With several photos the
 * line also tells the rate so far and the time left at that rate. */
static void
report_photo (const BdBatchPhoto *p, const GError *e, const BdBatchProgress *progress, gpointer data)
{
	run_state *r = data;
	if (!e) {
		r->done++;
		double ms = p->seconds * 1000;
		if (progress->total > 1 && progress->elapsed > 0)
			say (r->j, _("[%u/%u] %s → %s (%.0f ms; %.2f photos/s, %.0f s left)\n"), p->index + 1, progress->total,
			     p->input, p->output, ms, progress->photos_per_s, progress->seconds_left);
		else
			say (r->j, "[%u/%u] %s → %s (%.0f ms)\n", p->index + 1, progress->total, p->input, p->output, ms);
	} else if (g_error_matches (e, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
		fprintf (stderr, "[%u/%u] %s: %s\n", p->index + 1, progress->total, p->input,
		         _("interrupted; its unfinished output was removed"));
	} else {
		fprintf (stderr, "[%u/%u] %s: %s\n", p->index + 1, progress->total, p->input, e->message);
		g_ptr_array_add (r->failed, g_strdup (p->input));
	}
}

int
main (int argc, char **argv)
{
	/* Before any thread starts, so that every thread (the library's too) inherits the mask. */
	sigemptyset (&stop_signals);
	sigaddset (&stop_signals, SIGINT);
	sigaddset (&stop_signals, SIGTERM);
	pthread_sigmask (SIG_BLOCK, &stop_signals, NULL);
	setlocale (LC_ALL, "");
	bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
	bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
	textdomain (GETTEXT_PACKAGE);

	g_autoptr (GOptionContext) ctx = g_option_context_new (_("(-o OUTPUT | --output-dir DIR)"));
	g_option_context_set_summary (ctx, _("Remove or replace the background of portrait photos."));
	g_option_context_set_description (ctx, _(description));
	g_option_context_add_main_entries (ctx, entries, GETTEXT_PACKAGE);
	g_autoptr (GError) error = NULL;
	if (!g_option_context_parse (ctx, &argc, &argv, &error)) {
		fprintf (stderr, "backdrop-cli: %s\n%s\n", error->message, _("Try “backdrop-cli --help”."));
		return EXIT_USAGE;
	}
	if (opt_version) {
		/* The library's own version too: it is a shared library, and may be another build. */
		printf ("backdrop-cli %s (libbackdrop %s)\n", PACKAGE_VERSION, bd_version ());
		return EXIT_OK;
	}

	job j = { .quiet = opt_quiet, .quality = opt_quality };
	const char *usage_error = NULL;
	if (!opt_inputs || !opt_inputs[0])
		usage_error = _("No input photo given.");
	else if (!opt_output_file == !opt_output_dir)
		usage_error = _("Give exactly one of -o FILE or --output-dir DIR.");
	else if (!g_strcmp0 (opt_output, "cutout"))
		j.kind = OUTPUT_CUTOUT;
	else if (!g_strcmp0 (opt_output, "mask"))
		j.kind = OUTPUT_MASK;
	else if (!g_strcmp0 (opt_output, "composite"))
		j.kind = OUTPUT_COMPOSITE;
	else
		usage_error = _("--output must be cutout, mask or composite.");

	bd_session_options sopts;
	bd_session_options_init (&sopts);
	sopts.threads = opt_threads;
	gboolean every_gpu = FALSE;
	if (!usage_error) {
		if (!bd_library_parse_devices (opt_device, &sopts.device, &sopts.device_index, &every_gpu))
			usage_error = g_str_has_prefix (opt_device, "cuda:")
			              ? _("--device cuda:N needs a GPU number N, 0 for the first; cuda:all takes every GPU.")
			              : _("--device must be auto, cpu, cuda, cuda:N or cuda:all.");
	}
	if (!usage_error) {
		if (!g_strcmp0 (opt_precision, "fast")) sopts.precision = BD_PRECISION_FAST;
		else if (!g_strcmp0 (opt_precision, "exact")) sopts.precision = BD_PRECISION_EXACT;
		else usage_error = _("--precision must be fast or exact.");
	}
	const char *ext = "png";
	if (!usage_error && opt_format) {
		if (!g_ascii_strcasecmp (opt_format, "png") || !g_ascii_strcasecmp (opt_format, "webp"))
			ext = opt_format;
		else if (!g_ascii_strcasecmp (opt_format, "jpg") || !g_ascii_strcasecmp (opt_format, "jpeg"))
			ext = "jpg";
		else
			usage_error = _("--format must be png, webp or jpg.");
	}
	if (!usage_error && opt_output_file && !bd_image_format_supported (opt_output_file))
		usage_error = _("The output file's name must end in .png, .webp, .jpg or .jpeg.");
	if (!usage_error && (opt_quality < 1 || opt_quality > 100))
		usage_error = _("--quality must be from 1 to 100.");
	/* Written so that NaN fails every test. */
	if (!usage_error && (!(opt_threshold <= 1) || !(opt_feather >= 0 && opt_feather <= 500) || opt_threads < 0 ||
	                     opt_lanes < 0 || opt_lanes > 64))
		usage_error = _("--threshold must be at most 1, --feather within 0..500, --threads not negative.");
	if (!usage_error && j.kind != OUTPUT_COMPOSITE && opt_background)
		usage_error = _("--background goes with --output composite.");
	if (usage_error) {
		fprintf (stderr, "backdrop-cli: %s\n%s\n", usage_error, _("Try “backdrop-cli --help”."));
		return EXIT_USAGE;
	}
	if (j.kind == OUTPUT_COMPOSITE && !parse_background (&j, opt_background, &error)) {
		fprintf (stderr, "backdrop-cli: %s\n", error->message);
		return EXIT_USAGE;
	}
	j.threshold = (float) opt_threshold;
	j.feather = (float) opt_feather;
	bd_run_options_init (&j.run);
	j.run.refine_edges = !opt_no_refine;
	j.run.upright = !opt_as_it_stands;
	j.run.main_subject_only = !opt_all_people;
	interrupt = g_cancellable_new ();
	j.run.progress = on_progress;
	j.run.user_data = interrupt;
	g_thread_unref (g_thread_new ("signals", watch_signals, NULL));

	g_autoptr (GPtrArray) inputs = expand_inputs (opt_inputs, &error);
	if (!inputs) {
		fprintf (stderr, "backdrop-cli: %s\n", error->message);
		return EXIT_USAGE;
	}
	if (inputs->len == 0) {
		fprintf (stderr, "backdrop-cli: %s\n", _("The folders given hold no images."));
		return EXIT_USAGE;
	}
	if (opt_output_file && inputs->len > 1) {
		fprintf (stderr, "backdrop-cli: %s\n", _("-o takes one input; use --output-dir for several."));
		return EXIT_USAGE;
	}
	if (opt_output_dir && !g_file_test (opt_output_dir, G_FILE_TEST_IS_DIR) &&
	    g_mkdir_with_parents (opt_output_dir, 0755) != 0) {
		int e = errno;
		g_autofree char *dir_name = g_filename_display_name (opt_output_dir);
		fprintf (stderr, "backdrop-cli: ");
		fprintf (stderr, _("Cannot create the output folder %s: %s"), dir_name, g_strerror (e));
		fprintf (stderr, "\n");
		return EXIT_SETUP;
	}

	/* CUDA's start (0.1-0.2 s on the GPU machine) runs while the model is read (60-80 ms),
	 * instead of after it inside the first session's creation. Joined before anything else
	 * can end the program. */
	GThread *cuda_start = sopts.device != BD_DEVICE_CPU ? g_thread_new ("cuda-start", start_cuda, NULL) : NULL;
	g_autofree char *model_path = opt_model ? g_strdup (opt_model) : bd_library_default_model ();
	bd_model *model = NULL;
	bd_session **sessions = NULL;
	guint lanes = 0;
	gboolean model_read = bd_library_open_model (model_path, &model, &error);
	if (cuda_start)
		g_thread_join (g_steal_pointer (&cuda_start));
	guint per_device = (guint) MAX (opt_lanes, 1);
	gboolean made = model_read &&
	                bd_library_new_sessions (model, &sopts, every_gpu, per_device, &sessions, &lanes, &error);
	/* On a GPU the device composes anything but a picture background (bd_session_composite):
	 * the lanes then finish each photo themselves, and the savers only encode. */
	gboolean on_device = made && bd_session_device (sessions[0]) == BD_DEVICE_CUDA &&
	                     (j.kind == OUTPUT_CUTOUT ||
	                      (j.kind == OUTPUT_COMPOSITE && j.background.kind != BD_BACKGROUND_IMAGE));
	if (made && opt_lanes == 0 && inputs->len > 1 && bd_session_device (sessions[0]) == BD_DEVICE_CUDA &&
	    (j.kind == OUTPUT_MASK || on_device)) {
		/* A folder on a GPU: two lanes a card, so that one photo's copies and host steps run
		 * while the other's kernels do. On an H200, in turns, 100 masks went from 142-167 to
		 * 177-196 photos/s and 300 from 280-300 to 328-383. A cut-out's lane also waits for
		 * the main-subject and decisive passes between its kernels: a third lane took 400
		 * cut-outs on an H100 from 190-209 to 225-235 photos/s, and left masks where they
		 * were (docs/PERFORMANCE.md). A session starts in about 8 ms on a running context. */
		bd_library_free_sessions (g_steal_pointer (&sessions));
		sopts.device = BD_DEVICE_CUDA;
		per_device = on_device ? 3 : 2;
		made = bd_library_new_sessions (model, &sopts, every_gpu, per_device, &sessions, &lanes, &error);
	}
	if (!made) {
		fprintf (stderr, "backdrop-cli: %s\n", error->message);
		bd_model_free (model);
		return EXIT_SETUP;
	}
	/* Always said, even with --quiet: which device ran is part of the result. */
	g_autoptr (GString) devices = g_string_new (NULL);
	for (guint i = 0; i < lanes; i += per_device)   /* each device once, whatever its lanes */
		g_string_append_printf (devices, i ? " + %s" : "%s", bd_session_device_description (sessions[i]));
	fprintf (stderr, "backdrop-cli: ");
	/* TRANSLATORS: %s is the processor that runs the network, e.g. "CPU (2 threads)", or
	 * several joined by " + " (one per GPU). */
	fprintf (stderr, _("using %s"), devices->str);
	fprintf (stderr, "\n");

	/* A run killed outright (SIGKILL, a power cut) leaves its temporary file: clear them. */
	g_autofree char *out_dir = opt_output_dir ? g_strdup (opt_output_dir) : g_path_get_dirname (opt_output_file);
	guint leftovers = bd_image_remove_leftovers (out_dir);
	if (leftovers)
		say (&j, ngettext ("backdrop-cli: removed %u unfinished file left in %s by an interrupted run\n",
		                   "backdrop-cli: removed %u unfinished files left in %s by an interrupted run\n",
		                   leftovers), leftovers, out_dir);

	g_autoptr (GArray) protected = g_array_new (FALSE, FALSE, sizeof (file_id));
	for (guint i = 0; i < inputs->len; i++)
		protect (protected, inputs->pdata[i]);
	if (j.kind == OUTPUT_COMPOSITE && j.background.kind == BD_BACKGROUND_IMAGE)
		protect (protected, opt_background);
	protect (protected, model_path);

	g_autoptr (GHashTable) used = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
	output_names names = { opt_output_dir, used };
	static const char *const kind_names[] = {
		[OUTPUT_CUTOUT] = BD_OUTPUT_CUTOUT, [OUTPUT_MASK] = BD_OUTPUT_MASK, [OUTPUT_COMPOSITE] = BD_OUTPUT_COMPOSITE,
	};
	g_autoptr (GPtrArray) failed = g_ptr_array_new_with_free_func (g_free);
	/* In a folder the lanes run the network alone and go on with the next photos, while the
	 * encoders finish the masks (the main-subject and decisive passes), compose cut-outs and
	 * save, several side by side: one photo at a time on every core, these steps leave most
	 * cores waiting (bench/composite, bench/mask-passes). A lone photo is finished at once on
	 * its session's threads, which is sooner, and so is every photo whose GPU composes it. */
	run_state r = { .j = &j, .kind_name = kind_names[j.kind], .ext = ext, .names = &names, .protected = protected,
	                .finish_later = inputs->len > 1 && !on_device, .failed = failed };
	/* Photos decode on threads ahead of the network, which runs on a lane per session, and
	 * are saved (most of a GPU run's time) on workers; reported in input order. A bounded
	 * number are in flight, so memory stays flat on any folder (bd-batch-run.h). */
	static const BdBatchFuncs funcs = { .prepare = prepare_photo, .compute = compute_photo, .finish = finish_saved,
	                                    .report = report_photo };
	BdBatchOptions batch = { .sessions = sessions, .lanes = lanes };
	if (bd_session_device (sessions[0]) == BD_DEVICE_CUDA) {
		/* A GPU lane takes a photo every 2 ms: one decoder (a 1 MP JPEG, 4-5 ms) and savers
		 * on half the cores fell behind it (on 16 cores the decoder was 72% busy, the eight
		 * savers 85-90%: docs/PERFORMANCE.md). On the CPU the network is the slow step. */
		guint cores = g_get_num_processors ();
		batch.look_ahead = MAX (2, cores / 4);
		batch.encoders = cores > batch.look_ahead + lanes ? cores - batch.look_ahead - lanes : 1;
	}
	gint64 start = g_get_monotonic_time ();
	bd_batch_run ((const char *const *) inputs->pdata, inputs->len, &batch, &funcs, &r, interrupt);
	guint done = r.done;
	double seconds = (g_get_monotonic_time () - start) / 1e6;
	int sig = g_atomic_int_get (&interrupt_signal);
	if (sig)
		fprintf (stderr, ngettext ("backdrop-cli: interrupted (%s): %u of %u photo done in %.1f s\n",
		                           "backdrop-cli: interrupted (%s): %u of %u photos done in %.1f s\n",
		                           inputs->len),
		         sig == SIGINT ? "SIGINT" : "SIGTERM", done, inputs->len, seconds);
	else if (failed->len == 0)
		say (&j, ngettext ("backdrop-cli: %u photo done in %.1f s\n", "backdrop-cli: %u photos done in %.1f s\n",
		                   inputs->len), inputs->len, seconds);
	if (failed->len) {
		fprintf (stderr, ngettext ("backdrop-cli: %u of %u photo failed:\n", "backdrop-cli: %u of %u photos failed:\n",
		                           inputs->len), failed->len, inputs->len);
		for (guint i = 0; i < failed->len; i++)
			fprintf (stderr, "  %s\n", (const char *) failed->pdata[i]);
	}
	bd_library_free_sessions (sessions);
	bd_model_free (model);
	g_clear_object (&j.background_pixbuf);
	if (sig)
		return 128 + sig;
	return failed->len ? EXIT_SOME_FAILED : EXIT_OK;
}
