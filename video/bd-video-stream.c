/* SPDX-License-Identifier: Apache-2.0 */
/* A video's frames through libbackdrop (bd-video-stream.h). Each frame runs the network as it
 * comes; it leaves once @latency later frames have come, steadied first against those later
 * frames' masks (look-ahead) and then against the last frame that left (the causal filter),
 * both through bd_temporal_blend, which leaves moving parts alone. A frame's buffers are used
 * again once it is freed (a 1080p frame is 12 MB: fresh ones cost page faults every frame),
 * the last frame is kept by reference, not copied, and a frame can be filled in place
 * (bd_video_stream_frame_new) instead of copied in. The filter's costly half, the map of where
 * the photo changed since the frame before (bd_session_temporal_change_luma), is made while
 * the frame is prepared, on the lanes that run networks side by side, so that the thread
 * putting frames back in order only blends by it. */
#include "bd-video-stream.h"

#include <glib/gi18n-lib.h>
#include <string.h>

#include "bd-library.h"

/* Spare frames kept for the next ones: enough for the look-ahead and the frames in use. */
#define SPARE_FRAMES (BD_VIDEO_MAX_LATENCY + 4)

struct _BdVideoFrame {
	bd_session    *session;   /* the stream's, which allocated rgba (bd_session_host_alloc) */
	guint8        *rgba;      /* width * 4 bytes a row */
	guint8        *raw;       /* the network's mask, soft (before the decisive pass) */
	guint8        *alpha;     /* steadied (next); the next frame's filter reads it as the last's */
	guint8        *decided;   /* alpha made decisive (next): what the output shows; edits copy it */
	guint8        *luma;      /* the photo's, for the filter (bd_session_luma) */
	gsize          luma_made; /* g_once: the frame's lane or the next frame's makes it */
	guint16       *change;    /* the photo's change since frame change_serial's */
	guint64        serial, change_serial;   /* the frame's number; 0: no change made */
	BdVideoFrame  *previous;  /* the frame made before it (a reference), until prepared */
	gboolean       prepared;  /* raw, luma and change made */
	gboolean       unfilled;  /* filled later, elsewhere (bd_video_stream_frame_fill_later); under fill_lock */
	gboolean       all_people; /* the setting when the frame was made: its network's */
	gpointer       tag;
	GDestroyNotify tag_free;
	gint           refs;      /* the caller's, and the stream's while it is the last frame */
	GAsyncQueue   *spares;    /* where its buffers go when freed (a reference), NULL there */
};

struct _BdVideoStream {
	bd_session     *session;
	guint           width, height;
	BdVideoSettings settings;
	bd_background   background;
	GQueue          frames;     /* waiting for their look-ahead, oldest first */
	/* The last frame that left (a reference): its alpha is the steadied soft mask (before the
	 * decisive pass and the edits). */
	BdVideoFrame   *last;
	guint8         *edited;     /* scratch: the mask after threshold and feather, made when first
	                             * needed (bd_session_host_alloc: it goes up to a GPU, as a
	                             * frame's mask does) */
	GAsyncQueue    *spares;     /* frames freed, their buffers ready for new ones */
	BdVideoFrame   *newest;     /* the frame made last (a reference): the next one's previous */
	GMutex          fill_lock;  /* frames filled later: the next frame's preparation waits */
	GCond           filled;
	guint64         serial;     /* the number of the frame made last */
};

static void
frame_buffers_free (gpointer data)
{
	BdVideoFrame *f = data;
	bd_session_host_free (f->session, f->rgba);
	g_free (f->raw);
	bd_session_host_free (f->session, f->alpha);
	bd_session_host_free (f->session, f->decided);
	g_free (f->luma);
	g_free (f->change);
	g_free (f);
}

/* Drops a reference; the last one gives the buffers to the spares. */
static void
frame_unref (BdVideoFrame *frame)
{
	if (!frame || !g_atomic_int_dec_and_test (&frame->refs))
		return;
	g_clear_pointer (&frame->previous, frame_unref);
	/* A spare holds no reference to the queue: the queue's last one frees the spares. */
	GAsyncQueue *spares = g_steal_pointer (&frame->spares);
	if (spares && g_async_queue_length (spares) < SPARE_FRAMES)
		g_async_queue_push (spares, frame);
	else
		frame_buffers_free (frame);
	if (spares)
		g_async_queue_unref (spares);
}

