/* SPDX-License-Identifier: Apache-2.0 */
/* A video file through a BdVideoStream (video-encode.h). GStreamer has no encoder that writes
 * VP9's alpha into WebM; libavcodec's libvpx-vp9 does (as Chrome and Firefox play it), so the
 * file tool is built on FFmpeg's libraries and the live element on GStreamer.
 *
 * Stages on threads of their own, so that frames are decoded and encoded while the network
 * runs: the reader (demuxing, decoding, the conversion to RGBA, and the audio), the network's
 * lanes (each a session of its own running bd_session_run on a frame, several frames at once;
 * none on the CPU, whose one session takes every core), the steadying stage (the calling
 * thread: the frames back in order through the stream's filter and output, and the network
 * itself where there are no lanes) and the encoder (the conversion to YUV, the video
 * encoder). Each passes frames on in buffers taken from a queue of free ones, so at most a
 * few frames wait between two stages. */
#include "video-encode.h"

#include <gio/gio.h>
#include <glib/gi18n-lib.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

#include "bd-library.h"
#include "frame-queue.h"

/* Frames waiting between two stages: enough to ride out one slow frame. */
#define VIDEO_IN_FLIGHT 3

/* A frame between two stages: the reader's, filled in place (a stream frame, which a lane
 * prepares), or the steadying stage's output. */
typedef struct {
	BdVideoFrame *frame;              /* decoded frames */
	guint64       seq;                /* the decoded frame's number, from 0 */
	guint8       *pixels;             /* the output (bd_session_host_alloc of @host) */
	bd_session   *host;
	int64_t       pts, duration;      /* the output's, in the input stream's time base */
} video_slot;

typedef struct {
	const BdTranscodeJob *job;
	AVFormatContext *ic, *oc;
	int              vi, ai;          /* input streams; ai < 0 without audio */
	AVCodecContext  *vdec, *venc, *adec, *aenc;
	AVStream        *vst, *ast;
	gboolean         audio_copy;
	struct SwsContext *sws_in, *sws_out;
	SwrContext      *swr;
	AVAudioFifo     *fifo;
	int64_t          audio_next;      /* the next audio sample's time, in 1/sample_rate */
	gboolean         audio_started;
	BdVideoStream   *stream;
	int              w, h;
	gsize            out_stride;      /* the stream's output: RGBA or one byte a pixel */
	AVFrame         *frame;           /* the reader's decoded frames, video and audio */
	AVFrame         *enc_frame;       /* the encoder's */
	AVFrame         *out_view;        /* the stream's output as sws_out's source (no buffer of its own) */
	AVPacket        *apkt, *vpkt;     /* the audio encoder's packets (reader), the video's (encoder) */
	GMutex           mux;             /* the output file, written by the reader and the encoder */
	BdFrameQueue    *in_free, *in_ready, *out_free, *out_ready;
	BdFrameQueue    *masked;          /* frames the lanes are done with, in any order */
	gint             lanes_running;
	guint64          decoded;         /* frames the reader has passed on */
	GMutex           error_lock;
	GError          *error;           /* the first stage's to fail */
	gint             failed;
	guint64          frames;          /* written by the encoder */
	double           duration;        /* seconds, for progress; 0 when unknown */
	double           waited[3];       /* seconds each stage waited for another */
	double           rendering;       /* seconds the steadying stage spent on the output */
} transcode;

enum { STAGE_READ, STAGE_STEADY, STAGE_ENCODE };

/* A network lane: its thread's session and the seconds it waited for frames. */
typedef struct {
	transcode  *t;
	bd_session *session;
	GThread    *thread;
	double      waited;
} lane;

typedef struct {
	int64_t pts, duration;            /* in the input stream's time base */
} frame_time;

/* Stops the run: the first error is kept (@error taken), every queue aborted. */
static void
fail (transcode *t, GError *error)
{
	g_mutex_lock (&t->error_lock);
	if (!t->error)
		t->error = g_steal_pointer (&error);
	g_mutex_unlock (&t->error_lock);
	g_clear_error (&error);
	g_atomic_int_set (&t->failed, 1);
	bd_frame_queue_abort (t->in_free);
	bd_frame_queue_abort (t->in_ready);
	bd_frame_queue_abort (t->out_free);
	bd_frame_queue_abort (t->out_ready);
	if (t->masked)
		bd_frame_queue_abort (t->masked);
}

static void
slot_free (gpointer data)
{
	video_slot *slot = data;
	bd_video_frame_free (slot->frame);
	bd_session_host_free (slot->host, slot->pixels);
	g_free (slot);
}

/* A queue of @n free slots, each with @size bytes of output unless 0 (decoded frames come
 * from the stream), in memory @session's device copies fastest (a GPU writes the output
 * there); NULL when memory is short. */
