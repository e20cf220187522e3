/* SPDX-License-Identifier: Apache-2.0 */
/* A video's frames through libbackdrop, for the GStreamer element (gst/) and backdrop-video:
 * the network on each frame, the temporal filter that keeps the mask still where the picture
 * is (with an optional look-ahead of a frame or two), the mask edits, then the output. Frames
 * leave in the order they came, each one exactly once, @latency frames behind. */
#pragma once

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib.h>

#include "backdrop.h"
#include "bd-background.h"   /* bd_background_parse: the CLI's --background words */

G_BEGIN_DECLS

typedef enum {
	BD_VIDEO_OUTPUT_CUTOUT,    /* RGBA, the mask as alpha */
	BD_VIDEO_OUTPUT_MASK,      /* one byte a pixel, 255 = person */
	BD_VIDEO_OUTPUT_COMPOSITE, /* RGBA, opaque: the person over the background */
} BdVideoOutput;

/* Most frames of look-ahead: each one delays the output by a frame. */
#define BD_VIDEO_MAX_LATENCY 2
/* The temporal filter's default: how far a still pixel's mask moves towards the last
 * frame's (docs/PERFORMANCE.md, "Video", has the flicker it gives). */
#define BD_VIDEO_DEFAULT_STEADINESS 0.75f

typedef struct {
	BdVideoOutput output;
	const bd_background *background; /* for composites; copied, the image it names is not */
	float    threshold;    /* < 0: the soft mask */
	float    feather;      /* pixels */
	gboolean all_people;   /* keep passers-by, not only the main subject */
	guint    latency;      /* look-ahead frames, 0..BD_VIDEO_MAX_LATENCY */
	float    steadiness;   /* 0: per-frame masks; up to 1 */
} BdVideoSettings;

typedef struct _BdVideoStream BdVideoStream;
typedef struct _BdVideoFrame  BdVideoFrame;

/* For frames of @width x @height on @session (kept, not owned: it must outlive the stream and
 * its frames, whose photos it allocates). */
BdVideoStream *bd_video_stream_new      (bd_session *session, guint width, guint height);
void           bd_video_stream_free     (BdVideoStream *stream);
/* Settings apply from the next frame that leaves. */
void           bd_video_stream_set      (BdVideoStream *stream, const BdVideoSettings *settings);

/* Takes a frame (RGBA, rows @stride apart; copied) with a @tag that comes back with it
 * (released with @tag_free when the frame is freed) and runs the network on it. */
gboolean       bd_video_stream_push     (BdVideoStream *stream, const guint8 *rgba, gsize stride,
                                         gpointer tag, GDestroyNotify tag_free, GError **error);
/* A frame of the stream's size to fill in place (its pixels: RGBA, width * 4 bytes a row),
 * without the copy push makes; it keeps the settings' all-people of this moment for its
 * network. Frames are made in the order they will be added, one at a time, each filled before
 * the next is made (its preparation compares it with the frame before) unless it is filled
 * later (below); any thread may make them (not while the settings change). NULL when memory
 * is short (@tag released then). */
BdVideoFrame  *bd_video_stream_frame_new (BdVideoStream *stream, gpointer tag, GDestroyNotify tag_free,
                                          GError **error);
/* Lets @frame be filled after the next frame is made, on another thread (the element's lanes
 * convert their frames from YUV): call it before making the next frame, and
 * bd_video_stream_frame_filled once the pixels are in, whatever becomes of the frame; the next
 * frame's preparation waits for that. */
void           bd_video_stream_frame_fill_later (BdVideoStream *stream, BdVideoFrame *frame);
void           bd_video_stream_frame_filled (BdVideoStream *stream, BdVideoFrame *frame);
guint8        *bd_video_frame_get_pixels (BdVideoFrame *frame);
/* Runs a filled frame's network, and what the filter needs of it, on @session: any thread and
 * any session not in use elsewhere, so that several frames' networks run at once (as
 * backdrop-video's lanes and the element's do). */
gboolean       bd_video_stream_prepare_frame (BdVideoStream *stream, BdVideoFrame *frame, bd_session *session,
                                              GError **error);
/* Takes @frame (freed on failure too) into the stream as push does, preparing it on the
 * stream's session first unless that was done. */
gboolean       bd_video_stream_add_frame (BdVideoStream *stream, BdVideoFrame *frame, GError **error);
/* The oldest frame that is ready: @latency frames have followed it, or @draining (the end of
 * the stream). NULL when none is. */
BdVideoFrame  *bd_video_stream_next     (BdVideoStream *stream, gboolean draining);
/* Drops the frames waiting (a flush or seek), and the filter's memory of the last one. */
void           bd_video_stream_reset    (BdVideoStream *stream);
guint          bd_video_stream_queued   (BdVideoStream *stream);

/* @frame's output, as the settings say, into @out (rows @out_stride apart: 4 bytes a pixel, or
 * 1 for BD_VIDEO_OUTPUT_MASK). */
gboolean       bd_video_stream_render   (BdVideoStream *stream, BdVideoFrame *frame, guint8 *out,
                                         gsize out_stride, GError **error);
gpointer       bd_video_frame_get_tag   (BdVideoFrame *frame);
/* The frame's steadied mask (width bytes a row; decisive, as a photo's mask is) and its
 * network mask before the filter (soft: bd_mask_make_decisive not applied). */
const guint8  *bd_video_frame_get_alpha (BdVideoFrame *frame);
const guint8  *bd_video_frame_get_raw_alpha (BdVideoFrame *frame);
/* The caller is done with @frame: its tag is released at once; its buffers serve a later
 * frame once the stream no longer needs them (the last frame is the filter's). */
void           bd_video_frame_free      (BdVideoFrame *frame);

G_END_DECLS