void
bd_video_frame_free (BdVideoFrame *frame)
{
	if (!frame)
		return;
	/* The caller is done with it: its tag goes now (the element's input buffer, which a
	 * camera's pool wants back), though the stream may keep the frame as its last. */
	if (frame->tag_free && frame->tag)
		frame->tag_free (frame->tag);
	frame->tag = NULL;
	frame_unref (frame);
}

gpointer
bd_video_frame_get_tag (BdVideoFrame *frame)
{
	return frame->tag;
}

const guint8 *
bd_video_frame_get_alpha (BdVideoFrame *frame)
{
	return frame->decided;
}

const guint8 *
bd_video_frame_get_raw_alpha (BdVideoFrame *frame)
{
	return frame->raw;
}

BdVideoStream *
bd_video_stream_new (bd_session *session, guint width, guint height)
{
	BdVideoStream *s = g_new0 (BdVideoStream, 1);
	s->session = session;
	s->width = width;
	s->height = height;
	g_queue_init (&s->frames);
	s->settings = (BdVideoSettings) { .output = BD_VIDEO_OUTPUT_CUTOUT, .threshold = -1,
	                                  .steadiness = BD_VIDEO_DEFAULT_STEADINESS };
	s->background.kind = BD_BACKGROUND_COLOR;
	memset (s->background.color, 255, 4);
	s->spares = g_async_queue_new_full (frame_buffers_free);
	g_mutex_init (&s->fill_lock);
	g_cond_init (&s->filled);
	return s;
}

void
bd_video_stream_reset (BdVideoStream *stream)
{
	BdVideoFrame *f;
	while ((f = g_queue_pop_head (&stream->frames)))
		bd_video_frame_free (f);
	g_clear_pointer (&stream->last, frame_unref);
	g_clear_pointer (&stream->newest, frame_unref);
}

void
bd_video_stream_free (BdVideoStream *stream)
{
	if (!stream)
		return;
	bd_video_stream_reset (stream);
	bd_session_host_free (stream->session, stream->edited);
	g_async_queue_unref (stream->spares);
	g_mutex_clear (&stream->fill_lock);
	g_cond_clear (&stream->filled);
	g_free (stream);
}

void
bd_video_stream_set (BdVideoStream *stream, const BdVideoSettings *settings)
{
	stream->settings = *settings;
	stream->settings.latency = MIN (settings->latency, BD_VIDEO_MAX_LATENCY);
	stream->settings.steadiness = CLAMP (settings->steadiness, 0.0f, 1.0f);
	if (settings->background)
		stream->background = *settings->background;
	stream->settings.background = NULL;
}

guint
bd_video_stream_queued (BdVideoStream *stream)
{
	return stream->frames.length;
}

static bd_image
view (BdVideoStream *s, const guint8 *rgba)
{
	return (bd_image) { rgba, s->width, s->height, (size_t) s->width * 4, BD_PIXEL_RGBA8 };
}

/* The options @frame's network runs with: the settings of when it was made, so that a lane
 * never reads them while the stream's thread changes them. */
static void
run_options (const BdVideoFrame *frame, bd_run_options *run)
{
	bd_run_options_init (run);
	/* Mirror averaging doubles the network's time for a better still mask; on video the
	 * temporal filter steadies the mask instead, at a fraction of the cost. */
	run->mirror_average = 0;
	run->main_subject_only = !frame->all_people;
	/* Soft: the filter steadies the network's own values, which the decisive pass would
	 * have settled to 0 or 255 frame by frame (bd_video_stream_next decides after it). */
	run->decisive = 0;
	/* A clip's people do not turn from frame to frame, and frames that chose differently
	 * would flicker; the quick look would also cost every frame. */
	run->upright = 0;
	run->close_ups = 0;
}

BdVideoFrame *
bd_video_stream_frame_new (BdVideoStream *stream, gpointer tag, GDestroyNotify tag_free, GError **error)
{
	BdVideoStream *s = stream;
	gsize n = (gsize) s->width * s->height;
	BdVideoFrame *f = g_async_queue_try_pop (s->spares);
	if (!f) {
		/* The photo in memory its device copies fastest: a GPU session uploads it for the
		 * network and again for the output. */
		f = g_new0 (BdVideoFrame, 1);
		f->session = s->session;
		f->rgba = bd_session_host_alloc (s->session, n * 4);
		f->raw = g_try_malloc (n);
		/* The mask too goes up for the composite: page-locked, its copy takes a fraction of
		 * the time (bench/session-run --composite --pinned, docs/PERFORMANCE.md). */
		f->alpha = bd_session_host_alloc (s->session, n);
		f->decided = bd_session_host_alloc (s->session, n);
		f->luma = g_try_malloc (n);
		f->change = g_try_malloc (n * sizeof *f->change);
	}
	if (!f->rgba || !f->raw || !f->alpha || !f->decided || !f->luma || !f->change) {
		frame_buffers_free (f);
		if (tag_free && tag)
			tag_free (tag);
		g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY, _("Out of memory for a %u×%u frame"),
		             s->width, s->height);
		return NULL;
	}
	f->refs = 1;
	f->prepared = FALSE;
	f->unfilled = FALSE;
	f->luma_made = 0;
	f->serial = ++s->serial;
	f->change_serial = 0;
	/* The frame before is filled by now (frames are made in turn, each filled first), or will
	 * say when it is (bd_video_stream_frame_fill_later). */
	f->previous = g_steal_pointer (&s->newest);
	g_atomic_int_inc (&f->refs);
	s->newest = f;
	f->all_people = s->settings.all_people;
	f->spares = g_async_queue_ref (s->spares);
	f->tag = tag;
	f->tag_free = tag_free;
	return f;
}

