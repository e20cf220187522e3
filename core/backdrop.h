/* SPDX-License-Identifier: Apache-2.0 */
/* libbackdrop: person segmentation for portrait photos.
 *
 * Open a model, make a session on a device, run it on 8-bit photos to get full-size 8-bit
 * alpha masks, then composite. Every call returns a status; on failure the optional
 * bd_error receives a message a person can read. The library never aborts, exits or prints.
 */
#ifndef BACKDROP_H
#define BACKDROP_H

#include <stddef.h>
#include <stdint.h>

#include "backdrop-version.h"   /* BD_VERSION_STRING */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BD_API __attribute__ ((visibility ("default")))
#else
#define BD_API
#endif

typedef enum {
	BD_OK = 0,
	BD_ERR_INVALID_ARGUMENT,
	BD_ERR_IO,          /* a file could not be read */
	BD_ERR_FORMAT,      /* a model file is malformed */
	BD_ERR_NO_MEMORY,
	BD_ERR_TOO_LARGE,   /* a size that would overflow or exceed the limits */
	BD_ERR_DEVICE,      /* the requested device is missing or failed */
	BD_ERR_CANCELLED,
} bd_status;

typedef struct bd_error {
	bd_status status;
	char      message[512];
} bd_error;

typedef enum {
	BD_DEVICE_AUTO = 0, /* CUDA when a usable GPU is there, else CPU */
	BD_DEVICE_CPU,
	BD_DEVICE_CUDA,     /* fails with BD_ERR_DEVICE when no usable GPU is there */
} bd_device;

typedef enum {
	BD_PRECISION_FAST = 0, /* fp16 tensor cores on the GPU; on the CPU bf16 convolutions with
	                        * fp32 sums where that is faster (Intel with AMX, AMD with AVX-512
	                        * BF16), 8-bit integer ones (16-bit at full resolution) on other
	                        * Intel CPUs with AVX-512 VNNI, else fp32 */
	BD_PRECISION_EXACT,    /* fp32 everywhere */
} bd_precision;

typedef enum {
	BD_PIXEL_RGB8 = 0,
	BD_PIXEL_RGBA8,
} bd_pixel_format;

/* A view of 8-bit pixels; the caller owns them. */
typedef struct bd_image {
	const uint8_t  *pixels;
	uint32_t        width;
	uint32_t        height;
	size_t          stride;   /* bytes from one row to the next */
	bd_pixel_format format;
} bd_image;

/* Called now and then during long work with a fraction in [0, 1]; return non-zero to cancel. */
typedef int (*bd_progress_fn) (float fraction, void *user_data);

typedef struct bd_model   bd_model;
typedef struct bd_session bd_session;

/* Largest photo the library accepts, in pixels (about 120 megapixels). */
#define BD_MAX_PIXELS ((uint64_t) 120 * 1000 * 1000)

/* The library's version at run time (as "1.2.3"); BD_VERSION_STRING is the header's. */
BD_API const char *bd_version        (void);
BD_API const char *bd_status_name    (bd_status status);
BD_API const char *bd_device_name    (bd_device device);
/* How many devices of a kind a session could use now: for BD_DEVICE_CUDA the NVIDIA GPUs the
 * driver shows that are new enough (0 without a driver, or in a build without CUDA); 1 for
 * BD_DEVICE_CPU and BD_DEVICE_AUTO. For offering only choices that work. */
BD_API int         bd_device_count   (bd_device device);

/* Models (docs/model-format.md). */
BD_API bd_status   bd_model_open     (const char *path, bd_model **out_model, bd_error *error);
BD_API void        bd_model_free     (bd_model *model);
BD_API uint32_t    bd_model_depth    (const bd_model *model);
BD_API uint32_t    bd_model_width    (const bd_model *model, uint32_t level);
BD_API uint32_t    bd_model_input_size (const bd_model *model);
BD_API const char *bd_model_name     (const bd_model *model);

/* Option structs start with their size as the caller was built, set by their _init
 * function: fields added in later versions keep their defaults for programs built before
 * them, and a struct that was never initialised is refused. Always call the _init function
 * first, then set the fields you need. */
typedef struct bd_session_options {
	size_t       struct_size;   /* set by bd_session_options_init */
	bd_device    device;
	bd_precision precision;
	int          threads;       /* CPU threads; 0 = one per core */
	/* Long side a larger photo is scaled to (a smaller one keeps its size); 0 = the model's. */
	uint32_t     input_size;
	/* Which GPU, for BD_DEVICE_CUDA and AUTO: 0 = the first, in CUDA's numbering (after
	 * CUDA_VISIBLE_DEVICES). A session runs on its GPU whichever thread calls it. */
	int          device_index;
} bd_session_options;

BD_API void        bd_session_options_init (bd_session_options *options);

BD_API bd_status   bd_session_new    (const bd_model *model, const bd_session_options *options,
                               bd_session **out_session, bd_error *error);
