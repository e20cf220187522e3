/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by core/ and gpu/: errors, the model, the backend table, the session. */
#pragma once

#include "backdrop.h"
#include "backdrop-testing.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BD_MAX_DEPTH 8
#define BD_ARRAY_LEN(a) (sizeof (a) / sizeof ((a)[0]))

/* Records @status and a printf-style message into @error (which may be NULL); returns @status. */
bd_status bd_error_set (bd_error *error, bd_status status, const char *format, ...)
	__attribute__ ((format (printf, 3, 4)));

/* Overflow-checked size arithmetic: false when the result does not fit. */
static inline bool
bd_size_mul (size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow (a, b, out);
}

static inline bool
bd_size_mul3 (size_t a, size_t b, size_t c, size_t *out)
{
	size_t ab;
	return bd_size_mul (a, b, &ab) && bd_size_mul (ab, c, out);
}

/* True when rows of @row_bytes, @stride apart, fit @height times in an addressable buffer:
 * the stride is at least a row, and the last row's end neither overflows nor passes
 * PTRDIFF_MAX (a SIZE_MAX stride would otherwise wrap round to read before the buffer). */
static inline bool
bd_stride_ok (size_t row_bytes, uint32_t height, size_t stride)
{
	size_t extent;
	if (stride < row_bytes || height == 0)
		return false;
	return bd_size_mul (stride, (size_t) height - 1, &extent) &&
	       !__builtin_add_overflow (extent, row_bytes, &extent) && extent <= (size_t) PTRDIFF_MAX;
}

/* Memory aligned for vector loads, zero-filled; NULL on overflow or exhaustion. */
void *bd_alloc_zeroed (size_t count, size_t size);
/* The same, not zeroed: for a block its caller writes whole before reading (freed the same way). */
void *bd_alloc_aligned (size_t count, size_t size);
void  bd_free_aligned (void *p);
/* @bytes of zeroed, page-aligned memory straight from the kernel (mmap where there is one),
 * its pages faulted in by whoever touches them first; freed with bd_free_pages. */
void *bd_alloc_pages (size_t bytes);
void  bd_free_pages (void *p, size_t bytes);
/* A block kept from one call to the next (a session's working memory for a pass), so that
 * each call does not fault fresh pages in: { NULL, 0 } at first, taken at @bytes or more
 * (its old contents lost; NULL when memory is short), freed once. */
typedef struct {
	void  *block;
	size_t bytes;
} bd_scratch;
void *bd_scratch_take (bd_scratch *scratch, size_t bytes);
void  bd_scratch_free (bd_scratch *scratch);

/* A weight or bias as the model file holds it, f32 or f16 (@half), in the host's byte order,
 * inside the model's own copy of the file: every value checked at load (finite, within
 * bounds). Backends widen each tensor as they pack it (bd_weight_at, bd_weight_widen), or
 * read it as it is (the CPU's 8-bit packer): no process keeps an f32 copy of the whole
 * model. */
typedef struct {
	const void *data;
	bool        half;
	uint32_t    dims[4];
	uint32_t    ndim;
} bd_weight;

/* IEEE half to float, exactly, infinities and NaN included. */
static inline float
bd_half_to_float (uint16_t h)
{
	/* Branch-free, so that a tensor's loop becomes vector code: the exponent rebiased, an
	 * infinity's or NaN's moved to the top, and a subnormal renormalised by one exact float
	 * subtraction (its mantissa times 2^-24, as ldexpf gave). */
	const uint32_t exp_mask = 0x7c00u << 13;
	uint32_t o = (uint32_t) (h & 0x7fff) << 13;
	uint32_t exp = o & exp_mask;
	o += (uint32_t) (127 - 15) << 23;
	o += exp == exp_mask ? (uint32_t) (128 - 16) << 23 : 0;
	uint32_t sub = o + (1u << 23);
	float fsub, magic;
	const uint32_t magic_bits = 113u << 23;
	__builtin_memcpy (&fsub, &sub, sizeof fsub);
	__builtin_memcpy (&magic, &magic_bits, sizeof magic);
	fsub -= magic;
	uint32_t renormal;
	__builtin_memcpy (&renormal, &fsub, sizeof renormal);
	o = exp == 0 ? renormal : o;
	o |= (uint32_t) (h & 0x8000) << 16;
	float f;
	__builtin_memcpy (&f, &o, sizeof f);
	return f;
}

