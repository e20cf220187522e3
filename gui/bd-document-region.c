/* SPDX-License-Identifier: Apache-2.0 */
/* Click to keep or remove a whole region: the connected part of the mask under the click
 * (for a removed part, within the photo's edges) and the soft fringe that falls off from it
 * become marks in one undoable edit. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "bd-document-private.h"
#include "bd-mask-view.h"

/* Neighbours whose colours differ by more than this (in any channel, of 255) have an edge of
 * the photo between them. */
#define EDGE_STEP 24

typedef struct
{
  const guint8 *mask;
  const guint8 *marks;     /* NULL: none */
  const guint8 *photo;
  gsize         stride;
  int           channels;
  int           width, height;
} Planes;

/* The mask as the marks decide it, before threshold and feather. */
static inline guint8
decided (const Planes *p,
         gsize         i)
{
  return p->marks != NULL ? bd_mark_decide (p->marks[i], p->mask[i]) : p->mask[i];
}

static inline gboolean
same_colour (const Planes *p,
             int           x0,
             int           y0,
             int           x1,
             int           y1)
{
  const guint8 *a = p->photo + (gsize) y0 * p->stride + (gsize) x0 * p->channels;
  const guint8 *b = p->photo + (gsize) y1 * p->stride + (gsize) x1 * p->channels;

  return abs (a[0] - b[0]) <= EDGE_STEP && abs (a[1] - b[1]) <= EDGE_STEP &&
         abs (a[2] - b[2]) <= EDGE_STEP;
}

/* Breadth first from the pixels queued in @queue[0..@n), over 4-neighbours that @accept
 * takes, for at most @steps rings (G_MAXINT: no limit); marks them in @region and returns
 * the new length of @queue. */
typedef gboolean (*Accept) (const Planes *p, gboolean seed_in, int x0, int y0, int x1, int y1);

static gsize
grow (const Planes *p,
      guint8       *region,
      guint32      *queue,
      gsize         n,
      gsize         start,
      int           steps,
      gboolean      seed_in,
      Accept        accept)
{
  static const int dx[4] = { 1, -1, 0, 0 }, dy[4] = { 0, 0, 1, -1 };
  gsize head = start, ring_end = n;

  for (int step = 0; head < n && step < steps; )
    {
      guint32 i = queue[head++];
      int x = i % p->width, y = i / p->width;

      for (int k = 0; k < 4; k++)
        {
          int nx = x + dx[k], ny = y + dy[k];
          gsize j = (gsize) ny * p->width + nx;

          if (nx < 0 || ny < 0 || nx >= p->width || ny >= p->height || region[j] ||
              !accept (p, seed_in, x, y, nx, ny))
            continue;
          region[j] = 1;
          queue[n++] = j;
        }

      if (head == ring_end)
        {
          step++;
          ring_end = n;
        }
    }

  return n;
}

/* The region itself: the mask on the clicked side; for a removed part also no edge of the
 * photo crossed, else a click on a bag would keep the whole background. */
static gboolean
accept_side (const Planes *p,
             gboolean      seed_in,
             int           x0,
             int           y0,
             int           x1,
             int           y1)
{
  guint8 a = decided (p, (gsize) y1 * p->width + x1);

  if (seed_in)
    return a >= 128;
  return a < 128 && same_colour (p, x0, y0, x1, y1);
}

/* Its fringe: the undecided pixels around it whose alpha falls off away from it (rises, for
 * a removed part), as far as the mask's own soft edge goes, so that no halo of the region
 * stays behind; the fringe of another object rises towards that object and is left alone. */
#define FALL_OFF_NOISE 8

static gboolean
accept_fringe (const Planes *p,
               gboolean      seed_in,
               int           x0,
               int           y0,
               int           x1,
               int           y1)
{
  int from = decided (p, (gsize) y0 * p->width + x0);
  int a = decided (p, (gsize) y1 * p->width + x1);

  if (a <= BD_MASK_UNSURE_LOW || a >= BD_MASK_UNSURE_HIGH)
    return FALSE;
  return seed_in ? a <= from + FALL_OFF_NOISE : a >= from - FALL_OFF_NOISE;
}