BD_API void        bd_session_free   (bd_session *session);
BD_API bd_device   bd_session_device (const bd_session *session);
/* What ran, for people: "CPU (2 threads, AVX-512)" or "NVIDIA H200". */
BD_API const char *bd_session_device_description (const bd_session *session);

typedef struct bd_run_options {
	size_t         struct_size;   /* set by bd_run_options_init */
	int            refine_edges;  /* non-zero: guided-filter upsampling (default 1) */
	bd_progress_fn progress;      /* may be NULL */
	void          *user_data;
	int            mirror_average;/* non-zero: also run the mirrored photo at 9/8 of the scale
	                               * and average the two (default 1; 2.2 times the network's
	                               * time, a better mask) */
	int            main_subject_only; /* non-zero: drop separate people under a fifth of the
	                               * largest one's area, passers-by behind the subject, where the
	                               * largest spans a third of the photo's height (default 1) */
	int            decisive;      /* non-zero: alpha is 0 or 255 farther than 0.15% of the
	                               * diagonal from the mask's edges, soft only along them (default 1) */
	int            upright;       /* non-zero: where the network is unsure of the photo's
	                               * person, look at the photo turned a quarter either way too
	                               * (three quick passes at 256 pixels), and where it finds a
	                               * person turned more surely, lying down or sideways, run
	                               * the photo turned and turn the mask back (default 1; off
	                               * for video, whose frames would not all agree) */
	int            close_ups;     /* non-zero: where a quick pass at 256 pixels finds the
	                               * person more surely than the photo's own pass (a close-up,
	                               * a head and shoulders), run the photo at that size (default
	                               * 1; off for video, as upright) */
} bd_run_options;

BD_API void        bd_run_options_init (bd_run_options *options);

/* Full-resolution 8-bit alpha (255 = person) of @photo into @alpha
 * (photo->width x photo->height bytes, rows @alpha_stride apart). A session runs one photo at
 * a time: use one session per thread. */
BD_API bd_status   bd_session_run    (bd_session *session, const bd_image *photo,
                               const bd_run_options *options,
                               uint8_t *alpha, size_t alpha_stride, bd_error *error);

/* What bd_run_options.decisive does, for a mask kept soft (decisive = 0) to show where the
 * network was unsure: alpha 0 or 255 farther than 0.15% of the diagonal from the mask's edges. */
BD_API bd_status   bd_mask_make_decisive (uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                                          bd_error *error);

/* What bd_run_options.main_subject_only does, on the calling thread: separate people under a
 * fifth of the largest one's area are cleared, unless the largest spans under a third of the
 * photo's height (no one is the subject there). With bd_mask_make_decisive (in that order),
 * for programs that run the network with both passes off and finish masks elsewhere, several
 * at once (the CLI's encoders in a folder). */
BD_API bd_status   bd_mask_drop_passers_by (uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                                            bd_error *error);

/* Mask edits: pixels above @threshold (0..1; a negative value keeps the soft mask) become
 * opaque, below transparent, then the edge is softened by a blur of @feather pixels. */
BD_API bd_status   bd_mask_adjust    (uint8_t *alpha, uint32_t width, uint32_t height, size_t stride,
                               float threshold, float feather, bd_error *error);

/* @pixels (8-bit, @channels interleaved: 1 for a mask, 3 or 4 for RGB(A), straight or
 * premultiplied) resampled to @out_width x @out_height into @out, as the library brings
 * photos to the network's size: each output pixel the exact average of the source area it
 * covers when shrinking; the nearest source pixel when enlarging, so that a view zoomed in
 * shows pixels. On the calling thread. */
BD_API bd_status   bd_resample       (const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                                      uint32_t channels, uint8_t *out, uint32_t out_width, uint32_t out_height,
                                      size_t out_stride, bd_error *error);

typedef enum {
	BD_BACKGROUND_TRANSPARENT = 0,
	BD_BACKGROUND_COLOR,
	BD_BACKGROUND_BLUR,
	BD_BACKGROUND_IMAGE,
} bd_background_kind;

typedef struct bd_background {
	bd_background_kind kind;
	uint8_t            color[4];   /* RGBA, for BD_BACKGROUND_COLOR */
	float              blur_radius;/* pixels, for BD_BACKGROUND_BLUR */
	const bd_image    *image;      /* scaled to cover, for BD_BACKGROUND_IMAGE */
} bd_background;

/* @photo with @alpha over @background into @out (RGBA8, photo's size, rows @out_stride apart).
 * A transparent background keeps the mask as the output's alpha. */
BD_API bd_status   bd_composite      (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                               const bd_background *background,
                               uint8_t *out, size_t out_stride, bd_error *error);
/* bd_composite on the calling thread alone, for programs that composite several photos at
 * once, one a thread: side by side they go further than one after another on every core,
 * whose small steps leave most of the cores waiting (bench/composite). Same output. */
BD_API bd_status   bd_composite_in_thread (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                                    const bd_background *background,
                                    uint8_t *out, size_t out_stride, bd_error *error);

