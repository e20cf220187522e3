/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU backend's operators, one per file.
 *
 * Activations are "blocked": channels in planes of 16, each plane [height + 2][width + 2][16]
 * floats with a one-pixel zero border, so a 3x3 kernel needs no edge cases and every input
 * value and output vector sits at a fixed offset from a row pointer. A concatenation is two
 * plane ranges of one buffer; a channel count that is not a multiple of 16 leaves the last
 * plane's spare lanes at zero. */
#pragma once

#include "../backdrop-private.h"

#define BD_LANES 16

/* A range of planes: data points at pixel (0, 0), lane 0 of the first. Integer sessions
 * keep their activations as IEEE halves instead (@halves, data NULL): the kernels that
 * write them and the copies that read them (conv-dot.c, to-integers.c) move half the bytes,
 * and the arena is half as large. Only those and the head take halves. */
typedef struct {
	float   *data;
	uint32_t height, width;
	size_t   row_stride;    /* elements: (width + 2) * 16 for a whole buffer */
	size_t   plane_stride;
	uint16_t *halves;       /* or NULL, the values being floats */
} bd_cpu_view;

/* The least and largest of a buffer's values inside its border, zero included: found by the
 * integer kernels as they write them, for the copy the next layer reads (to-integers.c). */
typedef struct {
	float least, largest;
} bd_range;

/* A convolution's weights re-packed once for the kernels: [out block][in channel][tap][16],
 * output channels in blocks of 16 (the last zero-padded), input channels in storage order. */
typedef struct {
	float   *weights;
	float   *bias;          /* cout_blocks * 16 */
	uint16_t *weights_bf16; /* NULL, or the 3x3 weights for bd_conv2d_bf16 (conv-bf16.c) */
	uint16_t *weights_amx;  /* NULL, or the weights for the AMX kernels (conv-amx.c,
	                         * conv-transpose-amx.c); weights is then NULL */
	int16_t  *weights_int16; /* NULL, or the weights for bd_conv_run_int16 (conv-int16.c), */
	float    *int16_scale;   /* each output's integers times its scale (cout_blocks * 16), */
	float     int16_levels;  /* for inputs scaled to at most this many levels */
	int8_t   *weights_int8;  /* NULL, or the weights for bd_conv_run_int8 (conv-int8.c), */
	float    *int8_scale;    /* each output's integers times its scale, */
	int32_t  *int8_sums;     /* and each chunk's sum of them: [chunk][cout_blocks * 16] */
	uint32_t in_channels;   /* storage channels read: planes * 16, or fewer in the last plane */
	uint32_t out_channels;
	uint32_t taps;          /* 9 for 3x3, 1 for 1x1 */
	uint32_t cout_blocks;
} bd_cpu_conv;

/* Packs w[co * s_co + ci * s_ci + tap * s_tap] and bias[co]. Input channel ci is read from
 * storage channel in_map[ci] (NULL: ci itself) of @in_storage; unmapped channels get zero. */
bd_status bd_cpu_conv_pack (bd_cpu_conv *conv, const float *w, const float *bias,
                            uint32_t out_channels, uint32_t in_channels, uint32_t taps,
                            size_t s_co, size_t s_ci, size_t s_tap,
                            const uint32_t *in_map, uint32_t in_storage, bd_error *error);
void      bd_cpu_conv_clear (bd_cpu_conv *conv);

/* A packer's start, for those that pack from the model's own weights (AMX and integers):
 * @conv cleared, its bias (@out_channels, zero to a whole block) and sizes set; false when
 * out of memory (@conv then cleared). */
bool      bd_cpu_conv_begin (bd_cpu_conv *conv, const float *bias, uint32_t out_channels, uint32_t in_storage,
                             uint32_t taps);

/* For each of @in_storage stored input channels, the weights' channel that in_map puts there
 * (NULL: the same), or -1; malloc'd (NULL when out of memory). */
int32_t  *bd_cpu_channel_of (const uint32_t *in_map, uint32_t in_channels, uint32_t in_storage);

/* out = act(conv(in) + bias) for a 3x3 (padding 1) or 1x1 convolution, stride 1. */
void bd_conv2d (bd_thread_pool *pool, const bd_cpu_conv *conv,
                const bd_cpu_view *in, const bd_cpu_view *out, bool relu);

/* 2x2 stride-2 transposed convolution (@taps: the 1x1 convolutions of (dy, dx) = (t / 2, t % 2));
 * @out is twice @in's size. */
