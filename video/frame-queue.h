/* SPDX-License-Identifier: Apache-2.0 */
/* A queue of items between threads of a video pipeline (backdrop-video's stages, the element's
 * network lanes), with an end (close: the consumer drains it, then gets NULL) and a stop (abort: both
 * sides give up at once, for an error or Ctrl+C). Unbounded itself: the stages bound the
 * frames in flight by taking their buffers from a queue of free ones. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _BdFrameQueue BdFrameQueue;

BdFrameQueue *bd_frame_queue_new   (void);
/* Frees the items still queued with @free_item (may be NULL). */
void          bd_frame_queue_free  (BdFrameQueue *queue, GDestroyNotify free_item);
/* FALSE once aborted: @item was not taken. */
gboolean      bd_frame_queue_push  (BdFrameQueue *queue, gpointer item);
/* The oldest item, waiting for one; NULL once closed and empty, or aborted. The seconds spent
 * waiting are added to *@waited (may be NULL): a stage's busy share is what is left. */
gpointer      bd_frame_queue_pop   (BdFrameQueue *queue, double *waited);
/* The oldest item if there is one, without waiting; NULL otherwise. */
gpointer      bd_frame_queue_try_pop (BdFrameQueue *queue);
/* No more items will come: pop returns NULL once the queue is empty. */
void          bd_frame_queue_close (BdFrameQueue *queue);
/* Wakes both sides: push fails and pop returns NULL from now on. */
void          bd_frame_queue_abort (BdFrameQueue *queue);

G_END_DECLS
