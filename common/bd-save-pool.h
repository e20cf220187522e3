/* SPDX-License-Identifier: Apache-2.0 */
/* Saving results on worker threads while the caller computes the next ones: a batch's
 * encoding (PNG and WebP are slow, and single-threaded) runs beside the network instead of
 * after it. Results come back in the order they were pushed, so that a program reports
 * photo by photo as before. */
#pragma once

#include "bd-image-io.h"

G_BEGIN_DECLS

typedef struct _BdSavePool BdSavePool;

/* @workers threads (at least one); @cancellable (may be NULL) stops the saves under way
 * (each removes its unfinished file) and makes those not yet started fail as cancelled. */
BdSavePool *bd_save_pool_new     (guint workers, GCancellable *cancellable);

/* What a worker does to a pushed image before saving it, e.g. composing the cut-out from the
 * photo and its mask off the thread that computed them: the image to save, or NULL with
 * @error (the save fails with it). @user_data is the push's. Runs on every worker at once. */
typedef GdkPixbuf *(*BdSaveFinish) (GdkPixbuf *pushed, gpointer user_data, gpointer finish_data, GError **error);

/* Sets the step above, before the first push; none: images are saved as pushed. */
void        bd_save_pool_set_finish (BdSavePool *pool, BdSaveFinish finish, gpointer finish_data);

/* Queues @rgba (a reference is taken) to be written to @path with bd_image_save_full. */
void        bd_save_pool_push    (BdSavePool *pool, GdkPixbuf *rgba, const char *path, int jpeg_quality,
                                  BdSaveFlags flags, gpointer user_data);

/* Saves pushed and not yet popped. */
guint       bd_save_pool_pending (BdSavePool *pool);

/* The oldest save pushed and not yet popped, once it has finished (with @wait, waiting for
 * it): TRUE, its @user_data, and @error set when it failed. FALSE when it is still running
 * (without @wait) or when nothing is pending. */
gboolean    bd_save_pool_pop     (BdSavePool *pool, gboolean wait, gpointer *user_data, GError **error);

/* Waits for every save pushed, then frees the pool; results not popped are dropped. */
void        bd_save_pool_free    (BdSavePool *pool);

G_END_DECLS
