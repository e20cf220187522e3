/* SPDX-License-Identifier: Apache-2.0 */
/* Sessions: a model on a device. A session letterboxes the photo to the network's size,
 * runs the backend's forward pass, brings the mask back to the photo's full size and, unless
 * told otherwise, keeps only the main subject (image/keep-subject.c). */
#include "image/image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

void
bd_session_options_init (bd_session_options *options)
{
	if (!options)
		return;
	memset (options, 0, sizeof *options);
	options->struct_size = sizeof *options;
	options->device = BD_DEVICE_AUTO;
	options->precision = BD_PRECISION_FAST;
}

void
bd_run_options_init (bd_run_options *options)
{
	if (!options)
		return;
	memset (options, 0, sizeof *options);
	options->struct_size = sizeof *options;
	options->refine_edges = 1;
	options->mirror_average = 1;
	options->main_subject_only = 1;
	options->decisive = 1;
	options->upright = 1;
	options->close_ups = 1;
}

/* The caller's option struct @in (NULL: the defaults) as this version's @out, which
 * @init has filled with the defaults: a caller built against an older header has a
 * shorter struct, whose missing fields keep them; one built against a newer header has
 * fields this version does not know, which are ignored. @oldest: the smallest size any
 * version had. Refuses a struct whose size field is not plausible (never initialised). */
static bool
take_options (const void *in, void *out, size_t ours, size_t oldest)
{
	if (!in)
		return true;
	size_t theirs;
	memcpy (&theirs, in, sizeof theirs);
	if (theirs < oldest || theirs > 65536)
		return false;
	memcpy (out, in, theirs < ours ? theirs : ours);
	memcpy (out, &ours, sizeof ours);
	return true;
}

/* The first versions' sizes: every field up to device_index, and up to main_subject_only. */
#define SESSION_OPTIONS_OLDEST (offsetof (bd_session_options, device_index) + sizeof (int))
#define RUN_OPTIONS_OLDEST (offsetof (bd_run_options, main_subject_only) + sizeof (int))

static const char *
cpu_isa_name (void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init ();
	if (__builtin_cpu_supports ("x86-64-v4"))
		return "AVX-512";
	if (__builtin_cpu_supports ("x86-64-v3"))
		return "AVX2";
#endif
	return "portable";
}

int
bd_device_count (bd_device device)
{
	if (device != BD_DEVICE_CUDA)
		return device == BD_DEVICE_CPU || device == BD_DEVICE_AUTO ? 1 : 0;
	const bd_backend_ops *cuda = bd_cuda_backend_get ();
	return cuda && cuda->device_count ? cuda->device_count () : 0;
}

bd_status
bd_session_new (const bd_model *model, const bd_session_options *options,
                bd_session **out_session, bd_error *error)
{
	if (out_session)
		*out_session = NULL;
	if (!model || !out_session)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_new: no model or result pointer");
	bd_session_options taken;
	bd_session_options_init (&taken);
	if (!take_options (options, &taken, sizeof taken, SESSION_OPTIONS_OLDEST))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "bd_session_new: the options were not set up by bd_session_options_init");
	options = &taken;
	if (options->device > BD_DEVICE_CUDA || options->precision > BD_PRECISION_EXACT || options->threads < 0 ||
	    options->device_index < 0)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_new: bad options");
	uint32_t multiple = 1u << (model->depth - 1);
	if (options->input_size && (options->input_size < multiple || options->input_size > 4096))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "input size %u is outside %u..4096",
		                     options->input_size, multiple);

	bd_session *s = calloc (1, sizeof *s);
	if (!s)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	s->model = model;
	s->options = *options;
	s->pool = bd_thread_pool_new (options->threads);
	if (!s->pool) {
		free (s);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "cannot start worker threads");
	}

	bd_status st = BD_ERR_DEVICE;
	bd_error cuda_error = { 0 };
	const bd_backend_ops *cuda = bd_cuda_backend_get ();
	if (options->device != BD_DEVICE_CPU) {
		if (cuda) {
			s->backend = cuda;
			st = cuda->init (s, &cuda_error);
		} else {
			bd_error_set (&cuda_error, BD_ERR_DEVICE, "this Backdrop was built without CUDA support");
		}
		if (st != BD_OK && options->device == BD_DEVICE_CUDA) {
			/* Asked for the GPU: say why it is not there rather than fall back quietly. */
			bd_error_set (error, cuda_error.status, "%s", cuda_error.message);
			bd_session_free (s);
			return cuda_error.status;
		}
	}
	if (st != BD_OK) {
		s->backend = &bd_cpu_backend;
		st = bd_cpu_backend.init (s, error);
		if (st != BD_OK) {
			s->backend = NULL;
			bd_session_free (s);
			return st;
		}
		snprintf (s->description, sizeof s->description, "CPU (%d thread%s, %s)",
		          bd_thread_pool_size (s->pool), bd_thread_pool_size (s->pool) == 1 ? "" : "s",
		          bd_cpu_backend_low_precision (s) ? bd_cpu_backend_low_precision (s) : cpu_isa_name ());
	}
	*out_session = s;
	return BD_OK;
}

