/* SPDX-License-Identifier: Apache-2.0 */
/**
 * The `backdrop` element: raw video in (RGBA, RGBx, BGRx, I420, NV12), the person cut out (RGBA
 * with alpha), their mask (GRAY8), or composited over a colour, a blur of the frame or an
 * image (RGBA). Frames are converted to RGBA inside; a `latency` of 1 or 2 holds that many
 * frames back to steady the mask with later ones, and `lanes` runs that many frames' networks
 * on sessions of their own beside the streaming thread (files; a camera wants 0 of each).
 *
 *   gst-launch-1.0 v4l2src ! videoconvert ! backdrop output=composite background=blur \
 *       ! videoconvert ! autovideosink
 *
 * The device it runs on is posted as an element message named "backdrop" (fields `device`,
 * the description, and `kind`, "cpu" or "cuda") and logged at INFO.
 */
#include "gstbackdrop.h"
#include "pinned-output.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "bd-library.h"
#include "bd-video-stream.h"
#include "frame-queue.h"

GST_DEBUG_CATEGORY_STATIC (gst_backdrop_debug);
#define GST_CAT_DEFAULT gst_backdrop_debug

#define IN_FORMATS "{ RGBA, RGBx, BGRx, I420, NV12 }"

struct _GstBackdrop {
	GstVideoFilter parent;

	/* Properties, under the object lock. */
	char         *device, *model, *background;
	BdVideoOutput output;
	float         threshold, feather, steadiness;
	gboolean      all_people;
	guint         latency, input_size, lanes;
	gboolean      settings_changed;

	/* Streaming state: from start to stop. */
	bd_model         *bd_model;
	bd_session       *session;
	BdVideoStream    *stream;
	GstVideoConverter *to_rgba;    /* NULL for RGBA input */
	BdPinnedOutput   *pinned;      /* on a GPU: composed frames in page-locked memory; it owns
	                                * bd_model and session then (they go with its last buffer) */
	GstVideoInfo      rgba_info;
	gboolean          gray_out;    /* the negotiated output is GRAY8 */
	bd_background     bg;
	bd_image          bg_image;
	GdkPixbuf        *bg_pixbuf;
	char             *bg_spec;     /* what bg was parsed from */
	guint64           frames_in, frames_out;

	/* Network lanes (the lanes property): sessions of their own that run the networks of
	 * the next frames while this thread steadies and renders the ones before. */
	bd_session      **lane_sessions;               /* NULL-terminated */
	struct Lane      *lane;                        /* n_lanes of them */
	guint             n_lanes;
	BdFrameQueue     *to_lanes, *from_lanes;       /* LaneJobs */
	GPtrArray        *early;       /* LaneJobs back before their turn */
	guint64           sent, added; /* frames sent to the lanes, and added to the stream since */
};

struct Lane {
	GstBackdrop       *self;
	bd_session        *session;
	GThread           *thread;
	GstVideoConverter *to_rgba;    /* the lane's own (a converter is for one thread at a time) */
};

/* A frame at a network lane, with its place in the stream's order. */
typedef struct {
	GstBackdrop  *self;
	BdVideoFrame *frame;
	GstVideoFrame in;              /* its input, mapped until the lane has filled the frame */
	gboolean      mapped;
	guint64       seq;
	GError       *error;           /* its network's failure */
} LaneJob;

static void
lane_job_free (gpointer data)
{
	LaneJob *job = data;
	if (job->mapped) {
		/* Never filled: say so anyway, or the next frame's preparation would wait for it. */
		gst_video_frame_unmap (&job->in);
		bd_video_stream_frame_filled (job->self->stream, job->frame);
	}
	bd_video_frame_free (job->frame);
	g_clear_error (&job->error);
	g_free (job);
}

G_DEFINE_TYPE (GstBackdrop, gst_backdrop, GST_TYPE_VIDEO_FILTER)
GST_ELEMENT_REGISTER_DEFINE (backdrop, "backdrop", GST_RANK_NONE, GST_TYPE_BACKDROP)

enum {
	PROP_0,
	PROP_DEVICE,
	PROP_MODEL,
	PROP_OUTPUT,
	PROP_BACKGROUND,
	PROP_THRESHOLD,
	PROP_FEATHER,
	PROP_ALL_PEOPLE,
	PROP_LATENCY,
	PROP_LANES,
	PROP_STEADINESS,
	PROP_INPUT_SIZE,
};