void bd_conv_transpose2x2 (bd_thread_pool *pool, const bd_cpu_conv taps[4],
                           const bd_cpu_view *in, const bd_cpu_view *out);

/* 2x2 max-pool of @planes planes; @out is half @in's size. */
void bd_maxpool2x2 (bd_thread_pool *pool, uint32_t planes, const bd_cpu_view *in, const bd_cpu_view *out);

/* sigmoid(w . x + bias) over @channels channels (floats or halves) into a dense height x
 * width map. */
void bd_head_sigmoid (bd_thread_pool *pool, const float *weight, float bias, uint32_t channels,
                      const bd_cpu_view *in, float *out);
/* Row @y of it into @out (head-row.c, one build per x86-64 level; the same floats from each). */
void bd_head_row_generic (const float *weight, float bias, uint32_t channels, const bd_cpu_view *in, size_t y,
                          float *out);
void bd_head_row_x86_64_v3 (const float *weight, float bias, uint32_t channels, const bd_cpu_view *in, size_t y,
                            float *out);
void bd_head_row_x86_64_v4 (const float *weight, float bias, uint32_t channels, const bd_cpu_view *in, size_t y,
                            float *out);
/* The same arithmetic in pieces, for a convolution that feeds the head its outputs as it makes
 * them (bd_conv2d_amx_head): @sum[m] plus pixel m's first @count (at most 16) channels, which
 * lie at @pixels + 16 m, each times its @weight, in channel order; then the sigmoid of @count
 * such sums into @out. Added one channel at a time as the row does, so the same floats. */
void bd_head_block_x86_64_v4 (float sum[16], const float *pixels, const float *weight, uint32_t count);
void bd_head_sigmoid_x86_64_v4 (const float *sums, uint32_t count, float *out);

/* Blocked activations in bfloat16: the same layout and strides (in elements) as bd_cpu_view,
 * or the AMX kernels' pairs of planes (bd_to_bf16_pairs). */
typedef struct {
	uint16_t       *data;
	uint32_t        height, width;
	size_t          row_stride, plane_stride;
} bd_cpu_view_bf16;

/* Round to nearest even, as vcvtne2ps2bf16 does (NaN is not expected here). */
static inline uint16_t
bd_bf16_from_float (float f)
{
	uint32_t u;
	__builtin_memcpy (&u, &f, sizeof u);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t) (u >> 16);
}

/* Input planes the kernels of conv-dot.c sum before the next chunk: as conv2d.c reduces, and
 * for the 16-bit kernel the span of one 32-bit sum (conv-int16.c). The 8-bit one's sums
 * cannot overflow in 64 planes (conv-int8.c), wider than any convolution of the shipped
 * model: its sums stay in registers over all the inputs and are written once. */
#define BD_DOT_CHUNK  8
#define BD_INT8_CHUNK 64

/* The bf16 kernels (conv-bf16.c, conv-dot.c, to-bf16.c), built where the compiler
 * targets AVX-512 BF16. */
#if defined(BD_HAVE_BF16_KERNELS)
/* Whether this CPU runs them, and BACKDROP_CPU_KERNEL does not ask for fp32 ("fp32", "v3" or
 * "generic"). */
bool bd_cpu_bf16_usable (void);

/* Whether fast precision should use them: usable and faster than fp32 on this CPU. */
bool bd_cpu_bf16_pays (void);

/* Adds the bf16 copy of a packed 3x3 convolution's weights (freed by bd_cpu_conv_clear). */
bd_status bd_cpu_conv_pack_bf16 (bd_cpu_conv *conv, bd_error *error);

/* @planes planes of @in, borders included, into @dst (planes * plane_stride elements). */
bd_cpu_view_bf16 bd_to_bf16 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, uint16_t *dst);

/* bd_conv2d for a 3x3 convolution with bf16 weights and inputs, fp32 sums and outputs. */
void bd_conv2d_bf16 (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                     const bd_cpu_view *out, bool relu);

/* @planes planes of @in as bf16 pairs for the AMX kernel: planes 2p and 2p + 1 interleaved,
 * 32 values a pixel (the second half zero past the last plane), borders included; @dst holds
 * (@planes + 1) / 2 * 2 * plane_stride elements. The view's strides count elements. */
bd_cpu_view_bf16 bd_to_bf16_pairs (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, uint16_t *dst);

/* bd_conv2d (fp32 weights, packed by bd_cpu_conv_pack) with its outputs rounded to bf16 as
 * bd_to_bf16_pairs would round bd_conv2d's (a last odd block's half zero); only pixels inside
 * @out are written. Needs an x86-64-v4 CPU with AVX-512 BF16. */
