/* SPDX-License-Identifier: Apache-2.0 */
/* Keeps the photo's subject and drops passers-by: every separate region of the mask whose
 * person area is under a fraction of the largest region's. The labelled sets mark the subject
 * of a portrait, not the people walking past behind it, and so does a user who asks for the
 * background to go; a group of people of about one size keeps all of them. A photo whose
 * largest person spans less than a given share of its height has no subject (a street, a
 * crowd or a group seen from afar): everyone stays.
 *
 * Regions are found on a grid of blocks of b x b pixels (long side at most 512 blocks), so a
 * 12-megapixel mask costs one pass to read and one to clear, whatever its size. A block joins
 * a region when any of its pixels is at least a quarter opaque; blocks touch by sides or
 * corners. A region's area counts its pixels at least half opaque. Fainter blocks then go
 * with the nearest region, so a passer-by's soft edge leaves with it, and two people joined
 * only by a faint haze (the network's doubt between them) stay apart.
 *
 * On a 1080p video frame (a grid of 480 x 270) the pass took 1.0-1.2 ms, most of it in its
 * steps on one thread: the regions by a flood fill cell by cell (0.30 ms), the faint blocks'
 * growth from every cell of every region (0.35) and clearing block by block (0.13). The
 * regions are now found from runs of blocks, the growth starts from the regions' cells that
 * touch a faint block, and the clearing goes a run of blocks at a time: the same result.
 * A GPU session makes the grid and clears its blocks on the device (gpu/keep-subject.cu);
 * the steps between are these, through bd_subject_blocks_to_drop. */
#include "image.h"

#include <stdlib.h>
#include <string.h>

#define GRID_SIDE 512
#define JOIN_ALPHA 64   /* at 16, faint haze joined passers-by to the subject more often */

/* Grid cell of each block: the most opaque pixel and the number of person pixels. The grid
 * has a border of empty cells, so that every cell of the photo has eight neighbours. */
typedef struct {
	const uint8_t *alpha;
	uint32_t       width, height;
	size_t         stride;
	uint8_t       *max;
	uint32_t      *core;
	int32_t       *label;  /* 0: empty; else 1 + the region's index */
	uint32_t      *queue;
	uint8_t       *seed;   /* a row of cells: grid_grow's seeds */
	uint32_t       w, h, b;  /* blocks across and down, pixels a block side */
	size_t         cells;    /* (w + 2) x (h + 2), the border included */
	bool           failed;
} keep_grid;

static inline size_t
grid_cell (const keep_grid *g, uint32_t cx, uint32_t cy)
{
	return (size_t) (cy + 1) * (g->w + 2) + cx + 1;
}

/* Rows of blocks [first, first + ROWS_PER_TASK), a task of their own since rows of blocks
 * share no cell: each pixel column's maximum and person count down a row of blocks first
 * (long, branch-free loops), then per block. A task takes several rows of blocks: one each
 * spent more on starting tasks and allocating than on the pixels (2.1 ms for a 1 MP mask
 * on 16 threads, 0.9 on 2). The grid's fields are read into locals and the rows marked
 * restrict: with the grid's stores free to alias them, the per-block sums reloaded every
 * field a column (a 1 MP portrait's grid on one thread: 0.7 -> 0.6 ms). */
#define ROWS_PER_TASK 16

