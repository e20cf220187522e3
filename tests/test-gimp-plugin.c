/* SPDX-License-Identifier: Apache-2.0 */
/* The GIMP plug-in end to end.
 *
 * GIMP 3 without a display (gimp-console-3.0), with a private profile that holds only this
 * build's plug-in, runs plug-in-backdrop-remove-background from Script-Fu on a real photo
 * (tests/test-gimp-plugin.scm) in every output mode, at every precision, on moved layers and
 * on several layers at once. Each result is exported as a PNG whose alpha is the person
 * mask and compared pixel by pixel with `backdrop-cli --output mask` on the same PNG.
 *
 * Skips, saying why, when GIMP, the CLI, the model or the photos are missing.
 * Environment (set by plugin-gimp/meson.build): BACKDROP_GIMP_CONSOLE, BACKDROP_GIMP_PLUGIN,
 * BACKDROP_GIMP_SCRIPT, BACKDROP_TEST_CLI, BACKDROP_TEST_MODEL, BACKDROP_TEST_DATASETS.
 */

#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

#define PLUG_IN_NAME "backdrop-remove-background"

/* What a result must reach: this share of pixels within 1/255 of the CLI's mask. */
#define MIN_AGREEMENT 0.999

typedef struct
{
  const gchar *gimp;
  const gchar *plugin;
  const gchar *script;
  const gchar *cli;
  const gchar *model;
  gchar       *source;        /* a photo of the data set */
  gchar       *skip;          /* why every test skips, or NULL */

  gboolean     prepared;
  gchar       *dir;           /* everything below is made in here */
  gchar       *home;
  gchar       *profile;
  gchar       *photo;         /* the photo as PNG, as both GIMP and the CLI read it */
  gchar       *photo_gray;
  gchar       *photo_large;
  gchar       *mask;          /* backdrop-cli's masks of those */
  gchar       *mask_gray;
  gchar       *mask_large;
} Fixture;

static Fixture fx;


/* ---- running things -------------------------------------------------------------------- */

/* Runs @argv; TRUE when it exited with 0. @what names it in the log. */
static gboolean
spawn (const gchar         *what,
       const gchar * const *argv,
       gchar              **envp,
       gchar              **err_out)
{
  gchar  *out = NULL, *err = NULL;
  gint    status = 0;
  GError *error = NULL;
  gboolean ok;

  ok = g_spawn_sync (NULL, (gchar **) argv, envp, G_SPAWN_SEARCH_PATH, NULL, NULL,
                     &out, &err, &status, &error);
  g_assert_no_error (error);
  ok = ok && g_spawn_check_wait_status (status, NULL);

  if (! ok)
    g_test_message ("%s exited with an error:\n%s%s", what, out, err);
  g_free (out);

  if (err_out)
    *err_out = err;
  else
    g_free (err);

  return ok;
}

/* A path as a Script-Fu string literal. */
static gchar *
scheme_string (const gchar *text)
{
  GString *s = g_string_new ("\"");

  for (const gchar *p = text; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (s, '\\');
      g_string_append_c (s, *p);
    }
  g_string_append_c (s, '"');

  return g_string_free (s, FALSE);
}

/* Runs @expr after loading the test's Script-Fu in gimp-console; TRUE when it succeeded.
 * @err_out gets GIMP's error output. */
static gboolean
run_gimp (const gchar  *expr,
          gchar       **err_out)
{
  gchar   *script = scheme_string (fx.script);
  gchar   *batch  = g_strdup_printf ("(begin (load %s) %s)", script, expr);
  gchar  **envp   = g_get_environ ();
  gboolean ok;
  const gchar *argv[] = {
    "timeout", "-k", "10", "600",
    fx.gimp, "-i", "-d", "-f", "--quit",
    "--batch-interpreter=plug-in-script-fu-eval", "-b", batch,
    NULL
  };

  envp = g_environ_setenv (envp, "HOME", fx.home, TRUE);
  envp = g_environ_setenv (envp, "GIMP3_DIRECTORY", fx.profile, TRUE);
  envp = g_environ_setenv (envp, "LC_ALL", "C.UTF-8", TRUE);
  envp = g_environ_unsetenv (envp, "LANGUAGE");
  envp = g_environ_unsetenv (envp, "DISPLAY");
  envp = g_environ_unsetenv (envp, "BACKDROP_MODEL");

  ok = spawn ("GIMP", argv, envp, err_out);

  g_strfreev (envp);
  g_free (batch);
  g_free (script);

  return ok;
}