#define GST_TYPE_BACKDROP_OUTPUT (gst_backdrop_output_get_type ())
static GType
gst_backdrop_output_get_type (void)
{
	static GType type;
	static const GEnumValue values[] = {
		{ BD_VIDEO_OUTPUT_CUTOUT, "The person on transparency (RGBA)", "cutout" },
		{ BD_VIDEO_OUTPUT_MASK, "The mask, white on the person (GRAY8)", "mask" },
		{ BD_VIDEO_OUTPUT_COMPOSITE, "The person over the background property (RGBA)", "composite" },
		{ 0, NULL, NULL },
	};
	if (g_once_init_enter_pointer (&type))
		g_once_init_leave_pointer (&type, g_enum_register_static ("GstBackdropOutput", values));
	return type;
}

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
	GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (IN_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC, GST_PAD_ALWAYS,
	GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE ("{ RGBA, GRAY8 }")));

static const char *
out_format (GstBackdrop *self)
{
	GST_OBJECT_LOCK (self);
	BdVideoOutput o = self->output;
	GST_OBJECT_UNLOCK (self);
	return o == BD_VIDEO_OUTPUT_MASK ? "GRAY8" : "RGBA";
}

/* Size and rate pass through; the format is RGBA or GRAY8 out, any of IN_FORMATS in. */
static GstCaps *
gst_backdrop_transform_caps (GstBaseTransform *bt, GstPadDirection direction, GstCaps *caps, GstCaps *filter)
{
	GstBackdrop *self = GST_BACKDROP (bt);
	GstCaps *res = gst_caps_new_empty ();
	for (guint i = 0; i < gst_caps_get_size (caps); i++) {
		GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
		gst_structure_remove_fields (s, "format", "colorimetry", "chroma-site", NULL);
		if (direction == GST_PAD_SINK)
			gst_structure_set (s, "format", G_TYPE_STRING, out_format (self), NULL);
		else {
			GValue list = G_VALUE_INIT, v = G_VALUE_INIT;
			gst_value_list_init (&list, 5);
			static const char *formats[] = { "RGBA", "RGBx", "BGRx", "I420", "NV12" };
			for (guint k = 0; k < G_N_ELEMENTS (formats); k++) {
				g_value_init (&v, G_TYPE_STRING);
				g_value_set_string (&v, formats[k]);
				gst_value_list_append_and_take_value (&list, &v);
			}
			gst_structure_take_value (s, "format", &list);
		}
		res = gst_caps_merge_structure (res, s);
	}
	if (filter) {
		GstCaps *t = gst_caps_intersect_full (filter, res, GST_CAPS_INTERSECT_FIRST);
		gst_caps_unref (res);
		res = t;
	}
	return res;
}

/* The settings of the properties, for the stream. */
static gboolean
apply_settings (GstBackdrop *self, GError **error)
{
	GST_OBJECT_LOCK (self);
	g_autofree char *bg = g_strdup (self->background);
	BdVideoSettings s = {
		.output = self->output, .threshold = self->threshold, .feather = self->feather,
		.all_people = self->all_people, .latency = self->latency, .steadiness = self->steadiness,
	};
	self->settings_changed = FALSE;
	GST_OBJECT_UNLOCK (self);

	/* An image is decoded once, not again when another property changes. */
	if (!self->bg_spec || g_strcmp0 (bg, self->bg_spec + 1)) {
		bd_background background;
		bd_image image;
		GdkPixbuf *pixbuf = NULL;
		if (!bd_background_parse (bg, &background, &image, &pixbuf, error))
			return FALSE;
		g_clear_object (&self->bg_pixbuf);
		self->bg_pixbuf = pixbuf;
		self->bg = background;
		self->bg_image = image;
		if (self->bg.kind == BD_BACKGROUND_IMAGE)
			self->bg.image = &self->bg_image;
		g_free (self->bg_spec);
		self->bg_spec = g_strconcat ("=", bg ? bg : "", NULL);
	}
	s.background = &self->bg;
	/* What the caps say wins over the property until the new caps are agreed (the output
	 * property renegotiates): a frame must fit the buffer it is written into. */
	if (self->gray_out)
		s.output = BD_VIDEO_OUTPUT_MASK;
	else if (s.output == BD_VIDEO_OUTPUT_MASK)
		s.output = BD_VIDEO_OUTPUT_CUTOUT;
	if (self->stream)
		bd_video_stream_set (self->stream, &s);
	return TRUE;
}

/* @f's pixels from the input frame @in: converted to RGBA by @to_rgba, or copied row by row
 * when the input is RGBA already (@to_rgba NULL). */
