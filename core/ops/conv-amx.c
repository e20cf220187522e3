/* SPDX-License-Identifier: Apache-2.0 */
/* 3x3 convolution (padding 1) + bias + optional ReLU on Intel's AMX tile unit (Sapphire Rapids
 * and later): bf16 inputs and weights, fp32 sums and outputs, as conv-bf16.c, but one
 * tdpbf16ps multiplies 16 pixels by 32 input channels for 16 outputs, 32 times the work of
 * one vdpbf16ps. Meson builds this file with -mamx-tile -mamx-bf16 only; callers check
 * bd_cpu_amx_usable () first.
 *
 * A tile row must hold 32 input channels side by side, so the input is the pair layout that
 * bd_to_bf16_pairs writes: planes 2p and 2p+1 interleaved, 32 bf16 a pixel. A tap of a
 * pair of planes is then one A tile (16 consecutive pixels, 64 bytes apart) times one B tile
 * (the tap's weights, [16 input pairs][16 outputs][2], packed by conv-amx-pack.c); nine of
 * them cover the 3x3 window.
 *
 * Each task owns two output rows and two output blocks: four C tiles of sums, fed by two A
 * tiles (one per row) and two B tiles (one per block), the eight tiles the unit has. Rows
 * narrower than a tile use shorter tiles; any size runs. A task's two rows are a 2x2
 * pooling window's, so an encoder block's skip is pooled for the next level as it is written
 * (bd_conv2d_amx_pairs_pool). The network's last convolution gives its sums to the head
 * instead of writing them (bd_conv2d_amx_head): its tasks take every block of their two
 * rows, one pair of blocks after the other. */
#include "amx-tiles.h"

#include <cpuid.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define VL BD_LANES
#define PAIR BD_AMX_PAIR
#define TILE_WEIGHTS BD_AMX_WEIGHTS

#define ARCH_REQ_XCOMP_PERM 0x1023    /* Linux: ask to use an extended state component */
#define XFEATURE_XTILEDATA  18

static uint64_t
xcr0 (void)
{
	uint32_t lo, hi;
	__asm__ volatile ("xgetbv" : "=a" (lo), "=d" (hi) : "c" (0));
	return (uint64_t) hi << 32 | lo;
}

