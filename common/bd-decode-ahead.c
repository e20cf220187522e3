/* SPDX-License-Identifier: Apache-2.0 */
/* A table of the photos started, by path or URI, each entry counted by its starts not yet
 * taken; a GThreadPool decodes them in the order started. */
#include "bd-decode-ahead.h"

typedef struct {
	char      *key;       /* the path, or the file's URI */
	GFile     *file;      /* NULL: decode path */
	char      *path;
	guint      wanted;    /* starts not yet taken or forgotten; 0: out of the table */
	guint      refs;      /* the table's, and the worker's until it is decoded */
	gboolean   done;
	GdkPixbuf *photo;
	GError    *error;
} entry;

struct _BdDecodeAhead {
	GThreadPool *threads;
	GMutex       lock;
	GCond        decoded;
	GHashTable  *entries;   /* key -> entry, those with starts outstanding */
	gboolean     closing;   /* freeing: decode nothing more */
};

static void
entry_unref (entry *e)
{
	if (--e->refs)
		return;
	g_free (e->key);
	g_clear_object (&e->file);
	g_free (e->path);
	g_clear_object (&e->photo);
	g_clear_error (&e->error);
	g_free (e);
}

/* With the lock held: one start of @e is over; the last takes it out of the table. */
static void
entry_release (BdDecodeAhead *self, entry *e)
{
	if (--e->wanted)
		return;
	g_hash_table_remove (self->entries, e->key);
	entry_unref (e);
}

static void
decode (gpointer data, gpointer self_data)
{
	entry *e = data;
	BdDecodeAhead *self = self_data;
	g_mutex_lock (&self->lock);
	gboolean wanted = e->wanted > 0 && !self->closing;
	g_mutex_unlock (&self->lock);
	GdkPixbuf *photo = NULL;
	GError *error = NULL;
	if (wanted)   /* forgotten before its turn: not decoded */
		photo = e->path ? bd_image_load (e->path, &error) : bd_image_load_file (e->file, NULL, &error);
	g_mutex_lock (&self->lock);
	e->photo = photo;
	e->error = error;
	e->done = TRUE;
	g_cond_broadcast (&self->decoded);
	entry_unref (e);
	g_mutex_unlock (&self->lock);
}

BdDecodeAhead *
bd_decode_ahead_new (guint threads)
{
	BdDecodeAhead *self = g_new0 (BdDecodeAhead, 1);
	g_mutex_init (&self->lock);
	g_cond_init (&self->decoded);
	self->entries = g_hash_table_new (g_str_hash, g_str_equal);
	self->threads = g_thread_pool_new (decode, self, (gint) MAX (threads, 1), TRUE, NULL);
	return self;
}

static char *
key_of (GFile *file, const char *path)
{
	return path ? g_strdup (path) : g_file_get_uri (file);
}

void
bd_decode_ahead_start (BdDecodeAhead *self, GFile *file, const char *path)
{
	g_autofree char *key = key_of (file, path);
	g_mutex_lock (&self->lock);
	entry *e = g_hash_table_lookup (self->entries, key);
	if (e) {
		e->wanted++;
		g_mutex_unlock (&self->lock);
		return;
	}
	e = g_new0 (entry, 1);
	e->key = g_steal_pointer (&key);
	e->file = path ? NULL : g_object_ref (file);
	e->path = g_strdup (path);
	e->wanted = 1;
	e->refs = 2;   /* the table's and the worker's */
	g_hash_table_insert (self->entries, e->key, e);
	g_mutex_unlock (&self->lock);
	g_thread_pool_push (self->threads, e, NULL);
}

gboolean
bd_decode_ahead_take (BdDecodeAhead *self, GFile *file, const char *path, GdkPixbuf **photo, GError **error)
{
	g_autofree char *key = key_of (file, path);
	g_mutex_lock (&self->lock);
	entry *e = g_hash_table_lookup (self->entries, key);
	if (!e) {
		g_mutex_unlock (&self->lock);
		return FALSE;
	}
	while (!e->done)
		g_cond_wait (&self->decoded, &self->lock);
	*photo = e->photo ? g_object_ref (e->photo) : NULL;
	if (e->error)
		g_propagate_error (error, g_error_copy (e->error));
	entry_release (self, e);
	g_mutex_unlock (&self->lock);
	return TRUE;
}

void
bd_decode_ahead_forget (BdDecodeAhead *self, GFile *file, const char *path)
{
	g_autofree char *key = key_of (file, path);
	g_mutex_lock (&self->lock);
	entry *e = g_hash_table_lookup (self->entries, key);
	if (e)
		entry_release (self, e);
	g_mutex_unlock (&self->lock);
}

void
bd_decode_ahead_free (BdDecodeAhead *self)
{
	g_mutex_lock (&self->lock);
	self->closing = TRUE;
	g_mutex_unlock (&self->lock);
	g_thread_pool_free (self->threads, FALSE, TRUE);   /* those queued end at once */
	GHashTableIter it;
	gpointer e;
	g_hash_table_iter_init (&it, self->entries);
	while (g_hash_table_iter_next (&it, NULL, &e))
		entry_unref (e);
	g_hash_table_unref (self->entries);
	g_mutex_clear (&self->lock);
	g_cond_clear (&self->decoded);
	g_free (self);
}