static void
fill_frame (GstBackdrop *self, GstVideoConverter *to_rgba, GstVideoFrame *in, BdVideoFrame *f)
{
	guint8 *pixels = bd_video_frame_get_pixels (f);
	if (to_rgba) {
		GstVideoFrame out;
		gsize size = GST_VIDEO_INFO_SIZE (&self->rgba_info);
		GstBuffer *wrap = gst_buffer_new_wrapped_full (0, pixels, size, 0, size, NULL, NULL);
		gst_video_frame_map (&out, &self->rgba_info, wrap, GST_MAP_WRITE);
		gst_video_converter_frame (to_rgba, in, &out);
		gst_video_frame_unmap (&out);
		gst_buffer_unref (wrap);
	} else {
		const guint8 *src = GST_VIDEO_FRAME_PLANE_DATA (in, 0);
		gsize stride = GST_VIDEO_FRAME_PLANE_STRIDE (in, 0);
		gsize row = (gsize) GST_VIDEO_INFO_WIDTH (&self->rgba_info) * 4;
		for (gint y = 0; y < GST_VIDEO_INFO_HEIGHT (&self->rgba_info); y++)
			memcpy (pixels + y * row, src + y * stride, row);
	}
}

/* A network lane's thread: frames from the streaming thread filled from their input and
 * through its session, back in the order they finish. */
static gpointer
lane_main (gpointer data)
{
	struct Lane *lane = data;
	GstBackdrop *self = lane->self;
	LaneJob *job;
	while ((job = bd_frame_queue_pop (self->to_lanes, NULL))) {
		fill_frame (self, lane->to_rgba, &job->in, job->frame);
		gst_video_frame_unmap (&job->in);
		job->mapped = FALSE;
		bd_video_stream_frame_filled (self->stream, job->frame);
		bd_video_stream_prepare_frame (self->stream, job->frame, lane->session, &job->error);
		bd_frame_queue_push (self->from_lanes, job);
	}
	return NULL;
}

/* Stops the lanes: they end once the frames sent are through, which are then dropped. */
static void
lanes_stop (GstBackdrop *self)
{
	if (self->to_lanes)
		bd_frame_queue_close (self->to_lanes);
	for (guint i = 0; i < self->n_lanes; i++) {
		if (self->lane[i].thread)
			g_thread_join (self->lane[i].thread);
		g_clear_pointer (&self->lane[i].to_rgba, gst_video_converter_free);
	}
	g_clear_pointer (&self->lane, g_free);
	self->n_lanes = 0;
	bd_frame_queue_free (g_steal_pointer (&self->to_lanes), lane_job_free);
	bd_frame_queue_free (g_steal_pointer (&self->from_lanes), lane_job_free);
	g_clear_pointer (&self->early, g_ptr_array_unref);
	g_clear_pointer (&self->lane_sessions, bd_library_free_sessions);
	self->sent = self->added = 0;
}

/* @lanes sessions of @options beside the element's, each with a thread. */
static gboolean
lanes_start (GstBackdrop *self, const bd_session_options *options, guint lanes, const char *device_text)
{
	if (lanes == 0)
		return TRUE;
	bd_session_options one = *options;
	one.device = bd_session_device (self->session);
	g_autoptr (GError) error = NULL;
	guint n = 0;
	if (!bd_library_new_sessions (self->bd_model, &one, FALSE, lanes, &self->lane_sessions, &n, &error)) {
		GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
		                   (_("Cannot run on the device “%s”: %s"), device_text, error->message), (NULL));
		return FALSE;
	}
	self->to_lanes = bd_frame_queue_new ();
	self->from_lanes = bd_frame_queue_new ();
	self->early = g_ptr_array_new_with_free_func (lane_job_free);
	self->lane = g_new0 (struct Lane, n);
	self->n_lanes = n;
	for (guint i = 0; i < n; i++) {
		self->lane[i] = (struct Lane) { self, self->lane_sessions[i], NULL };
		self->lane[i].thread = g_thread_try_new ("backdrop-lane", lane_main, &self->lane[i], &error);
		if (!self->lane[i].thread) {
			GST_ELEMENT_ERROR (self, RESOURCE, FAILED, (_("Cannot start a thread: %s"), error->message), (NULL));
			lanes_stop (self);
			return FALSE;
		}
	}
	return TRUE;
}

/* The lanes' next frame in the stream's order: waiting for it when @wait, else NULL when it is
 * not back yet; NULL when none is out. */
static LaneJob *
lanes_next (GstBackdrop *self, gboolean wait)
{
	for (;;) {
		for (guint i = 0; i < self->early->len; i++)
			if (((LaneJob *) self->early->pdata[i])->seq == self->added)
				return g_ptr_array_steal_index_fast (self->early, i);
		if (self->added == self->sent)
			return NULL;
		LaneJob *job = wait ? bd_frame_queue_pop (self->from_lanes, NULL) : bd_frame_queue_try_pop (self->from_lanes);
		if (!job || job->seq == self->added)
			return job;
		g_ptr_array_add (self->early, job);
	}
}

/* The frames back from the lanes into the stream, in order: every one back already, and
 * waiting until at most @keep are still out. */
