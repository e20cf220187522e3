/* SPDX-License-Identifier: Apache-2.0 */
/* The element's composed frames in page-locked memory (pinned-output.c). */
#pragma once

#include <gst/gst.h>

#include "backdrop.h"

G_BEGIN_DECLS

typedef struct _BdPinnedOutput BdPinnedOutput;

/* Takes @model and @session (a GPU's): the element's, which it frees with the last of its
 * buffers. */
BdPinnedOutput *bd_pinned_output_new     (bd_model *model, bd_session *session);
/* The element lets go: the model and session go once downstream has given every buffer back. */
void            bd_pinned_output_release (BdPinnedOutput *out);
/* A buffer of @size bytes in page-locked memory, one given back before if it has that size;
 * NULL when memory is short. */
GstBuffer      *bd_pinned_output_buffer  (BdPinnedOutput *out, gsize size);

G_END_DECLS