/* Value @i of @w (its elements in PyTorch's order). */
static inline float
bd_weight_at (const bd_weight *w, size_t i)
{
	return w->half ? bd_half_to_float (((const uint16_t *) w->data)[i]) : ((const float *) w->data)[i];
}

/* A 3x3 (or 2x2 transposed, or 1x1) convolution's weights in PyTorch layout. */
typedef struct {
	bd_weight weight;
	bd_weight bias;
} bd_conv_weights;

struct bd_model {
	char            name[64];
	uint32_t        depth;
	uint32_t        widths[BD_MAX_DEPTH];
	uint32_t        input_size;
	float           mean[3];
	float           std[3];
	bd_conv_weights enc[BD_MAX_DEPTH][2];
	bd_conv_weights up[BD_MAX_DEPTH];      /* up[l]: level l+1 -> l */
	bd_conv_weights dec[BD_MAX_DEPTH][2];
	bd_conv_weights head;
	/* The file, in memory of our own: every tensor's values (bd_weight.data points in). */
	uint8_t        *file;
};

/* bd_model_open's checks on a copy of a file already in memory; @name is for messages.
 * The bytes may be freed afterwards. For the fuzzing harness (tests/fuzz). */
bd_status bd_model_load_bytes (const uint8_t *bytes, size_t size, const char *name,
                               bd_model **out_model, bd_error *error);

/* Where a photo goes on the network's canvas: scaled so its long side is the input size (a
 * smaller photo keeps its size), centred on a canvas padded to the network's multiple (odd
 * pixels to the right/bottom). */
typedef struct {
	uint32_t sw, sh;        /* the scaled photo */
	uint32_t pw, ph;        /* the padded canvas */
	uint32_t ox, oy;        /* the photo's place on the canvas */
} bd_letterbox;

bd_letterbox bd_letterbox_for (const bd_session *session, uint32_t width, uint32_t height);

/* Mirror averaging runs the photo's mirror image at 9/8 of the photo's scale (a 512-pixel
 * photo at 576; smaller ones are enlarged by as much): the network errs differently at two
 * scales and two orientations, so their mean is a better mask than a same-scale mirror's
 * (docs/MODEL.md has the figures), for a quarter more network time in the second pass. */
#define BD_MIRROR_SCALE_NUM 9u
#define BD_MIRROR_SCALE_DEN 8u
bd_letterbox bd_letterbox_mirror_for (const bd_session *session, uint32_t width, uint32_t height);

/* The guided filter of the mask upsampling (core/image/upsample-alpha.c): its window radius
 * for a scaled photo of long side @longest, and its regulariser. */
static inline uint32_t
bd_guided_radius (uint32_t longest)
{
	return longest / 128 > 1 ? longest / 128 : 1;
}
#define BD_GUIDED_EPS 1e-3f

/* A backend runs the network on preprocessed tensors; pre/post-processing is shared, unless
 * the backend does the whole photo itself (run, optional: CUDA keeps it on the device). */
typedef struct bd_backend_ops {
	bd_status (*init)    (bd_session *session, bd_error *error);
	/* @input: @batch x CHW normalised floats, h x w multiples of 2^(depth-1); @output:
	 * @batch x h x w. */
	bd_status (*forward) (bd_session *session, const float *input, uint32_t batch, uint32_t height,
	                      uint32_t width, float *output, const bd_run_options *options,
	                      bd_error *error);
	void      (*destroy) (bd_session *session);
	/* 8-bit photo in, 8-bit full-size alpha out; NULL: the session does it around forward.
	 * Calls bd_between_passes after the photo's pass, before its mirror pass. May make the
	 * main-subject and decisive passes its options ask for itself (bd_session.passes_made). */
	bd_status (*run)     (bd_session *session, const bd_image *photo, const bd_run_options *options,
	                      uint8_t *alpha, size_t alpha_stride, bd_error *error);
	/* Optional, with run: run's mask of @photo turned a quarter (to the right with
	 * @clockwise), turned back, both turns its own (upright.c turns on the host without). */
	bd_status (*run_turned) (bd_session *session, const bd_image *photo, bool clockwise,
	                         const bd_run_options *options, uint8_t *alpha, size_t alpha_stride,
	                         bd_error *error);
	/* Optional, with run: bd_resample_rgb's bytes of @photo, 8-bit RGB in @out (packed), made
	 * from the backend's own copy where its run of @photo is under way (upright.c's quick
	 * looks, between the run's passes). */
	bd_status (*resample_rgb) (bd_session *session, const bd_image *photo, uint32_t width, uint32_t height,
	                           uint8_t *out, bd_error *error);
	/* Optional, for benchmarks: the device time of the last forward's network alone (no
	 * transfers), in ms; NULL where the backend has no such clock. */
	double    (*network_ms) (bd_session *session);
	/* Optional: how many devices of this backend a session could use now. */
	int       (*device_count) (void);
	/* Optional: makes room for a forward pass at @height x @width ahead of a smaller one, so
	 * that memory sized for the smaller is not made and then remade larger. */
	bd_status (*reserve) (bd_session *session, uint32_t height, uint32_t width, bd_error *error);
	/* Optional: bd_composite on the device, for any background but a picture, with the
	 * arguments checked (bd_composite_check); the host's bytes exactly. */
	bd_status (*composite) (bd_session *session, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
	                        const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error);
	/* Optional: bd_mask_decide_to on the device, the arguments checked; the host's bytes
	 * exactly. */
	bd_status (*decide) (bd_session *session, const uint8_t *alpha, size_t alpha_stride, uint8_t *out,
	                     size_t out_stride, uint32_t width, uint32_t height, uint32_t radius, bd_error *error);
	/* Optional: host memory the device copies fastest (page-locked), NULL when it cannot be
	 * had; freed by host_free. Without them, bd_session_host_alloc is plain memory. */
	void     *(*host_alloc) (bd_session *session, size_t size);
	void      (*host_free)  (bd_session *session, void *memory);
} bd_backend_ops;