static GstFlowReturn
lanes_collect (GstBackdrop *self, guint64 keep)
{
	if (!self->n_lanes)
		return GST_FLOW_OK;
	LaneJob *job;
	while ((job = lanes_next (self, self->sent - self->added > keep))) {
		self->added++;
		BdVideoFrame *frame = g_steal_pointer (&job->frame);
		g_autoptr (GError) error = g_steal_pointer (&job->error);
		lane_job_free (job);
		if (error) {
			bd_video_frame_free (frame);
		} else if (bd_video_stream_add_frame (self->stream, frame, &error))
			continue;
		GST_ELEMENT_ERROR (self, STREAM, FAILED, (_("Frame %llu failed: %s"), (unsigned long long) (self->added - 1),
		                   error->message), (NULL));
		return GST_FLOW_ERROR;
	}
	return GST_FLOW_OK;
}

static gboolean
gst_backdrop_start (GstBaseTransform *bt)
{
	GstBackdrop *self = GST_BACKDROP (bt);
	GST_OBJECT_LOCK (self);
	g_autofree char *device_text = g_strdup (self->device);
	g_autofree char *model = self->model && *self->model ? g_strdup (self->model) : bd_library_default_model ();
	guint input_size = self->input_size, lanes = self->lanes;
	GST_OBJECT_UNLOCK (self);

	bd_session_options options;
	bd_session_options_init (&options);
	options.input_size = input_size;
	if (!bd_library_parse_device (device_text, &options.device, &options.device_index)) {
		GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
		                   (_("The device “%s” is not auto, cpu, cuda or cuda:N"), device_text), (NULL));
		return FALSE;
	}
	bd_error err = { 0 };
	if (bd_model_open (model, &self->bd_model, &err) != BD_OK) {
		GST_ELEMENT_ERROR (self, RESOURCE, OPEN_READ,
		                   (_("Cannot use the model %s: %s"), model, err.message), (NULL));
		return FALSE;
	}
	if (bd_session_new (self->bd_model, &options, &self->session, &err) != BD_OK) {
		GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
		                   (_("Cannot run on the device “%s”: %s"), device_text, err.message), (NULL));
		g_clear_pointer (&self->bd_model, bd_model_free);
		return FALSE;
	}
	const char *desc = bd_session_device_description (self->session);
	const char *kind = bd_session_device (self->session) == BD_DEVICE_CUDA ? "cuda" : "cpu";
	GST_INFO_OBJECT (self, "running on %s (%s), model %s", desc, kind, model);
	gst_element_post_message (GST_ELEMENT (self),
		gst_message_new_element (GST_OBJECT (self),
			gst_structure_new ("backdrop", "device", G_TYPE_STRING, desc, "kind", G_TYPE_STRING, kind,
			                   "model", G_TYPE_STRING, model, NULL)));
	self->frames_in = self->frames_out = 0;
	if (!lanes_start (self, &options, lanes, device_text)) {
		g_clear_pointer (&self->session, bd_session_free);
		g_clear_pointer (&self->bd_model, bd_model_free);
		return FALSE;
	}
	if (bd_session_device (self->session) == BD_DEVICE_CUDA)
		self->pinned = bd_pinned_output_new (self->bd_model, self->session);
	return TRUE;
}

static gboolean
gst_backdrop_stop (GstBaseTransform *bt)
{
	GstBackdrop *self = GST_BACKDROP (bt);
	if (self->stream && bd_video_stream_queued (self->stream))
		GST_WARNING_OBJECT (self, "stopped with %u frames held for look-ahead", bd_video_stream_queued (self->stream));
	lanes_stop (self);
	g_clear_pointer (&self->stream, bd_video_stream_free);
	g_clear_pointer (&self->to_rgba, gst_video_converter_free);
	if (self->pinned) {
		/* The session and model go once downstream has given back every buffer. */
		bd_pinned_output_release (g_steal_pointer (&self->pinned));
		self->session = NULL;
		self->bd_model = NULL;
	}
	g_clear_pointer (&self->session, bd_session_free);
	g_clear_pointer (&self->bd_model, bd_model_free);
	g_clear_object (&self->bg_pixbuf);
	g_clear_pointer (&self->bg_spec, g_free);
	return TRUE;
}

static GstVideoConverter *
to_rgba_new (GstVideoInfo *in_info, GstVideoInfo *rgba_info, guint threads)
{
	return gst_video_converter_new (in_info, rgba_info,
		gst_structure_new ("options", GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, threads, NULL));
}