void bd_conv2d_pairs (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view *in,
                      const bd_cpu_view_bf16 *out, bool relu);
#endif

/* The integer kernels (conv-int16.c, conv-int8.c, conv-dot.c, to-integers.c), built where the
 * compiler targets AVX-512 VNNI. */
#if defined(BD_HAVE_VNNI_KERNELS)
/* Blocked activations as 16-bit integers, each value times @scale. */
typedef struct {
	int16_t        *data;
	uint32_t        height, width;
	size_t          row_stride, plane_stride;
	float           scale;
} bd_cpu_view_int16;

/* Blocked activations as 8-bit unsigned integers, each value (q - @offset) times @scale. */
typedef struct {
	uint8_t        *data;
	uint32_t        height, width;
	size_t          row_stride, plane_stride;
	float           scale;
	int32_t         offset;
} bd_cpu_view_int8;

/* Whether this CPU runs them, and BACKDROP_CPU_KERNEL does not ask for another kernel. */
bool bd_cpu_vnni_usable (void);

/* Whether fast precision should use them: usable, and an Intel processor (or asked for with
 * BACKDROP_CPU_KERNEL=vnni). */
bool bd_cpu_vnni_pays (void);

/* bd_cpu_conv_pack for a 3x3 or 1x1 convolution run by an integer kernel only: its weights
 * w[co * s_co + ci * s_ci + tap * s_tap] as integers with a scale per output (no fp32 copy),
 * packed by @pool's threads; 16 bits (weights_int16, int16_scale, int16_levels) or 8
 * (weights_int8, int8_scale, int8_sums). */
bd_status bd_cpu_conv_pack_int16 (bd_thread_pool *pool, bd_cpu_conv *conv, const float *w, const float *bias,
                                  uint32_t out_channels, uint32_t in_channels, uint32_t taps, size_t s_co,
                                  size_t s_ci, size_t s_tap, const uint32_t *in_map, uint32_t in_storage,
                                  bd_error *error);
/* The 8-bit packer reads the model's own values, floats or halves (@w, from element @first:
 * w[first + co * s_co + ...]), with no widened copy; halves four bytes at a time, each
 * with the two bytes before it, which must be readable (in a model file a header comes
 * before every tensor). */
bd_status bd_cpu_conv_pack_int8 (bd_thread_pool *pool, bd_cpu_conv *conv, const bd_weight *w, size_t first,
                                 const float *bias, uint32_t out_channels, uint32_t in_channels, uint32_t taps,
                                 size_t s_co, size_t s_ci, size_t s_tap, const uint32_t *in_map,
                                 uint32_t in_storage, bd_error *error);

/* The values inside @planes planes of @in (floats or halves) into @dst (planes *
 * plane_stride elements, laid out as @in's), with the border pixels around them zero (8
 * bits: the copy's offset); @in's own borders are not read, nor rows below its border.
 * Scaled so that the largest |value| inside @in is @levels (a convolution's int16_levels),
 * or to 255 levels over their range: @known where the kernels that wrote them found it, else
 * measured here. A value beyond the range (a half rounded up past it) takes the end level. */
bd_cpu_view_int16 bd_to_int16 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes, float levels,
                               const bd_range *known, int16_t *dst);
bd_cpu_view_int8  bd_to_int8 (bd_thread_pool *pool, const bd_cpu_view *in, uint32_t planes,
                              const bd_range *known, uint8_t *dst);

/* bd_to_int16 of the blocked photo (lanes 0..2 of one plane, the rest zero), made from the
 * photo itself: @photo three planes of @shape's height x width floats, @dst laid out as
 * @shape (the session's input buffer, never written). The same bytes. */
bd_cpu_view_int16 bd_photo_to_int16 (bd_thread_pool *pool, const float *photo, const bd_cpu_view *shape,
                                     float levels, int16_t *dst);

/* bd_to_int8 of bd_maxpool2x2's output, made from @in (a ReLU's output, twice @shape's size)
 * without the fp32 pooled buffer: @dst laid out as @shape (the pooled buffer's view), @known
 * the range of @in where found, else measured on @in. A 2x2 maximum keeps the largest value
 * and zero is in the range either way, so the scale is the pooled buffer's; the rounding
 * keeps order, so the maximum of the rounded values is the rounded maximum: the same bytes
 * as pooling, then copying. */
