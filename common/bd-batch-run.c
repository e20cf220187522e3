/* SPDX-License-Identifier: Apache-2.0 */
/* The calling thread admits photos in order (prepare, then its decode is started) while
 * fewer than the run's capacity are in flight, and reports the oldest once it is done. Lanes
 * take the admitted photos in order, wait for their decode, compute, and push the result to
 * the save pool. One lock and one condition guard every photo's state. */
#include "bd-batch-run.h"
#include "bd-decode-ahead.h"

typedef enum {
	PHOTO_QUEUED,     /* admitted: decoding or decoded, waiting for a lane */
	PHOTO_COMPUTING,  /* a lane has it: waiting for its decode, or in the network */
	PHOTO_SAVING,     /* in the save pool */
	PHOTO_DONE,       /* saved, or failed (error) */
	PHOTO_DROPPED,    /* cancelled before a lane began its network: not reported */
} photo_state;

typedef struct {
	BdBatchPhoto photo;
	photo_state  state;
	GError      *error;
	gboolean     started;   /* a lane began its network */
	gint64       t0;        /* when */
} batch_photo;

typedef struct {
	const BdBatchFuncs *funcs;
	gpointer            user_data;
	GCancellable       *cancellable;
	BdSavePool         *saves;
	BdDecodeAhead      *decoder;
	GMutex              lock;
	GCond               changed;
	GQueue              queued;    /* batch_photo in PHOTO_QUEUED, in input order */
	gboolean            closing;   /* no more photos come: lanes end once queued is empty */
} batch;

typedef struct {
	batch      *b;
	bd_session *session;
} lane;

static void
batch_photo_free (batch_photo *p)
{
	g_clear_error (&p->error);
	g_free (p->photo.output);
	g_free (p);
}

static gpointer
lane_run (gpointer data)
{
	lane *l = data;
	batch *b = l->b;
	g_mutex_lock (&b->lock);
	for (;;) {
		while (g_queue_is_empty (&b->queued) && !b->closing)
			g_cond_wait (&b->changed, &b->lock);
		batch_photo *p = g_queue_pop_head (&b->queued);
		if (!p)
			break;
		p->state = PHOTO_COMPUTING;
		g_mutex_unlock (&b->lock);

		GdkPixbuf *pixels = NULL;
		GError *error = NULL;
		/* Cancelled before its network began: not decoded if it was not yet, not reported. */
		gboolean cancelled = g_cancellable_is_cancelled (b->cancellable);
		if (cancelled)
			bd_decode_ahead_forget (b->decoder, NULL, p->photo.input);
		else if (!bd_decode_ahead_take (b->decoder, NULL, p->photo.input, &pixels, &error))
			g_assert_not_reached ();   /* every photo queued was started */
		cancelled = cancelled || g_cancellable_is_cancelled (b->cancellable);
		if (cancelled || !pixels) {
			g_clear_object (&pixels);
			if (cancelled)
				g_clear_error (&error);
			g_mutex_lock (&b->lock);
			p->state = cancelled ? PHOTO_DROPPED : PHOTO_DONE;
			p->error = error;
			g_cond_broadcast (&b->changed);
			continue;
		}
		g_mutex_lock (&b->lock);
		p->started = TRUE;
		p->t0 = g_get_monotonic_time ();
		g_mutex_unlock (&b->lock);

		GdkPixbuf *result = b->funcs->compute (l->session, pixels, &p->photo, b->user_data, &error);
		g_clear_object (&pixels);   /* the photo can go as soon as the network is done */

		g_mutex_lock (&b->lock);
		if (result && p->photo.output) {
			/* Pushed under the lock: whoever sees PHOTO_SAVING finds it in the pool. */
			p->state = PHOTO_SAVING;
			bd_save_pool_push (b->saves, result, p->photo.output, p->photo.quality, p->photo.flags, p);
		} else {
			p->state = PHOTO_DONE;
			p->error = error;
		}
		g_clear_object (&result);
		g_cond_broadcast (&b->changed);
	}
	g_mutex_unlock (&b->lock);
	return NULL;
}

/* The save pool's step before a save: the caller's finish for that photo. */
static GdkPixbuf *
finish_photo (GdkPixbuf *computed, gpointer photo_data, gpointer batch_data, GError **error)
{
	const batch *b = batch_data;
	const batch_photo *p = photo_data;
	return b->funcs->finish (computed, &p->photo, b->user_data, error);
}

/* Waits until @head can be reported, taking finished saves from the pool meanwhile (in the
 * order they were pushed, which several lanes make unlike the input order). */