static gboolean
gst_backdrop_set_info (GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in_info,
                       GstCaps *outcaps, GstVideoInfo *out_info)
{
	GstBackdrop *self = GST_BACKDROP (filter);
	guint w = GST_VIDEO_INFO_WIDTH (in_info), h = GST_VIDEO_INFO_HEIGHT (in_info);
	GstVideoInfo *old_in = &filter->in_info;
	self->gray_out = GST_VIDEO_INFO_FORMAT (out_info) == GST_VIDEO_FORMAT_GRAY8;
	/* New caps of the same size (the output property renegotiated, or only the input's
	 * format changed) keep the stream: the frames held for look-ahead and the filter's memory
	 * of the last frame stay. */
	if (!(GST_VIDEO_INFO_WIDTH (old_in) == (gint) w && GST_VIDEO_INFO_HEIGHT (old_in) == (gint) h))
		g_clear_pointer (&self->stream, bd_video_stream_free);
	g_clear_pointer (&self->to_rgba, gst_video_converter_free);
	gst_video_info_set_format (&self->rgba_info, GST_VIDEO_FORMAT_RGBA, w, h);
	/* The converter changes the format alone: rate, aspect and interlacing as they came. */
	self->rgba_info.fps_n = in_info->fps_n;
	self->rgba_info.fps_d = in_info->fps_d;
	self->rgba_info.par_n = in_info->par_n;
	self->rgba_info.par_d = in_info->par_d;
	self->rgba_info.interlace_mode = in_info->interlace_mode;
	/* The streaming thread converts with every core; with lanes, each lane converts its own
	 * frames with its share of them, and the streaming thread only maps the input. Caps
	 * change after a drain, so no lane is converting now. */
	for (guint i = 0; i < self->n_lanes; i++)
		g_clear_pointer (&self->lane[i].to_rgba, gst_video_converter_free);
	if (GST_VIDEO_INFO_FORMAT (in_info) != GST_VIDEO_FORMAT_RGBA) {
		guint cores = g_get_num_processors ();
		gboolean ok = TRUE;
		if (self->n_lanes == 0)
			ok = (self->to_rgba = to_rgba_new (in_info, &self->rgba_info, cores)) != NULL;
		for (guint i = 0; i < self->n_lanes && ok; i++)
			ok = (self->lane[i].to_rgba = to_rgba_new (in_info, &self->rgba_info,
			                                           MAX (cores / self->n_lanes, 1))) != NULL;
		if (!ok) {
			GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("Cannot convert %s video to RGBA"),
			                   gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (in_info))), (NULL));
			return FALSE;
		}
	}
	if (!self->stream)
		self->stream = bd_video_stream_new (self->session, w, h);
	g_autoptr (GError) error = NULL;
	if (!apply_settings (self, &error)) {
		GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", error->message), (NULL));
		return FALSE;
	}
	return TRUE;
}

/* GstVideoFilter takes an element without transform_frame for an in-place one; ours writes
 * new buffers (generate_output), in another format. */
static gboolean
gst_backdrop_set_caps (GstBaseTransform *bt, GstCaps *incaps, GstCaps *outcaps)
{
	if (!GST_BASE_TRANSFORM_CLASS (gst_backdrop_parent_class)->set_caps (bt, incaps, outcaps))
		return FALSE;
	gst_base_transform_set_in_place (bt, FALSE);
	gst_base_transform_set_passthrough (bt, FALSE);
	return TRUE;
}

/* Runs the network on @in (its ownership passes to the stream), converted or copied straight
 * into a frame of the stream. */
static GstFlowReturn
take_frame (GstBackdrop *self, GstBuffer *in)
{
	GstVideoFilter *filter = GST_VIDEO_FILTER (self);
	GST_OBJECT_LOCK (self);
	gboolean changed = self->settings_changed;
	GST_OBJECT_UNLOCK (self);
	g_autoptr (GError) error = NULL;
	if (changed && !apply_settings (self, &error)) {
		gst_buffer_unref (in);
		GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("%s", error->message), (NULL));
		return GST_FLOW_ERROR;
	}
	GstVideoFrame frame;
	if (!gst_video_frame_map (&frame, &filter->in_info, in, GST_MAP_READ)) {
		GST_ELEMENT_ERROR (self, STREAM, FAILED, (_("Cannot read a video frame")), (NULL));
		gst_buffer_unref (in);
		return GST_FLOW_ERROR;
	}
	/* The map holds a reference of its own: @in may go with a frame that fails. */
	BdVideoFrame *f = bd_video_stream_frame_new (self->stream, in, (GDestroyNotify) gst_buffer_unref, &error);
	if (f && self->n_lanes) {
		/* Filled and its network run on a lane; the frames back from the lanes go into the
		 * stream, waiting only while more than one a lane is out. */
		bd_video_stream_frame_fill_later (self->stream, f);
		LaneJob *job = g_new0 (LaneJob, 1);
		job->self = self;
		job->frame = f;
		job->in = frame;
		job->mapped = TRUE;
		job->seq = self->sent++;
		bd_frame_queue_push (self->to_lanes, job);
		self->frames_in++;
		return lanes_collect (self, self->n_lanes);
	}
	if (f)
		fill_frame (self, self->to_rgba, &frame, f);
	gst_video_frame_unmap (&frame);
	if (!f || !bd_video_stream_add_frame (self->stream, f, &error)) {
		GST_ELEMENT_ERROR (self, STREAM, FAILED, (_("Frame %llu failed: %s"), (unsigned long long) self->frames_in,
		                   error->message), (NULL));
		return GST_FLOW_ERROR;
	}
	self->frames_in++;
	return GST_FLOW_OK;
}