static BdFrameQueue *
slots_new (guint n, gsize size, bd_session *session)
{
	BdFrameQueue *q = bd_frame_queue_new ();
	for (guint i = 0; i < n; i++) {
		video_slot *slot = g_new0 (video_slot, 1);
		slot->host = session;
		slot->pixels = size ? bd_session_host_alloc (session, size) : NULL;
		bd_frame_queue_push (q, slot);
		if (size && !slot->pixels) {
			bd_frame_queue_free (q, slot_free);
			return NULL;
		}
	}
	return q;
}

const char *
bd_video_container (const char *name, gboolean *alpha)
{
	static const struct { const char *ext, *format; gboolean alpha; } known[] = {
		{ ".webm", "webm", TRUE }, { ".mkv", "matroska", TRUE },
		{ ".mp4", "mp4", FALSE }, { ".m4v", "mp4", FALSE }, { ".mov", "mov", FALSE },
	};
	g_autofree char *lower = g_ascii_strdown (name, -1);
	for (gsize i = 0; i < G_N_ELEMENTS (known); i++)
		if (g_str_has_suffix (lower, known[i].ext)) {
			if (alpha)
				*alpha = known[i].alpha;
			return known[i].format;
		}
	return NULL;
}

static gboolean
av_failed (GError **error, int err, const char *what)
{
	char msg[AV_ERROR_MAX_STRING_SIZE] = { 0 };
	av_strerror (err, msg, sizeof msg);
	g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", what, msg);
	return FALSE;
}

/* A packet into the output file, which two stages share. */
static gboolean
mux_packet (transcode *t, AVPacket *pkt, GError **error)
{
	g_mutex_lock (&t->mux);
	int err = av_interleaved_write_frame (t->oc, pkt);
	g_mutex_unlock (&t->mux);
	return err >= 0 || av_failed (error, err, _("Cannot write the video file"));
}

static gboolean
write_packets (transcode *t, AVCodecContext *enc, AVStream *st, AVPacket *pkt, GError **error)
{
	for (;;) {
		int err = avcodec_receive_packet (enc, pkt);
		if (err == AVERROR (EAGAIN) || err == AVERROR_EOF)
			return TRUE;
		if (err < 0)
			return av_failed (error, err, _("Encoding failed"));
		av_packet_rescale_ts (pkt, enc->time_base, st->time_base);
		pkt->stream_index = st->index;
		if (!mux_packet (t, pkt, error))
			return FALSE;
	}
}

/* ---- video ---- */

