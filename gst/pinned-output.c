/* SPDX-License-Identifier: Apache-2.0 */
/* The element's composed frames in page-locked memory. A GPU composes a 1080p frame and
 * copies it back into page-locked memory in about 0.7 ms against 1.7-1.9 into plain memory
 * (bench/session-run --composite, docs/PERFORMANCE.md), so the element hands downstream
 * buffers of such memory, kept from frame to frame (page-locking costs more than the copy).
 * Downstream may hold them after the element stops: the memory belongs to the element's
 * session, so the session (and the model it reads) go with the last buffer, not before. */
#include "pinned-output.h"

/* Spare buffers kept for the next frames; more come back only after a queue downstream. */
#define SPARE_BUFFERS 8

struct _BdPinnedOutput {
	gint        refs;         /* the element's, and one a buffer downstream */
	bd_model   *model;
	bd_session *session;
	GMutex      lock;
	GSList     *spares;       /* blocks of spare_size bytes */
	guint       n_spares;
	gsize       spare_size;
};

typedef struct {
	BdPinnedOutput *out;
	guint8         *memory;
	gsize           size;
} Block;

BdPinnedOutput *
bd_pinned_output_new (bd_model *model, bd_session *session)
{
	BdPinnedOutput *out = g_new0 (BdPinnedOutput, 1);
	out->refs = 1;
	out->model = model;
	out->session = session;
	g_mutex_init (&out->lock);
	return out;
}

static void
block_free (Block *b)
{
	bd_session_host_free (b->out->session, b->memory);
	g_free (b);
}

static void
output_unref (BdPinnedOutput *out)
{
	if (!g_atomic_int_dec_and_test (&out->refs))
		return;
	g_slist_free_full (out->spares, (GDestroyNotify) block_free);
	bd_session_free (out->session);
	bd_model_free (out->model);
	g_mutex_clear (&out->lock);
	g_free (out);
}

void
bd_pinned_output_release (BdPinnedOutput *out)
{
	if (out)
		output_unref (out);
}

/* A buffer's memory given back by downstream: kept for the next frame if it fits. */
static void
block_returned (gpointer data)
{
	Block *b = data;
	BdPinnedOutput *out = b->out;
	g_mutex_lock (&out->lock);
	gboolean keep = b->size == out->spare_size && out->n_spares < SPARE_BUFFERS;
	if (keep) {
		out->spares = g_slist_prepend (out->spares, b);
		out->n_spares++;
	}
	g_mutex_unlock (&out->lock);
	if (!keep)
		block_free (b);
	output_unref (out);
}

GstBuffer *
bd_pinned_output_buffer (BdPinnedOutput *out, gsize size)
{
	Block *b = NULL;
	g_mutex_lock (&out->lock);
	if (size != out->spare_size) {
		/* New caps: the spares of the old size go. */
		g_slist_free_full (g_steal_pointer (&out->spares), (GDestroyNotify) block_free);
		out->n_spares = 0;
		out->spare_size = size;
	}
	if (out->spares) {
		b = out->spares->data;
		out->spares = g_slist_delete_link (out->spares, out->spares);
		out->n_spares--;
	}
	g_mutex_unlock (&out->lock);
	if (!b) {
		guint8 *memory = bd_session_host_alloc (out->session, size);
		if (!memory)
			return NULL;
		b = g_new (Block, 1);
		*b = (Block) { out, memory, size };
	}
	g_atomic_int_inc (&out->refs);
	return gst_buffer_new_wrapped_full (0, b->memory, size, 0, size, b, block_returned);
}
