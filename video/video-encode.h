/* SPDX-License-Identifier: Apache-2.0 */
/* A video file through a BdVideoStream into another file, on FFmpeg's libraries: decode,
 * the stream's output, encode (VP9 in WebM/Matroska, with alpha for cut-outs; H.264 in MP4),
 * the audio copied, or re-encoded where the container does not take its codec. */
#pragma once

#include <signal.h>

#include "bd-video-stream.h"

G_BEGIN_DECLS

typedef struct {
	const char            *input;
	const char            *path;        /* where to write (a temporary file) */
	const char            *name;        /* the final name: its extension picks the container */
	bd_session            *session;
	const BdVideoSettings *settings;
	int                    crf;         /* quality: lower is better and larger; 0 = the codec's default */
	volatile sig_atomic_t *cancel;      /* non-zero stops the run (G_IO_ERROR_CANCELLED) */
	/* Called after each frame written: the fraction of the duration done, frames so far. */
	void                 (*progress) (double fraction, guint64 frames, gpointer user_data);
	gpointer               user_data;
} BdTranscodeJob;

/* The container a name asks for ("webm", "matroska", "mp4", "mov") or NULL; TRUE in *@alpha
 * when it can carry alpha. */
const char *bd_video_container (const char *name, gboolean *alpha);

gboolean bd_video_transcode (const BdTranscodeJob *job, guint64 *frames, GError **error);

G_END_DECLS