void
bd_session_free (bd_session *session)
{
	if (!session)
		return;
	if (session->backend)
		session->backend->destroy (session);
	bd_thread_pool_free (session->pool);
	bd_scratch_free (&session->keep_subject);
	free (session);
}

/* Host blocks carry a header that says how they were made, so that bd_session_host_free frees
 * them the same way (a GPU without page-locked memory to spare gives plain memory). */
#define HOST_HEADER 64

void *
bd_session_host_alloc (bd_session *session, size_t size)
{
	if (!session || size == 0 || size > SIZE_MAX - HOST_HEADER)
		return NULL;
	uint8_t *block = NULL;
	if (session->backend && session->backend->host_alloc)
		block = session->backend->host_alloc (session, size + HOST_HEADER);
	if (block)
		memcpy (block, "bd-lockd", 8);
	else if ((block = malloc (size + HOST_HEADER)))
		memcpy (block, "bd-plain", 8);
	return block ? block + HOST_HEADER : NULL;
}

void
bd_session_host_free (bd_session *session, void *memory)
{
	if (!memory)
		return;
	uint8_t *block = (uint8_t *) memory - HOST_HEADER;
	if (memcmp (block, "bd-lockd", 8) == 0 && session && session->backend && session->backend->host_free)
		session->backend->host_free (session, block);
	else
		free (block);
}

bd_device
bd_session_device (const bd_session *session)
{
	if (!session || !session->backend)
		return BD_DEVICE_AUTO;   /* no session: no device ran anything */
	return session->backend == &bd_cpu_backend ? BD_DEVICE_CPU : BD_DEVICE_CUDA;
}

const char *
bd_session_device_description (const bd_session *session)
{
	return session ? session->description : "";
}

bd_status
bd_session_forward_batch (bd_session *session, const float *input_nchw, uint32_t batch,
                          uint32_t height, uint32_t width, float *probabilities, bd_error *error)
{
	if (!session || !input_nchw || !probabilities)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_forward: missing argument");
	uint32_t multiple = 1u << (session->model->depth - 1);
	if (height == 0 || width == 0 || height % multiple || width % multiple || height > 8192 || width > 8192)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "input %ux%u must be multiples of %u, at most 8192", width, height, multiple);
	/* A batch is as large as the largest single input, so index arithmetic stays in range. */
	if (batch == 0 || batch > BD_MAX_BATCH || (uint64_t) batch * height * width > (uint64_t) 8192 * 8192)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "a batch of %u inputs of %ux%u: it takes 1..%d inputs of at most 8192x8192 pixels together",
		                     batch, width, height, BD_MAX_BATCH);
	return session->backend->forward (session, input_nchw, batch, height, width, probabilities, NULL, error);
}

bd_status
bd_session_forward (bd_session *session, const float *input_chw, uint32_t height,
                    uint32_t width, float *probabilities, bd_error *error)
{
	return bd_session_forward_batch (session, input_chw, 1, height, width, probabilities, error);
}

/* The photo scaled so its long side is @size, centred on a canvas padded to the network's
 * multiple. */
static bd_letterbox
letterbox_at (const bd_model *m, uint32_t width, uint32_t height, uint32_t size)
{
	uint32_t multiple = 1u << (m->depth - 1);
	uint32_t longest = width > height ? width : height;
	bd_letterbox lb;
	lb.sw = (uint32_t) lround ((double) width * size / longest);
	lb.sh = (uint32_t) lround ((double) height * size / longest);
	lb.sw = lb.sw ? lb.sw : 1;
	lb.sh = lb.sh ? lb.sh : 1;
	lb.pw = (lb.sw + multiple - 1) / multiple * multiple;
	lb.ph = (lb.sh + multiple - 1) / multiple * multiple;
	lb.ox = (lb.pw - lb.sw) / 2;
	lb.oy = (lb.ph - lb.sh) / 2;
	return lb;
}

