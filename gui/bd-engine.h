/* SPDX-License-Identifier: Apache-2.0 */
/* The one libbackdrop model and session that an application shares. Work runs in a GTask
 * thread, one photo at a time; the session is made on first use and again when the device
 * setting changes. */
#pragma once

#include <gio/gio.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

G_BEGIN_DECLS

#define BD_TYPE_ENGINE (bd_engine_get_type ())

G_DECLARE_FINAL_TYPE (BdEngine, bd_engine, BD, ENGINE, GObject)

/* Called in the main context of the caller with a fraction in [0, 1]. */
typedef void (*BdProgressFunc) (GObject *target,
                                double   fraction);

typedef struct
{
  GBytes *alpha;        /* width x height bytes, 255 = person */
  char   *device;       /* bd_session_device_description () of the session that ran */
  double  seconds;      /* time spent in bd_session_run () */
} BdSegmentation;

void            bd_segmentation_free        (BdSegmentation *segmentation);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (BdSegmentation, bd_segmentation_free)

BdEngine       *bd_engine_new               (const char          *model_path);
const char     *bd_engine_get_model_path    (BdEngine            *self);
/* "auto", "gpu" or "cpu", as in the GSettings key "device". */
const char     *bd_engine_get_device        (BdEngine            *self);
void            bd_engine_set_device        (BdEngine            *self,
                                             const char          *device);
/* Which NVIDIA card "auto" and "gpu" use, from 0, as the GSettings key "gpu-index". */
int             bd_engine_get_gpu_index     (BdEngine            *self);
void            bd_engine_set_gpu_index     (BdEngine            *self,
                                             int                  gpu_index);
/* TRUE: keep every person found, passers-by too, as the GSettings key "keep-all-people". */
gboolean        bd_engine_get_all_people    (BdEngine            *self);
void            bd_engine_set_all_people    (BdEngine            *self,
                                             gboolean             all_people);
/* What ran last, for people; NULL before the first run. */
char           *bd_engine_dup_device_description (BdEngine       *self);

void            bd_engine_segment_async     (BdEngine            *self,
                                             GdkPixbuf           *photo,
                                             BdProgressFunc       progress,
                                             GObject             *progress_target,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
BdSegmentation *bd_engine_segment_finish    (BdEngine            *self,
                                             GAsyncResult        *result,
                                             GError             **error);

G_END_DECLS