static void
grid_fill_rows (void *data, size_t task)
{
	keep_grid *g = data;
	const uint32_t width = g->width, height = g->height, b = g->b, w = g->w;
	const size_t stride = g->stride;
	uint8_t  *restrict col_max = malloc (width);
	uint32_t *restrict col_core = malloc (width * sizeof *col_core);
	if (!col_max || !col_core) {
		free (col_max);
		free (col_core);
		__atomic_store_n (&g->failed, true, __ATOMIC_RELAXED);
		return;
	}
	uint32_t cy0 = (uint32_t) task * ROWS_PER_TASK;
	uint32_t cy1 = cy0 + ROWS_PER_TASK < g->h ? cy0 + ROWS_PER_TASK : g->h;
	for (uint32_t cy = cy0; cy < cy1; cy++) {
		uint32_t y0 = cy * b, y1 = y0 + b < height ? y0 + b : height;
		const uint8_t *restrict row = g->alpha + (size_t) y0 * stride;
		/* 1 from 128 up: person, as the scores count it. A block can be taller than 65535
		 * rows (a 1x120M mask has blocks of 234375), so the count is 32-bit. */
		for (uint32_t x = 0; x < width; x++) {
			col_max[x] = row[x];
			col_core[x] = row[x] >> 7;
		}
		for (uint32_t y = y0 + 1; y < y1; y++) {
			row = g->alpha + (size_t) y * stride;
			for (uint32_t x = 0; x < width; x++) {
				col_max[x] = row[x] > col_max[x] ? row[x] : col_max[x];
				col_core[x] += row[x] >> 7;
			}
		}
		uint8_t  *restrict max_out = g->max + grid_cell (g, 0, cy);
		uint32_t *restrict core_out = g->core + grid_cell (g, 0, cy);
		if (b == 1) {
			memcpy (max_out, col_max, w);
			memcpy (core_out, col_core, w * sizeof *core_out);
			continue;
		}
		for (uint32_t c = 0, x0 = 0; c < w; c++, x0 += b) {
			uint32_t x1 = x0 + b < width ? x0 + b : width, core = 0;
			uint8_t top = 0;
			for (uint32_t x = x0; x < x1; x++) {
				top = col_max[x] > top ? col_max[x] : top;
				core += col_core[x];
			}
			max_out[c] = top;
			core_out[c] = core;
		}
	}
	free (col_max);
	free (col_core);
}

/* A run of blocks of one row at least JOIN_ALPHA opaque: cells [x0, x1) of row y. */
typedef struct {
	uint32_t y, x0, x1;
	uint32_t parent;   /* union-find: the run of the region's that comes first */
} keep_run;

static uint32_t
run_root (keep_run *runs, uint32_t i)
{
	while (runs[i].parent != i)
		i = runs[i].parent = runs[runs[i].parent].parent;
	return i;
}

/* Joins the regions of runs @a and @b under the one that comes first. */
static void
run_join (keep_run *runs, uint32_t a, uint32_t b)
{
	a = run_root (runs, a);
	b = run_root (runs, b);
	if (a < b)
		runs[b].parent = a;
	else if (b < a)
		runs[a].parent = b;
}

/* A region: its person area (pixels), and its first and last rows of blocks. */
typedef struct {
	uint64_t area;
	uint32_t top, bottom;
} keep_region;

/* The regions: runs of blocks row by row, joined where runs of neighbouring rows touch by a
 * side or a corner, each region numbered by its first block in row order (as a flood fill
 * from each unlabelled block in turn numbers them) into g->label, and its area and rows into
 * *@regions_out. Returns the number of regions, or -1 when memory is short. */
