/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA backend: the device, weights packed once per session, a memory plan per input
 * size and batch whose forward pass is captured into a CUDA graph, and one stream per
 * session. A batch is its images stacked into each buffer, one under the other. */
#include "composite.cuh"
#include "conv2d.cuh"
#include "decide-alpha.cuh"
#include "keep-subject.cuh"
#include "letterbox.cuh"
#include "look-average.cuh"
#include "mirror-average.cuh"
#include "pack-weights.cuh"
#include "resample.cuh"
#include "rotate-quarter.cuh"
#include "to-nhwc.cuh"
#include "upsample-alpha.cuh"
#include "gpu-switches.cuh"

extern "C" {
#include "image/image.h"   /* the main-subject pass's fractions, the decisive radius */
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

/* Plain structs, zero-initialised with calloc: the backend needs no C++ runtime. */
struct gpu_conv {
	void    *weights;   /* [taps][cin storage][cout storage], half or float */
	void    *weights_k; /* [cout storage][taps][cin storage], half or float, for wgmma */
	float   *weights_k_small;   /* exact: weights_k minus its tf32 part */
	float   *bias;
	uint32_t taps, cout;
	uint32_t cin;       /* leading input channels that hold data (the rest are padding) */
	bool     transposed;/* a 2x2 stride-2 transposed convolution: taps 1x1 convolutions */
};

struct gpu_buffer {
	void       *data;
	bd_gpu_view view;
};

struct gpu_plan {
	uint32_t        batch, height, width;   /* images, and the size of one */
	float          *input;     /* NCHW floats as uploaded */
	float          *prob;      /* N x height x width */
	float          *splitk;    /* fast: scratch for the partial sums of a split K (conv2d.cuh) */
	gpu_buffer      image, pooled[BD_MAX_DEPTH], tmp[BD_MAX_DEPTH], cat[BD_MAX_DEPTH], out[BD_MAX_DEPTH];
	cudaGraphExec_t graph;
};

/* Buffers for whole photos (bd_session_run): grown as larger photos come. */
struct gpu_photo {
	uint8_t *pixels, *alpha;
	float   *rgb_low, *scratch;
	uint8_t *turned;       /* a photo lying down turned, then its mask turned back */
	uint8_t *looks;        /* the run turned's quick looks (bd_turned_looks), standing first */
	uint8_t *looks_host;   /* on the host, page-locked: the same, on their way up */
	float   *first_pass;   /* on the host, page-locked: the first pass for bd_between_passes */
	size_t   pixels_bytes, alpha_bytes, rgb_low_bytes, scratch_bytes, turned_bytes, looks_bytes, looks_host_bytes;
	size_t   first_pass_bytes;
};

void photo_free (gpu_photo *ph);

struct gpu_state {
	cudaStream_t stream;
	gpu_photo    photo;
	gpu_photo    probe_photo;   /* upright.c's quick looks, made while the photo's run waits */
	const bd_image *photo_held;   /* while cuda_run's run of it is under way: photo.pixels is it */
	/* The photo whose first pass (look_run 0) put its pixels into photo.pixels: its run again
	 * in the same bd_session_run, turned or as a close-up (look_run 3, 4), reads them there
	 * instead of bringing the photo up a second time. */
	const bd_image *photo_up;
	uint8_t     *small, *small_scratch;   /* cuda_resample_rgb's result, its taps and rows */
	size_t       small_bytes, small_scratch_bytes;
	bd_gpu_composite_buffers composite;
	bd_gpu_decide_buffers    decide;
	bd_gpu_subject_buffers   subject;
	bd_precision precision;
	int          device;      /* the CUDA device index; set on the calling thread first */
	gpu_conv     enc[BD_MAX_DEPTH][2], up[BD_MAX_DEPTH], dec[BD_MAX_DEPTH][2];
	float       *head_weight;
	float        head_bias;
	gpu_plan     plan;     /* the photo's canvas, or bd_session_forward's batch */
	gpu_plan     mirror;   /* the mirror pass's canvas (mirror averaging, another scale) */
	gpu_plan     probe[2]; /* quick-look.c's looks at a small size, as it stands and turned */
	gpu_plan     turned;   /* upright.c's run of a photo turned (no mirror pass: bd_turned_looks) */
	gpu_plan     close_mirror; /* close-up.c's run's mirror pass (its own pass: probe[0]'s size) */
	cudaEvent_t  net_start, net_end;   /* around the last forward's network, for benchmarks */
	bool         launch_early;         /* kernels start in the tail of the one before (cuda-common.cuh) */
};

/* Device buffers the model's weights go through on their way to their layouts, reused from one
 * convolution to the next (the stream orders the copies and the packing kernels). */
struct upload_staging {
	void     *w;        /* a tensor as the model holds it: halves or floats */
	uint32_t *map;
	size_t    w_bytes, map_bytes;
	cudaStream_t stream;
};

/* Uploads w[co * s_co + ci * s_ci + tap * s_tap] as it is and packs it on the device
 * (pack-weights.cu) into [tap][cin storage][cout storage] in the session's precision, and
 * K-major ([cout storage][tap][cin storage], or for a transposed convolution [tap][cout
 * storage][cin storage]: one GEMM a tap) for the Hopper kernels; uploads the bias (all
 * zero-padded to 16 output channels). */
bd_status
upload_conv (upload_staging *stage, gpu_conv *c, const bd_weight *w, const bd_weight *bias, uint32_t cout, uint32_t cin,
             uint32_t taps, size_t s_co, size_t s_ci, size_t s_tap, const uint32_t *in_map, uint32_t cin_storage,
             bool transposed, bd_precision precision, bd_error *error)
{
	uint32_t cout_s = bd_pad16 (cout);
	size_t n = (size_t) taps * cin_storage * cout_s, el = bd_precision_size (precision);
	size_t count = (size_t) cout * cin * taps;
	c->taps = taps;
	c->transposed = transposed;
	c->cout = cout_s;
	c->cin = in_map ? cin_storage : cin;   /* mapped channels are not the leading ones */
	size_t bytes = count * (w->half ? 2 : 4);   /* count is all of w */
	bd_status st = bd_gpu_grow (&stage->w, &stage->w_bytes, bytes, error);
	if (st == BD_OK && in_map)
		st = bd_gpu_grow ((void **) &stage->map, &stage->map_bytes, cin * sizeof (uint32_t), error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (cudaMalloc (&c->weights, n * el));
	BD_CUDA_CHECK (cudaMalloc (&c->weights_k, n * el));
	if (precision == BD_PRECISION_EXACT)
		BD_CUDA_CHECK (cudaMalloc (&c->weights_k_small, n * sizeof (float)));
	/* As the model holds it (halves for the shipped one: half the bytes of floats); the packing
	 * widens it. */
	BD_CUDA_CHECK (cudaMemcpyAsync (stage->w, w->data, bytes, cudaMemcpyHostToDevice, stage->stream));
	if (in_map)
		BD_CUDA_CHECK (cudaMemcpyAsync (stage->map, in_map, cin * sizeof (uint32_t), cudaMemcpyHostToDevice,
		                                stage->stream));
	bd_gpu_packed_conv p = { c->weights, c->weights_k, c->weights_k_small, cout, cin, taps, cout_s, cin_storage,
	                         transposed };
	st = bd_gpu_pack_weights (&p, stage->w, w->half, s_co, s_ci, s_tap, in_map ? stage->map : nullptr, precision,
	                          stage->stream, error);
	if (st != BD_OK)
		return st;

	float *b = (float *) calloc (cout_s, sizeof (float));
	if (!b)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	for (uint32_t o = 0; o < cout; o++)
		b[o] = bd_weight_at (bias, o);
	cudaError_t e = cudaMalloc (&c->bias, cout_s * sizeof (float));
	if (e == cudaSuccess)
		e = cudaMemcpyAsync (c->bias, b, cout_s * sizeof (float), cudaMemcpyHostToDevice, stage->stream);
	/* A pageable source is staged before the call returns, so @b may go now. */
	free (b);
	BD_CUDA_CHECK (e);
	return BD_OK;
}

bd_status
upload_conv3x3 (gpu_state *s, upload_staging *stage, gpu_conv *c, const bd_conv_weights *w, const uint32_t *in_map,
                uint32_t cin_storage, bd_error *error)
{
	uint32_t cout = w->weight.dims[0], cin = w->weight.dims[1];
	return upload_conv (stage, c, &w->weight, &w->bias, cout, cin, 9, (size_t) cin * 9, 9, 1, in_map,
	                    cin_storage, false, s->precision, error);
}

void
conv_free (gpu_conv *c)
{
	cudaFree (c->weights);
	cudaFree (c->weights_k);
	cudaFree (c->weights_k_small);
	cudaFree (c->bias);
	memset (c, 0, sizeof *c);
}

void
buffer_free (gpu_buffer *b)
{
	cudaFree (b->data);
	memset (b, 0, sizeof *b);
}

/* A zeroed buffer. The zeroing goes on @stream, ahead of the kernels that use the buffer: a
 * plain cudaMemset runs on the legacy stream, which our non-blocking stream does not wait for;
 * while another process kept the GPU busy it landed after the first kernels of a new size and
 * wiped what they had written (tests/gpu-parity.py --busy). */
bd_status
buffer_make (gpu_buffer *b, uint32_t channels, uint32_t h, uint32_t w, bd_precision precision,
             cudaStream_t stream, bd_error *error)
{
	size_t bytes;
	if (!bd_size_mul3 ((size_t) h * w, channels, bd_precision_size (precision), &bytes))
		return bd_error_set (error, BD_ERR_TOO_LARGE, "activation buffer too large");
	BD_CUDA_CHECK (cudaMalloc (&b->data, bytes ? bytes : 1));
	BD_CUDA_CHECK (cudaMemsetAsync (b->data, 0, bytes, stream));
	b->view = bd_gpu_view{ b->data, h, w, channels, channels };
	return BD_OK;
}

bd_gpu_view
channel_slice (const gpu_buffer &b, uint32_t first, uint32_t count, bd_precision precision)
{
	bd_gpu_view v = b.view;
	v.data = (char *) b.data + first * bd_precision_size (precision);
	v.channels = count;
	return v;
}

void
plan_free (gpu_plan *p)
{
	if (p->graph)
		cudaGraphExecDestroy (p->graph);
	cudaFree (p->input);
	cudaFree (p->prob);
	cudaFree (p->splitk);
	buffer_free (&p->image);
	for (int l = 0; l < BD_MAX_DEPTH; l++) {
		buffer_free (&p->pooled[l]);
		buffer_free (&p->tmp[l]);
		buffer_free (&p->cat[l]);
		buffer_free (&p->out[l]);
	}
	memset (p, 0, sizeof *p);
}

/* Buffers for @batch images of h x w, each image's rows under the last's. */
bd_status
plan_make (gpu_state *s, gpu_plan *p, const bd_model *m, uint32_t batch, uint32_t h, uint32_t w, bd_error *error)
{
	if (p->batch == batch && p->height == h && p->width == w)
		return BD_OK;
	plan_free (p);
	bd_precision pr = s->precision;
	size_t n = (size_t) batch * h * w;
	BD_CUDA_CHECK (cudaMalloc (&p->input, 3 * n * sizeof (float)));
	BD_CUDA_CHECK (cudaMalloc (&p->prob, n * sizeof (float)));
	if (pr == BD_PRECISION_FAST)
		BD_CUDA_CHECK (cudaMalloc (&p->splitk, BD_GPU_SPLITK_FLOATS * sizeof (float)));
	bd_status st = buffer_make (&p->image, 16, batch * h, w, pr, s->stream, error);
	for (uint32_t l = 0; l < m->depth && st == BD_OK; l++) {
		uint32_t lh = batch * (h >> l), lw = w >> l, c = bd_pad16 (m->widths[l]);
		if (l > 0)
			st = buffer_make (&p->pooled[l], bd_pad16 (m->widths[l - 1]), lh, lw, pr, s->stream, error);
		if (st == BD_OK)
			st = buffer_make (&p->tmp[l], c, lh, lw, pr, s->stream, error);
		if (st == BD_OK && l + 1 < m->depth)
			st = buffer_make (&p->cat[l], 2 * c, lh, lw, pr, s->stream, error);
		if (st == BD_OK)
			st = buffer_make (&p->out[l], c, lh, lw, pr, s->stream, error);
	}
	if (st != BD_OK) {
		plan_free (p);
		return st;
	}
	p->batch = batch;
	p->height = h;
	p->width = w;
	return BD_OK;
}

/* Image @i of a batch's stacked view. */
bd_gpu_view
image_of (const bd_gpu_view &v, uint32_t batch, uint32_t i, bd_precision precision)
{
	bd_gpu_view one = v;
	one.height = v.height / batch;
	one.data = (char *) v.data + (size_t) i * one.height * one.width * one.pixel_stride * bd_precision_size (precision);
	return one;
}

/* @in holds the batch's images stacked, @rows rows each. With @pool, also the 2x2 max-pool of
 * the output into it; with @head, also the head's probabilities into plan.prob (the kernel
 * fuses them where it can). */
bd_status
conv (gpu_state *s, gpu_plan *plan, const bd_model *m, const gpu_conv *c, const bd_gpu_view &in, uint32_t rows,
      const bd_gpu_view &out, bool relu, const bd_gpu_view *pool, bool head, bd_error *error)
{
	bd_gpu_conv2d_params p = {};
	p.in = in;
	p.out = out;
	p.out.channels = c->cout;
	p.out_step = c->transposed ? 2u : 1u;
	p.taps = c->transposed ? 1u : c->taps;
	p.weights = c->weights;
	p.bias = c->bias;
	p.relu = relu;
	p.weights_k = c->weights_k;
	p.weights_k_small = c->weights_k_small;
	p.image_height = rows;
	p.in_used = c->cin < in.channels ? c->cin : 0;
	p.splitk = plan->splitk;
	p.launch_early = s->launch_early;
	if (pool)
		p.pool = *pool;
	if (head) {
		p.head_out = plan->prob;
		p.head_weight = s->head_weight;
		p.head_bias = s->head_bias;
		p.head_channels = m->widths[0];
	}
	return bd_gpu_conv2d (&p, s->precision, s->stream, error);
}

/* Every kernel of one forward pass, from the canvas (p->image) to the probabilities
 * (p->prob), on the session's stream: captured into the graph. */
bd_status
enqueue_layers (gpu_state *s, gpu_plan *p, const bd_model *m, bd_error *error)
{
	bd_precision pr = s->precision;
	bd_status st = BD_OK;
	uint32_t D = m->depth;
	bd_gpu_view x = p->image.view;
	/* Each level's second convolution also pools its output for the next level; the last
	 * convolution of the network also runs the head. */
	for (uint32_t l = 0; l < D && st == BD_OK; l++) {
		uint32_t c = bd_pad16 (m->widths[l]);
		if (l > 0)
			x = p->pooled[l].view;
		uint32_t rows = p->height >> l;
		st = conv (s, p, m, &s->enc[l][0], x, rows, p->tmp[l].view, true, nullptr, false, error);
		bd_gpu_view dst = l + 1 < D ? channel_slice (p->cat[l], 0, c, pr) : p->out[l].view;
		if (st == BD_OK)
			st = conv (s, p, m, &s->enc[l][1], p->tmp[l].view, rows, dst, true,
			           l + 1 < D ? &p->pooled[l + 1].view : nullptr, D == 1, error);
	}
	for (uint32_t l = D - 1; l-- > 0 && st == BD_OK;) {
		uint32_t c = bd_pad16 (m->widths[l]);
		/* The four taps write the up half of the concatenation, each every other pixel. */
		st = conv (s, p, m, &s->up[l], p->out[l + 1].view, p->height >> (l + 1),
		           channel_slice (p->cat[l], c, c, pr), false, nullptr, false, error);
		uint32_t rows = p->height >> l;
		if (st == BD_OK)
			st = conv (s, p, m, &s->dec[l][0], p->cat[l].view, rows, p->tmp[l].view, true, nullptr, false, error);
		if (st == BD_OK)
			st = conv (s, p, m, &s->dec[l][1], p->tmp[l].view, rows, p->out[l].view, true, nullptr, l == 0, error);
	}
	return st;
}

void cuda_destroy (bd_session *session);

bd_status
cuda_init (bd_session *session, bd_error *error)
{
	int count = 0, index = session->options.device_index;
	cudaError_t e = cudaGetDeviceCount (&count);
	if (e != cudaSuccess || count == 0)
		return bd_error_set (error, BD_ERR_DEVICE, "no usable NVIDIA GPU: %s",
		                     e != cudaSuccess ? cudaGetErrorString (e) : "no CUDA device found");
	if (index >= count)
		return bd_error_set (error, BD_ERR_DEVICE, "there is no GPU %d: CUDA sees %d (numbered from 0)", index, count);
	cudaDeviceProp prop;
	BD_CUDA_CHECK (cudaGetDeviceProperties (&prop, index));
	if (prop.major * 10 + prop.minor < 75)
		return bd_error_set (error, BD_ERR_DEVICE, "the GPU %s (compute capability %d.%d) is older than "
		                     "Backdrop supports (7.5)", prop.name, prop.major, prop.minor);

	gpu_state *s = (gpu_state *) calloc (1, sizeof (gpu_state));
	if (!s)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	session->backend_data = s;
	s->precision = session->options.precision;
	s->device = index;
	bd_status st = BD_OK;
	if (cudaSetDevice (index) != cudaSuccess || cudaStreamCreateWithFlags (&s->stream, cudaStreamNonBlocking) != cudaSuccess)
		st = bd_error_set (error, BD_ERR_DEVICE, "cannot use the GPU %s", prop.name);
	if (st == BD_OK &&
	    (cudaEventCreate (&s->net_start) != cudaSuccess || cudaEventCreate (&s->net_end) != cudaSuccess))
		st = bd_error_set (error, BD_ERR_DEVICE, "cannot create CUDA events");
	if (st == BD_OK)
		st = bd_gpu_conv2d_hopper_init (error);
	/* Kernels start in the tail of the one before them (cuda-common.cuh) from Hopper on;
	 * BACKDROP_GPU_NO_PDL=1 serialises them, to compare. */
	s->launch_early = prop.major >= 9 && !bd_gpu_switches_get ().no_pdl;

	const bd_model *m = session->model;
	upload_staging stage = {};
	stage.stream = s->stream;
	for (uint32_t l = 0; l < m->depth && st == BD_OK; l++) {
		uint32_t cin_s = l == 0 ? 16 : bd_pad16 (m->widths[l - 1]);
		st = upload_conv3x3 (s, &stage, &s->enc[l][0], &m->enc[l][0], nullptr, cin_s, error);
		if (st == BD_OK)
			st = upload_conv3x3 (s, &stage, &s->enc[l][1], &m->enc[l][1], nullptr, bd_pad16 (m->widths[l]), error);
	}
	for (uint32_t l = 0; l + 1 < m->depth && st == BD_OK; l++) {
		uint32_t c = m->widths[l], cn = m->widths[l + 1];
		/* ConvTranspose2d weights are [cin][cout][2][2]: tap t is a 1x1 [cout][cin]. */
		st = upload_conv (&stage, &s->up[l], &m->up[l].weight, &m->up[l].bias, c, cn, 4, 4, (size_t) c * 4, 1,
		                  nullptr, bd_pad16 (cn), true, s->precision, error);
		/* The decoder reads skip | up, the up half starting at channel pad16(c). */
		uint32_t *map = (uint32_t *) malloc (2 * (size_t) c * sizeof *map);
		if (!map)
			st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
		for (uint32_t ci = 0; map && ci < 2 * c; ci++)
			map[ci] = ci < c ? ci : bd_pad16 (c) + (ci - c);
		if (st == BD_OK)
			st = upload_conv3x3 (s, &stage, &s->dec[l][0], &m->dec[l][0], map, 2 * bd_pad16 (c), error);
		free (map);
		if (st == BD_OK)
			st = upload_conv3x3 (s, &stage, &s->dec[l][1], &m->dec[l][1], nullptr, bd_pad16 (c), error);
	}
	if (st == BD_OK) {
		s->head_bias = bd_weight_at (&m->head.bias, 0);
		float *head = (float *) malloc (m->widths[0] * sizeof (float));
		if (head)
			bd_weight_widen (nullptr, &m->head.weight, head);
		if (!head)
			st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
		else if (cudaMalloc (&s->head_weight, m->widths[0] * sizeof (float)) != cudaSuccess ||
		         cudaMemcpy (s->head_weight, head, m->widths[0] * sizeof (float), cudaMemcpyHostToDevice) !=
		             cudaSuccess)
			st = bd_error_set (error, BD_ERR_DEVICE, "cannot upload the model to the GPU");
		free (head);
	}
	/* cudaMemcpy from pageable memory may return before its copy lands, and our stream does
	 * not wait for the legacy one: the weights must be in place before the first kernel (and
	 * packed before their staging buffers go). */
	if (st == BD_OK && cudaDeviceSynchronize () != cudaSuccess)
		st = bd_error_set (error, BD_ERR_DEVICE, "cannot upload the model to the GPU");
	if (st != BD_OK)
		cudaDeviceSynchronize ();   /* a failed upload may have packing in flight */
	cudaFree (stage.w);
	cudaFree (stage.map);
	if (st != BD_OK) {
		cuda_destroy (session);
		return st;
	}
	snprintf (session->description, sizeof session->description, "%.80s (CUDA, %s)", prop.name,
	          s->precision == BD_PRECISION_FAST ? "fp16 tensor cores" : "fp32");
	return BD_OK;
}

void
cuda_destroy (bd_session *session)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	if (!s)
		return;
	cudaSetDevice (s->device);
	for (int l = 0; l < BD_MAX_DEPTH; l++) {
		conv_free (&s->enc[l][0]);
		conv_free (&s->enc[l][1]);
		conv_free (&s->dec[l][0]);
		conv_free (&s->dec[l][1]);
		conv_free (&s->up[l]);
	}
	cudaFree (s->head_weight);
	plan_free (&s->plan);
	plan_free (&s->mirror);
	plan_free (&s->probe[0]);
	plan_free (&s->probe[1]);
	plan_free (&s->turned);
	plan_free (&s->close_mirror);
	photo_free (&s->photo);
	photo_free (&s->probe_photo);
	cudaFree (s->small);
	cudaFree (s->small_scratch);
	bd_gpu_composite_free (&s->composite);
	bd_gpu_decide_free (&s->decide);
	bd_gpu_subject_free (&s->subject);
	if (s->stream)
		cudaStreamDestroy (s->stream);
	if (s->net_start)
		cudaEventDestroy (s->net_start);
	if (s->net_end)
		cudaEventDestroy (s->net_end);
	free (s);
	session->backend_data = nullptr;
}

/* The network on the canvas already in p->image. The first pass of a size runs eagerly, so
 * an error names its kernel; it is then captured, and later passes replay the graph: one
 * launch instead of dozens. */
bd_status
run_network (gpu_state *s, gpu_plan *p, const bd_model *m, bd_error *error)
{
	if (p->graph) {
		BD_CUDA_CHECK (cudaGraphLaunch (p->graph, s->stream));
		return BD_OK;
	}
	bd_status st = enqueue_layers (s, p, m, error);
	if (st != BD_OK)
		return st;
	cudaGraph_t graph;
	BD_CUDA_CHECK (cudaStreamBeginCapture (s->stream, cudaStreamCaptureModeThreadLocal));
	st = enqueue_layers (s, p, m, error);
	cudaError_t end = cudaStreamEndCapture (s->stream, &graph);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (end);
	cudaError_t inst = cudaGraphInstantiate (&p->graph, graph, 0);
	cudaGraphDestroy (graph);
	BD_CUDA_CHECK (inst);
	return BD_OK;
}

bd_status
cuda_forward (bd_session *session, const float *input, uint32_t batch, uint32_t height, uint32_t width,
              float *output, const bd_run_options *opts, bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	const bd_model *m = session->model;
	BD_CUDA_CHECK (cudaSetDevice (s->device));   /* the calling thread's current device */
	if (opts && opts->progress && opts->progress (0.0f, opts->user_data))
		return bd_error_set (error, BD_ERR_CANCELLED, "cancelled");
	gpu_plan *p = &s->plan;
	bd_status st = plan_make (s, p, m, batch, height, width, error);
	if (st != BD_OK)
		return st;
	size_t n = (size_t) batch * height * width;
	BD_CUDA_CHECK (cudaMemcpyAsync (p->input, input, 3 * n * sizeof (float), cudaMemcpyHostToDevice, s->stream));
	for (uint32_t i = 0; i < batch && st == BD_OK; i++) {
		bd_gpu_view image = image_of (p->image.view, batch, i, s->precision);
		st = bd_gpu_to_nhwc (p->input + i * 3 * (n / batch), &image, s->precision, s->stream, error);
	}
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (cudaEventRecord (s->net_start, s->stream));
	st = run_network (s, p, m, error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (cudaEventRecord (s->net_end, s->stream));
	BD_CUDA_CHECK (cudaMemcpyAsync (output, p->prob, n * sizeof (float), cudaMemcpyDeviceToHost, s->stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (s->stream));
	if (opts && opts->progress)
		opts->progress (1.0f, opts->user_data);
	return BD_OK;
}

void
photo_free (gpu_photo *ph)
{
	cudaFree (ph->pixels);
	cudaFree (ph->alpha);
	cudaFree (ph->rgb_low);
	cudaFree (ph->scratch);
	cudaFree (ph->turned);
	cudaFree (ph->looks);
	cudaFreeHost (ph->looks_host);
	cudaFreeHost (ph->first_pass);
	memset (ph, 0, sizeof *ph);
}

/* The run turned's quick looks onto the device (ph->looks, standing first), through
 * page-locked memory so that the copy waits for nothing already queued. */
static bd_status
upload_looks (gpu_state *s, gpu_photo *ph, const bd_turned_looks *looks, bd_error *error)
{
	size_t n = (size_t) looks->width * looks->height;
	bd_status st = bd_gpu_grow ((void **) &ph->looks, &ph->looks_bytes, 2 * n, error);
	if (st == BD_OK)
		st = bd_gpu_grow_host ((void **) &ph->looks_host, &ph->looks_host_bytes, 2 * n, error);
	if (st != BD_OK)
		return st;
	memcpy (ph->looks_host, looks->standing, n);
	memcpy (ph->looks_host + n, looks->on_head, n);
	BD_CUDA_CHECK (cudaMemcpyAsync (ph->looks, ph->looks_host, 2 * n, cudaMemcpyHostToDevice, s->stream));
	return BD_OK;
}

/* Hands the photo's first pass to bd_between_passes, where a session asks for it (upright.c). */
static bd_status
between_passes (bd_session *session, gpu_state *s, gpu_photo *ph, const float *prob, const bd_letterbox &lb,
                bool *go_on, bd_error *error)
{
	*go_on = true;
	if (!session->between_passes)
		return BD_OK;
	bd_status st = bd_gpu_grow_host ((void **) &ph->first_pass, &ph->first_pass_bytes,
	                                 (size_t) lb.sw * lb.sh * sizeof (float), error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (cudaMemcpy2DAsync (ph->first_pass, lb.sw * sizeof (float), prob + (size_t) lb.oy * lb.pw + lb.ox,
	                                  lb.pw * sizeof (float), lb.sw * sizeof (float), lb.sh,
	                                  cudaMemcpyDeviceToHost, s->stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (s->stream));
	return bd_between_passes (session, ph->first_pass, lb.sw, lb.sh, lb.sw, go_on, error);
}

/* A photo's steps on the device, from its 8-bit pixels there (@pixels, @width x @height,
 * rows @pitch bytes apart) to its alpha there (ph->alpha, dense): letterbox, network,
 * bd_between_passes (*@go_on false where it ended the run), the mirror pass (the quick looks
 * for the run turned), guided filter. */
static bd_status
photo_on_device (bd_session *session, gpu_photo *ph, const uint8_t *pixels, uint32_t width, uint32_t height,
                 uint32_t ch, size_t pitch, const bd_run_options *opts, bool *go_on, bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	const bd_model *m = session->model;
	bd_letterbox lb = bd_letterbox_for (session, width, height);
	bd_letterbox lb2 = bd_letterbox_mirror_for (session, width, height);
	/* bd_session.look_run: each of run-looking.c's runs on buffers of its own. A close-up's
	 * run is at the size of its look as it stands, whose plan it shares. */
	gpu_plan *p = &s->plan, *p2 = &s->mirror;
	if (session->look_run == 3) {
		p = &s->turned;
	} else if (session->look_run == 4) {
		p = &s->probe[0];
		p2 = &s->close_mirror;
	} else if (session->look_run) {
		p = &s->probe[session->look_run - 1];
	}
	/* The run turned averages the quick looks in instead of a mirror pass (upright.c). */
	const bd_turned_looks *looks = opts->mirror_average ? session->turned_looks : nullptr;
	bool mirror = opts->mirror_average && !looks;
	bd_status st = plan_make (s, p, m, 1, lb.ph, lb.pw, error);
	if (st == BD_OK && mirror)
		st = plan_make (s, p2, m, 1, lb2.ph, lb2.pw, error);
	if (st == BD_OK && looks)
		st = upload_looks (s, ph, looks, error);
	size_t low = (size_t) lb.sw * lb.sh;
	/* scratch: the guided filter's statistics and their means (13 + 13), coefficients (4 + 4). */
	if (st != BD_OK ||
	    (st = bd_gpu_grow ((void **) &ph->alpha, &ph->alpha_bytes, (size_t) width * height, error)) != BD_OK ||
	    (st = bd_gpu_grow ((void **) &ph->rgb_low, &ph->rgb_low_bytes, low * 3 * sizeof (float), error)) != BD_OK ||
	    (st = bd_gpu_grow ((void **) &ph->scratch, &ph->scratch_bytes, low * 34 * sizeof (float), error)) != BD_OK)
		return st;

	bd_gpu_letterbox_params lp = {
		pixels, width, height, ch, pitch, lb,
		{ m->mean[0], m->mean[1], m->mean[2] }, { m->std[0], m->std[1], m->std[2] },
		p->image.view, ph->rgb_low, false,
	};
	st = bd_gpu_letterbox (&lp, s->precision, s->stream, error);
	if (st == BD_OK)
		st = run_network (s, p, m, error);
	if (st == BD_OK)
		st = between_passes (session, s, ph, p->prob, lb, go_on, error);
	if (st != BD_OK || !*go_on)
		return st;
	/* The second view: the run turned's quick looks, else mirror averaging
	 * (core/backdrop-private.h says why): the mirror image at 9/8 of the scale, on a canvas
	 * and network plan of its own. */
	if (looks) {
		st = bd_gpu_look_average (p->prob, lb, ph->looks, ph->looks + (size_t) looks->width * looks->height,
		                          looks->width, looks->height, s->stream, error);
	} else if (mirror) {
		lp.lb = lb2;
		lp.canvas = p2->image.view;
		lp.mirror = true;
		st = bd_gpu_letterbox (&lp, s->precision, s->stream, error);
		if (st == BD_OK)
			st = run_network (s, p2, m, error);
		if (st == BD_OK)
			st = bd_gpu_mirror_average (p->prob, lb, p2->prob, lb2, s->stream, error);
	}
	bd_gpu_upsample_params up = {
		p->prob, lb, ph->rgb_low, pixels, width, height, ch, pitch, opts->refine_edges != 0, ph->scratch, ph->alpha,
	};
	return st == BD_OK ? bd_gpu_upsample_alpha (&up, s->stream, error) : st;
}

/* The main-subject and decisive passes that @opts ask for, made on the final run's mask
 * @alpha (on the device, dense) before it comes down, instead of by bd_session_run on the
 * host: the mask neither comes down for the one nor goes up again for the other. */
static bd_status
passes_on_device (bd_session *session, gpu_state *s, uint8_t *alpha, uint32_t width, uint32_t height,
                  const bd_run_options *opts, bd_error *error)
{
	if (session->look_run == 1 || session->look_run == 2 || !(opts->main_subject_only || opts->decisive))
		return BD_OK;
	bd_status st = BD_OK;
	if (opts->main_subject_only)
		st = bd_gpu_keep_main_subject (&s->subject, &session->keep_subject, s->stream, alpha, width, height,
		                               BD_MAIN_SUBJECT_FRACTION, BD_MAIN_SUBJECT_MIN_HEIGHT, error);
	if (st == BD_OK && opts->decisive)
		st = bd_gpu_decide_on_device (&s->decide, s->stream, alpha, width, height, bd_decide_radius (width, height),
		                              error);
	session->passes_made = st == BD_OK;
	return st;
}

static uint32_t
photo_channels (const bd_image *photo)
{
	return photo->format == BD_PIXEL_RGBA8 ? 4 : 3;
}

/* @photo's 8-bit pixels onto the device (ph->pixels), keeping the host's row pitch: one plain
 * copy brings them up. */
static bd_status
upload_photo (gpu_state *s, gpu_photo *ph, const bd_image *photo, bd_error *error)
{
	size_t row = (size_t) photo->width * photo_channels (photo);
	bd_status st = bd_gpu_grow ((void **) &ph->pixels, &ph->pixels_bytes, photo->stride * (photo->height - 1) + row,
	                            error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (bd_gpu_copy_rows (ph->pixels, photo->stride, photo->pixels, photo->stride, row, photo->height,
	                                 cudaMemcpyHostToDevice, s->stream));
	return BD_OK;
}

/* A whole photo on the device: one upload of its 8-bit pixels, letterbox, network, guided
 * filter, and one download of the 8-bit alpha. */
bd_status
cuda_run (bd_session *session, const bd_image *photo, const bd_run_options *opts, uint8_t *alpha,
          size_t alpha_stride, bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	BD_CUDA_CHECK (cudaSetDevice (s->device));   /* the calling thread's current device */
	if (opts->progress && opts->progress (0.0f, opts->user_data))
		return bd_error_set (error, BD_ERR_CANCELLED, "cancelled");
	gpu_photo *ph = session->look_run == 1 || session->look_run == 2 ? &s->probe_photo : &s->photo;
	bool go_on = true;
	bd_status st = BD_OK;
	if (ph != &s->photo || session->look_run != 4 || s->photo_up != photo) {
		if (ph == &s->photo)
			s->photo_up = nullptr;
		st = upload_photo (s, ph, photo, error);
		if (st == BD_OK && ph == &s->photo && session->look_run == 0)
			s->photo_up = photo;
	}
	if (st == BD_OK) {
		if (ph == &s->photo)
			s->photo_held = photo;
		st = photo_on_device (session, ph, ph->pixels, photo->width, photo->height, photo_channels (photo),
		                      photo->stride, opts, &go_on, error);
		if (ph == &s->photo)
			s->photo_held = nullptr;
	}
	if (st != BD_OK || !go_on ||
	    (st = passes_on_device (session, s, ph->alpha, photo->width, photo->height, opts, error)) != BD_OK)
		return st;
	BD_CUDA_CHECK (bd_gpu_copy_rows (alpha, alpha_stride, ph->alpha, photo->width, photo->width, photo->height,
	                                 cudaMemcpyDeviceToHost, s->stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (s->stream));
	if (opts->progress)
		opts->progress (1.0f, opts->user_data);
	return BD_OK;
}

/* cuda_run's mask of @photo turned a quarter (to the right with @clockwise), turned back, both
 * turns on the device (bd_backend_ops.run_turned). */
bd_status
cuda_run_turned (bd_session *session, const bd_image *photo, bool clockwise, const bd_run_options *opts,
                 uint8_t *alpha, size_t alpha_stride, bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	BD_CUDA_CHECK (cudaSetDevice (s->device));   /* the calling thread's current device */
	if (opts->progress && opts->progress (0.0f, opts->user_data))
		return bd_error_set (error, BD_ERR_CANCELLED, "cancelled");
	gpu_photo *ph = &s->photo;
	uint32_t ch = photo_channels (photo), w = photo->width, h = photo->height;
	size_t pixels = (size_t) w * h;
	bool go_on = true;
	/* turned: the photo turned (h x w), then its mask turned back (w x h, dense). */
	bd_status st = BD_OK;
	if (s->photo_up != photo)
		st = upload_photo (s, ph, photo, error);
	s->photo_up = nullptr;
	if (st == BD_OK)
		st = bd_gpu_grow ((void **) &ph->turned, &ph->turned_bytes, pixels * (ch + 1), error);
	if (st == BD_OK)
		st = bd_gpu_rotate_quarter (ph->pixels, w, h, photo->stride, ch, clockwise, ph->turned, (size_t) h * ch,
		                            s->stream, error);
	if (st == BD_OK)
		st = photo_on_device (session, ph, ph->turned, h, w, ch, (size_t) h * ch, opts, &go_on, error);
	if (st != BD_OK || !go_on)
		return st;
	uint8_t *back = ph->turned + pixels * ch;
	if ((st = bd_gpu_rotate_quarter (ph->alpha, h, w, h, 1, !clockwise, back, w, s->stream, error)) != BD_OK ||
	    (st = passes_on_device (session, s, back, w, h, opts, error)) != BD_OK)
		return st;
	BD_CUDA_CHECK (bd_gpu_copy_rows (alpha, alpha_stride, back, w, w, h, cudaMemcpyDeviceToHost, s->stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (s->stream));
	if (opts->progress)
		opts->progress (1.0f, opts->user_data);
	return BD_OK;
}

/* bd_backend_ops.resample_rgb: from the photo on the device where cuda_run's run of it is
 * under way, else uploaded first. */
bd_status
cuda_resample_rgb (bd_session *session, const bd_image *photo, uint32_t width, uint32_t height, uint8_t *out,
                   bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	BD_CUDA_CHECK (cudaSetDevice (s->device));   /* the calling thread's current device */
	gpu_photo *ph = &s->photo;
	bd_status st = BD_OK;
	if (s->photo_held != photo) {
		ph = &s->probe_photo;
		st = upload_photo (s, ph, photo, error);
	}
	size_t bytes = (size_t) width * height * 3;
	if (st == BD_OK)
		st = bd_gpu_grow ((void **) &s->small, &s->small_bytes, bytes, error);
	if (st == BD_OK)
		st = bd_gpu_resample_rgb (ph->pixels, photo->width, photo->height, photo->stride, photo_channels (photo), width,
		                          height, s->small, 3, &s->small_scratch, &s->small_scratch_bytes, s->stream, error);
	if (st != BD_OK)
		return st;
	BD_CUDA_CHECK (cudaMemcpyAsync (out, s->small, bytes, cudaMemcpyDeviceToHost, s->stream));
	BD_CUDA_CHECK (cudaStreamSynchronize (s->stream));
	return BD_OK;
}

bd_status
cuda_composite (bd_session *session, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	BD_CUDA_CHECK (cudaSetDevice (s->device));   /* the calling thread's current device */
	return bd_gpu_composite (&s->composite, s->stream, photo, alpha, alpha_stride, background, out, out_stride,
	                         error);
}

bd_status
cuda_decide (bd_session *session, const uint8_t *alpha, size_t alpha_stride, uint8_t *out, size_t out_stride,
             uint32_t width, uint32_t height, uint32_t radius, bd_error *error)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	BD_CUDA_CHECK (cudaSetDevice (s->device));   /* the calling thread's current device */
	return bd_gpu_decide (&s->decide, s->stream, alpha, alpha_stride, out, out_stride, width, height, radius, error);
}

/* Page-locked, and usable by every session of the process (portable): a frame's copies to
 * and from the device then run at the bus's speed, without the driver's staging. */
void *
cuda_host_alloc (bd_session *session, size_t size)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	void *memory = nullptr;
	if (cudaSetDevice (s->device) != cudaSuccess || cudaHostAlloc (&memory, size, cudaHostAllocPortable) != cudaSuccess) {
		cudaGetLastError ();   /* clears the error: the caller falls back to plain memory */
		return nullptr;
	}
	return memory;
}

void
cuda_host_free (bd_session *, void *memory)
{
	if (memory)
		cudaFreeHost (memory);
}

double
cuda_network_ms (bd_session *session)
{
	gpu_state *s = (gpu_state *) session->backend_data;
	float ms = -1.0f;
	if (cudaEventElapsedTime (&ms, s->net_start, s->net_end) != cudaSuccess)
		return -1.0;
	return ms;
}

/* GPUs a session could use: seen by the driver and new enough (compute capability 7.5). */
int
cuda_device_count (void)
{
	int count = 0, usable = 0;
	if (cudaGetDeviceCount (&count) != cudaSuccess)
		return 0;
	for (int i = 0; i < count; i++) {
		cudaDeviceProp prop;
		if (cudaGetDeviceProperties (&prop, i) == cudaSuccess && prop.major * 10 + prop.minor >= 75)
			usable++;
	}
	return usable;
}

const bd_backend_ops cuda_ops = {
	.init = cuda_init,
	.forward = cuda_forward,
	.destroy = cuda_destroy,
	.run = cuda_run,
	.run_turned = cuda_run_turned,
	.resample_rgb = cuda_resample_rgb,
	.network_ms = cuda_network_ms,
	.device_count = cuda_device_count,
	.reserve = nullptr,
	.composite = cuda_composite,
	.decide = cuda_decide,
	.host_alloc = cuda_host_alloc,
	.host_free = cuda_host_free,
};

} // namespace

extern "C" const bd_backend_ops *
bd_cuda_backend_get (void)
{
	return &cuda_ops;
}
