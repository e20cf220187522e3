/* SPDX-License-Identifier: Apache-2.0 */
#include "frame-queue.h"

struct _BdFrameQueue {
	GMutex   lock;
	GCond    ready;
	GQueue   items;
	gboolean closed, aborted;
};

BdFrameQueue *
bd_frame_queue_new (void)
{
	BdFrameQueue *q = g_new0 (BdFrameQueue, 1);
	g_mutex_init (&q->lock);
	g_cond_init (&q->ready);
	g_queue_init (&q->items);
	return q;
}

void
bd_frame_queue_free (BdFrameQueue *q, GDestroyNotify free_item)
{
	if (!q)
		return;
	g_queue_clear_full (&q->items, free_item);
	g_cond_clear (&q->ready);
	g_mutex_clear (&q->lock);
	g_free (q);
}

gboolean
bd_frame_queue_push (BdFrameQueue *q, gpointer item)
{
	g_mutex_lock (&q->lock);
	gboolean ok = !q->aborted;
	if (ok) {
		g_queue_push_tail (&q->items, item);
		g_cond_signal (&q->ready);
	}
	g_mutex_unlock (&q->lock);
	return ok;
}

gpointer
bd_frame_queue_pop (BdFrameQueue *q, double *waited)
{
	gint64 start = 0;
	g_mutex_lock (&q->lock);
	while (!q->aborted && !q->closed && g_queue_is_empty (&q->items)) {
		if (!start)
			start = g_get_monotonic_time ();
		g_cond_wait (&q->ready, &q->lock);
	}
	gpointer item = q->aborted ? NULL : g_queue_pop_head (&q->items);
	g_mutex_unlock (&q->lock);
	if (start && waited)
		*waited += (g_get_monotonic_time () - start) / 1e6;
	return item;
}

gpointer
bd_frame_queue_try_pop (BdFrameQueue *q)
{
	g_mutex_lock (&q->lock);
	gpointer item = q->aborted ? NULL : g_queue_pop_head (&q->items);
	g_mutex_unlock (&q->lock);
	return item;
}

void
bd_frame_queue_close (BdFrameQueue *q)
{
	g_mutex_lock (&q->lock);
	q->closed = TRUE;
	g_cond_broadcast (&q->ready);
	g_mutex_unlock (&q->lock);
}

void
bd_frame_queue_abort (BdFrameQueue *q)
{
	g_mutex_lock (&q->lock);
	q->aborted = TRUE;
	g_cond_broadcast (&q->ready);
	g_mutex_unlock (&q->lock);
}