/* backdrop-cli's mask of @photo, with more options (up to eight) before NULL. */
static gboolean
run_cli (const gchar *photo,
         const gchar *mask,
         ...)
{
  const gchar *argv[20] = {
    fx.cli, "--quiet", "--output", "mask", "--device", "cpu", "--model", fx.model, "-o", mask,
  };
  gint         argc = 10;
  const gchar *arg;
  va_list      args;

  va_start (args, mask);
  while ((arg = va_arg (args, const gchar *)) && argc < 18)
    argv[argc++] = arg;
  va_end (args);
  argv[argc] = photo;

  return spawn ("backdrop-cli", argv, NULL, NULL);
}

static gchar *
path (const gchar *name)
{
  return g_build_filename (fx.dir, name, NULL);
}

/* Calls (FUNCTION "ARG" ...) in GIMP, the strings quoted; the rest of @tail verbatim. */
static gboolean
gimp_call (gchar       **err_out,
           const gchar  *function,
           const gchar  *tail,
           ...)
{
  GString     *expr = g_string_new ("(");
  const gchar *arg;
  va_list      args;
  gboolean     ok;

  g_string_append (expr, function);
  va_start (args, tail);
  while ((arg = va_arg (args, const gchar *)))
    {
      gchar *quoted = scheme_string (arg);

      g_string_append_printf (expr, " %s", quoted);
      g_free (quoted);
    }
  va_end (args);
  g_string_append_printf (expr, " %s)", tail ? tail : "");

  ok = run_gimp (expr->str, err_out);
  g_string_free (expr, TRUE);

  return ok;
}


/* ---- set-up ---------------------------------------------------------------------------- */

static gchar *
find_photo (const gchar *datasets)
{
  gchar       *images = g_build_filename (datasets, "ccp-person", "images", NULL);
  GDir        *dir    = g_dir_open (images, 0, NULL);
  const gchar *name;
  gchar       *first  = NULL;

  /* The first photo in name order, so that every run sees the same one. */
  while (dir && (name = g_dir_read_name (dir)))
    if (g_str_has_suffix (name, ".webp") && (! first || strcmp (name, first) < 0))
      {
        g_free (first);
        first = g_strdup (name);
      }

  if (dir)
    g_dir_close (dir);

  if (first)
    {
      gchar *file = g_build_filename (images, first, NULL);

      g_free (first);
      first = file;
    }
  g_free (images);

  return first;
}

static const gchar *
env_path (const gchar *name)
{
  const gchar *value = g_getenv (name);

  return value && *value ? value : NULL;
}

/* Decides whether the tests can run at all; the reason when they cannot. */
static void
look_around (void)
{
  const gchar *datasets = env_path ("BACKDROP_TEST_DATASETS");

  fx.gimp   = env_path ("BACKDROP_GIMP_CONSOLE");
  fx.plugin = env_path ("BACKDROP_GIMP_PLUGIN");
  fx.script = env_path ("BACKDROP_GIMP_SCRIPT");
  fx.cli    = env_path ("BACKDROP_TEST_CLI");
  fx.model  = env_path ("BACKDROP_TEST_MODEL");

  if (! fx.gimp || ! g_file_test (fx.gimp, G_FILE_TEST_IS_EXECUTABLE))
    fx.skip = g_strdup ("gimp-console-3.0 is not installed");
  else if (! fx.plugin || ! g_file_test (fx.plugin, G_FILE_TEST_IS_EXECUTABLE) ||
           ! fx.script || ! g_file_test (fx.script, G_FILE_TEST_EXISTS))
    fx.skip = g_strdup ("run me through meson test (the plug-in's paths are not set)");
  else if (! fx.cli || ! g_file_test (fx.cli, G_FILE_TEST_IS_EXECUTABLE))
    fx.skip = g_strdup_printf ("backdrop-cli is not built (%s)", fx.cli ? fx.cli : "unset");
  else if (! fx.model || ! g_file_test (fx.model, G_FILE_TEST_EXISTS))
    fx.skip = g_strdup_printf ("the model %s is not there yet", fx.model ? fx.model : "");
  else if (! datasets || ! (fx.source = find_photo (datasets)))
    fx.skip = g_strdup_printf ("no photos in %s/ccp-person/images",
                               datasets ? datasets : "(unset)");
}