static ptrdiff_t
grid_regions (keep_grid *g, keep_region **regions_out, uint64_t *largest)
{
	size_t n_runs = 0, capacity = 0;
	keep_run *runs = NULL;
	size_t above = 0, above_end = 0;   /* the previous row's runs */
	for (uint32_t y = 0; y < g->h; y++) {
		const uint8_t *max = g->max + grid_cell (g, 0, y);
		size_t first = n_runs;
		for (uint32_t x = 0; x < g->w;) {
			if (max[x] < JOIN_ALPHA) {
				x++;
				continue;
			}
			uint32_t x0 = x;
			while (x < g->w && max[x] >= JOIN_ALPHA)
				x++;
			if (n_runs == capacity) {
				capacity = capacity ? 2 * capacity : 256;
				keep_run *grown = realloc (runs, capacity * sizeof *runs);
				if (!grown) {
					free (runs);
					return -1;
				}
				runs = grown;
			}
			uint32_t r = (uint32_t) n_runs++;
			runs[r] = (keep_run) { y, x0, x, r };
			/* Runs above that touch [x0 - 1, x]: corners count. The runs above are in order,
			 * so the sweep goes on from the first that ends at or after x0 - 1. */
			while (above < above_end && runs[above].x1 < x0)
				above++;
			for (size_t a = above; a < above_end && runs[a].x0 <= x; a++)
				run_join (runs, (uint32_t) a, r);
		}
		above = first;
		above_end = n_runs;
	}
	ptrdiff_t regions = 0;
	keep_region *region = NULL;
	if (n_runs && !(region = calloc (n_runs, sizeof *region))) {
		free (runs);
		return -1;
	}
	/* A root comes before every run of its region, so it is numbered first, and its row is
	 * the region's top; the runs come in row order, so the last one's row is its bottom. */
	for (size_t r = 0; r < n_runs; r++) {
		uint32_t root = run_root (runs, (uint32_t) r);
		int32_t label = root == r ? (int32_t) ++regions : g->label[grid_cell (g, runs[root].x0, runs[root].y)];
		size_t c0 = grid_cell (g, runs[r].x0, runs[r].y);
		uint64_t sum = 0;
		for (uint32_t x = 0; x < runs[r].x1 - runs[r].x0; x++) {
			g->label[c0 + x] = label;
			sum += g->core[c0 + x];
		}
		keep_region *k = &region[label - 1];
		if (root == r)
			k->top = runs[r].y;
		k->area += sum;
		k->bottom = runs[r].y;
	}
	*largest = 0;
	for (ptrdiff_t i = 0; i < regions; i++)
		*largest = region[i].area > *largest ? region[i].area : *largest;
	free (runs);
	*regions_out = region;
	return regions;
}

/* Whether a region of the largest area spans at least @min_height of the photo's @height:
 * the photo has a subject to keep. */
static bool
has_subject (const keep_grid *g, const keep_region *region, ptrdiff_t regions, uint64_t largest, float min_height)
{
	for (ptrdiff_t i = 0; i < regions; i++) {
		if (region[i].area != largest)
			continue;
		uint64_t y0 = (uint64_t) region[i].top * g->b, y1 = (uint64_t) (region[i].bottom + 1) * g->b;
		if ((double) ((y1 < g->height ? y1 : g->height) - y0) >= (double) min_height * g->height)
			return true;
	}
	return false;
}

/* A faint cell: some alpha, under JOIN_ALPHA. */
static inline int
faint (uint8_t max)
{
	return (uint8_t) (max - 1) < JOIN_ALPHA - 1;
}

/* Every faint cell reached from a region takes the label of the first region to reach it:
 * one breadth-first pass from all regions at once, in steps of cells. The queue starts with
 * the regions' cells in order, less those with no faint neighbour: they would give nothing
 * (a neighbour's label never goes back to 0), so leaving them out changes no cell's label. */
static void
grid_grow (keep_grid *g)
{
	/* The grid's arrays as locals: with the queue's and labels' stores free to alias the
	 * grid's fields, every cell reloaded them. */
	int32_t *restrict label = g->label;
	uint8_t *restrict max = g->max;
	uint32_t *restrict queue = g->queue;
	const size_t row = g->w + 2;
	const ptrdiff_t next[8] = { -(ptrdiff_t) row - 1, -(ptrdiff_t) row, -(ptrdiff_t) row + 1, -1, 1,
		                    (ptrdiff_t) row - 1, (ptrdiff_t) row, (ptrdiff_t) row + 1 };
	/* The seeds, row by row: a region's cell (JOIN_ALPHA or more: every such cell is one)
	 * with a faint neighbour, found for a whole row at once in byte vectors. Looking at each
	 * region cell's eight neighbours in turn cost a close-up, whose regions cover most of
	 * the grid, more than the growth itself (bsds_198054 at 1 MP, one thread: this function
	 * 0.57 -> 0.36 ms). */
	uint8_t *restrict seed = g->seed;
	size_t head = 0, tail = 0;
	for (size_t y = 1; y <= g->h; y++) {
		const uint8_t *up = max + (y - 1) * row, *mid = max + y * row, *down = max + (y + 1) * row;
		for (size_t x = 1; x + 1 < row; x++)
			seed[x] = (uint8_t) ((faint (up[x - 1]) | faint (up[x]) | faint (up[x + 1]) | faint (mid[x - 1]) |
			                      faint (mid[x + 1]) | faint (down[x - 1]) | faint (down[x]) | faint (down[x + 1])) &
			                     (mid[x] >= JOIN_ALPHA));
		/* Without a branch: written always, kept where a seed (the queue has room for every
		 * cell). */
		for (size_t x = 1; x + 1 < row; x++) {
			queue[tail] = (uint32_t) (y * row + x);
			tail += seed[x];
		}
	}
	/* Each cell gives its label to its unlabelled neighbours with any alpha (the border's
	 * cells, empty, never qualify), queued in turn. The unlabelled ones are the faint cells
	 * not reached yet (every cell of JOIN_ALPHA or more is a region's): a faint cell's
	 * maximum is set to 0 as it takes a label, so one byte tells whether a neighbour is
	 * to take one. Nothing after this reads the maxima. */
	while (head < tail) {
		size_t i = queue[head++];
		int32_t l = label[i];
		for (int k = 0; k < 8; k++) {
			size_t n = (size_t) ((ptrdiff_t) i + next[k]);
			if (faint (max[n])) {
				max[n] = 0;
				label[n] = l;
				queue[tail++] = (uint32_t) n;
			}
		}
	}
}