/* The taps of the resampler along one axis (resample.c): output i reads count[i] source
 * samples from start[i], weighted by weight[i * max_taps + k]. */
typedef struct {
	uint32_t *start;
	uint32_t *count;
	float    *weight;   /* max_taps per output index, summing to 1 */
	uint32_t  max_taps;
} bd_resample_taps;
/* @src samples to @dst as bd_resample_rgb makes them (area when shrinking, bilinear when
 * enlarging); FALSE when out of memory. */
bool bd_resample_taps_bilinear (bd_resample_taps *t, uint32_t src, uint32_t dst);
void bd_resample_taps_clear    (bd_resample_taps *t);

/* bd_composite's argument checks (composite.c). */
bd_status bd_composite_check (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                              const bd_background *background, const uint8_t *out, size_t out_stride,
                              bd_error *error);
/* The grid of bd_composite's colour means for a @width x @height photo: a cell is @factor
 * pixels square; the two iterations' window radii, in cells. */
void      bd_composite_grid  (uint32_t width, uint32_t height, uint32_t *factor, uint32_t radii[2]);

typedef struct bd_thread_pool bd_thread_pool;

/* The quick looks of a photo that is run turned (upright.c), as the run turned sees it:
 * @standing, the look turned the same way, and @on_head, the look turned the other way (the
 * run's photo turned half a turn); each @width x @height 8-bit alpha, dense, on the host.
 * That run averages them into its pass instead of a mirror pass (bd_look_average). */
typedef struct {
	const uint8_t *standing, *on_head;
	uint32_t       width, height;
} bd_turned_looks;

/* Looks at a run's first pass (the photo's pass, before its mirror pass): @prob, the pass's
 * probabilities at the network's scale, @width x @height, rows @stride floats apart, on the
 * host. Sets *@go_on to false to end the run there, its mask left unwritten. */
typedef bd_status (*bd_between_passes_fn) (bd_session *session, const float *prob, uint32_t width,
                                           uint32_t height, size_t stride, bool *go_on, bd_error *error);

struct bd_session {
	const bd_model       *model;
	bd_session_options    options;
	const bd_backend_ops *backend;
	void                 *backend_data;
	bd_thread_pool       *pool;
	char                  description[128];
	/* Which of the quick looks' runs is under way (run-looking.c): 0 the photo's own, 1 and 2
	 * the quick ones as it stands and turned, 3 the photo turned (upright.c), 4 the photo at
	 * the looks' size (close-up.c). Backends keep each one's buffers apart, so that a photo
	 * lying down or close, run at several sizes, makes nothing new for the next. */
	int                   look_run;
	/* Set by run-looking.c around the photo's own run, so that a photo lying down or close
	 * is run again before its mirror pass is spent on it; once a run (bd_between_passes). */
	bd_between_passes_fn  between_passes;
	void                 *between_passes_data;
	/* Set by upright.c around the run turned (look_run 3): with mirror averaging, that
	 * run averages these in instead of running a mirror pass. */
	const bd_turned_looks *turned_looks;
	/* Set by close-up.c around a close-up's run (look_run 4): the long side the network sees
	 * the photo at, in place of the session's (0: the session's). */
	uint32_t              run_side;
	/* The main-subject pass's grid, kept between runs (keep-subject.c). */
	bd_scratch            keep_subject;
	/* Set by a backend's run that made the main-subject and decisive passes its options ask
	 * for on the mask before it left the device: only the final run of a bd_session_run
	 * (look_run 0, 3 or 4, not a quick look), which then leaves them. */
	bool                  passes_made;
};