/* @f's output in a new buffer with the timestamps and metadata of its input. */
static GstFlowReturn
render (GstBackdrop *self, BdVideoFrame *f, GstBuffer **outbuf)
{
	GstBaseTransform *bt = GST_BASE_TRANSFORM (self);
	GstVideoFilter *filter = GST_VIDEO_FILTER (self);
	GstBuffer *in = bd_video_frame_get_tag (f);
	GstFlowReturn ret = GST_FLOW_OK;
	/* A GPU composes into page-locked memory in less than half the time (pinned-output.c). */
	*outbuf = self->pinned && !self->gray_out
	        ? bd_pinned_output_buffer (self->pinned, GST_VIDEO_INFO_SIZE (&filter->out_info)) : NULL;
	if (*outbuf)
		GST_BASE_TRANSFORM_GET_CLASS (bt)->copy_metadata (bt, in, *outbuf);
	else
		ret = GST_BASE_TRANSFORM_GET_CLASS (bt)->prepare_output_buffer (bt, in, outbuf);
	if (ret != GST_FLOW_OK || !*outbuf) {
		bd_video_frame_free (f);
		return ret == GST_FLOW_OK ? GST_FLOW_ERROR : ret;
	}
	GstVideoFrame out;
	g_autoptr (GError) error = NULL;
	gboolean ok = gst_video_frame_map (&out, &filter->out_info, *outbuf, GST_MAP_WRITE);
	if (ok) {
		ok = bd_video_stream_render (self->stream, f, GST_VIDEO_FRAME_PLANE_DATA (&out, 0),
		                             GST_VIDEO_FRAME_PLANE_STRIDE (&out, 0), &error);
		gst_video_frame_unmap (&out);
	}
	bd_video_frame_free (f);
	if (!ok) {
		GST_ELEMENT_ERROR (self, STREAM, FAILED, (_("Frame %llu failed: %s"), (unsigned long long) self->frames_out,
		                   error ? error->message : _("cannot write the output buffer")), (NULL));
		gst_clear_buffer (outbuf);
		return GST_FLOW_ERROR;
	}
	self->frames_out++;
	return GST_FLOW_OK;
}

/* One frame in, a frame out once its look-ahead has come (the base class calls this again
 * while it returns buffers). */
static GstFlowReturn
gst_backdrop_generate_output (GstBaseTransform *bt, GstBuffer **outbuf)
{
	GstBackdrop *self = GST_BACKDROP (bt);
	*outbuf = NULL;
	GstBuffer *in = bt->queued_buf;
	bt->queued_buf = NULL;
	if (in) {
		if (!self->stream) {
			gst_buffer_unref (in);
			GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, (_("A frame came before its format")), (NULL));
			return GST_FLOW_NOT_NEGOTIATED;
		}
		GstFlowReturn ret = take_frame (self, in);
		if (ret != GST_FLOW_OK)
			return ret;
	}
	BdVideoFrame *f = self->stream ? bd_video_stream_next (self->stream, FALSE) : NULL;
	return f ? render (self, f, outbuf) : GST_FLOW_OK;
}

/* The frames held for look-ahead, pushed at the end of the stream or before new caps. */
static GstFlowReturn
drain (GstBackdrop *self)
{
	BdVideoFrame *f;
	GstFlowReturn ret = lanes_collect (self, 0);
	while (self->stream && ret == GST_FLOW_OK && (f = bd_video_stream_next (self->stream, TRUE))) {
		GstBuffer *out = NULL;
		ret = render (self, f, &out);
		if (ret == GST_FLOW_OK)
			ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), out);
	}
	if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING)
		GST_WARNING_OBJECT (self, "draining the look-ahead: %s", gst_flow_get_name (ret));
	return ret;
}

static gboolean
gst_backdrop_sink_event (GstBaseTransform *bt, GstEvent *event)
{
	GstBackdrop *self = GST_BACKDROP (bt);
	switch (GST_EVENT_TYPE (event)) {
	case GST_EVENT_EOS:
		drain (self);
		GST_DEBUG_OBJECT (self, "end of stream: %" G_GUINT64_FORMAT " frames in, %" G_GUINT64_FORMAT " out",
		                  self->frames_in, self->frames_out);
		break;
	case GST_EVENT_CAPS:
		drain (self);
		break;
	case GST_EVENT_FLUSH_STOP:
		/* A seek: the frames held (and those at the lanes) belong to the old position. */
		lanes_collect (self, 0);
		if (self->stream)
			bd_video_stream_reset (self->stream);
		break;
	default:
		break;
	}
	return GST_BASE_TRANSFORM_CLASS (gst_backdrop_parent_class)->sink_event (bt, event);
}