guint8 *
bd_video_frame_get_pixels (BdVideoFrame *frame)
{
	return frame->rgba;
}

void
bd_video_stream_frame_fill_later (BdVideoStream *stream, BdVideoFrame *frame)
{
	g_mutex_lock (&stream->fill_lock);
	frame->unfilled = TRUE;
	g_mutex_unlock (&stream->fill_lock);
}

void
bd_video_stream_frame_filled (BdVideoStream *stream, BdVideoFrame *frame)
{
	g_mutex_lock (&stream->fill_lock);
	frame->unfilled = FALSE;
	g_cond_broadcast (&stream->filled);
	g_mutex_unlock (&stream->fill_lock);
}

/* Waits until @frame's pixels are in (at once unless it is filled elsewhere). */
static void
wait_filled (BdVideoStream *s, BdVideoFrame *frame)
{
	g_mutex_lock (&s->fill_lock);
	while (frame->unfilled)
		g_cond_wait (&s->filled, &s->fill_lock);
	g_mutex_unlock (&s->fill_lock);
}

/* @frame's luma plane, made once: by its own lane or by the next frame's, whichever comes
 * first (the other waits for it). Fails only on arguments that cannot occur here. */
static void
make_luma (BdVideoStream *s, BdVideoFrame *frame, bd_session *session)
{
	if (!g_once_init_enter (&frame->luma_made))
		return;
	bd_image photo = view (s, frame->rgba);
	bd_session_luma (session, &photo, frame->luma, s->width, NULL);
	g_once_init_leave (&frame->luma_made, 1);
}

gboolean
bd_video_stream_prepare_frame (BdVideoStream *stream, BdVideoFrame *frame, bd_session *session, GError **error)
{
	BdVideoStream *s = stream;
	bd_run_options run;
	run_options (frame, &run);
	bd_image photo = view (s, frame->rgba);
	bd_error err = { 0 };
	make_luma (s, frame, session);
	BdVideoFrame *previous = g_steal_pointer (&frame->previous);
	if (previous) {
		wait_filled (s, previous);
		make_luma (s, previous, session);
		if (bd_session_temporal_change_luma (session, frame->luma, previous->luma, s->width, s->width, s->height,
		                                     frame->change, s->width, NULL) == BD_OK)
			frame->change_serial = previous->serial;
		frame_unref (previous);
	}
	if (bd_session_run (session, &photo, &run, frame->raw, s->width, &err) != BD_OK) {
		bd_library_set_error (error, &err, NULL);
		return FALSE;
	}
	/* The filter starts from the network's mask: copied here, on the lane, not on the thread
	 * that puts frames in order (2 MB a 1080p frame). */
	memcpy (frame->alpha, frame->raw, (gsize) s->width * s->height);
	frame->prepared = TRUE;
	return TRUE;
}

gboolean
bd_video_stream_add_frame (BdVideoStream *stream, BdVideoFrame *frame, GError **error)
{
	if (!frame->prepared && !bd_video_stream_prepare_frame (stream, frame, stream->session, error)) {
		bd_video_frame_free (frame);
		return FALSE;
	}
	g_queue_push_tail (&stream->frames, frame);
	return TRUE;
}

gboolean
bd_video_stream_push (BdVideoStream *stream, const guint8 *rgba, gsize stride, gpointer tag,
                      GDestroyNotify tag_free, GError **error)
{
	BdVideoStream *s = stream;
	BdVideoFrame *f = bd_video_stream_frame_new (s, tag, tag_free, error);
	if (!f)
		return FALSE;
	gsize row = (gsize) s->width * 4;
	for (guint y = 0; y < s->height; y++)
		memcpy (f->rgba + y * row, rgba + y * stride, row);
	return bd_video_stream_add_frame (s, f, error);
}