typedef struct
{
  guint      generation;
  GdkPixbuf *photo;
  GBytes    *mask;
  GBytes    *marks;
  int        x, y;
  /* Found: */
  guint32   *pixels;
  gsize      n_pixels;
  BdMark     mark;
  GdkRectangle area;
} RegionJob;

static void
region_job_free (RegionJob *job)
{
  g_clear_object (&job->photo);
  g_clear_pointer (&job->mask, g_bytes_unref);
  g_clear_pointer (&job->marks, g_bytes_unref);
  g_free (job->pixels);
  g_free (job);
}

static void
region_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  RegionJob *job = task_data;
  Planes p;
  gsize n_pixels, n, seed;
  g_autofree guint8 *region = NULL;
  guint32 *queue;
  gboolean seed_in;
  int x0, y0, x1, y1;

  p.width = gdk_pixbuf_get_width (job->photo);
  p.height = gdk_pixbuf_get_height (job->photo);
  p.mask = g_bytes_get_data (job->mask, NULL);
  p.marks = job->marks ? g_bytes_get_data (job->marks, NULL) : NULL;
  p.photo = gdk_pixbuf_read_pixels (job->photo);
  p.stride = gdk_pixbuf_get_rowstride (job->photo);
  p.channels = gdk_pixbuf_get_n_channels (job->photo);

  n_pixels = (gsize) p.width * p.height;
  region = g_try_malloc0 (n_pixels);
  queue = g_try_new (guint32, n_pixels);
  if (region == NULL || queue == NULL)
    {
      g_free (queue);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NO_SPACE, "Not enough memory");
      return;
    }

  seed = (gsize) job->y * p.width + job->x;
  seed_in = decided (&p, seed) >= 128;
  region[seed] = 1;
  queue[0] = seed;
  n = grow (&p, region, queue, 1, 0, G_MAXINT, seed_in, accept_side);
  /* At most 3 % of the diagonal out: soft edges are narrower than that. */
  n = grow (&p, region, queue, n, 0, (int) ceil (0.03 * hypot (p.width, p.height)), seed_in,
            accept_fringe);

  x0 = p.width;
  y0 = p.height;
  x1 = y1 = -1;
  for (gsize k = 0; k < n; k++)
    {
      int qx = queue[k] % p.width, qy = queue[k] / p.width;

      x0 = MIN (x0, qx);
      y0 = MIN (y0, qy);
      x1 = MAX (x1, qx);
      y1 = MAX (y1, qy);
    }

  job->pixels = g_renew (guint32, queue, n);
  job->n_pixels = n;
  job->mark = seed_in ? BD_MARK_REMOVE : BD_MARK_KEEP;
  job->area = (GdkRectangle) { x0, y0, x1 - x0 + 1, y1 - y0 + 1 };
  g_task_return_boolean (task, TRUE);
}

/* Back on the main thread: the region becomes marks over the marks as they are now (edits
 * made meanwhile stay), as one edit. */
static void
region_found (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  BdDocument *self = BD_DOCUMENT (object);
  g_autoptr(GTask) outer = user_data;
  RegionJob *job = g_task_get_task_data (G_TASK (result));
  GError *error = NULL;
  gsize n_pixels;
  guint8 *marks;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      g_task_return_error (outer, error);
      return;
    }
  if (job->generation != self->generation || self->state != BD_DOCUMENT_STATE_READY)
    {
      g_task_return_int (outer, 0);
      return;
    }

  n_pixels = (gsize) gdk_pixbuf_get_width (self->photo) * gdk_pixbuf_get_height (self->photo);
  marks = self->marks ? g_memdup2 (g_bytes_get_data (self->marks, NULL), n_pixels) : g_malloc0 (n_pixels);
  for (gsize k = 0; k < job->n_pixels; k++)
    marks[job->pixels[k]] = job->mark;
  g_task_return_int (outer, bd_document_commit_marks (self, marks, &job->area));
}