/* bd_mask_adjust and bd_composite on @session's worker threads (its `threads` option)
 * instead of a pool of one thread per core started for the call; a CUDA session composes on
 * its GPU, the same bytes, unless the background is a picture (or the GPU has no room). Not
 * at the same time as another call on @session. */
BD_API bd_status   bd_session_mask_adjust (bd_session *session, uint8_t *alpha, uint32_t width, uint32_t height,
                                    size_t stride, float threshold, float feather, bd_error *error);
BD_API bd_status   bd_session_composite (bd_session *session, const bd_image *photo, const uint8_t *alpha,
                                  size_t alpha_stride, const bd_background *background,
                                  uint8_t *out, size_t out_stride, bd_error *error);

/* Host memory that @session's device copies to and from fastest, for buffers that photo after
 * photo passes through (a video's frames): page-locked on a GPU, where it can be had, else
 * plain memory; NULL only when memory is short. Freed by bd_session_host_free on the same
 * session, before the session is freed. */
BD_API void       *bd_session_host_alloc (bd_session *session, size_t size);
BD_API void        bd_session_host_free (bd_session *session, void *memory);

/* Video: steadies @alpha (this frame's mask, changed in place) with @other_alpha, the mask of
 * a neighbouring frame @other_photo (the previous frame's steadied mask, or a later frame's
 * for look-ahead): where the photo did not change between the two frames and the masks
 * nearly agree, @alpha moves @strength (0..1) of the way to @other_alpha; where the photo
 * changed (motion), it stays as it is, so that the mask does not lag behind a moving person. Rounded towards @other_alpha: a level
 * or two of noise on a still pixel does not pass. */
BD_API bd_status   bd_temporal_blend (const bd_image *photo, const bd_image *other_photo,
                               const uint8_t *other_alpha, size_t other_stride,
                               uint8_t *alpha, size_t alpha_stride, float strength, bd_error *error);

/* bd_temporal_blend and bd_mask_make_decisive on @session's worker threads (the decisive
 * pass on its GPU, for a GPU session), for a video stream that keeps a session: the same
 * bytes, a frame's steps side by side instead of on the streaming thread alone. Not at the
 * same time as another call on @session. */
BD_API bd_status   bd_session_temporal_blend (bd_session *session, const bd_image *photo, const bd_image *other_photo,
                                       const uint8_t *other_alpha, size_t other_stride,
                                       uint8_t *alpha, size_t alpha_stride, float strength, bd_error *error);
BD_API bd_status   bd_session_make_decisive (bd_session *session, uint8_t *alpha, uint32_t width, uint32_t height,
                                      size_t stride, bd_error *error);
/* bd_session_make_decisive from @alpha into @out, @alpha left as it was: for a stream that
 * keeps the soft mask for the next frame's filter, without a copy. The two are one buffer (the
 * pass in place, as bd_session_make_decisive) or do not overlap. */
BD_API bd_status   bd_session_make_decisive_to (bd_session *session, const uint8_t *alpha, size_t alpha_stride,
                                         uint8_t *out, size_t out_stride, uint32_t width, uint32_t height,
                                         bd_error *error);
/* The temporal filter on luma planes: bd_session_luma makes a frame's (one byte a pixel) once,
 * and bd_session_temporal_blend_luma compares two of them where bd_session_temporal_blend
 * compares two photos, with the same bytes out and a quarter of the bytes read. */
BD_API bd_status   bd_session_luma (bd_session *session, const bd_image *photo, uint8_t *luma, size_t luma_stride,
                             bd_error *error);
BD_API bd_status   bd_session_temporal_blend_luma (bd_session *session, const uint8_t *luma,
                                            const uint8_t *other_luma, size_t luma_stride, uint32_t width,
                                            uint32_t height, const uint8_t *other_alpha, size_t other_stride,
                                            uint8_t *alpha, size_t alpha_stride, float strength,
                                            bd_error *error);
/* The same blend in two steps: bd_session_temporal_change_luma maps each pixel's local change
 * between two frames' luma planes (the filter's window sum, at most 25 * 255; the same map for
 * either order of the two), which needs no mask and can be made ahead, on another thread, as
 * soon as both planes exist; bd_session_temporal_blend_change then blends by it, with the
 * same bytes out as bd_session_temporal_blend_luma. @change_stride counts elements. */
BD_API bd_status   bd_session_temporal_change_luma (bd_session *session, const uint8_t *luma,
                                             const uint8_t *other_luma, size_t luma_stride, uint32_t width,
                                             uint32_t height, uint16_t *change, size_t change_stride,
                                             bd_error *error);
BD_API bd_status   bd_session_temporal_blend_change (bd_session *session, const uint16_t *change,
                                              size_t change_stride, uint32_t width, uint32_t height,
                                              const uint8_t *other_alpha, size_t other_stride, uint8_t *alpha,
                                              size_t alpha_stride, float strength, bd_error *error);

#ifdef __cplusplus
}
#endif

#endif /* BACKDROP_H */