/* @f's mask blended with @other_alpha, @other's frame's, by their photos' change: the map made
 * when one of the two was prepared if it was made against the other (the next frame's against
 * this one, or this one's against the last; the map is the same both ways), else made now.
 * Fails only on arguments that cannot occur here. */
static void
blend (BdVideoStream *s, BdVideoFrame *f, BdVideoFrame *other, const guint8 *other_alpha, float strength)
{
	const guint16 *change = f->change_serial == other->serial ? f->change
	                      : other->change_serial == f->serial ? other->change : NULL;
	if (change)
		bd_session_temporal_blend_change (s->session, change, s->width, s->width, s->height, other_alpha, s->width,
		                                  f->alpha, s->width, strength, NULL);
	else
		bd_session_temporal_blend_luma (s->session, f->luma, other->luma, s->width, s->width, s->height, other_alpha,
		                                s->width, f->alpha, s->width, strength, NULL);
}

BdVideoFrame *
bd_video_stream_next (BdVideoStream *stream, gboolean draining)
{
	BdVideoStream *s = stream;
	if (s->frames.length == 0 || (!draining && s->frames.length <= s->settings.latency))
		return NULL;
	BdVideoFrame *f = g_queue_pop_head (&s->frames);
	float k = s->settings.steadiness;
	if (k > 0) {
		/* Look-ahead: a still pixel's mask becomes the mean of this frame's and the next
		 * ones' (frame j joins with 1/(j+1), so each counts the same). */
		guint j = 1;
		for (GList *l = s->frames.head; l && j <= s->settings.latency; l = l->next, j++) {
			BdVideoFrame *later = l->data;
			blend (s, f, later, later->raw, 1.0f / (float) (j + 1));
		}
		if (s->last)
			blend (s, f, s->last, s->last->alpha, k);
	}
	g_clear_pointer (&s->last, frame_unref);
	g_atomic_int_inc (&f->refs);
	s->last = f;
	/* Then decisive, as a photo's mask is (bd_run_options.decisive): a steadied neighbour is
	 * kept or removed, never left half. Into a buffer of its own, so that the steadied mask
	 * stays for the next frame's filter without a copy. Fails only on arguments that cannot
	 * occur here. Both steps on the session's threads (the decisive one on its GPU, if it has
	 * one): on the streaming thread alone they were most of a 1080p frame's time on a GPU
	 * (docs/PERFORMANCE.md). */
	bd_session_make_decisive_to (s->session, f->alpha, s->width, f->decided, s->width, s->width, s->height, NULL);
	return f;
}

gboolean
bd_video_stream_render (BdVideoStream *stream, BdVideoFrame *frame, guint8 *out, gsize out_stride, GError **error)
{
	BdVideoStream *s = stream;
	bd_error err = { 0 };
	/* The frame's own mask, unless the edits change it (then a copy: the frame keeps its own). */
	const guint8 *mask = frame->decided;
	if (s->settings.threshold >= 0 || s->settings.feather > 0) {
		if (!s->edited && !(s->edited = bd_session_host_alloc (s->session, (gsize) s->width * s->height))) {
			g_set_error (error, BD_LIBRARY_ERROR, BD_ERR_NO_MEMORY, _("Out of memory for a %u×%u frame"),
			             s->width, s->height);
			return FALSE;
		}
		memcpy (s->edited, frame->decided, (gsize) s->width * s->height);
		if (bd_session_mask_adjust (s->session, s->edited, s->width, s->height, s->width, s->settings.threshold,
		                            s->settings.feather, &err) != BD_OK) {
			bd_library_set_error (error, &err, NULL);
			return FALSE;
		}
		mask = s->edited;
	}
	if (s->settings.output == BD_VIDEO_OUTPUT_MASK) {
		for (guint y = 0; y < s->height; y++)
			memcpy (out + y * out_stride, mask + (gsize) y * s->width, s->width);
		return TRUE;
	}
	bd_background transparent = { .kind = BD_BACKGROUND_TRANSPARENT };
	const bd_background *bg = s->settings.output == BD_VIDEO_OUTPUT_CUTOUT ? &transparent : &s->background;
	bd_image photo = view (s, frame->rgba);
	if (bd_session_composite (s->session, &photo, mask, s->width, bg, out, out_stride, &err) != BD_OK) {
		bd_library_set_error (error, &err, NULL);
		return FALSE;
	}
	return TRUE;
}
