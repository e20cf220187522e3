/* SPDX-License-Identifier: Apache-2.0 */
/* The selected layers through the network. libgimp talks to GIMP from the plug-in's own
 * thread only, so that thread reads each layer and shows the progress, while a worker runs
 * the network on the layer read before: reading the next layer no longer waits for the last
 * one's network, nor the network for the read. */

#include "config.h"

#include <glib/gi18n-lib.h>

#include "bd-library.h"
#include "segment-layers.h"

/* A layer's network on a worker thread. */
typedef struct
{
  bd_session            *session;
  const SegmentSettings *settings;
  Job                   *job;
  bd_image               photo;
  guint8                *pixels;
  gboolean               has_alpha;
  GThread               *thread;
  gint                   permille;  /* atomic: the library's progress on the layer */
  gint                   cancel;    /* atomic: GIMP has gone away, stop */
  GMutex                 lock;
  GCond                  finished;
  gboolean               done;
  bd_status              status;
  bd_error               bd;
} LayerRun;

/* The layer as 8-bit sRGB (alpha too when it has one), the way the library takes photos. */
static guint8 *
read_photo (Job       *job,
            gboolean   with_alpha,
            bd_image  *photo,
            GError   **error)
{
  const Babl *format = babl_format (with_alpha ? "R'G'B'A u8" : "R'G'B' u8");
  gsize       bpp    = with_alpha ? 4 : 3;
  GeglBuffer *buffer;
  guint8     *pixels;

  pixels = g_try_malloc ((gsize) job->width * job->height * bpp);
  if (! pixels)
    {
      g_set_error (error, GIMP_PLUG_IN_ERROR, 0,
                   _("Not enough memory to read the %d × %d layer “%s”."),
                   job->width, job->height, job->name);
      return NULL;
    }

  buffer = gimp_drawable_get_buffer (GIMP_DRAWABLE (job->layer));
  gegl_buffer_get (buffer, GEGL_RECTANGLE (0, 0, job->width, job->height), 1.0,
                   format, pixels, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  g_object_unref (buffer);

  photo->pixels = pixels;
  photo->width  = job->width;
  photo->height = job->height;
  photo->stride = (gsize) job->width * bpp;
  photo->format = with_alpha ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8;

  return pixels;
}

static int
on_progress (float  fraction,
             void  *data)
{
  LayerRun *run = data;

  g_atomic_int_set (&run->permille, (gint) (CLAMP (fraction, 0.0f, 1.0f) * 1000.0f));

  return g_atomic_int_get (&run->cancel);
}

static gpointer
run_layer (gpointer data)
{
  LayerRun              *run      = data;
  const SegmentSettings *settings = run->settings;
  Job                   *job      = run->job;
  bd_run_options         options;
  bd_status              status;

  bd_run_options_init (&options);
  options.refine_edges      = settings->refine;
  options.main_subject_only = ! settings->all_people;
  options.progress          = on_progress;
  options.user_data         = run;

  status = bd_session_run (run->session, &run->photo, &options, job->alpha, job->width, &run->bd);
  if (status == BD_OK && (settings->threshold > 0.0 || settings->feather > 0.0))
    status = bd_session_mask_adjust (run->session, job->alpha, job->width, job->height, job->width,
                                     settings->threshold > 0.0 ? settings->threshold : -1.0f,
                                     settings->feather, &run->bd);

  /* A selection holds what can be seen: the person where the layer is not transparent. */
  if (status == BD_OK && settings->selection && run->has_alpha)
    for (gsize p = 0; p < (gsize) job->width * job->height; p++)
      job->alpha[p] = (job->alpha[p] * run->pixels[p * 4 + 3] + 127) / 255;

  g_mutex_lock (&run->lock);
  run->status = status;
  run->done   = TRUE;
  g_cond_signal (&run->finished);
  g_mutex_unlock (&run->lock);

  return NULL;
}

/* Waits for @run, layer @index of @n_jobs, moving GIMP's progress bar with it, then frees
 * it; FALSE with @error (when given) if it failed. */
static gboolean
finish_layer (LayerRun  *run,
              guint      index,
              guint      n_jobs,
              GError   **error)
{
  gdouble  shown = -1.0;
  gboolean ok;

  g_mutex_lock (&run->lock);
  while (! run->done)
    {
      gdouble value = (index + g_atomic_int_get (&run->permille) / 1000.0) / n_jobs;

      if (value - shown >= 0.005)
        {
          shown = value;
          g_mutex_unlock (&run->lock);
          /* Fails only when GIMP has gone away: stop working for nobody. */
          if (! gimp_progress_update (value))
            g_atomic_int_set (&run->cancel, 1);
          g_mutex_lock (&run->lock);
          continue;
        }
      g_cond_wait_until (&run->finished, &run->lock, g_get_monotonic_time () + 50 * G_TIME_SPAN_MILLISECOND);
    }
  g_mutex_unlock (&run->lock);
  if (run->thread)
    g_thread_join (run->thread);

  ok = run->status == BD_OK;
  if (! ok && error)
    {
      gchar *context = g_strdup_printf (_("Could not remove the background of “%s”"), run->job->name);

      bd_library_set_error (error, &run->bd, context);
      g_free (context);
    }

  g_free (run->pixels);
  g_mutex_clear (&run->lock);
  g_cond_clear (&run->finished);
  g_free (run);

  return ok;
}

gboolean
segment_layers (bd_session            *session,
                const SegmentSettings *settings,
                Job                   *jobs,
                guint                  n_jobs,
                GError               **error)
{
  LayerRun *running = NULL;
  guint     running_index = 0;
  gboolean  ok = TRUE;

  for (guint i = 0; i < n_jobs && ok; i++)
    {
      Job      *job = &jobs[i];
      LayerRun *run = g_new0 (LayerRun, 1);

      run->session   = session;
      run->settings  = settings;
      run->job       = job;
      run->has_alpha = gimp_drawable_has_alpha (GIMP_DRAWABLE (job->layer));
      g_mutex_init (&run->lock);
      g_cond_init (&run->finished);

      /* Read while the layer before runs. */
      job->alpha  = g_try_malloc ((gsize) job->width * job->height);
      run->pixels = job->alpha ? read_photo (job, run->has_alpha, &run->photo, error) : NULL;
      if (! job->alpha)
        g_set_error (error, GIMP_PLUG_IN_ERROR, 0, _("Not enough memory for the mask of “%s”."), job->name);

      if (running)
        {
          /* A read that failed has said so already: the run's error would hide it. */
          ok = finish_layer (running, running_index, n_jobs, run->pixels ? error : NULL) && run->pixels;
          running = NULL;
        }
      else
        ok = run->pixels != NULL;

      if (! ok)
        {
          g_free (run->pixels);
          g_mutex_clear (&run->lock);
          g_cond_clear (&run->finished);
          g_free (run);
          break;
        }

      /* TRANSLATORS: %s are a layer's name, then the processor, e.g. "NVIDIA H200". */
      gimp_progress_set_text_printf (_("Removing the background of “%s” (%s)"),
                                     job->name, bd_session_device_description (session));
      /* Without a thread to spare, the layer runs here, and the next read waits for it. */
      run->thread = g_thread_try_new ("backdrop-layer", run_layer, run, NULL);
      if (! run->thread)
        run_layer (run);
      running       = run;
      running_index = i;
    }

  if (running)
    ok = finish_layer (running, running_index, n_jobs, error);

  return ok;
}
