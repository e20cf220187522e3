/* SPDX-License-Identifier: Apache-2.0 */
/* A batch of photos at the speed of its slowest stage: photos decode on worker threads ahead
 * of the network (bd-decode-ahead.h), the network runs on "lanes" (worker threads with a session each: one for
 * the CPU or one GPU, one per GPU for cuda:all), the results are saved by a BdSavePool, and
 * each photo's outcome comes back on the calling thread in input order. At most lanes +
 * look-ahead + encoders photos are in flight, so memory stays flat on any folder. */
#pragma once

#include "backdrop.h"
#include "bd-save-pool.h"

G_BEGIN_DECLS

typedef struct {
	guint       index;     /* in the inputs, from 0 */
	const char *input;     /* the file decoded */
	char       *output;    /* prepare's: where the result is saved (g_free'd by the run);
	                        * NULL: the result is not saved */
	BdSaveFlags flags;     /* prepare's: how it is saved */
	int         quality;   /* prepare's: JPEG quality, 1..100 */
	gpointer    data;      /* the caller's, set by prepare; not freed by the run */
	double      seconds;   /* for report: from a lane taking the photo up to its save's end */
} BdBatchPhoto;

typedef struct {
	guint  total;          /* photos in the batch */
	guint  reported;       /* reports so far, this one included */
	double elapsed;        /* seconds since the run began */
	double photos_per_s;   /* reported / elapsed */
	double seconds_left;   /* for the photos not yet reported, at that rate */
} BdBatchProgress;

typedef struct {
	/* On the calling thread, in input order, before @photo is decoded: fills in its output,
	 * flags and quality. FALSE with @error: the photo is reported failed, never decoded. */
	gboolean   (*prepare) (BdBatchPhoto *photo, gpointer user_data, GError **error);
	/* On a lane's thread, with that lane's @session: the result to save for the decoded
	 * @pixels, or NULL with @error. Runs on every lane at once: read @user_data only. */
	GdkPixbuf *(*compute) (bd_session *session, GdkPixbuf *pixels, const BdBatchPhoto *photo,
	                       gpointer user_data, GError **error);
	/* Optional. On a save thread, before the save: the image to save from compute's result
	 * (e.g. a cut-out composed there, so that the lane's network goes on meanwhile), or NULL
	 * with @error. Runs on every encoder at once: read @user_data only. */
	GdkPixbuf *(*finish)  (GdkPixbuf *computed, const BdBatchPhoto *photo, gpointer user_data, GError **error);
	/* On the calling thread, in input order: the photo saved (@error NULL) or why not. */
	void       (*report)  (const BdBatchPhoto *photo, const GError *error, const BdBatchProgress *progress,
	                       gpointer user_data);
} BdBatchFuncs;

typedef struct {
	bd_session *const *sessions;   /* one per lane, passed to compute as they are */
	guint              lanes;      /* at least 1 */
	guint              look_ahead; /* decode threads, and photos decoded ahead; 0: one per lane */
	guint              encoders;   /* save threads; 0: half the cores, at least one */
} BdBatchOptions;

/* Runs @funcs over the @n_inputs files of @inputs and returns once every photo begun has been
 * reported. @cancellable (may be NULL) stops it: no photo is begun after it and the saves stop
 * between writes, each removing its unfinished file (compute should watch it too, through
 * the session's progress callback). A photo whose network had not begun is not reported;
 * one whose had is reported, G_IO_ERROR_CANCELLED unless it was saved before. */
void bd_batch_run (const char *const *inputs, guint n_inputs, const BdBatchOptions *options,
                   const BdBatchFuncs *funcs, gpointer user_data, GCancellable *cancellable);

G_END_DECLS