static gboolean
open_video (transcode *t, const char *format, GError **error)
{
	const BdTranscodeJob *job = t->job;
	AVStream *ist = t->ic->streams[t->vi];
	const AVCodec *dec = avcodec_find_decoder (ist->codecpar->codec_id);
	if (!dec) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("No decoder for the video codec %s"),
		             avcodec_get_name (ist->codecpar->codec_id));
		return FALSE;
	}
	t->vdec = avcodec_alloc_context3 (dec);
	avcodec_parameters_to_context (t->vdec, ist->codecpar);
	t->vdec->pkt_timebase = ist->time_base;
	t->vdec->thread_count = 0;
	int err = avcodec_open2 (t->vdec, dec, NULL);
	if (err < 0)
		return av_failed (error, err, _("Cannot open the video decoder"));
	t->w = t->vdec->width;
	t->h = t->vdec->height;
	if (t->w <= 0 || t->h <= 0 || (guint64) t->w * t->h > BD_MAX_PIXELS) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("The video's frame size %d×%d is not usable"),
		             t->w, t->h);
		return FALSE;
	}

	gboolean vp9 = g_strcmp0 (format, "mp4") && g_strcmp0 (format, "mov");
	const AVCodec *enc = avcodec_find_encoder_by_name (vp9 ? "libvpx-vp9" : "libx264");
	if (!enc) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("FFmpeg here has no %s encoder"),
		             vp9 ? "libvpx-vp9" : "libx264");
		return FALSE;
	}
	t->venc = avcodec_alloc_context3 (enc);
	t->venc->width = t->w;
	t->venc->height = t->h;
	t->venc->sample_aspect_ratio = t->vdec->sample_aspect_ratio;
	t->venc->time_base = ist->time_base;
	t->venc->framerate = av_guess_frame_rate (t->ic, ist, NULL);
	t->venc->pix_fmt = job->settings->output == BD_VIDEO_OUTPUT_CUTOUT ? AV_PIX_FMT_YUVA420P : AV_PIX_FMT_YUV420P;
	/* What sws_scale writes from RGB by default: BT.601, limited range. */
	t->venc->colorspace = AVCOL_SPC_SMPTE170M;
	t->venc->color_range = AVCOL_RANGE_MPEG;
	t->venc->thread_count = 0;
	if (t->oc->oformat->flags & AVFMT_GLOBALHEADER)
		t->venc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	if (vp9) {
		/* Constant quality; by default "good" at speed 5 with row threads: 17 frames/s at
		 * 720p with alpha on two Zen 5 cores, but the slowest stage on a GPU host; "realtime"
		 * at 8 is 3-4x faster for 15-25% more bytes (docs/PERFORMANCE.md). */
		t->venc->bit_rate = 0;
		av_opt_set_int (t->venc->priv_data, "crf", job->crf > 0 ? job->crf : 31, 0);
		av_opt_set (t->venc->priv_data, "deadline", job->speed == BD_ENCODE_FAST ? "realtime" : "good", 0);
		av_opt_set_int (t->venc->priv_data, "cpu-used",
		                job->speed == BD_ENCODE_FAST ? 8 : job->speed == BD_ENCODE_SMALL ? 2 : 5, 0);
		av_opt_set_int (t->venc->priv_data, "row-mt", 1, 0);
	} else {
		/* 10 s of 1080p DAVIS frames on two Zen 5 cores: veryfast 48 frames/s, superfast 82
		 * for a third more bytes at the same quality setting (ultrafast: 165, 2.4x the bytes;
		 * how many more bytes depends on the picture: 1.85x for a blurred composite). */
		av_opt_set (t->venc->priv_data, "preset", job->speed == BD_ENCODE_FAST ? "superfast"
		                                          : job->speed == BD_ENCODE_SMALL ? "medium" : "veryfast", 0);
		av_opt_set_int (t->venc->priv_data, "crf", job->crf > 0 ? job->crf : 20, 0);
	}
	err = avcodec_open2 (t->venc, enc, NULL);
	if (err < 0)
		return av_failed (error, err, _("Cannot open the video encoder"));
	t->vst = avformat_new_stream (t->oc, NULL);
	avcodec_parameters_from_context (t->vst->codecpar, t->venc);
	t->vst->time_base = t->venc->time_base;
	t->vst->avg_frame_rate = t->venc->framerate;
	if (t->venc->pix_fmt == AV_PIX_FMT_YUVA420P)
		av_dict_set (&t->vst->metadata, "alpha_mode", "1", 0);
	/* A phone's video is stored sideways with a rotation to show it upright: keep it. */
	const AVPacketSideData *rot = av_packet_side_data_get (ist->codecpar->coded_side_data,
	                                                       ist->codecpar->nb_coded_side_data,
	                                                       AV_PKT_DATA_DISPLAYMATRIX);
	void *matrix = rot ? av_memdup (rot->data, rot->size) : NULL;
	if (matrix && !av_packet_side_data_add (&t->vst->codecpar->coded_side_data, &t->vst->codecpar->nb_coded_side_data,
	                                        AV_PKT_DATA_DISPLAYMATRIX, matrix, rot->size, 0))
		av_free (matrix);

	gsize bpp = job->settings->output == BD_VIDEO_OUTPUT_MASK ? 1 : 4;
	t->out_stride = (gsize) t->w * bpp;
	t->enc_frame = av_frame_alloc ();
	t->enc_frame->format = t->venc->pix_fmt;
	t->enc_frame->width = t->w;
	t->enc_frame->height = t->h;
	/* Each lane holds a frame while its network runs. */
	t->in_free = slots_new (VIDEO_IN_FLIGHT + job->n_lanes, 0, job->session);
	t->out_free = slots_new (VIDEO_IN_FLIGHT, t->out_stride * t->h, job->session);
	if (!t->in_free || !t->out_free || av_frame_get_buffer (t->enc_frame, 0) < 0) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, _("Out of memory for a %d×%d frame"), t->w, t->h);
		return FALSE;
	}
	/* The conversion to YUV on several threads (a 1080p frame took 3.7 ms on one, 1.9 on
	 * two: the encoder's stage held the pipeline back); the same bytes as one thread gives.
	 * Only this way round: the threads of the conversion from YUV ignore the colour matrix
	 * set on their context. */
	t->out_view = av_frame_alloc ();
	t->sws_out = sws_alloc_context ();
	if (!t->out_view || !t->sws_out) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE, _("Out of memory for a %d×%d frame"), t->w, t->h);
		return FALSE;
	}
	t->out_view->format = bpp == 1 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGBA;
	t->out_view->width = t->w;
	t->out_view->height = t->h;
	t->out_view->linesize[0] = (int) t->out_stride;
	av_opt_set_int (t->sws_out, "srcw", t->w, 0);
	av_opt_set_int (t->sws_out, "srch", t->h, 0);
	av_opt_set_int (t->sws_out, "src_format", t->out_view->format, 0);
	av_opt_set_int (t->sws_out, "dstw", t->w, 0);
	av_opt_set_int (t->sws_out, "dsth", t->h, 0);
	av_opt_set_int (t->sws_out, "dst_format", t->venc->pix_fmt, 0);
	av_opt_set_int (t->sws_out, "sws_flags", SWS_BILINEAR, 0);
	av_opt_set_int (t->sws_out, "threads", MIN (g_get_num_processors (), 8), 0);
	err = sws_init_context (t->sws_out, NULL, NULL);
	if (err < 0)
		return av_failed (error, err, _("Cannot convert the frames for the encoder"));
	t->stream = bd_video_stream_new (job->session, (guint) t->w, (guint) t->h);
	bd_video_stream_set (t->stream, job->settings);
	return TRUE;
}

