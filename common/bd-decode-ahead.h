/* SPDX-License-Identifier: Apache-2.0 */
/* Photos decoded on worker threads before they are needed, so that a photo decodes while
 * the network works on the one before: the batch engine's look-ahead (bd-batch-run.h) and
 * the app's batch list's. A photo asked for is held until it is taken or forgotten; the
 * caller bounds how many it asks for ahead. */
#pragma once

#include "bd-image-io.h"

G_BEGIN_DECLS

typedef struct _BdDecodeAhead BdDecodeAhead;

/* @threads decoders (at least one), started now. */
BdDecodeAhead *bd_decode_ahead_new    (guint threads);

/* A photo is named by a local @path (decoded by bd_image_load, whose messages use the name
 * as given) or, with @path NULL, by any @file (bd_image_load_file); the same name to each
 * function. Starting one photo twice decodes it once and hands it out twice. */
void           bd_decode_ahead_start  (BdDecodeAhead *self, GFile *file, const char *path);

/* The photo, once decoded: TRUE with *@photo (a new reference) or @error set; FALSE when it
 * was not started (decode it yourself). Blocks: for worker threads. */
gboolean       bd_decode_ahead_take   (BdDecodeAhead *self, GFile *file, const char *path, GdkPixbuf **photo,
                                       GError **error);

/* Gives up one start of the photo: it is dropped, or not decoded if not begun. */
void           bd_decode_ahead_forget (BdDecodeAhead *self, GFile *file, const char *path);

/* Waits for the decode under way on each worker, then frees the rest, taken or not. */
void           bd_decode_ahead_free   (BdDecodeAhead *self);

G_END_DECLS