/* What a run calls between the photo's pass and its mirror pass: the session's
 * between_passes, once (cleared first: not in the runs it makes), or nothing. */
bd_status bd_between_passes (bd_session *session, const float *prob, uint32_t width, uint32_t height,
                             size_t stride, bool *go_on, bd_error *error);

/* A run's progress shown on [from, to] of an outer run's bar (session.c): a photo's pass and
 * its mirror pass each take half, a run again after the quick looks (turned, or a close-up at
 * their size) what the photo's own run left. */
typedef struct {
	const bd_run_options *outer;
	float                 from, to;
} bd_progress_span;
int bd_progress_in_span (float fraction, void *span);   /* a bd_progress_span */

/* A photo's mask before the main-subject and decisive passes (session.c's: the backend's
 * whole-photo run, or the session's around its forward pass). */
typedef bd_status (*bd_run_fn) (bd_session *session, const bd_image *photo, const bd_run_options *options,
                                uint8_t *alpha, size_t alpha_stride, bd_error *error);

/* @run's mask, but where quick looks find a person more surely in the photo turned a quarter
 * one way or the other (people lying down or sideways; options->upright), @run's mask of the
 * photo turned that way, turned back, and where the look as it stands finds her more surely
 * than the photo's own pass (a close-up; options->close_ups), @run's mask with the network at
 * the looks' size (run-looking.c). */
bd_status bd_run_looking (bd_session *session, const bd_image *photo, const bd_run_options *options,
                          uint8_t *alpha, size_t alpha_stride, bd_run_fn run, bd_error *error);

extern const bd_backend_ops bd_cpu_backend;
/* What runs a CPU session's convolutions below fp32 ("AMX BF16", "AVX-512 BF16", "AVX-512 VNNI
 * int8/int16"), or NULL: fp32. */
const char *bd_cpu_backend_low_precision (const bd_session *session);
/* NULL when built without CUDA. */
const bd_backend_ops *bd_cuda_backend_get (void);

/* Runs fn(ctx, i) for i in [0, count) on the pool's threads and the caller's. */
typedef void (*bd_task_fn) (void *ctx, size_t index);
bd_thread_pool *bd_thread_pool_new   (int threads);
void            bd_thread_pool_free  (bd_thread_pool *pool);
int             bd_thread_pool_size  (const bd_thread_pool *pool);
void            bd_thread_pool_run   (bd_thread_pool *pool, size_t count, bd_task_fn fn, void *ctx);

/* The x86-64 level whose build of the per-level loops (the convolution's rows, the temporal
 * filter's) this CPU runs; BACKDROP_CPU_KERNEL=generic|v3 picks a lesser one, so that the
 * tests can check every build on one machine (core/cpu-level.c). */
typedef enum { BD_CPU_GENERIC, BD_CPU_X86_64_V3, BD_CPU_X86_64_V4 } bd_cpu_level;
bd_cpu_level    bd_cpu_level_get     (void);

/* The model file at @path whole in memory of our own (bd_alloc_aligned, @out_size bytes, at
 * most 4 GiB), read in pieces on *@pool's threads: a pool made for a file of two pieces or
 * more, which the caller frees, or NULL (core/model-read.c). */
bd_status bd_model_read_file (const char *path, uint8_t **out, size_t *out_size, bd_thread_pool **pool,
                              bd_error *error);

/* The number of elements of @w (core/weights.c), and of @m's largest weight tensor: a buffer
 * that size widens every tensor in turn. */
size_t bd_weight_count (const bd_weight *w);
size_t bd_model_largest_weight (const bd_model *m);
/* Every value of @w, widened to floats into @dst (bd_weight_count of them), in pieces on
 * @pool's threads (NULL: the caller's). */
void   bd_weight_widen (bd_thread_pool *pool, const bd_weight *w, float *dst);

uint32_t bd_crc32 (uint32_t crc, const void *data, size_t size);