/* ---- the encoder's stage ---- */

/* One output frame into the encoder and its packets into the file. */
static gboolean
encode_frame (transcode *t, const video_slot *slot, GError **error)
{
	int err = av_frame_make_writable (t->enc_frame);
	if (err < 0)
		return av_failed (error, err, _("Encoding failed"));
	t->out_view->data[0] = slot->pixels;
	err = sws_scale_frame (t->sws_out, t->enc_frame, t->out_view);
	if (err < 0)
		return av_failed (error, err, _("Encoding failed"));
	if (t->enc_frame->format == AV_PIX_FMT_YUVA420P) {
		/* The alpha plane straight from the mask, not through a colour matrix. */
		for (int y = 0; y < t->h; y++) {
			const guint8 *s = slot->pixels + (gsize) y * t->out_stride + 3;
			guint8 *d = t->enc_frame->data[3] + (gsize) y * t->enc_frame->linesize[3];
			for (int x = 0; x < t->w; x++)
				d[x] = s[4 * x];
		}
	}
	t->enc_frame->pts = slot->pts;
	t->enc_frame->duration = slot->duration;
	err = avcodec_send_frame (t->venc, t->enc_frame);
	if (err < 0)
		return av_failed (error, err, _("Encoding failed"));
	if (!write_packets (t, t->venc, t->vst, t->vpkt, error))
		return FALSE;
	t->frames++;
	if (t->job->progress) {
		double seconds = slot->pts == AV_NOPTS_VALUE ? 0 : slot->pts * av_q2d (t->ic->streams[t->vi]->time_base);
		t->job->progress (t->duration > 0 ? MIN (1.0, seconds / t->duration) : -1, t->frames, t->job->user_data);
	}
	return TRUE;
}

/* The encoder's thread: output frames until the steadying stage closes the queue, then the
 * encoder's last packets. */
static gpointer
encode_stage (gpointer data)
{
	transcode *t = data;
	GError *error = NULL;
	video_slot *slot;
	while ((slot = bd_frame_queue_pop (t->out_ready, &t->waited[STAGE_ENCODE]))) {
		gboolean ok = encode_frame (t, slot, &error);
		if (!bd_frame_queue_push (t->out_free, slot))
			slot_free (slot);   /* the run was stopped: the queue takes nothing now */
		if (!ok) {
			fail (t, error);
			return NULL;
		}
	}
	if (g_atomic_int_get (&t->failed))
		return NULL;
	int err = avcodec_send_frame (t->venc, NULL);
	if (err < 0 ? !av_failed (&error, err, _("Encoding failed")) : !write_packets (t, t->venc, t->vst, t->vpkt, &error))
		fail (t, error);
	return NULL;
}

/* ---- the network's lanes and the steadying stage ---- */

/* Frames the stream has ready (all of them at the end, @draining), rendered for the encoder. */
static gboolean
render_ready (transcode *t, gboolean draining, GError **error)
{
	BdVideoFrame *f;
	while ((f = bd_video_stream_next (t->stream, draining))) {
		video_slot *slot = bd_frame_queue_pop (t->out_free, &t->waited[STAGE_STEADY]);
		if (!slot) {
			bd_video_frame_free (f);
			return FALSE;   /* another stage failed */
		}
		frame_time *ft = bd_video_frame_get_tag (f);
		slot->pts = ft->pts;
		slot->duration = ft->duration;
		gint64 start = g_get_monotonic_time ();
		gboolean ok = bd_video_stream_render (t->stream, f, slot->pixels, t->out_stride, error);
		t->rendering += (g_get_monotonic_time () - start) / 1e6;
		bd_video_frame_free (f);
		if (!ok || !bd_frame_queue_push (t->out_ready, slot)) {
			slot_free (slot);
			return FALSE;
		}
	}
	return TRUE;
}

/* A network lane's thread: frames from the reader through its session, to the steadying stage
 * in the order they finish. The last lane to end closes that queue. */