/* A private GIMP profile whose plug-in folder holds this build's plug-in, then the photo
 * as PNG (colour, grey, four times larger) and the CLI's masks of them. */
static void
prepare (void)
{
  GError *error = NULL;
  gchar  *folder, *link;

  fx.dir = g_dir_make_tmp ("test-gimp-plugin-XXXXXX", &error);
  g_assert_no_error (error);
  fx.home    = path ("home");
  fx.profile = path ("profile");
  folder     = g_build_filename (fx.profile, "plug-ins", PLUG_IN_NAME, NULL);
  g_assert_cmpint (g_mkdir_with_parents (fx.home, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (folder, 0700), ==, 0);

  /* GIMP only loads plug-ins/NAME/NAME. A copy, as a user might put it there by hand: the
   * plug-in needs no library path of its own. */
  link = g_build_filename (folder, PLUG_IN_NAME, NULL);
  {
    GFile *from = g_file_new_for_path (fx.plugin), *to = g_file_new_for_path (link);
    g_assert_true (g_file_copy (from, to, G_FILE_COPY_NONE, NULL, NULL, NULL, &error));
    g_assert_no_error (error);
    g_assert_cmpint (g_chmod (link, 0755), ==, 0);
    g_object_unref (from);
    g_object_unref (to);
  }
  g_free (link);
  g_free (folder);

  fx.photo       = path ("photo.png");
  fx.photo_gray  = path ("photo-gray.png");
  fx.photo_large = path ("photo-large.png");
  fx.mask        = path ("cli-mask.png");
  fx.mask_gray   = path ("cli-mask-gray.png");
  fx.mask_large  = path ("cli-mask-large.png");

  g_test_message ("photo: %s; work folder: %s", fx.source, fx.dir);
  g_assert_true (gimp_call (NULL, "bd-convert", NULL,
                            fx.source, fx.photo, fx.photo_gray, NULL));
  g_assert_true (gimp_call (NULL, "bd-scale", "4", fx.photo, fx.photo_large, NULL));

  g_assert_true (run_cli (fx.photo, fx.mask, NULL));
  g_assert_true (run_cli (fx.photo_gray, fx.mask_gray, NULL));
  g_assert_true (run_cli (fx.photo_large, fx.mask_large, NULL));

  fx.prepared = TRUE;
}

static gboolean
ready (void)
{
  if (fx.skip)
    {
      g_test_skip (fx.skip);
      return FALSE;
    }
  if (! fx.prepared)
    prepare ();

  return TRUE;
}

static gboolean
remove_tree (const gchar *dir)
{
  const gchar *argv[] = { "rm", "-rf", "--", dir, NULL };

  return spawn ("rm", argv, NULL, NULL);
}


/* ---- checking results ------------------------------------------------------------------ */

static GdkPixbuf *
load (const gchar *file)
{
  GError    *error = NULL;
  GdkPixbuf *pixbuf = gdk_pixbuf_new_from_file (file, &error);

  g_assert_no_error (error);

  return pixbuf;
}

/* The result's alpha against the CLI's grey mask, pixel by pixel; the top-left @hole x @hole
 * pixels must be fully transparent instead. */
static void
assert_matches_cli (const gchar        *result_file,
                    const gchar        *mask_file,
                    gint                hole)
{
  GdkPixbuf *result = load (result_file);
  GdkPixbuf *mask   = load (mask_file);
  gint       width  = gdk_pixbuf_get_width (mask);
  gint       height = gdk_pixbuf_get_height (mask);
  gint       rn     = gdk_pixbuf_get_n_channels (result);
  gint       mn     = gdk_pixbuf_get_n_channels (mask);
  guint64    close = 0, compared = 0, person = 0, worst = 0, above = 0, below = 0;
  gint       lowest = 255, highest = 0;
  gint       left = width, right = -1, top = height, bottom = -1;   /* where they differ */

  g_assert_cmpint (gdk_pixbuf_get_width (result), ==, width);
  g_assert_cmpint (gdk_pixbuf_get_height (result), ==, height);
  g_assert_true (gdk_pixbuf_get_has_alpha (result));

  for (gint y = 0; y < height; y++)
    {
      const guint8 *r = gdk_pixbuf_read_pixels (result) + (gsize) y * gdk_pixbuf_get_rowstride (result);
      const guint8 *m = gdk_pixbuf_read_pixels (mask) + (gsize) y * gdk_pixbuf_get_rowstride (mask);

      for (gint x = 0; x < width; x++)
        {
          gint alpha = r[x * rn + rn - 1];
          gint want  = m[x * mn];
          gint diff  = ABS (alpha - want);

          if (x < hole && y < hole)
            {
              g_assert_cmpint (alpha, ==, 0);
              continue;
            }

          compared++;
          close  += diff <= 1;
          person += want >= 128;
          above  += alpha > want + 1;
          below  += alpha < want - 1;
          if (diff > 1)
            {
              left   = MIN (left, x);
              right  = MAX (right, x);
              top    = MIN (top, y);
              bottom = MAX (bottom, y);
            }
          worst   = MAX (worst, (guint64) diff);
          lowest  = MIN (lowest, want);
          highest = MAX (highest, want);
        }
    }

  g_test_message ("%s: %.3f%% of %" G_GUINT64_FORMAT " pixels within 1/255 of backdrop-cli's "
                  "mask (largest difference %" G_GUINT64_FORMAT "/255); %.1f%% person",
                  result_file, 100.0 * close / compared, compared, worst,
                  100.0 * person / compared);

  /* An empty or uniform mask would match anything that did nothing. */
  g_assert_cmpint (lowest, <, highest);
  if ((gdouble) close / compared < MIN_AGREEMENT)
    {
      /* Seen once in CI (78% of pixels agreeing, u16-perceptual) and not again in a dozen
       * runs: say where they differ, on stderr, which the CI log shows, and keep both. */
      gchar *here        = g_get_current_dir ();
      gchar *kept_result = g_build_filename (here, "failed-result.png", NULL);
      gchar *kept_mask   = g_build_filename (here, "failed-cli-mask.png", NULL);

      g_printerr ("%s: %" G_GUINT64_FORMAT " pixels above, %" G_GUINT64_FORMAT " below the CLI's "
                  "mask, within x %d..%d, y %d..%d of %dx%d; kept as %s and %s\n", result_file, above,
                  below, left, right, top, bottom, width, height, kept_result, kept_mask);
      gdk_pixbuf_save (result, kept_result, "png", NULL, NULL);
      gdk_pixbuf_save (mask, kept_mask, "png", NULL, NULL);
      g_free (kept_result);
      g_free (kept_mask);
      g_free (here);
    }
  g_assert_cmpfloat ((gdouble) close / compared, >=, MIN_AGREEMENT);

  g_object_unref (mask);
  g_object_unref (result);
}

/* Runs one output mode at one precision (a Script-Fu constant) and checks it. */
static void
check_case (const gchar *output,
            const gchar *precision,
            gboolean     gray)
{
  gchar *name   = g_strdup_printf ("%s-%s%s.png", output, precision, gray ? "-gray" : "");
  gchar *result = path (name);
  gchar *tail   = g_strdup_printf ("%s", precision);

  if (! ready ())
    goto out;

  g_assert_true (gimp_call (NULL, "bd-case", tail,
                            gray ? fx.photo_gray : fx.photo, result, fx.model, output, NULL));
  assert_matches_cli (result, gray ? fx.mask_gray : fx.mask, 0);

out:
  g_free (tail);
  g_free (result);
  g_free (name);
}


/* ---- the tests ------------------------------------------------------------------------- */

static void
test_output_mask (void)
{
  check_case ("mask", "PRECISION-U8-NON-LINEAR", FALSE);
}

static void
test_output_alpha (void)
{
  check_case ("alpha", "PRECISION-U8-NON-LINEAR", FALSE);
}

static void
test_output_layer (void)
{
  check_case ("layer", "PRECISION-U8-NON-LINEAR", FALSE);
}

static void
test_output_selection (void)
{
  check_case ("selection", "PRECISION-U8-NON-LINEAR", FALSE);
}

static void
test_precision_u16_linear (void)
{
  check_case ("mask", "PRECISION-U16-LINEAR", FALSE);
}

static void
test_precision_u16_perceptual (void)
{
  check_case ("alpha", "PRECISION-U16-NON-LINEAR", FALSE);
}

static void
test_precision_float_linear (void)
{
  check_case ("mask", "PRECISION-FLOAT-LINEAR", FALSE);
}

static void
test_precision_float_perceptual (void)
{
  check_case ("selection", "PRECISION-FLOAT-NON-LINEAR", FALSE);
}

static void
test_grayscale (void)
{
  check_case ("mask", "PRECISION-U8-NON-LINEAR", TRUE);
}

static void
test_grayscale_u16 (void)
{
  check_case ("alpha", "PRECISION-U16-LINEAR", TRUE);
}

/* Two layers at once, one moved by (40, 30): each mask in its layer's own coordinates. */
static void
test_offsets (void)
{
  gchar *a, *b;

  if (! ready ())
    return;

  a = path ("offsets-a.png");
  b = path ("offsets-b.png");
  g_assert_true (gimp_call (NULL, "bd-case-offsets", NULL, fx.photo, a, b, fx.model, NULL));
  assert_matches_cli (a, fx.mask, 0);
  assert_matches_cli (b, fx.mask, 0);
  g_free (b);
  g_free (a);
}

/* The selection of a moved layer lands on the layer. */
static void
test_selection_offsets (void)
{
  gchar *result;

  if (! ready ())
    return;

  result = path ("selection-offsets.png");
  g_assert_true (gimp_call (NULL, "bd-case-selection-offsets", NULL,
                            fx.photo, result, fx.model, NULL));
  assert_matches_cli (result, fx.mask, 0);
  g_free (result);
}

/* Select ▸ Person: the people become the selection, as the Selection output makes it. */
static void
test_select_person (void)
{
  gchar *result;

  if (! ready ())
    return;

  result = path ("select-person.png");
  g_assert_true (gimp_call (NULL, "bd-case-select-person", NULL, fx.photo, result, fx.model, NULL));
  assert_matches_cli (result, fx.mask, 0);
  g_free (result);
}

/* A layer that already has alpha keeps its transparent parts transparent. */
static void
test_existing_alpha (void)
{
  gchar *result;

  if (! ready ())
    return;

  result = path ("existing-alpha.png");
  g_assert_true (gimp_call (NULL, "bd-case-existing-alpha", "64",
                            fx.photo, result, fx.model, NULL));
  assert_matches_cli (result, fx.mask, 64);
  g_free (result);
}

/* Four times the photo: the mask comes back at full size and still matches. */
static void
test_large_photo (void)
{
  gchar *result;

  if (! ready ())
    return;

  result = path ("large.png");
  g_assert_true (gimp_call (NULL, "bd-case", "PRECISION-U8-NON-LINEAR",
                            fx.photo_large, result, fx.model, "mask", NULL));
  assert_matches_cli (result, fx.mask_large, 0);
  g_free (result);
}

/* Edge refinement off, a threshold and a feather reach the library as the CLI's do. */
static void
test_options (void)
{
  gchar *result, *mask;

  if (! ready ())
    return;

  result = path ("options.png");
  mask   = path ("cli-mask-options.png");
  g_assert_true (run_cli (fx.photo, mask, "--no-refine", "--threshold", "0.5",
                          "--feather", "3", NULL));
  g_assert_true (gimp_call (NULL, "bd-case-options", "FALSE 0.5 3.0",
                            fx.photo, result, fx.model, NULL));
  assert_matches_cli (result, mask, 0);
  g_free (mask);
  g_free (result);
}

/* The fraction of pixels where two masks differ by more than 1/255. */
static gdouble
fraction_differing (const gchar *a_file,
                    const gchar *b_file)
{
  GdkPixbuf *a  = load (a_file);
  GdkPixbuf *b  = load (b_file);
  gint       an = gdk_pixbuf_get_n_channels (a);
  gint       bn = gdk_pixbuf_get_n_channels (b);
  gint       w  = gdk_pixbuf_get_width (a);
  gint       h  = gdk_pixbuf_get_height (a);
  guint64    differing = 0;

  g_assert_cmpint (gdk_pixbuf_get_width (b), ==, w);
  g_assert_cmpint (gdk_pixbuf_get_height (b), ==, h);
  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++)
      {
        gint va = gdk_pixbuf_read_pixels (a)[(gsize) y * gdk_pixbuf_get_rowstride (a) + x * an];
        gint vb = gdk_pixbuf_read_pixels (b)[(gsize) y * gdk_pixbuf_get_rowstride (b) + x * bn];

        differing += ABS (va - vb) > 1;
      }
  g_object_unref (a);
  g_object_unref (b);

  return (gdouble) differing / ((gdouble) w * h);
}