/* The long side the network sees the photo at. */
static uint32_t
network_side (const bd_session *s, uint32_t width, uint32_t height)
{
	uint32_t size = s->options.input_size ? s->options.input_size : s->model->input_size;
	size = s->run_side ? s->run_side : size;
	uint32_t longest = width > height ? width : height;
	/* Never enlarge: a small photo runs at its own size. Enlarging adds blur, not detail,
	 * and the network does worse on it (docs/MODEL.md, "Small photos at their own size"). */
	return size < longest ? size : longest;
}

bd_letterbox
bd_letterbox_for (const bd_session *s, uint32_t width, uint32_t height)
{
	return letterbox_at (s->model, width, height, network_side (s, width, height));
}

bd_letterbox
bd_letterbox_mirror_for (const bd_session *s, uint32_t width, uint32_t height)
{
	uint32_t side = network_side (s, width, height);
	side = (side * BD_MIRROR_SCALE_NUM + BD_MIRROR_SCALE_DEN / 2) / BD_MIRROR_SCALE_DEN;
	return letterbox_at (s->model, width, height, side);
}

/* The photo resampled to the letterbox's scale, normalised onto its canvas (zero padding),
 * mirrored if asked; @rgb gets the resampled photo (sw x sh RGB in [0, 1]). */
static bd_status
fill_canvas (bd_session *session, const bd_image *photo, const bd_letterbox *lb, bool mirror, float *rgb,
             float *canvas, bd_error *error)
{
	const bd_model *m = session->model;
	bd_status st = bd_resample_rgb (session->pool, photo, lb->sw, lb->sh, rgb, NULL, 0, 3, error);
	if (st != BD_OK)
		return st;
	size_t plane = (size_t) lb->pw * lb->ph;
	for (uint32_t y = 0; y < lb->sh; y++)
		for (uint32_t x = 0; x < lb->sw; x++) {
			uint32_t cx = x + lb->ox;
			if (mirror)
				cx = lb->pw - 1 - cx;
			for (int c = 0; c < 3; c++)
				canvas[c * plane + (size_t) (y + lb->oy) * lb->pw + cx] =
					(rgb[((size_t) y * lb->sw + x) * 3 + c] - m->mean[c]) / m->std[c];
		}
	return BD_OK;
}

int
bd_progress_in_span (float fraction, void *data)
{
	const bd_progress_span *span = data;
	return span->outer->progress (span->from + (span->to - span->from) * fraction, span->outer->user_data);
}

/* Mirror averaging's second pass: the photo's mirror image at 9/8 of its scale, through the
 * network, then averaged into @prob (bd_mirror_average). */
static bd_status
mirror_pass (bd_session *session, const bd_image *photo, const bd_letterbox *lb, float *prob,
             const bd_run_options *options, bd_error *error)
{
	bd_letterbox lb2 = bd_letterbox_mirror_for (session, photo->width, photo->height);
	size_t canvas = (size_t) lb2.pw * lb2.ph;
	float *rgb = bd_alloc_zeroed ((size_t) lb2.sw * lb2.sh, 3 * sizeof (float));
	float *input = bd_alloc_zeroed (canvas, 4 * sizeof (float)), *prob2 = input ? input + 3 * canvas : NULL;
	bd_progress_span half = { options, 0.5f, 1.0f };
	bd_run_options pass = *options;
	if (options->progress) {
		pass.progress = bd_progress_in_span;
		pass.user_data = &half;
	}
	bd_status st = !rgb || !input ? bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory")
	                              : fill_canvas (session, photo, &lb2, true, rgb, input, error);
	if (st == BD_OK)
		st = session->backend->forward (session, input, 1, lb2.ph, lb2.pw, prob2, &pass, error);
	if (st == BD_OK)
		bd_mirror_average (prob, lb, prob2, &lb2);
	bd_free_aligned (rgb);
	bd_free_aligned (input);
	return st;
}

/* The pipeline of backends without a whole-photo path of their own: letterbox on the host,
 * the backend's forward pass (twice with mirror averaging), then the edge-aware upsampling. */
