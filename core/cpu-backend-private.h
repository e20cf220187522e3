/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU backend's state, shared by its two files: cpu-plan.c lays out the activation
 * buffers of each input size in one arena, cpu-backend.c packs the weights and runs the
 * passes over them. */
#pragma once

#include "ops/ops.h"

#define PLANES(c) (((c) + BD_LANES - 1) / BD_LANES)
#define HALF(planes) (((planes) + 1) / 2)   /* bf16 pairs of that many planes */

/* What runs the 3x3 convolutions but the first: fp32 (exact precision, or fast where nothing
 * else pays), bf16 dot products (AVX-512 BF16 on AMD), bf16 tiles (AMX on Intel, which also
 * runs the up-convolutions), or integer dot products (AVX-512 VNNI on Intel without AMX: 16
 * bits for the encoder's at full resolution, 8 for the others and the up-convolutions). */
typedef enum { CPU_FP32, CPU_BF16, CPU_AMX, CPU_VNNI } cpu_kernel;

typedef struct {
	size_t   offset;    /* floats from the arena's start */
	size_t   floats;    /* the room it takes, in floats */
	bd_cpu_view view;   /* all planes; data or halves point into the arena while the plan is bound */
	uint32_t planes;
	bool     halves;    /* its values are halves (integer sessions but the photo, ops.h) */
	bool     alias;     /* lies over another buffer's planes (cpu-plan.c) */
} cpu_buffer;

/* Buffers for one input size (see bd_cpu_plan_for), laid out for a geometry at least that size:
 * its own, or another plan's, so that both passes of a photo use the same memory. */
typedef struct {
	uint32_t    height, width;
	uint32_t    geo_height, geo_width;   /* the rows and planes are this size's */
	uint64_t    last_used;
	size_t      floats;                /* the arena it needs */
	size_t      half_floats;           /* bf16 and integer sessions: the copies that need the copy buffer */
	size_t      level_start[BD_MAX_DEPTH + 1];   /* where each level's buffers begin; the end */
	cpu_buffer  input;                 /* level 0, 3 channels */
	cpu_buffer  pooled[BD_MAX_DEPTH];  /* level l's input, l >= 1 */
	cpu_buffer  tmp[BD_MAX_DEPTH];     /* first conv of a block */
	cpu_buffer  cat[BD_MAX_DEPTH];     /* skip | up, levels 0..depth-2 */
	cpu_buffer  out[BD_MAX_DEPTH];     /* a block's output: decoder, or the bottleneck */
} cpu_plan;

typedef struct {
	/* Weights, packed once per session. */
	bd_cpu_conv enc[BD_MAX_DEPTH][2];
	bd_cpu_conv up[BD_MAX_DEPTH][4];
	bd_cpu_conv dec[BD_MAX_DEPTH][2];
	/* The six input sizes used last: a photo runs at two (mirror averaging), upright.c's
	 * quick looks at two more and, for a photo lying down, its run turned at one more (no
	 * mirror pass), which leaves one for a folder's other shape; fewer plans would be
	 * remade for every photo of a folder. Their buffers share one arena (a forward pass
	 * keeps nothing for the next): with plan_layout's sharing, about 165 MB instead of
	 * 480 MB for the shipped model in fp32 (110 MB on AMX, 113 MB beside the bf16 copy,
	 * 57 MB in integer sessions' halves), and half the page faults of a lone photo
	 * (docs/ARCHITECTURE.md). A
	 * smaller size is laid out in a larger one's rows and planes (bd_cpu_plan_for), so a
	 * photo's second pass finds its pages already faulted in. */
	cpu_plan    plans[6];
	cpu_plan   *bound;      /* the plan whose views point into the arena, borders zeroed */
	bool        fresh;      /* the arena is all zero: no plan has been bound to it yet */
	bool        unfaulted;  /* nor have its pages been faulted in (bd_cpu_arena_fault_in) */
	float      *arena;
	size_t      arena_floats;
	uint16_t   *half;       /* bf16 and integer sessions: a convolution's input in 16 or 8 bits */
	size_t      half_floats;
	uint64_t    uses;
	cpu_kernel  kernel;     /* for the 3x3 convolutions but the first */
	float      *head_weight;   /* the head's, widened */
	float       head_bias;
} cpu_state;

/* The plan for this size: a kept one, or a new one in place of the one used longest ago;
 * the arena grown to hold it, and with @bind the plan bound to it (its views point into
 * the arena). */
bd_status bd_cpu_plan_for (cpu_state *s, const bd_model *m, uint32_t height, uint32_t width, bool bind,
                           cpu_plan **out, bd_error *error);

/* Frees the arena and the copy buffer. */
void bd_cpu_plans_free (cpu_state *s);
/* A new arena's pages faulted in on @pool's threads, before a pass writes them. */
void bd_cpu_arena_fault_in (cpu_state *s, bd_thread_pool *pool);
/* The arena's pages given back on @pool's threads, before bd_cpu_plans_free unmaps it. */
void bd_cpu_arena_release  (cpu_state *s, bd_thread_pool *pool);

/* Planes @first.. of @b. */
static inline bd_cpu_view
bd_cpu_planes_of (const cpu_buffer *b, uint32_t first)
{
	bd_cpu_view v = b->view;
	if (v.data)
		v.data += (size_t) first * v.plane_stride;
	if (v.halves)
		v.halves += (size_t) first * v.plane_stride;
	return v;
}

/* The bytes of an integer copy of @b (to-integers.c): in 16 bits for the encoder's 3x3
 * convolutions at full resolution, else in 8 (sixteen_bits, cpu-backend.c). */
static inline size_t
bd_cpu_copy_bytes (const cpu_buffer *b, bool int16)
{
	return (size_t) b->planes * b->view.plane_stride * (int16 ? 2 : 1);
}

/* Where an integer copy of @bytes goes: over the bound plan's buffers of level @level and
 * deeper where they hold it, dead while it is read (cpu-plan.c), else into the copy buffer. */
void *bd_cpu_copy_space (const cpu_state *s, uint32_t level, size_t bytes);