/* Keeping everyone reaches the library as the CLI's --all-people does. On ccp0381 (a man
 * walks behind the subject, apart from her) the default mask leaves him out, so the two CLI
 * masks differ by more than the agreement allows, and a plug-in that dropped the argument
 * would fail here. */
static void
test_all_people (void)
{
  gchar *result, *mask, *photo, *gray, *source, *cli_default, *images;

  if (! ready ())
    return;

  images = g_path_get_dirname (fx.source);
  source = g_build_filename (images, "ccp0381.webp", NULL);
  g_free (images);
  if (! g_file_test (source, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("ccp0381.webp (a passer-by apart from the subject) is not in the data set");
      g_free (source);
      return;
    }
  photo       = path ("passer-by.png");
  gray        = path ("passer-by-gray.png");
  result      = path ("all-people.png");
  mask        = path ("cli-mask-all-people.png");
  cli_default = path ("cli-mask-passer-by.png");
  g_assert_true (gimp_call (NULL, "bd-convert", NULL, source, photo, gray, NULL));
  g_assert_true (run_cli (photo, cli_default, NULL));
  g_assert_true (run_cli (photo, mask, "--all-people", NULL));
  g_assert_cmpfloat (fraction_differing (mask, cli_default), >, 1.0 - MIN_AGREEMENT);
  g_assert_true (gimp_call (NULL, "bd-case-all-people", NULL,
                            photo, result, fx.model, NULL));
  assert_matches_cli (result, mask, 0);
  g_free (cli_default);
  g_free (gray);
  g_free (photo);
  g_free (source);
  g_free (mask);
  g_free (result);
}

static void
assert_error (const gchar *model,
              const gchar *device,
              const gchar *message)
{
  gchar   *err = NULL;
  gboolean ok  = gimp_call (&err, "bd-case-error", NULL, fx.photo, model, device, NULL);

  g_test_message ("GIMP said: %s", err);
  g_assert_false (ok);
  g_assert_nonnull (strstr (err, "plug-in-backdrop-remove-background failed"));
  g_assert_nonnull (strstr (err, message));
  /* An execution error, not a crash of the plug-in or of GIMP. */
  g_assert_null (strstr (err, "crashed"));
  g_assert_null (strstr (err, "invalid input arguments"));
  g_free (err);
}

static void
test_error_corrupt_model (void)
{
  gchar  *model;
  GError *error = NULL;

  if (! ready ())
    return;

  /* The right magic and version, then the header breaks off. */
  static const gchar truncated[] = "BDMODEL\0\1\0\0\0\0\1\0\0 and no more";

  model = path ("corrupt.bdm");
  g_file_set_contents (model, truncated, sizeof truncated - 1, &error);
  g_assert_no_error (error);
  assert_error (model, "cpu", "Could not load the model");
  g_free (model);
}

static void
test_error_missing_model (void)
{
  gchar *model;

  if (! ready ())
    return;

  model = path ("no-such-model.bdm");
  assert_error (model, "auto", "Could not load the model");
  g_free (model);
}

/* No model argument, no $BACKDROP_MODEL and nothing installed (a plug-in copied into GIMP's
 * folder on its own): the message says to install Backdrop. */
static void
test_error_not_installed (void)
{
  const gchar *installed = g_getenv ("BACKDROP_INSTALLED_MODEL");
  gchar       *err = NULL;

  if (! ready ())
    return;
  if (! installed || g_file_test (installed, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("Backdrop is installed on this machine: the plug-in finds its model");
      return;
    }

  g_assert_false (gimp_call (&err, "bd-case-default-model", NULL, fx.photo, NULL));
  g_test_message ("GIMP said: %s", err);
  g_assert_nonnull (strstr (err, "model is not installed"));
  g_assert_nonnull (strstr (err, "meson install"));
  g_assert_null (strstr (err, "crashed"));
  g_free (err);
}

/* The line of @text that holds @start, from @start to the end of that line. */
static gchar *
line_from (const gchar *text,
           const gchar *start)
{
  const gchar *at = text ? strstr (text, start) : NULL;

  g_assert_nonnull (at);
  return g_strndup (at, strcspn (at, "\n"));
}

/* backdrop-cli on @photo with @model, expected to fail; its error output. */
static gchar *
cli_error (const gchar *photo,
           const gchar *model)
{
  g_autofree gchar *out = path ("same-as-cli.png");
  const gchar *argv[] = { fx.cli, "--device", "cpu", "--model", model, "-o", out, photo, NULL };
  gchar      **envp = g_get_environ ();
  gchar       *err = NULL;

  envp = g_environ_setenv (envp, "LC_ALL", "C.UTF-8", TRUE);
  envp = g_environ_unsetenv (envp, "LANGUAGE");
  g_assert_false (spawn ("backdrop-cli", argv, envp, &err));
  g_strfreev (envp);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  return err;
}

/* The same bad input gets the same words from the plug-in as from backdrop-cli: both come
 * from bd-library.h. A model that breaks off, and a photo over the size limit (GIMP opened
 * it; its layer carries the file's name, as GIMP names the layer of an opened file). */
static void
test_error_same_as_cli (void)
{
  static const gchar truncated[] = "BDMODEL\0\1\0\0\0\0\1\0\0 and no more";
  /* A TIFF header of 11000 x 11000 (121 megapixels) and no pixels: the size is all it says. */
  static const guint8 big_tiff[] = {
    'I', 'I', 42, 0, 8, 0, 0, 0,
    2, 0,
    0x00, 0x01, 4, 0, 1, 0, 0, 0, 0xf8, 0x2a, 0, 0,   /* ImageWidth, LONG, 11000 */
    0x01, 0x01, 4, 0, 1, 0, 0, 0, 0xf8, 0x2a, 0, 0,   /* ImageLength, LONG, 11000 */
    0, 0, 0, 0,
  };
  g_autofree gchar *model = path ("same-corrupt.bdm");
  g_autofree gchar *big = path ("big.tif");
  g_autofree gchar *cli_err = NULL, *gimp_err = NULL, *said = NULL;

  if (! ready ())
    return;

  g_assert_true (g_file_set_contents (model, truncated, sizeof truncated - 1, NULL));
  cli_err = cli_error (fx.photo, model);
  said = line_from (cli_err, "Could not load the model");
  g_assert_false (gimp_call (&gimp_err, "bd-case-error", NULL, fx.photo, model, "cpu", NULL));
  g_test_message ("backdrop-cli said: %s", said);
  g_test_message ("GIMP said: %s", gimp_err);
  g_assert_nonnull (strstr (gimp_err, said));
  g_clear_pointer (&cli_err, g_free);
  g_clear_pointer (&gimp_err, g_free);
  g_clear_pointer (&said, g_free);

  g_assert_true (g_file_set_contents (big, (const gchar *) big_tiff, sizeof big_tiff, NULL));
  cli_err = cli_error (big, fx.model);
  said = line_from (cli_err, "“");
  g_assert_nonnull (strstr (said, "11000×11000"));
  g_assert_false (gimp_call (&gimp_err, "bd-case-size", "11000 11000", big, fx.model, NULL));
  g_test_message ("backdrop-cli said: %s", said);
  g_test_message ("GIMP said: %s", gimp_err);
  g_assert_nonnull (strstr (gimp_err, said));
  g_assert_null (strstr (gimp_err, "crashed"));
}

/* Asking for the GPU works where there is one, and says so clearly where there is none. */
static void
test_gpu_or_clear_error (void)
{
  gchar *err = NULL;

  if (! ready ())
    return;

  if (gimp_call (&err, "bd-case-error", NULL, fx.photo, fx.model, "gpu", NULL))
    g_test_message ("the GPU ran");
  else
    {
      g_test_message ("GIMP said: %s", err);
      g_assert_nonnull (strstr (err, "Could not use the GPU"));
      g_assert_null (strstr (err, "crashed"));
    }
  g_free (err);
}

/* The card's number reaches the library: the GPU numbered 63 is on no machine we test on, so
 * insisting on it fails with the library's reason; Auto without it runs on the processor. */
static void
test_gpu_index (void)
{
  gchar *err = NULL;

  if (! ready ())
    return;

  g_assert_false (gimp_call (&err, "bd-case-gpu-index", "63", fx.photo, fx.model, "gpu", NULL));
  g_test_message ("GIMP said: %s", err);
  g_assert_nonnull (strstr (err, "Could not use the GPU"));
  g_assert_null (strstr (err, "crashed"));
  g_assert_null (strstr (err, "invalid input arguments"));
  g_clear_pointer (&err, g_free);

  g_assert_true (gimp_call (&err, "bd-case-gpu-index", "63", fx.photo, fx.model, "auto", NULL));
  g_free (err);
}

int
main (int   argc,
      char *argv[])
{
  int status;

  g_test_init (&argc, &argv, NULL);
  look_around ();

  g_test_add_func ("/gimp-plugin/output/mask", test_output_mask);
  g_test_add_func ("/gimp-plugin/output/alpha", test_output_alpha);
  g_test_add_func ("/gimp-plugin/output/layer", test_output_layer);
  g_test_add_func ("/gimp-plugin/output/selection", test_output_selection);
  g_test_add_func ("/gimp-plugin/precision/u16-linear", test_precision_u16_linear);
  g_test_add_func ("/gimp-plugin/precision/u16-perceptual", test_precision_u16_perceptual);
  g_test_add_func ("/gimp-plugin/precision/float-linear", test_precision_float_linear);
  g_test_add_func ("/gimp-plugin/precision/float-perceptual", test_precision_float_perceptual);
  g_test_add_func ("/gimp-plugin/grayscale/u8", test_grayscale);
  g_test_add_func ("/gimp-plugin/grayscale/u16-linear", test_grayscale_u16);
  g_test_add_func ("/gimp-plugin/layers/offsets", test_offsets);
  g_test_add_func ("/gimp-plugin/layers/selection-offsets", test_selection_offsets);
  g_test_add_func ("/gimp-plugin/layers/existing-alpha", test_existing_alpha);
  g_test_add_func ("/gimp-plugin/select-person", test_select_person);
  g_test_add_func ("/gimp-plugin/large-photo", test_large_photo);
  g_test_add_func ("/gimp-plugin/options", test_options);
  g_test_add_func ("/gimp-plugin/all-people", test_all_people);
  g_test_add_func ("/gimp-plugin/errors/corrupt-model", test_error_corrupt_model);
  g_test_add_func ("/gimp-plugin/errors/missing-model", test_error_missing_model);
  g_test_add_func ("/gimp-plugin/errors/not-installed", test_error_not_installed);
  g_test_add_func ("/gimp-plugin/errors/same-as-cli", test_error_same_as_cli);
  g_test_add_func ("/gimp-plugin/errors/gpu", test_gpu_or_clear_error);
  g_test_add_func ("/gimp-plugin/errors/gpu-index", test_gpu_index);

  status = g_test_run ();

  /* Keep the work folder of a failed run to look at; the results of a good one go. */
  if (fx.dir && status == 0 && ! g_getenv ("BACKDROP_KEEP_TEST_FILES"))
    remove_tree (fx.dir);
  else if (fx.dir)
    g_printerr ("test-gimp-plugin: results kept in %s\n", fx.dir);

  return status;
}