static gpointer
lane_stage (gpointer data)
{
	lane *l = data;
	transcode *t = l->t;
	video_slot *slot;
	while ((slot = bd_frame_queue_pop (t->in_ready, &l->waited))) {
		GError *error = NULL;
		if (!bd_video_stream_prepare_frame (t->stream, slot->frame, l->session, &error)) {
			slot_free (slot);
			fail (t, error);
			break;
		}
		if (!bd_frame_queue_push (t->masked, slot)) {
			slot_free (slot);
			break;
		}
	}
	if (g_atomic_int_dec_and_test (&t->lanes_running))
		bd_frame_queue_close (t->masked);
	return NULL;
}

/* The next frame in order, from the lanes (which finish in any order: those ahead wait in
 * @early) or straight from the reader; NULL at the end or on a failure. */
static video_slot *
next_in_order (transcode *t, GPtrArray *early, guint64 seq)
{
	for (;;) {
		for (guint i = 0; i < early->len; i++) {
			video_slot *slot = early->pdata[i];
			if (slot->seq == seq)
				return g_ptr_array_steal_index_fast (early, i);
		}
		video_slot *slot = bd_frame_queue_pop (t->masked ? t->masked : t->in_ready, &t->waited[STAGE_STEADY]);
		if (!slot || slot->seq == seq)
			return slot;
		g_ptr_array_add (early, slot);
	}
}

/* On the calling thread: the frames in order through the stream (its network too where there
 * are no lanes), its filter and its output, until the frames end. */
static void
steady_stage (transcode *t)
{
	GError *error = NULL;
	g_autoptr (GPtrArray) early = g_ptr_array_new_with_free_func (slot_free);
	video_slot *slot;
	for (guint64 seq = 0; (slot = next_in_order (t, early, seq)); seq++) {
		/* Prepared by a lane, or here on the stream's session. */
		gboolean ok = bd_video_stream_add_frame (t->stream, g_steal_pointer (&slot->frame), &error);
		if (!bd_frame_queue_push (t->in_free, slot))
			slot_free (slot);   /* the run was stopped */
		if (!ok || !render_ready (t, FALSE, &error)) {
			fail (t, error);
			return;
		}
	}
	if (!g_atomic_int_get (&t->failed) && !render_ready (t, TRUE, &error))
		fail (t, error);
	bd_frame_queue_close (t->out_ready);
}

/* ---- the reader's stage: video ---- */

static gboolean
take_video_frame (transcode *t, GError **error)
{
	AVFrame *fr = t->frame;
	if (fr->width != t->w || fr->height != t->h) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
		             _("The frame size changes within the video (%d×%d, then %d×%d)"), t->w, t->h, fr->width, fr->height);
		return FALSE;
	}
	if (!t->sws_in) {
		t->sws_in = sws_getContext (t->w, t->h, fr->format, t->w, t->h, AV_PIX_FMT_RGBA, SWS_BILINEAR, NULL, NULL, NULL);
		if (!t->sws_in) {
			g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Cannot convert %s frames to RGB"),
			             av_get_pix_fmt_name (fr->format));
			return FALSE;
		}
		/* The source's own colour matrix and range, where it says. */
		int spc = fr->colorspace == AVCOL_SPC_UNSPECIFIED ? (t->h >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M)
		                                                  : fr->colorspace;
		sws_setColorspaceDetails (t->sws_in, sws_getCoefficients (spc), fr->color_range == AVCOL_RANGE_JPEG,
		                          sws_getCoefficients (SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
	}
	video_slot *slot = bd_frame_queue_pop (t->in_free, &t->waited[STAGE_READ]);
	if (!slot)
		return FALSE;   /* another stage failed */
	frame_time *ft = g_new (frame_time, 1);
	ft->pts = fr->best_effort_timestamp;
	ft->duration = fr->duration;
	slot->frame = bd_video_stream_frame_new (t->stream, ft, g_free, error);
	if (!slot->frame) {
		slot_free (slot);
		return FALSE;
	}
	uint8_t *dst[1] = { bd_video_frame_get_pixels (slot->frame) };
	int dst_stride[1] = { t->w * 4 };
	sws_scale (t->sws_in, (const uint8_t *const *) fr->data, fr->linesize, 0, t->h, dst, dst_stride);
	slot->seq = t->decoded++;
	if (!bd_frame_queue_push (t->in_ready, slot)) {
		slot_free (slot);
		return FALSE;
	}
	return TRUE;
}

static gboolean
decode_video (transcode *t, const AVPacket *pkt, GError **error)
{
	int err = avcodec_send_packet (t->vdec, pkt);
	if (err < 0 && err != AVERROR_EOF)
		return av_failed (error, err, _("Cannot decode the video"));
	for (;;) {
		err = avcodec_receive_frame (t->vdec, t->frame);
		if (err == AVERROR (EAGAIN) || err == AVERROR_EOF)
			return TRUE;
		if (err < 0)
			return av_failed (error, err, _("Cannot decode the video"));
		gboolean ok = take_video_frame (t, error);
		av_frame_unref (t->frame);
		if (!ok)
			return FALSE;
	}
}