/* Look-ahead adds its frames to the latency downstream sees. */
static gboolean
gst_backdrop_query (GstBaseTransform *bt, GstPadDirection direction, GstQuery *query)
{
	GstBackdrop *self = GST_BACKDROP (bt);
	gboolean ok = GST_BASE_TRANSFORM_CLASS (gst_backdrop_parent_class)->query (bt, direction, query);
	if (ok && direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY) {
		GstVideoInfo *info = &GST_VIDEO_FILTER (self)->in_info;
		GST_OBJECT_LOCK (self);
		guint frames = self->latency + self->lanes;
		GST_OBJECT_UNLOCK (self);
		if (frames && GST_VIDEO_INFO_FPS_N (info) > 0) {
			GstClockTime extra = gst_util_uint64_scale (frames * GST_SECOND, GST_VIDEO_INFO_FPS_D (info),
			                                            GST_VIDEO_INFO_FPS_N (info));
			gboolean live;
			GstClockTime min, max;
			gst_query_parse_latency (query, &live, &min, &max);
			gst_query_set_latency (query, live, min + extra, max == GST_CLOCK_TIME_NONE ? max : max + extra);
		}
	}
	return ok;
}

static void
gst_backdrop_set_property (GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
	GstBackdrop *self = GST_BACKDROP (object);
	gboolean reconfigure = FALSE;
	GST_OBJECT_LOCK (self);
	switch (id) {
	case PROP_DEVICE: g_free (self->device); self->device = g_value_dup_string (value); break;
	case PROP_MODEL: g_free (self->model); self->model = g_value_dup_string (value); break;
	case PROP_OUTPUT:
		reconfigure = self->output != (BdVideoOutput) g_value_get_enum (value);
		self->output = g_value_get_enum (value);
		break;
	case PROP_BACKGROUND: g_free (self->background); self->background = g_value_dup_string (value); break;
	case PROP_THRESHOLD: self->threshold = g_value_get_float (value); break;
	case PROP_FEATHER: self->feather = g_value_get_float (value); break;
	case PROP_ALL_PEOPLE: self->all_people = g_value_get_boolean (value); break;
	case PROP_LATENCY: self->latency = g_value_get_uint (value); break;
	case PROP_LANES: self->lanes = g_value_get_uint (value); break;
	case PROP_STEADINESS: self->steadiness = g_value_get_float (value); break;
	case PROP_INPUT_SIZE: self->input_size = g_value_get_uint (value); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec); break;
	}
	self->settings_changed = TRUE;
	GST_OBJECT_UNLOCK (self);
	if (reconfigure)
		gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

static void
gst_backdrop_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
	GstBackdrop *self = GST_BACKDROP (object);
	GST_OBJECT_LOCK (self);
	switch (id) {
	case PROP_DEVICE: g_value_set_string (value, self->device); break;
	case PROP_MODEL: g_value_set_string (value, self->model); break;
	case PROP_OUTPUT: g_value_set_enum (value, self->output); break;
	case PROP_BACKGROUND: g_value_set_string (value, self->background); break;
	case PROP_THRESHOLD: g_value_set_float (value, self->threshold); break;
	case PROP_FEATHER: g_value_set_float (value, self->feather); break;
	case PROP_ALL_PEOPLE: g_value_set_boolean (value, self->all_people); break;
	case PROP_LATENCY: g_value_set_uint (value, self->latency); break;
	case PROP_LANES: g_value_set_uint (value, self->lanes); break;
	case PROP_STEADINESS: g_value_set_float (value, self->steadiness); break;
	case PROP_INPUT_SIZE: g_value_set_uint (value, self->input_size); break;
	default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec); break;
	}
	GST_OBJECT_UNLOCK (self);
}

static void
gst_backdrop_finalize (GObject *object)
{
	GstBackdrop *self = GST_BACKDROP (object);
	g_free (self->device);
	g_free (self->model);
	g_free (self->background);
	G_OBJECT_CLASS (gst_backdrop_parent_class)->finalize (object);
}

static void
gst_backdrop_init (GstBackdrop *self)
{
	self->device = g_strdup ("auto");
	self->output = BD_VIDEO_OUTPUT_CUTOUT;
	self->threshold = -1;
	self->steadiness = BD_VIDEO_DEFAULT_STEADINESS;
	self->settings_changed = TRUE;
}