/* The grid's blocks for a @width x @height mask: @w x @h of @b x @b pixels. */
void
bd_subject_grid_size (uint32_t width, uint32_t height, uint32_t *w, uint32_t *h, uint32_t *b)
{
	uint32_t longest = width > height ? width : height;
	*b = longest > GRID_SIDE ? (longest + GRID_SIDE - 1) / GRID_SIDE : 1;
	*w = (width + *b - 1) / *b;
	*h = (height + *b - 1) / *b;
}

/* The grid's working arrays in @memory, one block, the 32-bit ones first; with @values also
 * the maxima and counts (else the caller's). Labels start at 0 and, with @values, the
 * border's maxima at 0 (every cell of the photo's is written by grid_fill_rows); the counts
 * are read only where the photo's cells are, the queue and seeds after writing. False when
 * memory is short. */
static bool
grid_memory (keep_grid *g, bd_scratch *memory, bool values)
{
	size_t per_cell = values ? 3 * sizeof (uint32_t) + 1 : 2 * sizeof (uint32_t);
	uint8_t *block = bd_scratch_take (memory, g->cells * per_cell + g->w + 2);
	if (!block)
		return false;
	g->label = (int32_t *) block;
	g->queue = (uint32_t *) (g->label + g->cells);
	g->seed = (uint8_t *) (g->queue + g->cells);
	if (values) {
		g->core = (uint32_t *) g->seed;
		g->max = (uint8_t *) (g->core + g->cells);
		g->seed = g->max + g->cells;
		memset (g->max, 0, g->cells);
	}
	memset (g->label, 0, g->cells * sizeof *g->label);
	return true;
}

/* On a filled grid: which regions go, a byte per label in *@drop_out (index 0 unused, none
 * goes), or NULL where none does (one region, no subject, or none small enough). */