/* A first look, for the screen only: the region found again at the preview's size (from
 * the mask sampled there and the photo's preview: a sixteenth of the pixels of a 12 MP
 * photo) and painted into a copy of the result's preview, while the region at full size is
 * still being found. Only over a transparent or plain colour background, as the patches of
 * bd-document-patch.c. */
typedef struct
{
  guint      generation;
  guint64    serial;       /* the document's edits when clicked: a later one drops this */
  GBytes    *mask;
  GBytes    *marks;
  GBytes    *original;     /* the photo's preview, packed */
  int        channels;
  GBytes    *preview;      /* the result's preview, premultiplied RGBA */
  int        width, height, preview_width, preview_height;
  double     x, y;
  guint8     fill[4];      /* premultiplied: what is behind a removed pixel */
} DraftJob;

static void
draft_job_free (DraftJob *job)
{
  g_clear_pointer (&job->mask, g_bytes_unref);
  g_clear_pointer (&job->marks, g_bytes_unref);
  g_clear_pointer (&job->original, g_bytes_unref);
  g_clear_pointer (&job->preview, g_bytes_unref);
  g_free (job);
}

static void
draft_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  DraftJob *job = task_data;
  int pw = job->preview_width, ph = job->preview_height;
  gsize n_pixels = (gsize) pw * ph, n, seed;
  const guint8 *mask = g_bytes_get_data (job->mask, NULL);
  const guint8 *marks = job->marks ? g_bytes_get_data (job->marks, NULL) : NULL;
  const guint8 *original = g_bytes_get_data (job->original, NULL);
  g_autofree guint8 *small = g_malloc (n_pixels);
  g_autofree guint8 *region = g_malloc0 (n_pixels);
  g_autofree guint32 *queue = g_new (guint32, n_pixels);
  Planes p = { small, NULL, original, (gsize) pw * job->channels, job->channels, pw, ph };
  Planes full = { mask, marks, NULL, 0, 0, job->width, job->height };
  int sx = CLAMP ((int) (job->x * pw / job->width), 0, pw - 1);
  int sy = CLAMP ((int) (job->y * ph / job->height), 0, ph - 1);
  gboolean seed_in;
  guint8 *pixels;
  gsize size;

  /* The mask as decided, sampled at the preview's pixel centres. */
  for (int y = 0; y < ph; y++)
    {
      gsize row = (gsize) ((y + 0.5) * job->height / ph) * job->width;

      for (int x = 0; x < pw; x++)
        small[(gsize) y * pw + x] = decided (&full, row + (gsize) ((x + 0.5) * job->width / pw));
    }

  seed = (gsize) sy * pw + sx;
  seed_in = small[seed] >= 128;
  region[seed] = 1;
  queue[0] = seed;
  n = grow (&p, region, queue, 1, 0, G_MAXINT, seed_in, accept_side);
  n = grow (&p, region, queue, n, 0, (int) ceil (0.03 * hypot (pw, ph)), seed_in, accept_fringe);

  pixels = g_bytes_unref_to_data (g_bytes_ref (job->preview), &size);
  for (gsize k = 0; k < n; k++)
    {
      guint8 *o = pixels + (gsize) queue[k] * 4;
      const guint8 *src = original + (gsize) queue[k] * job->channels;

      if (seed_in)
        memcpy (o, job->fill, 4);
      else
        {
          o[0] = src[0];
          o[1] = src[1];
          o[2] = src[2];
          o[3] = 255;
        }
    }

  g_task_return_pointer (task, g_bytes_new_take (pixels, size), (GDestroyNotify) g_bytes_unref);
}

