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
  if (p->marks != NULL && p->marks[i] == BD_MARK_KEEP)
    return 255;
  if (p->marks != NULL && p->marks[i] == BD_MARK_REMOVE)
    return 0;
  return p->mask[i];
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

guint64
bd_document_toggle_region (BdDocument *self,
                           double      x,
                           double      y)
{
  Planes p;
  int sx = (int) floor (x), sy = (int) floor (y);
  gsize n_pixels, n, seed;
  g_autofree guint8 *region = NULL;
  g_autofree guint32 *queue = NULL;
  gboolean seed_in;
  guint8 *marks;
  int x0, y0, x1, y1;

  g_return_val_if_fail (BD_IS_DOCUMENT (self), 0);

  if (self->state != BD_DOCUMENT_STATE_READY || self->mask == NULL)
    return 0;

  p.width = gdk_pixbuf_get_width (self->photo);
  p.height = gdk_pixbuf_get_height (self->photo);
  if (sx < 0 || sy < 0 || sx >= p.width || sy >= p.height)
    return 0;

  p.mask = g_bytes_get_data (self->mask, NULL);
  p.marks = self->marks ? g_bytes_get_data (self->marks, NULL) : NULL;
  p.photo = gdk_pixbuf_read_pixels (self->photo);
  p.stride = gdk_pixbuf_get_rowstride (self->photo);
  p.channels = gdk_pixbuf_get_n_channels (self->photo);

  n_pixels = (gsize) p.width * p.height;
  region = g_try_malloc0 (n_pixels);
  queue = g_try_new (guint32, n_pixels);
  if (region == NULL || queue == NULL)
    return 0;

  seed = (gsize) sy * p.width + sx;
  seed_in = decided (&p, seed) >= 128;
  region[seed] = 1;
  queue[0] = seed;
  n = grow (&p, region, queue, 1, 0, G_MAXINT, seed_in, accept_side);
  /* At most 3 % of the diagonal out: soft edges are narrower than that. */
  n = grow (&p, region, queue, n, 0, (int) ceil (0.03 * hypot (p.width, p.height)), seed_in,
            accept_fringe);

  /* The new marks, and the rectangle the edit spans. */
  marks = p.marks ? g_memdup2 (p.marks, n_pixels) : g_malloc0 (n_pixels);
  x0 = p.width;
  y0 = p.height;
  x1 = y1 = -1;
  for (gsize k = 0; k < n; k++)
    {
      int qx = queue[k] % p.width, qy = queue[k] / p.width;

      marks[queue[k]] = seed_in ? BD_MARK_REMOVE : BD_MARK_KEEP;
      x0 = MIN (x0, qx);
      y0 = MIN (y0, qy);
      x1 = MAX (x1, qx);
      y1 = MAX (y1, qy);
    }

  return bd_document_commit_marks (self, marks,
                                   &(GdkRectangle) { x0, y0, x1 - x0 + 1, y1 - y0 + 1 });
}