/* ---- the reader's stage: audio ---- */

static gboolean
open_audio (transcode *t, const char *format, GError **error)
{
	AVStream *ist = t->ic->streams[t->ai];
	t->ast = avformat_new_stream (t->oc, NULL);
	if (avformat_query_codec (t->oc->oformat, ist->codecpar->codec_id, FF_COMPLIANCE_NORMAL) == 1) {
		/* The container takes the codec: the packets as they are, no loss. */
		t->audio_copy = TRUE;
		avcodec_parameters_copy (t->ast->codecpar, ist->codecpar);
		t->ast->codecpar->codec_tag = 0;
		t->ast->time_base = ist->time_base;
		return TRUE;
	}
	const AVCodec *dec = avcodec_find_decoder (ist->codecpar->codec_id);
	gboolean webm = !g_strcmp0 (format, "webm") || !g_strcmp0 (format, "matroska");
	const AVCodec *enc = avcodec_find_encoder_by_name (webm ? "libopus" : "aac");
	if (!enc && webm)
		enc = avcodec_find_encoder_by_name ("libvorbis");
	if (!dec || !enc) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
		             _("The audio (%s) cannot go into this container, and FFmpeg here cannot convert it"),
		             avcodec_get_name (ist->codecpar->codec_id));
		return FALSE;
	}
	t->adec = avcodec_alloc_context3 (dec);
	avcodec_parameters_to_context (t->adec, ist->codecpar);
	t->adec->pkt_timebase = ist->time_base;
	int err = avcodec_open2 (t->adec, dec, NULL);
	if (err < 0)
		return av_failed (error, err, _("Cannot open the audio decoder"));
	t->aenc = avcodec_alloc_context3 (enc);
	const void *fmts = NULL;
	int n = 0;
	avcodec_get_supported_config (NULL, enc, AV_CODEC_CONFIG_SAMPLE_FORMAT, 0, &fmts, &n);
	t->aenc->sample_fmt = fmts && n > 0 ? ((const enum AVSampleFormat *) fmts)[0] : AV_SAMPLE_FMT_FLTP;
	/* Opus runs at 48 kHz; AAC at the source's rate. */
	t->aenc->sample_rate = enc->id == AV_CODEC_ID_OPUS ? 48000 : t->adec->sample_rate;
	av_channel_layout_default (&t->aenc->ch_layout, MIN (t->adec->ch_layout.nb_channels, 2));
	t->aenc->bit_rate = 128000;
	t->aenc->time_base = (AVRational) { 1, t->aenc->sample_rate };
	if (t->oc->oformat->flags & AVFMT_GLOBALHEADER)
		t->aenc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	err = avcodec_open2 (t->aenc, enc, NULL);
	if (err < 0)
		return av_failed (error, err, _("Cannot open the audio encoder"));
	avcodec_parameters_from_context (t->ast->codecpar, t->aenc);
	t->ast->time_base = t->aenc->time_base;
	err = swr_alloc_set_opts2 (&t->swr, &t->aenc->ch_layout, t->aenc->sample_fmt, t->aenc->sample_rate,
	                           &t->adec->ch_layout, t->adec->sample_fmt, t->adec->sample_rate, 0, NULL);
	if (err < 0 || swr_init (t->swr) < 0)
		return av_failed (error, err < 0 ? err : AVERROR (EINVAL), _("Cannot convert the audio"));
	t->fifo = av_audio_fifo_alloc (t->aenc->sample_fmt, t->aenc->ch_layout.nb_channels, 4096);
	return TRUE;
}

/* Whole encoder frames from the FIFO (and at the end, @flush, what is left). */
static gboolean
encode_audio (transcode *t, gboolean flush, GError **error)
{
	int size = t->aenc->frame_size > 0 ? t->aenc->frame_size : 1024;
	while (av_audio_fifo_size (t->fifo) >= size || (flush && av_audio_fifo_size (t->fifo) > 0)) {
		int n = MIN (size, av_audio_fifo_size (t->fifo));
		AVFrame *f = av_frame_alloc ();
		f->nb_samples = n;
		f->format = t->aenc->sample_fmt;
		f->sample_rate = t->aenc->sample_rate;
		av_channel_layout_copy (&f->ch_layout, &t->aenc->ch_layout);
		if (av_frame_get_buffer (f, 0) < 0) {
			av_frame_free (&f);
			return av_failed (error, AVERROR (ENOMEM), _("Encoding failed"));
		}
		av_audio_fifo_read (t->fifo, (void **) f->data, n);
		f->pts = t->audio_next;
		t->audio_next += n;
		int err = avcodec_send_frame (t->aenc, f);
		av_frame_free (&f);
		if (err < 0)
			return av_failed (error, err, _("Encoding failed"));
		if (!write_packets (t, t->aenc, t->ast, t->apkt, error))
			return FALSE;
	}
	return TRUE;
}