static void
gst_backdrop_class_init (GstBackdropClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS (klass);
	GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
	GstBaseTransformClass *bt_class = GST_BASE_TRANSFORM_CLASS (klass);
	GstVideoFilterClass *vf_class = GST_VIDEO_FILTER_CLASS (klass);
	const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
	const GParamFlags live = rw | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE;

	object_class->set_property = gst_backdrop_set_property;
	object_class->get_property = gst_backdrop_get_property;
	object_class->finalize = gst_backdrop_finalize;

	g_object_class_install_property (object_class, PROP_DEVICE,
		g_param_spec_string ("device", "Device",
		                     "auto (a GPU when one is usable, else the CPU), cpu, cuda or cuda:N; "
		                     "read when the element starts", "auto", rw | GST_PARAM_MUTABLE_READY));
	g_object_class_install_property (object_class, PROP_MODEL,
		g_param_spec_string ("model", "Model",
		                     "Model file (.bdm); empty: $BACKDROP_MODEL, else the installed one", NULL,
		                     rw | GST_PARAM_MUTABLE_READY));
	g_object_class_install_property (object_class, PROP_OUTPUT,
		g_param_spec_enum ("output", "Output", "What comes out", GST_TYPE_BACKDROP_OUTPUT,
		                   BD_VIDEO_OUTPUT_CUTOUT, rw | GST_PARAM_MUTABLE_PLAYING));
	g_object_class_install_property (object_class, PROP_BACKGROUND,
		g_param_spec_string ("background", "Background",
		                     "For output=composite: a colour (#rrggbb, white…), blur[:RADIUS] or an image file",
		                     NULL, live));
	g_object_class_install_property (object_class, PROP_THRESHOLD,
		g_param_spec_float ("threshold", "Threshold",
		                    "Hard mask edge at this level (0..1); -1 keeps the soft mask", -1, 1, -1, live));
	g_object_class_install_property (object_class, PROP_FEATHER,
		g_param_spec_float ("feather", "Feather", "Soften the mask's edge by this many pixels", 0, 500, 0, live));
	g_object_class_install_property (object_class, PROP_ALL_PEOPLE,
		g_param_spec_boolean ("all-people", "All people",
		                      "Keep everyone, passers-by too, not only the main subject", FALSE, live));
	g_object_class_install_property (object_class, PROP_LATENCY,
		g_param_spec_uint ("latency", "Look-ahead",
		                   "Frames held back to steady the mask with later ones (files; 0 for cameras)",
		                   0, BD_VIDEO_MAX_LATENCY, 0, rw | GST_PARAM_MUTABLE_READY));
	g_object_class_install_property (object_class, PROP_STEADINESS,
		g_param_spec_float ("steadiness", "Steadiness",
		                    "Temporal filter where the picture is still: 0 = a mask per frame, up to 1",
		                    0, 1, BD_VIDEO_DEFAULT_STEADINESS, live));
	g_object_class_install_property (object_class, PROP_LANES,
		g_param_spec_uint ("lanes", "Network lanes",
		                   "Frames whose network runs at once, each on a session of its own, beside the "
		                   "one being steadied: faster on a GPU, a frame of latency each (files; 0 for cameras)",
		                   0, 8, 0, rw | GST_PARAM_MUTABLE_READY));
	g_object_class_install_property (object_class, PROP_INPUT_SIZE,
		g_param_spec_uint ("input-size", "Network size",
		                   "Long side the network sees (0 = the model's): smaller is faster and coarser",
		                   0, 4096, 0, rw | GST_PARAM_MUTABLE_READY));

	gst_element_class_set_static_metadata (element_class, "Backdrop background removal",
		"Filter/Effect/Video", "Removes or replaces the background behind people",
		"The Backdrop authors");
	gst_element_class_add_static_pad_template (element_class, &sink_template);
	gst_element_class_add_static_pad_template (element_class, &src_template);
	gst_type_mark_as_plugin_api (GST_TYPE_BACKDROP_OUTPUT, 0);

	bt_class->transform_caps = gst_backdrop_transform_caps;
	bt_class->set_caps = gst_backdrop_set_caps;
	bt_class->start = gst_backdrop_start;
	bt_class->stop = gst_backdrop_stop;
	bt_class->generate_output = gst_backdrop_generate_output;
	bt_class->sink_event = gst_backdrop_sink_event;
	bt_class->query = gst_backdrop_query;
	vf_class->set_info = gst_backdrop_set_info;

	GST_DEBUG_CATEGORY_INIT (gst_backdrop_debug, "backdrop", 0, "Backdrop background removal");
}

static gboolean
plugin_init (GstPlugin *plugin)
{
	bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
	bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
	return GST_ELEMENT_REGISTER (backdrop, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, backdrop,
                   "Backdrop: person segmentation for video", plugin_init, PACKAGE_VERSION,
                   "Apache 2.0", "backdrop", "https://github.com/backdrop")