bool
bd_cpu_amx_usable (void)
{
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && strcmp (force, "amx") != 0)
		return false;
	unsigned a, b, c, d;
	if (!__get_cpuid (1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return false;
	if (!__get_cpuid_count (7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22)))
		return false;             /* AMX-TILE, AMX-BF16 */
	if ((xcr0 () & (3u << 17)) != (3u << 17))
		return false;             /* the system saves no tile state */
#if defined(__linux__)
	/* Linux hands the 8 KiB of tile state to a process only when asked (once for all its
	 * threads); a tile instruction without it is a SIGILL. Asking again is harmless. */
	return syscall (SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
	return false;
#endif
}

typedef struct {
	const bd_cpu_conv      *conv;
	const bd_cpu_view_bf16 *in;
	const bd_cpu_view      *out;      /* fp32 outputs, or */
	const bd_cpu_view_bf16 *pairs;    /* bf16 pairs */
	const bd_cpu_view_bf16 *pooled;   /* with pairs: their 2x2 max-pool too, or NULL */
	bool                    relu;
	uint32_t                groups;       /* pairs of output blocks */
	const float            *head_weight;  /* bd_conv2d_amx_head's */
	float                   head_bias;
	float                  *prob;
} amx_ctx;

/* The sums of one row (@sums[0], @sums[1]: its two blocks' tiles) as fp32 planes. */
static void
write_fp32 (const amx_ctx *c, float (*sums)[VL][VL], uint32_t y, uint32_t x, uint32_t ob, int pixels,
            bool two_blocks)
{
	const bd_cpu_view *out = c->out;
	for (int j = 0; j < (two_blocks ? 2 : 1); j++) {
		float *dst = out->data + (size_t) (ob + j) * out->plane_stride + (size_t) y * out->row_stride +
		             (size_t) x * VL;
		for (int m = 0; m < pixels; m++) {
			__m512 v = _mm512_load_ps (sums[j][m]);
			if (c->relu)
				v = _mm512_max_ps (v, _mm512_setzero_ps ());
			_mm512_storeu_ps (dst + m * VL, v);
		}
	}
}

/* The same as one pair of bf16 planes: blocks ob and ob + 1 are pair ob / 2 (ob is even). */
static void
write_pairs (const amx_ctx *c, float (*sums)[VL][VL], uint32_t y, uint32_t x, uint32_t ob, int pixels,
             bool two_blocks)
{
	const bd_cpu_view_bf16 *out = c->pairs;
	uint16_t *dst = out->data + (size_t) (ob / 2) * out->plane_stride + (size_t) y * out->row_stride +
	                (size_t) x * PAIR;
	for (int m = 0; m < pixels; m++) {
		__m512 lo = _mm512_load_ps (sums[0][m]);
		__m512 hi = two_blocks ? _mm512_load_ps (sums[1][m]) : _mm512_setzero_ps ();
		if (c->relu) {
			lo = _mm512_max_ps (lo, _mm512_setzero_ps ());
			hi = _mm512_max_ps (hi, _mm512_setzero_ps ());
		}
		_mm512_storeu_si512 (dst + m * PAIR, (__m512i) _mm512_cvtne2ps_pbh (hi, lo));
	}
}

/* The 2x2 max-pool of two rows' sums (@sums, row r block j at 2r + j; rows y and y + 1, y
 * even) into pooled row y / 2, as bd_conv2d_amx_pairs' pairs pooled: the largest of four
 * values rounded is the largest rounded (rounding keeps order), so the same bf16. A window
 * starts at an even pixel: a last tile that starts at an odd one (it overlaps the one before)
 * pools from its second pixel, and a last odd pixel is left out, as the pool leaves it. */
static void
write_pooled (const amx_ctx *c, float (*sums)[VL][VL], uint32_t y, uint32_t x, uint32_t ob, int pixels,
              bool two_blocks)
{
	const bd_cpu_view_bf16 *out = c->pooled;
	uint16_t *dst = out->data + (size_t) (ob / 2) * out->plane_stride + (size_t) (y / 2) * out->row_stride;
	__m512 zero = _mm512_setzero_ps ();
	for (int m = (int) (x % 2); m + 1 < pixels; m += 2) {
		__m512 lo = _mm512_max_ps (_mm512_max_ps (_mm512_load_ps (sums[0][m]), _mm512_load_ps (sums[0][m + 1])),
		                           _mm512_max_ps (_mm512_load_ps (sums[2][m]), _mm512_load_ps (sums[2][m + 1])));
		__m512 hi = zero;
		if (two_blocks)
			hi = _mm512_max_ps (_mm512_max_ps (_mm512_load_ps (sums[1][m]), _mm512_load_ps (sums[1][m + 1])),
			                    _mm512_max_ps (_mm512_load_ps (sums[3][m]), _mm512_load_ps (sums[3][m + 1])));
		if (c->relu) {
			lo = _mm512_max_ps (lo, zero);
			hi = _mm512_max_ps (hi, zero);
		}
		_mm512_storeu_si512 (dst + (size_t) ((x + (uint32_t) m) / 2) * PAIR, (__m512i) _mm512_cvtne2ps_pbh (hi, lo));
	}
}

/* Nine taps of pair p into the sums: tiles 0-3 hold sums (row r, block j as tile 2r + j),
 * 4-5 the rows' pixels, 6-7 the blocks' weights. @a is pixel (y - 1, x - 1) of the pair, the
 * first row's window; @two_rows is false for a photo one row high, whose second row would read
 * past the plane. */
static inline __attribute__ ((always_inline)) void
pair_taps (const uint16_t *a, ptrdiff_t row, const uint16_t *b0, const uint16_t *b1, const bool two_rows)
{
	for (int ky = 0; ky < 3; ky++)
		for (int kx = 0; kx < 3; kx++) {
			const uint16_t *src = a + ky * row + kx * PAIR;
			int t = ky * 3 + kx;
			_tile_loadd (4, src, 64);
			if (two_rows)
				_tile_loadd (5, src + row, 64);
			_tile_loadd (6, b0 + t * TILE_WEIGHTS, 64);
			_tile_loadd (7, b1 + t * TILE_WEIGHTS, 64);
			_tile_dpbf16ps (0, 4, 6);
			_tile_dpbf16ps (1, 4, 7);
			if (two_rows) {
				_tile_dpbf16ps (2, 5, 6);
				_tile_dpbf16ps (3, 5, 7);
			}
		}
}

/* The sums of output rows y and y + 1 (row y alone without @two_rows) at pixels x.. of
 * blocks ob and ob + 1 (@w0, @w1: their weights) into @sums (row r, block j at 2r + j),
 * starting from @bias (each block's as 16 rows of a tile). */
static inline __attribute__ ((always_inline)) void
tile_sums (const amx_ctx *c, uint32_t y, uint32_t x, const uint16_t *w0, const uint16_t *w1, bool two_rows,
           float (*bias)[VL][VL], float (*sums)[VL][VL])
{
	const bd_cpu_view_bf16 *in = c->in;
	uint32_t pairs = (c->conv->in_channels + PAIR - 1) / PAIR;
	ptrdiff_t row = (ptrdiff_t) in->row_stride;
	_tile_loadd (0, bias[0], 64);
	_tile_loadd (1, bias[1], 64);
	_tile_loadd (2, bias[0], 64);
	_tile_loadd (3, bias[1], 64);
	for (uint32_t p = 0; p < pairs; p++) {
		const uint16_t *a = in->data + (size_t) p * in->plane_stride + ((ptrdiff_t) y - 1) * row +
		                    ((ptrdiff_t) x - 1) * PAIR;
		const uint16_t *b0 = w0 + (size_t) p * 9 * TILE_WEIGHTS, *b1 = w1 + (size_t) p * 9 * TILE_WEIGHTS;
		if (two_rows)
			pair_taps (a, row, b0, b1, true);
		else
			pair_taps (a, row, b0, b1, false);
	}
	_tile_stored (0, sums[0], 64);
	_tile_stored (1, sums[1], 64);
	_tile_stored (2, sums[2], 64);
	_tile_stored (3, sums[3], 64);
}

/* Block ob's bias (and ob + 1's, or ob's again where it is the last) as tile rows. */
static void
fill_bias (const bd_cpu_conv *conv, uint32_t ob, float (*bias)[VL][VL])
{
	bool two_blocks = ob + 1 < conv->cout_blocks;
	for (int j = 0; j < 2; j++)
		for (int m = 0; m < VL; m++)
			memcpy (bias[j][m], conv->bias + (size_t) (two_blocks ? ob + j : ob) * VL, sizeof bias[j][m]);
}

/* Task @index's first output row: two a task; an odd height's last task redoes the row above
 * its own and writes only its own (*@write_first_row false); a photo one row high has one. */
static uint32_t
task_rows (const bd_cpu_view_bf16 *in, uint32_t pair_index, bool *two_rows, bool *write_first_row)
{
	uint32_t y = 2 * pair_index;
	*two_rows = in->height >= 2;
	*write_first_row = true;
	if (*two_rows && y + 1 >= in->height) {
		y = in->height - 2;
		*write_first_row = false;
	}
	return y;
}

static void
amx_task (void *data, size_t index)
{
	const amx_ctx *c = data;
	const bd_cpu_conv *conv = c->conv;
	uint32_t width = c->in->width, ob = 2 * (uint32_t) (index % c->groups);
	bool two_rows, write_first_row;
	uint32_t y = task_rows (c->in, (uint32_t) (index / c->groups), &two_rows, &write_first_row);
	bool two_blocks = ob + 1 < conv->cout_blocks;
	size_t per_block = (size_t) ((conv->in_channels + PAIR - 1) / PAIR) * 9 * TILE_WEIGHTS;
	const uint16_t *w0 = conv->weights_amx + (size_t) ob * per_block;
	const uint16_t *w1 = two_blocks ? w0 + per_block : w0;

	/* 16 pixels a tile, or the whole row where it is narrower. */
	int pixels = width < VL ? (int) width : VL;
	bd_amx_configure (pixels, 6);
	float bias[2][VL][VL] __attribute__ ((aligned (64)));
	float sums[4][VL][VL] __attribute__ ((aligned (64)));
	fill_bias (conv, ob, bias);
	for (uint32_t x0 = 0; x0 < width; x0 += VL) {
		/* The last 16 pixels of a row whose width is no multiple of 16 overlap the ones
		 * before: done twice, the same values. */
		uint32_t x = x0 + VL <= width || width < VL ? x0 : width - VL;
		tile_sums (c, y, x, w0, w1, two_rows, bias, sums);
		for (int r = write_first_row ? 0 : 1; r < (two_rows ? 2 : 1); r++)
			(c->pairs ? write_pairs : write_fp32) (c, &sums[2 * r], y + r, x, ob, pixels, two_blocks);
		/* y is even where both rows are the task's own. */
		if (c->pooled && two_rows && write_first_row)
			write_pooled (c, sums, y, x, ob, pixels, two_blocks);
	}
	_tile_release ();
}

/* bd_conv2d_amx_head's task: two output rows, every block, each block's ReLU'd sums added
 * into the head's (head-row.c, in channel order, as bd_head_sigmoid adds them). */
static void
head_task (void *data, size_t index)
{
	const amx_ctx *c = data;
	const bd_cpu_conv *conv = c->conv;
	uint32_t width = c->in->width, channels = conv->out_channels;
	bool two_rows, write_first_row;
	uint32_t y = task_rows (c->in, (uint32_t) index, &two_rows, &write_first_row);
	size_t per_block = (size_t) ((conv->in_channels + PAIR - 1) / PAIR) * 9 * TILE_WEIGHTS;

	int pixels = width < VL ? (int) width : VL;
	bd_amx_configure (pixels, 6);
	float bias[2][VL][VL] __attribute__ ((aligned (64)));
	float sums[4][VL][VL] __attribute__ ((aligned (64)));
	float head[2][VL] __attribute__ ((aligned (64)));
	if (pixels < VL)   /* the rows past a short tile's, read by the head's transposes, unused */
		memset (sums, 0, sizeof sums);
	if (conv->cout_blocks == 1 || conv->cout_blocks == 2)   /* one pair of blocks: its bias once */
		fill_bias (conv, 0, bias);
	for (uint32_t x0 = 0; x0 < width; x0 += VL) {
		uint32_t x = x0 + VL <= width || width < VL ? x0 : width - VL;
		for (int r = 0; r < 2; r++)
			for (int m = 0; m < VL; m++)
				head[r][m] = c->head_bias;
		for (uint32_t ob = 0; ob < conv->cout_blocks; ob += 2) {
			bool two_blocks = ob + 1 < conv->cout_blocks;
			const uint16_t *w0 = conv->weights_amx + (size_t) ob * per_block;
			if (conv->cout_blocks > 2)
				fill_bias (conv, ob, bias);
			tile_sums (c, y, x, w0, two_blocks ? w0 + per_block : w0, two_rows, bias, sums);
			for (int r = 0; r < (two_rows ? 2 : 1); r++)
				for (int j = 0; j < (two_blocks ? 2 : 1); j++) {
					float (*block)[VL] = sums[2 * r + j];
					for (int m = 0; m < VL; m++)
						_mm512_store_ps (block[m], _mm512_max_ps (_mm512_load_ps (block[m]), _mm512_setzero_ps ()));
					uint32_t first = (ob + (uint32_t) j) * VL;
					bd_head_block_x86_64_v4 (head[r], &block[0][0], c->head_weight + first, channels - first);
				}
		}
		for (int r = write_first_row ? 0 : 1; r < (two_rows ? 2 : 1); r++)
			bd_head_sigmoid_x86_64_v4 (head[r], (uint32_t) pixels, c->prob + (size_t) (y + r) * width + x);
	}
	_tile_release ();
}

static void
run (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in, const bd_cpu_view *out,
     const bd_cpu_view_bf16 *pairs, const bd_cpu_view_bf16 *pooled, bool relu)
{
	if (in->height == 0 || in->width == 0 || conv->out_channels == 0)
		return;
	amx_ctx c = {
		.conv = conv, .in = in, .out = out, .pairs = pairs, .pooled = pooled, .relu = relu,
		.groups = (conv->cout_blocks + 1) / 2,
	};
	bd_thread_pool_run (pool, (size_t) (in->height + 1) / 2 * c.groups, amx_task, &c);
}

void
bd_conv2d_amx (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
               const bd_cpu_view *out, bool relu)
{
	run (pool, conv, in, out, NULL, NULL, relu);
}

void
bd_conv2d_amx_pairs (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                     const bd_cpu_view_bf16 *out, bool relu)
{
	run (pool, conv, in, NULL, out, NULL, relu);
}

void
bd_conv2d_amx_pairs_pool (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                          const bd_cpu_view_bf16 *out, const bd_cpu_view_bf16 *pooled, bool relu)
{
	run (pool, conv, in, NULL, out, pooled, relu);
}

void
bd_conv2d_amx_head (bd_thread_pool *pool, const bd_cpu_conv *conv, const bd_cpu_view_bf16 *in,
                    const float *weight, float bias, float *prob)
{
	if (in->height == 0 || in->width == 0)
		return;
	amx_ctx c = { .conv = conv, .in = in, .relu = true, .head_weight = weight, .head_bias = bias, .prob = prob };
	bd_thread_pool_run (pool, (size_t) (in->height + 1) / 2, head_task, &c);
}