static gboolean
decode_audio (transcode *t, const AVPacket *pkt, GError **error)
{
	int err = avcodec_send_packet (t->adec, pkt);
	if (err < 0 && err != AVERROR_EOF)
		return av_failed (error, err, _("Cannot decode the audio"));
	for (;;) {
		AVFrame *out = av_frame_alloc ();
		AVFrame *in = NULL;
		err = avcodec_receive_frame (t->adec, t->frame);
		if (err >= 0)
			in = t->frame;
		else if (err != AVERROR_EOF) {
			av_frame_free (&out);
			return err == AVERROR (EAGAIN) ? TRUE : av_failed (error, err, _("Cannot decode the audio"));
		}
		if (in && !t->audio_started && in->pts != AV_NOPTS_VALUE)
			t->audio_next = av_rescale_q (in->pts, t->adec->pkt_timebase, t->aenc->time_base);
		t->audio_started = TRUE;
		av_channel_layout_copy (&out->ch_layout, &t->aenc->ch_layout);
		out->format = t->aenc->sample_fmt;
		out->sample_rate = t->aenc->sample_rate;
		/* With no input, the resampler gives what it holds back (the end). */
		int e2 = swr_convert_frame (t->swr, out, in);
		if (in)
			av_frame_unref (t->frame);
		if (e2 < 0) {
			av_frame_free (&out);
			return av_failed (error, e2, _("Cannot convert the audio"));
		}
		if (out->nb_samples > 0)
			av_audio_fifo_write (t->fifo, (void **) out->extended_data, out->nb_samples);
		av_frame_free (&out);
		if (!encode_audio (t, !in, error))
			return FALSE;
		if (!in)
			return TRUE;
	}
}

/* ---- the reader's stage ---- */

/* The input's packets: video frames to the network's stage, audio into the file. */
static gboolean
read_packets (transcode *t, GError **error)
{
	const BdTranscodeJob *job = t->job;
	AVPacket *in = av_packet_alloc ();
	gboolean ok = in != NULL;
	int err = 0;
	while (ok && (err = av_read_frame (t->ic, in)) >= 0) {
		if ((job->cancel && *job->cancel) || g_atomic_int_get (&t->failed)) {
			g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
			ok = FALSE;
		} else if (in->stream_index == t->vi)
			ok = decode_video (t, in, error);
		else if (in->stream_index == t->ai && t->audio_copy) {
			av_packet_rescale_ts (in, t->ic->streams[t->ai]->time_base, t->ast->time_base);
			in->stream_index = t->ast->index;
			in->pos = -1;
			ok = mux_packet (t, in, error);
		} else if (in->stream_index == t->ai)
			ok = decode_audio (t, in, error);
		av_packet_unref (in);
	}
	av_packet_free (&in);
	if (ok && err != AVERROR_EOF)
		ok = av_failed (error, err, _("Cannot read the video file"));
	/* The ends: the video decoder's last frames, the audio's. */
	if (ok)
		ok = decode_video (t, NULL, error);
	if (ok && t->adec) {
		ok = decode_audio (t, NULL, error) && encode_audio (t, TRUE, error);
		if (ok) {
			avcodec_send_frame (t->aenc, NULL);
			ok = write_packets (t, t->aenc, t->ast, t->apkt, error);
		}
	}
	return ok;
}

static gpointer
read_stage (gpointer data)
{
	transcode *t = data;
	GError *error = NULL;
	if (read_packets (t, &error))
		bd_frame_queue_close (t->in_ready);
	else
		fail (t, error);
	return NULL;
}

/* ---- the run ---- */

static void
transcode_clear (transcode *t)
{
	avcodec_free_context (&t->vdec);
	avcodec_free_context (&t->venc);
	avcodec_free_context (&t->adec);
	avcodec_free_context (&t->aenc);
	sws_freeContext (t->sws_in);
	sws_freeContext (t->sws_out);
	swr_free (&t->swr);
	if (t->fifo)
		av_audio_fifo_free (t->fifo);
	bd_video_stream_free (t->stream);
	bd_frame_queue_free (t->in_free, slot_free);
	bd_frame_queue_free (t->in_ready, slot_free);
	bd_frame_queue_free (t->out_free, slot_free);
	bd_frame_queue_free (t->out_ready, slot_free);
	bd_frame_queue_free (t->masked, slot_free);
	av_frame_free (&t->frame);
	av_frame_free (&t->enc_frame);
	av_frame_free (&t->out_view);
	av_packet_free (&t->apkt);
	av_packet_free (&t->vpkt);
	if (t->oc) {
		if (!(t->oc->oformat->flags & AVFMT_NOFILE))
			avio_closep (&t->oc->pb);
		avformat_free_context (t->oc);
	}
	avformat_close_input (&t->ic);
	g_clear_error (&t->error);
	g_mutex_clear (&t->mux);
	g_mutex_clear (&t->error_lock);
}

