/* SPDX-License-Identifier: Apache-2.0 */
/* A queue of saves in push order, run by a GThreadPool: each entry is filled in by the
 * worker that saved it, and the caller takes entries from the head once they are done. */
#include "bd-save-pool.h"

typedef struct {
	GdkPixbuf  *rgba;
	char       *path;
	int         quality;
	BdSaveFlags flags;
	gpointer    user_data;
	gboolean    done;
	GError     *error;
} save_entry;

struct _BdSavePool {
	GThreadPool  *threads;
	GCancellable *cancellable;
	GMutex        lock;
	GCond         finished;
	GQueue        entries;   /* save_entry, oldest first */
	BdSaveFinish  finish;
	gpointer      finish_data;
};

static void
save_one (gpointer data, gpointer pool_data)
{
	save_entry *e = data;
	BdSavePool *pool = pool_data;
	GError *error = NULL;
	/* Cancelled before it started: nothing is written. During the save, bd_image_save_full
	 * watches the cancellable and removes its unfinished file. */
	if (!g_cancellable_set_error_if_cancelled (pool->cancellable, &error)) {
		GdkPixbuf *image = pool->finish ? pool->finish (e->rgba, e->user_data, pool->finish_data, &error)
		                                : g_object_ref (e->rgba);
		g_clear_object (&e->rgba);
		if (image)
			bd_image_save_full (image, e->path, e->quality, e->flags, pool->cancellable, &error);
		g_clear_object (&image);
	}
	g_clear_object (&e->rgba);   /* the pixels can go as soon as they are written */
	g_mutex_lock (&pool->lock);
	e->error = error;
	e->done = TRUE;
	g_cond_broadcast (&pool->finished);
	g_mutex_unlock (&pool->lock);
}

BdSavePool *
bd_save_pool_new (guint workers, GCancellable *cancellable)
{
	BdSavePool *pool = g_new0 (BdSavePool, 1);
	g_mutex_init (&pool->lock);
	g_cond_init (&pool->finished);
	g_queue_init (&pool->entries);
	pool->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
	/* Exclusive threads: started now, so a save never waits for one to be created. */
	pool->threads = g_thread_pool_new (save_one, pool, (gint) MAX (workers, 1), TRUE, NULL);
	return pool;
}

void
bd_save_pool_set_finish (BdSavePool *pool, BdSaveFinish finish, gpointer finish_data)
{
	pool->finish = finish;
	pool->finish_data = finish_data;
}

void
bd_save_pool_push (BdSavePool *pool, GdkPixbuf *rgba, const char *path, int jpeg_quality, BdSaveFlags flags,
                   gpointer user_data)
{
	save_entry *e = g_new0 (save_entry, 1);
	e->rgba = g_object_ref (rgba);
	e->path = g_strdup (path);
	e->quality = jpeg_quality;
	e->flags = flags;
	e->user_data = user_data;
	g_mutex_lock (&pool->lock);
	g_queue_push_tail (&pool->entries, e);
	g_mutex_unlock (&pool->lock);
	g_thread_pool_push (pool->threads, e, NULL);
}

guint
bd_save_pool_pending (BdSavePool *pool)
{
	g_mutex_lock (&pool->lock);
	guint n = g_queue_get_length (&pool->entries);
	g_mutex_unlock (&pool->lock);
	return n;
}

gboolean
bd_save_pool_pop (BdSavePool *pool, gboolean wait, gpointer *user_data, GError **error)
{
	g_mutex_lock (&pool->lock);
	save_entry *e = g_queue_peek_head (&pool->entries);
	while (e && !e->done && wait)
		g_cond_wait (&pool->finished, &pool->lock);
	if (!e || !e->done) {
		g_mutex_unlock (&pool->lock);
		return FALSE;
	}
	g_queue_pop_head (&pool->entries);
	g_mutex_unlock (&pool->lock);
	if (user_data)
		*user_data = e->user_data;
	if (e->error)
		g_propagate_error (error, e->error);
	g_free (e->path);
	g_free (e);
	return TRUE;
}

void
bd_save_pool_free (BdSavePool *pool)
{
	/* Runs what is queued and waits for it: every save ends with its file whole or gone. */
	g_thread_pool_free (pool->threads, FALSE, TRUE);
	save_entry *e;
	while ((e = g_queue_pop_head (&pool->entries))) {
		g_clear_error (&e->error);
		g_free (e->path);
		g_free (e);
	}
	g_clear_object (&pool->cancellable);
	g_mutex_clear (&pool->lock);
	g_cond_clear (&pool->finished);
	g_free (pool);
}