static void
wait_for (batch *b, batch_photo *head)
{
	for (;;) {
		g_mutex_lock (&b->lock);
		while (head->state == PHOTO_QUEUED || head->state == PHOTO_COMPUTING)
			g_cond_wait (&b->changed, &b->lock);
		photo_state state = head->state;
		g_mutex_unlock (&b->lock);
		if (state != PHOTO_SAVING)
			return;
		/* @head is in the pool, so something is pending there and this pop ends. */
		gpointer data = NULL;
		GError *error = NULL;
		if (!bd_save_pool_pop (b->saves, TRUE, &data, &error))
			g_assert_not_reached ();
		batch_photo *saved = data;
		g_mutex_lock (&b->lock);
		saved->error = error;
		saved->state = PHOTO_DONE;
		g_mutex_unlock (&b->lock);
	}
}

void
bd_batch_run (const char *const *inputs, guint n_inputs, const BdBatchOptions *options, const BdBatchFuncs *funcs,
              gpointer user_data, GCancellable *cancellable)
{
	guint lanes = MAX (options->lanes, 1);
	guint look_ahead = options->look_ahead ? options->look_ahead : lanes;
	guint encoders = options->encoders ? options->encoders : MAX (1, g_get_num_processors () / 2);
	/* Photos admitted and not yet reported: one decoding or waiting for each look-ahead, one
	 * in each lane, one saving in each encoder. A slow photo at the head holds the others
	 * back, never more than these. */
	guint capacity = lanes + look_ahead + encoders;

	batch b = { .funcs = funcs, .user_data = user_data, .cancellable = cancellable };
	g_mutex_init (&b.lock);
	g_cond_init (&b.changed);
	g_queue_init (&b.queued);
	b.saves = bd_save_pool_new (encoders, cancellable);
	if (funcs->finish)
		bd_save_pool_set_finish (b.saves, finish_photo, &b);
	b.decoder = bd_decode_ahead_new (look_ahead);
	lane *lane_data = g_new0 (lane, lanes);
	GThread **threads = g_new0 (GThread *, lanes);
	for (guint i = 0; i < lanes; i++) {
		lane_data[i] = (lane) { &b, options->sessions ? options->sessions[i] : NULL };
		threads[i] = g_thread_new ("lane", lane_run, &lane_data[i]);
	}

	GQueue in_flight = G_QUEUE_INIT;   /* batch_photo, oldest first; this thread's alone */
	gint64 start = g_get_monotonic_time ();
	guint next = 0, reported = 0;
	for (;;) {
		while (next < n_inputs && g_queue_get_length (&in_flight) < capacity &&
		       !g_cancellable_is_cancelled (cancellable)) {
			batch_photo *p = g_new0 (batch_photo, 1);
			p->photo.index = next;
			p->photo.input = inputs[next++];
			p->photo.quality = 92;
			g_queue_push_tail (&in_flight, p);
			if (funcs->prepare && !funcs->prepare (&p->photo, user_data, &p->error)) {
				p->state = PHOTO_DONE;
				continue;
			}
			/* Decoded now, in order, by the look-ahead's threads; taken by a lane. */
			bd_decode_ahead_start (b.decoder, NULL, p->photo.input);
			g_mutex_lock (&b.lock);
			p->state = PHOTO_QUEUED;
			g_queue_push_tail (&b.queued, p);
			g_cond_broadcast (&b.changed);
			g_mutex_unlock (&b.lock);
		}
		batch_photo *head = g_queue_pop_head (&in_flight);
		if (!head)
			break;
		wait_for (&b, head);
		/* After a cancel, a photo whose network had not begun was never begun, as in a run
		 * that stopped before it: it is not reported, even when it failed to decode or to
		 * prepare. */
		gboolean begun = head->started || !g_cancellable_is_cancelled (cancellable);
		if (head->state == PHOTO_DONE && begun) {
			reported++;
			gint64 now = g_get_monotonic_time ();
			BdBatchProgress progress = { .total = n_inputs, .reported = reported, .elapsed = (now - start) / 1e6 };
			if (progress.elapsed > 0) {
				progress.photos_per_s = reported / progress.elapsed;
				progress.seconds_left = (n_inputs - reported) / progress.photos_per_s;
			}
			head->photo.seconds = head->started ? (now - head->t0) / 1e6 : 0;
			funcs->report (&head->photo, head->error, &progress, user_data);
		}
		batch_photo_free (head);
	}

	g_mutex_lock (&b.lock);
	b.closing = TRUE;
	g_cond_broadcast (&b.changed);
	g_mutex_unlock (&b.lock);
	for (guint i = 0; i < lanes; i++)
		g_thread_join (threads[i]);
	bd_decode_ahead_free (b.decoder);
	bd_save_pool_free (b.saves);
	g_free (threads);
	g_free (lane_data);
	g_mutex_clear (&b.lock);
	g_cond_clear (&b.changed);
}