bd_cpu_view_int8  bd_to_int8_pooled (bd_thread_pool *pool, const bd_cpu_view *in, const bd_cpu_view *shape,
                                     uint32_t planes, const bd_range *known, uint8_t *dst);

/* bd_conv_run with integer weights and inputs, fp32 outputs or halves (rounded to nearest
 * even; where the inputs span more than one chunk, the sums of each chunk but the last are
 * kept as halves too, as a 16-bit convolution of over 128 inputs or an 8-bit one of over
 * 1024 would, none of the shipped model's): a 3x3 convolution (@out_step 1) or a 1x1 one (1 or 2), as packed. With
 * @range, it is widened to the outputs' least and largest before rounding (zero included):
 * the copies to integers hold the values they read to that range. */
void bd_conv_run_int16 (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_int16 *in,
                        const bd_cpu_view *out, int out_step, bool relu, bd_range *range);
void bd_conv_run_int8 (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_int8 *in,
                       const bd_cpu_view *out, int out_step, bool relu, bd_range *range);

/* bd_conv_transpose2x2 with @taps packed by bd_cpu_conv_pack_int8 (1x1) and @in in 8 bits;
 * @range as bd_conv_run_int8's. */
void bd_conv_transpose2x2_int8 (bd_thread_pool *pool, const bd_cpu_conv taps[4], const bd_cpu_view_int8 *in,
                                const bd_cpu_view *out, bd_range *range);
#endif

/* The AMX kernels (conv-amx.c, conv-transpose-amx.c), built where the compiler targets
 * AMX-BF16. */
#if defined(BD_HAVE_AMX_KERNELS)
/* Whether this CPU and system run it (the process is granted the tile state here), and
 * BACKDROP_CPU_KERNEL is unset or "amx". */
bool bd_cpu_amx_usable (void);

/* bd_cpu_conv_pack for a 3x3 or 1x1 convolution run on the tile unit only (bd_conv2d_amx,
 * bd_conv_transpose2x2_amx): its weights in bf16 as the unit reads them (weights_amx; no fp32
 * copy), packed by @pool's threads. */
bd_status bd_cpu_conv_pack_amx (bd_thread_pool *pool, bd_cpu_conv *conv, const float *w, const float *bias,
                                uint32_t out_channels, uint32_t in_channels, uint32_t taps, size_t s_co,
                                size_t s_ci, size_t s_tap, const uint32_t *in_map, uint32_t in_storage,
                                bd_error *error);

/* bd_conv2d for a 3x3 convolution with bf16 weights and inputs (pairs of planes, from
 * bd_to_bf16_pairs or another AMX kernel) on the tile unit, fp32 sums and outputs. */
void bd_conv2d_amx (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                    const bd_cpu_view *out, bool relu);

/* The same with the outputs rounded to bf16 in pairs of planes (as bd_to_bf16_pairs writes
 * them, the second half of a last odd plane zero), for an AMX convolution to read; only
 * pixels inside @out are written. */
void bd_conv2d_amx_pairs (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                          const bd_cpu_view_bf16 *out, bool relu);

/* The same, and the 2x2 max-pool of those pairs (stride 2, a last odd row or column left out)
 * into @pooled, half @out's size: an encoder block's skip and the next level's input in one
 * pass, the skip never read back. */
void bd_conv2d_amx_pairs_pool (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                               const bd_cpu_view_bf16 *out, const bd_cpu_view_bf16 *pooled, bool relu);

/* bd_conv2d_amx with its ReLU, then the network's head on its outputs without writing them:
 * @prob (rows @in->width apart) gets bd_head_sigmoid's floats for @weight and @bias over all
 * the convolution's output channels. */
void bd_conv2d_amx_head (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                         const float *weight, float bias, float *prob);

/* bd_conv_transpose2x2 on the tile unit: @taps packed by bd_cpu_conv_pack_amx (1x1), @in in
 * bf16 pairs of planes; the outputs into the fp32 planes @out, or with @out NULL
 * rounded to bf16 into the pairs @pairs (the second half of a last odd plane zero). */
void bd_conv_transpose2x2_amx (bd_thread_pool *pool, const bd_cpu_conv taps[4], const bd_cpu_view_bf16 *in,
                               const bd_cpu_view *out, const bd_cpu_view_bf16 *pairs);
#endif

/* Used by bd_conv2d and bd_conv_transpose2x2: @out_step is 1, or 2 to write every other pixel. */
void bd_conv_run (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view *in,
                  const bd_cpu_view *out, int out_step, bool relu);
