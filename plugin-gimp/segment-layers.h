/* SPDX-License-Identifier: Apache-2.0 */
/* The selected layers through the network, one after another, each read from GIMP while the
 * one before it runs (segment-layers.c). */
#pragma once

#include <libgimp/gimp.h>

#include "backdrop.h"

/* One layer to segment, and its person mask once segmented. */
typedef struct
{
  GimpLayer *layer;
  gchar     *name;
  gint       x, y;          /* offsets in the image */
  gint       width, height;
  guint8    *alpha;         /* width x height, 255 = person */
} Job;

/* The procedure's settings that shape a mask. */
typedef struct
{
  gboolean refine;          /* edge-aware upsampling */
  gboolean all_people;      /* keep passers-by too */
  gdouble  threshold;       /* > 0: a hard mask, opaque above it */
  gdouble  feather;         /* > 0: the edge softened by this many pixels */
  gboolean selection;       /* the selection is the output: it holds only what can be seen */
} SegmentSettings;

/* Every job's mask into job->alpha, on @session, with GIMP's progress bar showing the way.
 * FALSE with @error at the first layer that fails (the masks made before it stay). */
gboolean segment_layers (bd_session            *session,
                         const SegmentSettings *settings,
                         Job                   *jobs,
                         guint                  n_jobs,
                         GError               **error);