static gboolean
run (transcode *t, GError **error)
{
	const BdTranscodeJob *job = t->job;
	int err = avformat_open_input (&t->ic, job->input, NULL, NULL);
	if (err < 0)
		return av_failed (error, err, job->input);
	err = avformat_find_stream_info (t->ic, NULL);
	if (err < 0)
		return av_failed (error, err, job->input);
	t->vi = av_find_best_stream (t->ic, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
	if (t->vi < 0) {
		g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("%s has no video"), job->input);
		return FALSE;
	}
	t->ai = av_find_best_stream (t->ic, AVMEDIA_TYPE_AUDIO, -1, t->vi, NULL, 0);
	if (t->ic->duration > 0)
		t->duration = t->ic->duration / (double) AV_TIME_BASE;

	gboolean alpha_ok = FALSE;
	const char *format = bd_video_container (job->name, &alpha_ok);
	err = avformat_alloc_output_context2 (&t->oc, NULL, format, job->path);
	if (err < 0)
		return av_failed (error, err, job->name);
	t->frame = av_frame_alloc ();
	t->apkt = av_packet_alloc ();
	t->vpkt = av_packet_alloc ();
	t->in_ready = bd_frame_queue_new ();
	t->out_ready = bd_frame_queue_new ();
	if (!t->frame || !t->apkt || !t->vpkt)
		return av_failed (error, AVERROR (ENOMEM), job->input);
	if (!open_video (t, format, error) || (t->ai >= 0 && !open_audio (t, format, error)))
		return FALSE;
	err = avio_open (&t->oc->pb, job->path, AVIO_FLAG_WRITE);
	if (err < 0)
		return av_failed (error, err, job->path);
	err = avformat_write_header (t->oc, NULL);
	if (err < 0)
		return av_failed (error, err, _("Cannot write the video file"));

	if (job->n_lanes)
		t->masked = bd_frame_queue_new ();
	gint64 start = g_get_monotonic_time ();
	g_autofree lane *lanes = g_new0 (lane, job->n_lanes);
	GThread *reader = g_thread_try_new ("video-read", read_stage, t, error);
	GThread *encoder = reader ? g_thread_try_new ("video-encode", encode_stage, t, error) : NULL;
	gboolean started = encoder != NULL;
	g_atomic_int_set (&t->lanes_running, (gint) job->n_lanes);
	for (guint i = 0; i < job->n_lanes; i++) {
		lanes[i] = (lane) { .t = t, .session = job->lanes[i] };
		if (started)
			lanes[i].thread = g_thread_try_new ("video-lane", lane_stage, &lanes[i], error);
		started = started && lanes[i].thread;
		if (!lanes[i].thread && g_atomic_int_dec_and_test (&t->lanes_running))
			bd_frame_queue_close (t->masked);
	}
	if (started)
		steady_stage (t);
	else
		fail (t, NULL);
	if (reader)
		g_thread_join (reader);
	if (encoder)
		g_thread_join (encoder);
	double lanes_waited = 0;
	for (guint i = 0; i < job->n_lanes; i++) {
		if (lanes[i].thread)
			g_thread_join (lanes[i].thread);
		lanes_waited += lanes[i].waited;
	}
	if (!started)
		return FALSE;
	if (job->stats) {
		double seconds = (g_get_monotonic_time () - start) / 1e6;
		job->stats->seconds = seconds;
		job->stats->lanes = job->n_lanes;
		job->stats->reading = MAX (0.0, seconds - t->waited[STAGE_READ]);
		job->stats->network = job->n_lanes ? MAX (0.0, seconds - lanes_waited / job->n_lanes) : 0;
		job->stats->steadying = MAX (0.0, seconds - t->waited[STAGE_STEADY]);
		job->stats->output = t->rendering;
		job->stats->encoding = MAX (0.0, seconds - t->waited[STAGE_ENCODE]);
	}
	if (t->error) {
		g_propagate_error (error, g_steal_pointer (&t->error));
		return FALSE;
	}
	if ((err = av_write_trailer (t->oc)) < 0)
		return av_failed (error, err, _("Cannot write the video file"));
	return TRUE;
}

gboolean
bd_video_transcode (const BdTranscodeJob *job, guint64 *frames, GError **error)
{
	transcode t = { .job = job, .vi = -1, .ai = -1 };
	g_mutex_init (&t.mux);
	g_mutex_init (&t.error_lock);
	/* FFmpeg's notes (encoder versions, stream details) are not for our users; its errors are. */
	av_log_set_level (AV_LOG_ERROR);
	gboolean ok = run (&t, error);
	if (frames)
		*frames = t.frames;
	transcode_clear (&t);
	return ok;
}