static bd_status
grid_decide (keep_grid *g, float min_fraction, float min_height, uint8_t **drop_out, bd_error *error)
{
	keep_region *region = NULL;
	uint64_t largest = 0;
	*drop_out = NULL;
	ptrdiff_t regions = grid_regions (g, &region, &largest);
	if (regions < 0)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_status st = BD_OK;
	bool any = false;
	uint8_t *drop = NULL;
	if (regions <= 1 || !has_subject (g, region, regions, largest, min_height))
		goto out;
	/* Whether a label goes is found once a region. */
	drop = calloc ((size_t) regions + 1, 1);
	if (!drop) {
		st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	for (ptrdiff_t r = 0; r < regions; r++)
		any |= drop[r + 1] = (double) region[r].area < (double) min_fraction * (double) largest;
	if (!any)
		goto out;
	grid_grow (g);
	*drop_out = drop;
	drop = NULL;
out:
	free (drop);
	free (region);
	return st;
}

bd_status
bd_mask_keep_main_subject (bd_thread_pool *pool, bd_scratch *scratch, uint8_t *alpha, uint32_t width,
                           uint32_t height, size_t stride, float min_fraction, float min_height, bd_error *error)
{
	if (!alpha || width == 0 || height == 0 || !bd_stride_ok (width, height, stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_mask_keep_main_subject: no mask, or a bad size");
	if ((uint64_t) width * height > BD_MAX_PIXELS)
		return bd_error_set (error, BD_ERR_TOO_LARGE, "mask too large");
	if (!(min_fraction >= 0 && min_fraction <= 1) || !(min_height >= 0 && min_height <= 1))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "the subject's fraction and height must be within 0..1");

	keep_grid g = { .alpha = alpha, .width = width, .height = height, .stride = stride };
	bd_subject_grid_size (width, height, &g.w, &g.h, &g.b);
	g.cells = (size_t) (g.w + 2) * (g.h + 2);  /* about GRID_SIDE^2 at most: no overflow */
	bd_scratch own = { NULL, 0 };
	uint8_t *drop = NULL;   /* per label (0: none): whether its region goes */
	bd_status st = BD_OK;
	if (!grid_memory (&g, scratch ? scratch : &own, true)) {
		st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	bd_thread_pool_run (pool, (g.h + ROWS_PER_TASK - 1) / ROWS_PER_TASK, grid_fill_rows, &g);
	if (g.failed) {
		st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
		goto out;
	}
	st = grid_decide (&g, min_fraction, min_height, &drop, error);
	if (!drop)
		goto out;

	/* Clear every block of a dropped region, a run of such blocks at a time. A block that
	 * held pixels of a kept region at least JOIN_ALPHA opaque would have joined the two, so
	 * only faint ones can be lost. */
	for (uint32_t cy = 0; cy < g.h; cy++) {
		const int32_t *labels = g.label + grid_cell (&g, 0, cy);
		for (uint32_t cx = 0; cx < g.w;) {
			uint32_t c0 = cx;
			while (cx < g.w && drop[labels[cx]])
				cx++;
			if (cx == c0) {
				cx++;
				continue;
			}
			uint32_t x0 = c0 * g.b, y0 = cy * g.b;
			uint32_t x1 = cx * g.b < width ? cx * g.b : width, y1 = y0 + g.b < height ? y0 + g.b : height;
			for (uint32_t y = y0; y < y1; y++)
				memset (alpha + (size_t) y * stride + x0, 0, x1 - x0);
		}
	}
out:
	free (drop);
	bd_scratch_free (&own);
	return st;
}

bd_status
bd_subject_blocks_to_drop (bd_scratch *scratch, uint8_t *max, const uint32_t *core, uint32_t width, uint32_t height,
                           float min_fraction, float min_height, uint8_t *drop_blocks, bool *any, bd_error *error)
{
	keep_grid g = { .width = width, .height = height, .max = max, .core = (uint32_t *) core };
	bd_subject_grid_size (width, height, &g.w, &g.h, &g.b);
	g.cells = (size_t) (g.w + 2) * (g.h + 2);
	*any = false;
	bd_scratch own = { NULL, 0 };
	uint8_t *drop = NULL;
	bd_status st = grid_memory (&g, scratch ? scratch : &own, false)
	                       ? grid_decide (&g, min_fraction, min_height, &drop, error)
	                       : bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	if (drop) {
		for (uint32_t cy = 0; cy < g.h; cy++) {
			const int32_t *labels = g.label + grid_cell (&g, 0, cy);
			for (uint32_t cx = 0; cx < g.w; cx++)
				drop_blocks[(size_t) cy * g.w + cx] = drop[labels[cx]];
		}
		*any = true;
	}
	free (drop);
	bd_scratch_free (&own);
	return st;
}

bd_status
bd_mask_drop_passers_by (uint8_t *alpha, uint32_t width, uint32_t height, size_t stride, bd_error *error)
{
	/* Without a pool the grid's steps run in turn on this thread (thread-pool.c). */
	return bd_mask_keep_main_subject (NULL, NULL, alpha, width, height, stride, BD_MAIN_SUBJECT_FRACTION,
	                                  BD_MAIN_SUBJECT_MIN_HEIGHT, error);
}