static void
draft_done (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  BdDocument *self = BD_DOCUMENT (object);
  DraftJob *job = g_task_get_task_data (G_TASK (result));
  g_autoptr(GBytes) bytes = g_task_propagate_pointer (G_TASK (result), NULL);
  g_autoptr(GdkTexture) texture = NULL;

  /* The click's edit (or another) is there already: its patch says it exactly. */
  if (bytes == NULL || job->generation != self->generation || job->serial != self->serial ||
      self->preview_serial != self->serial)
    return;

  texture = bd_texture_new (bytes, job->preview_width, job->preview_height, 4, TRUE);
  g_clear_pointer (&self->result_preview_bytes, g_bytes_unref);
  self->result_preview_bytes = g_bytes_ref (bytes);
  g_set_object (&self->result_preview, texture);
  bd_document_notify (self, PROP_PREVIEW);
}

static void
start_draft (BdDocument *self,
             double      x,
             double      y)
{
  g_autoptr(GTask) task = NULL;
  DraftJob *job;
  const GdkRGBA *c = &self->look.background_color;

  if (self->result_preview_bytes == NULL || self->preview_pixels == NULL ||
      self->preview_serial != self->serial ||
      (self->look.background_kind != BD_BACKGROUND_TRANSPARENT &&
       self->look.background_kind != BD_BACKGROUND_COLOR))
    return;

  job = g_new0 (DraftJob, 1);
  job->generation = self->generation;
  job->serial = self->serial;
  job->mask = g_bytes_ref (self->mask);
  job->marks = self->marks ? g_bytes_ref (self->marks) : NULL;
  job->original = g_bytes_ref (self->preview_pixels);
  job->channels = self->preview_channels;
  job->preview = g_bytes_ref (self->result_preview_bytes);
  job->width = gdk_pixbuf_get_width (self->photo);
  job->height = gdk_pixbuf_get_height (self->photo);
  job->preview_width = gdk_texture_get_width (self->result_preview);
  job->preview_height = gdk_texture_get_height (self->result_preview);
  job->x = x;
  job->y = y;
  if (self->look.background_kind == BD_BACKGROUND_COLOR)
    {
      double a = CLAMP (c->alpha, 0.f, 1.f);

      job->fill[0] = CLAMP (c->red, 0.f, 1.f) * a * 255 + 0.5;
      job->fill[1] = CLAMP (c->green, 0.f, 1.f) * a * 255 + 0.5;
      job->fill[2] = CLAMP (c->blue, 0.f, 1.f) * a * 255 + 0.5;
      job->fill[3] = a * 255 + 0.5;
    }

  task = g_task_new (self, NULL, draft_done, NULL);
  g_task_set_task_data (task, job, (GDestroyNotify) draft_job_free);
  g_task_run_in_thread (task, draft_thread);
}

void
bd_document_toggle_region_async (BdDocument          *self,
                                 double               x,
                                 double               y,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  GTask *outer;
  g_autoptr(GTask) task = NULL;
  RegionJob *job;
  int sx = (int) floor (x), sy = (int) floor (y);

  g_return_if_fail (BD_IS_DOCUMENT (self));

  outer = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (outer, bd_document_toggle_region_async);

  if (self->state != BD_DOCUMENT_STATE_READY || self->mask == NULL || sx < 0 || sy < 0 ||
      sx >= gdk_pixbuf_get_width (self->photo) || sy >= gdk_pixbuf_get_height (self->photo))
    {
      g_task_return_int (outer, 0);
      g_object_unref (outer);
      return;
    }

  job = g_new0 (RegionJob, 1);
  job->generation = self->generation;
  job->photo = g_object_ref (self->photo);
  job->mask = g_bytes_ref (self->mask);
  job->marks = self->marks ? g_bytes_ref (self->marks) : NULL;
  job->x = sx;
  job->y = sy;

  /* Off the main loop: on a 12 MP photo a person is millions of pixels. A first look at
   * the preview's size comes meanwhile. */
  start_draft (self, x, y);
  task = g_task_new (self, cancellable, region_found, outer);
  g_task_set_task_data (task, job, (GDestroyNotify) region_job_free);
  g_task_run_in_thread (task, region_thread);
}

guint64
bd_document_toggle_region_finish (BdDocument    *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), 0);

  return g_task_propagate_int (G_TASK (result), error);
}