static bd_status
run_on_host (bd_session *session, const bd_image *photo, const bd_run_options *options,
             uint8_t *alpha, size_t alpha_stride, bd_error *error)
{
	bd_status st;
	bd_letterbox lb = bd_letterbox_for (session, photo->width, photo->height);
	size_t canvas = (size_t) lb.pw * lb.ph, scaled = (size_t) lb.sw * lb.sh;
	float *rgb = bd_alloc_zeroed (scaled, 3 * sizeof (float));
	float *input = bd_alloc_zeroed (canvas, 3 * sizeof (float));
	float *prob = bd_alloc_zeroed (canvas, sizeof (float));
	float *crop = bd_alloc_zeroed (scaled, sizeof (float));
	if (!rgb || !input || !prob || !crop) {
		st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	st = fill_canvas (session, photo, &lb, false, rgb, input, error);
	/* The run turned averages the quick looks in instead of a mirror pass (upright.c). */
	bool mirror = options->mirror_average && !session->turned_looks;
	if (st == BD_OK && mirror && session->backend->reserve) {
		/* The mirror pass runs at 9/8 of the scale: its buffers first. */
		bd_letterbox lb2 = bd_letterbox_mirror_for (session, photo->width, photo->height);
		st = session->backend->reserve (session, lb2.ph, lb2.pw, error);
	}
	if (st != BD_OK)
		goto out;
	bd_progress_span half = { options, 0.0f, 0.5f };
	bd_run_options pass = *options;
	if (options->progress && mirror) {
		pass.progress = bd_progress_in_span;
		pass.user_data = &half;
	}
	st = session->backend->forward (session, input, 1, lb.ph, lb.pw, prob, &pass, error);
	bool go_on = true;
	if (st == BD_OK)
		st = bd_between_passes (session, prob + (size_t) lb.oy * lb.pw + lb.ox, lb.sw, lb.sh, lb.pw, &go_on,
		                        error);
	if (st == BD_OK && go_on && mirror)
		st = mirror_pass (session, photo, &lb, prob, options, error);
	else if (st == BD_OK && go_on && options->mirror_average)
		bd_look_average (prob, &lb, session->turned_looks);
	if (st != BD_OK || !go_on)
		goto out;
	for (uint32_t y = 0; y < lb.sh; y++)
		memcpy (crop + (size_t) y * lb.sw, prob + (size_t) (y + lb.oy) * lb.pw + lb.ox,
		        lb.sw * sizeof (float));
	st = bd_upsample_alpha (session->pool, crop, rgb, lb.sw, lb.sh, photo, options->refine_edges != 0,
	                        alpha, alpha_stride, error);
out:
	bd_free_aligned (rgb);
	bd_free_aligned (input);
	bd_free_aligned (prob);
	bd_free_aligned (crop);
	return st;
}

/* The mask before the main-subject and decisive passes (bd_run_fn). */
static bd_status
run_raw (bd_session *session, const bd_image *photo, const bd_run_options *options, uint8_t *alpha,
         size_t alpha_stride, bd_error *error)
{
	return session->backend->run ? session->backend->run (session, photo, options, alpha, alpha_stride, error)
	                             : run_on_host (session, photo, options, alpha, alpha_stride, error);
}

bd_status
bd_session_run (bd_session *session, const bd_image *photo, const bd_run_options *options,
                uint8_t *alpha, size_t alpha_stride, bd_error *error)
{
	if (!session || !alpha)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_session_run: no session or output");
	bd_status st = bd_image_check (photo, "photo", error);
	if (st != BD_OK)
		return st;
	if (!bd_stride_ok (photo->width, photo->height, alpha_stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "bd_session_run: the mask's stride is smaller than a row or too large");
	bd_run_options taken;
	bd_run_options_init (&taken);
	if (!take_options (options, &taken, sizeof taken, RUN_OPTIONS_OLDEST))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "bd_session_run: the options were not set up by bd_run_options_init");
	options = &taken;

	bool looking = options->upright || options->close_ups;
	session->passes_made = false;
	st = looking ? bd_run_looking (session, photo, options, alpha, alpha_stride, run_raw, error)
	             : run_raw (session, photo, options, alpha, alpha_stride, error);
	/* A GPU session makes both passes on its device before the mask comes down: the same
	 * bytes (docs/PERFORMANCE.md). */
	bool made = session->passes_made;
	session->passes_made = false;
	if (st == BD_OK && options->main_subject_only && !made)
		st = bd_mask_keep_main_subject (session->pool, &session->keep_subject, alpha, photo->width, photo->height,
		                                alpha_stride, BD_MAIN_SUBJECT_FRACTION, BD_MAIN_SUBJECT_MIN_HEIGHT, error);
	if (st == BD_OK && options->decisive && !made)
		st = bd_session_make_decisive (session, alpha, photo->width, photo->height, alpha_stride, error);
	if (st == BD_ERR_NO_MEMORY && error) {
		/* The inner message names a working buffer (the network's canvas, a guided-filter
		 * plane); the user needs to hear about the photo. */
		char inner[sizeof error->message];
		memcpy (inner, error->message, sizeof inner);
		bd_error_set (error, st, "not enough memory to process a %ux%u photo (%s)",
		              photo->width, photo->height, inner);
	}
	return st;
}
