/* SPDX-License-Identifier: Apache-2.0 */
/* A video file through a BdVideoStream into another file, on FFmpeg's libraries: decode,
 * the stream's output, encode, each on a thread of its own (VP9 in WebM/Matroska, with alpha for cut-outs; H.264 in MP4),
 * the audio copied, or re-encoded where the container does not take its codec. */
#pragma once

#include <signal.h>

#include "bd-video-stream.h"

G_BEGIN_DECLS

/* Where the time went: the run's seconds, and how many of them each stage worked (the rest
 * it waited for another). The stage near the run's length is the one that holds it. */
typedef struct {
	double seconds;
	guint  lanes;
	double reading;                     /* demuxing, decoding, the conversion to RGBA, the audio */
	double network;                     /* a network lane, on average (0 without lanes) */
	double steadying;                   /* the stream: the filter and the output (and the network
	                                     * without lanes) */
	double output;                      /* of which the output (bd_video_stream_render) */
	double encoding;                    /* the conversion to YUV, the encoder, the file */
} BdTranscodeStats;

/* How hard the video encoder works: smaller files, or sooner. */
typedef enum {
	BD_ENCODE_BALANCED,   /* x264 veryfast; VP9 good at speed 5 */
	BD_ENCODE_SMALL,      /* x264 medium; VP9 good at speed 2 */
	BD_ENCODE_FAST,       /* x264 superfast; VP9 realtime at speed 8 */
} BdEncodeSpeed;

typedef struct {
	const char            *input;
	const char            *path;        /* where to write (a temporary file) */
	const char            *name;        /* the final name: its extension picks the container */
	bd_session            *session;     /* the stream's: its filter, output and network */
	/* Sessions that run the network on frames side by side, each on a thread of its own
	 * (n_lanes 0: @session runs it, one frame at a time). */
	bd_session *const     *lanes;
	guint                  n_lanes;
	const BdVideoSettings *settings;
	int                    crf;         /* quality: lower is better and larger; 0 = the codec's default */
	BdEncodeSpeed          speed;
	volatile sig_atomic_t *cancel;      /* non-zero stops the run (G_IO_ERROR_CANCELLED) */
	/* Called after each frame written, on the encoder's thread: the fraction of the duration done, frames so far. */
	void                 (*progress) (double fraction, guint64 frames, gpointer user_data);
	gpointer               user_data;
	BdTranscodeStats      *stats;       /* filled in when not NULL */
} BdTranscodeJob;

/* The container a name asks for ("webm", "matroska", "mp4", "mov") or NULL; TRUE in *@alpha
 * when it can carry alpha. */
const char *bd_video_container (const char *name, gboolean *alpha);

gboolean bd_video_transcode (const BdTranscodeJob *job, guint64 *frames, GError **error);

G_END_DECLS
