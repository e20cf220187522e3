/* SPDX-License-Identifier: Apache-2.0 */
/* The model file loader (docs/model-format.md): the file is read into memory of our own once
 * (core/model-read.c), every size, offset and shape is checked before anything reads through
 * it, and every weight is checked (finite, within bounds). The weights stay there as the
 * file holds them, f16 or f32; each backend widens a tensor at a time as it packs it
 * (core/weights.c) or reads the values as they are, and no process keeps an f32 copy of the
 * whole model (31 MB for the shipped one). Nothing stays tied to the file: a model rewritten
 * in place while it is open cannot fault the process, as a mapping would (SIGBUS). */
#include "backdrop-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_SIZE 256
#define ENTRY_SIZE 96
#define MAX_TENSORS 1024
#define MAX_WIDTH 4096
/* Version 2 checksums the header too; version 1 files are still read. */
#define FORMAT_VERSION 2
/* Trained, batch-norm-folded weights stay far below this (the shipped model's largest is 4.2);
 * a larger one is a broken export, and would overflow the network's sums to infinity. */
#define MAX_ABS_WEIGHT 4096.0f
#define MAX_ABS_WEIGHT_HALF 0x6c00   /* the same as a half's magnitude bits (2^12, exact) */
/* The normalisation maps [0, 1] colours; constants outside these bounds are damage. */
#define MAX_ABS_MEAN 16.0f
#define MIN_STD 1e-3f
#define MAX_STD 16.0f
/* Tensors of a depth-D U-Net: 2 convolutions a level (4D tensors), an up-convolution and 2
 * decoder convolutions a level but the last (6(D-1)), and the head (2). */
#define TENSORS_FOR_DEPTH(d) (10u * (d) - 4u)
#define MAX_EXPECTED TENSORS_FOR_DEPTH (BD_MAX_DEPTH)

enum { DTYPE_F32 = 0, DTYPE_F16 = 1 };

static uint32_t
rd32 (const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint64_t
rd64 (const uint8_t *p)
{
	return rd32 (p) | (uint64_t) rd32 (p + 4) << 32;
}

/* Little-endian in the file, whatever the host's order. */
static float
rdf32 (const uint8_t *p)
{
	uint32_t u = rd32 (p);
	float f;
	memcpy (&f, &u, sizeof f);
	return f;
}

/* Where a tensor name lands in the model, and the shape it must have. */
typedef struct {
	bd_weight *slot;
	uint32_t   dims[4];
	uint32_t   ndim;
	bool       seen;
	char       name[56];
} expected_tensor;

static void
expect (expected_tensor *e, size_t *n, bd_weight *slot, const char *name,
        uint32_t ndim, uint32_t d0, uint32_t d1, uint32_t d2, uint32_t d3)
{
	if (*n >= MAX_EXPECTED)
		return;   /* cannot happen for depth <= BD_MAX_DEPTH; never write past the table */
	expected_tensor *t = &e[(*n)++];
	memset (t, 0, sizeof *t);
	t->slot = slot;
	snprintf (t->name, sizeof t->name, "%s", name);
	t->ndim = ndim;
	t->dims[0] = d0; t->dims[1] = d1; t->dims[2] = d2; t->dims[3] = d3;
}

static void
expect_conv (expected_tensor *e, size_t *n, bd_conv_weights *c, const char *prefix,
             uint32_t d0, uint32_t d1, uint32_t k, uint32_t bias_len)
{
	char name[56];
	snprintf (name, sizeof name, "%s.weight", prefix);
	expect (e, n, &c->weight, name, 4, d0, d1, k, k);
	snprintf (name, sizeof name, "%s.bias", prefix);
	expect (e, n, &c->bias, name, 1, bias_len, 0, 0, 0);
}

/* Fills @e (MAX_EXPECTED entries) with the tensors a U-Net of @m's architecture must have:
 * TENSORS_FOR_DEPTH (m->depth) of them. */
static size_t
expected_tensors (bd_model *m, expected_tensor *e)
{
	size_t n = 0;
	char p[48];
	const uint32_t *w = m->widths;
	for (uint32_t l = 0; l < m->depth; l++) {
		uint32_t cin = l == 0 ? 3 : w[l - 1];
		snprintf (p, sizeof p, "enc%u.conv0", l);
		expect_conv (e, &n, &m->enc[l][0], p, w[l], cin, 3, w[l]);
		snprintf (p, sizeof p, "enc%u.conv1", l);
		expect_conv (e, &n, &m->enc[l][1], p, w[l], w[l], 3, w[l]);
	}
	for (uint32_t l = 0; l + 1 < m->depth; l++) {
		snprintf (p, sizeof p, "up%u", l);
		expect_conv (e, &n, &m->up[l], p, w[l + 1], w[l], 2, w[l]);
		snprintf (p, sizeof p, "dec%u.conv0", l);
		expect_conv (e, &n, &m->dec[l][0], p, w[l], 2 * w[l], 3, w[l]);
		snprintf (p, sizeof p, "dec%u.conv1", l);
		expect_conv (e, &n, &m->dec[l][1], p, w[l], w[l], 3, w[l]);
	}
	expect_conv (e, &n, &m->head, "head", 1, w[0], 1, 1);
	return n;
}

/* Version 2: CRC-32 of the whole file with the checksum field read as zeros; version 1: of
 * everything after the header. */
static uint32_t
file_checksum (const uint8_t *b, size_t size, uint32_t version)
{
	if (version == 1)
		return bd_crc32 (0, b + HEADER_SIZE, size - HEADER_SIZE);
	static const uint8_t zeros[4] = { 0 };
	uint32_t crc = bd_crc32 (0, b, 128);
	crc = bd_crc32 (crc, zeros, sizeof zeros);
	return bd_crc32 (crc, b + 132, size - 132);
}

/* What must hold before the checksum can be computed: the magic, a version we read, the
 * header's size and the file's. */
static bd_status
check_frame (const uint8_t *b, size_t size, const char *path, bd_error *error)
{
	if (size < HEADER_SIZE || memcmp (b, "BDMODEL\0", 8) != 0)
		return bd_error_set (error, BD_ERR_FORMAT, "%s is not a Backdrop model file (wrong magic)", path);
	uint32_t version = rd32 (b + 8);
	if (version < 1 || version > FORMAT_VERSION)
		return bd_error_set (error, BD_ERR_FORMAT,
		                     "%s is a model of format version %u; this Backdrop reads versions 1 and %d",
		                     path, version, FORMAT_VERSION);
	if (rd32 (b + 12) != HEADER_SIZE)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: header size %u, the format's is %d",
		                     path, rd32 (b + 12), HEADER_SIZE);
	if (rd64 (b + 16) != size)
		return bd_error_set (error, BD_ERR_FORMAT,
		                     "%s is truncated or has trailing bytes (header says %llu bytes, file has %zu)",
		                     path, (unsigned long long) rd64 (b + 16), size);
	return BD_OK;
}

/* The rest of the header, checked by range whether or not the checksum holds (it is
 * computed beside the weights' conversion, bd_model_load_bytes). */
static bd_status
parse_header (bd_model *m, const uint8_t *b, const char *path, bd_error *error)
{
	m->depth = rd32 (b + 24);
	if (m->depth < 1 || m->depth > BD_MAX_DEPTH)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: depth %u is outside 1..%d", path, m->depth, BD_MAX_DEPTH);
	if (rd32 (b + 28) != 3 || rd32 (b + 32) != 1)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: only 3 input and 1 output channel are supported", path);
	m->input_size = rd32 (b + 36);
	uint32_t multiple = 1u << (m->depth - 1);
	if (m->input_size < 32 || m->input_size > 4096 || m->input_size % multiple)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: input size %u is not a multiple of %u in 32..4096",
		                     path, m->input_size, multiple);
	for (int c = 0; c < 3; c++) {
		m->mean[c] = rdf32 (b + 40 + 4 * c);
		m->std[c] = rdf32 (b + 52 + 4 * c);
		if (!(fabsf (m->mean[c]) <= MAX_ABS_MEAN) || !(m->std[c] >= MIN_STD && m->std[c] <= MAX_STD))
			return bd_error_set (error, BD_ERR_FORMAT,
			                     "%s: bad normalisation constants (mean within ±%g, std within %g..%g)",
			                     path, MAX_ABS_MEAN, MIN_STD, MAX_STD);
	}
	for (uint32_t l = 0; l < 8; l++) {
		uint32_t w = rd32 (b + 64 + 4 * l);
		if (l < m->depth ? (w < 1 || w > MAX_WIDTH) : w != 0)
			return bd_error_set (error, BD_ERR_FORMAT, "%s: width %u of level %u is out of range", path, w, l);
		if (l < BD_MAX_DEPTH)
			m->widths[l] = w;
	}
	for (size_t i = 192; i < HEADER_SIZE; i++)
		if (b[i] != 0)
			return bd_error_set (error, BD_ERR_FORMAT, "%s: reserved header bytes are not zero", path);
	memcpy (m->name, b + 132, 60);
	m->name[60] = '\0';
	return BD_OK;
}

static expected_tensor *
find_expected (expected_tensor *expected, size_t n, const uint8_t *entry)
{
	for (size_t k = 0; k < n; k++)
		if (strncmp (expected[k].name, (const char *) entry, 56) == 0)
			return &expected[k];
	return NULL;
}

/* A run of one tensor's elements to check. */
typedef struct {
	uint8_t       *src;
	size_t         elements;
	bool           f32;
	uint32_t       tensor;   /* its entry in the table, for the message */
} check_piece;

#define PIECE ((size_t) 1 << 18)   /* elements a task checks */

/* True when one of @elements f32 or f16 values (in the host's order) is NaN, infinite or
 * over MAX_ABS_WEIGHT. */
static bool
bad_values (const uint8_t *src, size_t elements, bool f32)
{
	/* Compared as integers: a float's magnitude bits order as its magnitude does, and NaN
	 * and infinity lie above every finite value. One loop per type, without branches or
	 * exits, so that each becomes vector code. */
	const float limit = MAX_ABS_WEIGHT;
	int32_t limit_bits, bad = 0;
	memcpy (&limit_bits, &limit, sizeof limit_bits);
	if (f32) {
		const int32_t *v = (const int32_t *) (const void *) src;
		for (size_t k = 0; k < elements; k++)
			bad |= (v[k] & 0x7fffffff) > limit_bits;
	} else {
		/* A half's magnitude bits order the same way: no conversion needed. */
		const uint16_t *h = (const uint16_t *) (const void *) src;
		for (size_t k = 0; k < elements; k++)
			bad |= (h[k] & 0x7fff) > MAX_ABS_WEIGHT_HALF;
	}
	return bad != 0;
}

typedef struct {
	const uint8_t     *file;
	size_t             size;
	uint32_t           version;
	uint32_t           checksum;   /* task 0's */
	const check_piece *pieces;     /* task k's is pieces[k - 1] */
	bool              *bad;
	bool               with_checksum;   /* task 0 computes it */
} load_job;

static void
load_task (void *data, size_t index)
{
	load_job *j = data;
	if (index == 0) {
		if (j->with_checksum)
			j->checksum = file_checksum (j->file, j->size, j->version);
		return;
	}
	const check_piece *p = &j->pieces[index - 1];
	j->bad[index - 1] = bad_values (p->src, p->elements, p->f32);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
/* The file is little-endian: its values into the host's order, in place. */
static void
to_host_order (uint8_t *p, size_t elements, bool f32)
{
	size_t size = f32 ? 4 : 2;
	for (size_t k = 0; k < elements; k++, p += size)
		for (size_t a = 0, b = size - 1; a < b; a++, b--) {
			uint8_t t = p[a];
			p[a] = p[b];
			p[b] = t;
		}
}
#endif

/* The tensors' places in @b, the file in memory of our own, and their values checked; the
 * checksum of the file (@checksum, with @checksum_done set) is computed meanwhile, once the
 * table has been checked. */
static bd_status
load_tensors (bd_model *m, uint8_t *b, size_t size, uint32_t version, const char *path, bd_thread_pool *pool,
              uint32_t *checksum, bool *checksum_done, bd_error *error)
{
	uint32_t count = rd32 (b + 96);
	uint64_t table = rd64 (b + 104), data = rd64 (b + 112), data_size = rd64 (b + 120);
	if (count < 1 || count > MAX_TENSORS || rd32 (b + 100) != 0)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: bad tensor count or flags", path);
	if (table != HEADER_SIZE || data % 64 || data < table + (uint64_t) count * ENTRY_SIZE ||
	    data > size || data_size != size - data)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: tensor table or data out of bounds", path);
	/* The count is checked against the architecture before the table is filled. */
	if (count != TENSORS_FOR_DEPTH (m->depth))
		return bd_error_set (error, BD_ERR_FORMAT, "%s holds %u tensors; a depth-%u U-Net needs %u",
		                     path, count, m->depth, TENSORS_FOR_DEPTH (m->depth));
	expected_tensor expected[MAX_EXPECTED];
	size_t n_expected = expected_tensors (m, expected);
	if (n_expected != count)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: the tensor table of a depth-%u U-Net is wrong",
		                     path, m->depth);

	/* First pass: check every entry and total the elements. */
	size_t total = 0;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + table + (size_t) i * ENTRY_SIZE;
		char name[57];
		memcpy (name, e, 56);
		name[56] = '\0';
		expected_tensor *t = find_expected (expected, n_expected, e);
		if (!t || t->seen)
			return bd_error_set (error, BD_ERR_FORMAT, "%s: unexpected or repeated tensor \"%s\"", path, name);
		t->seen = true;
		uint32_t dtype = rd32 (e + 56), ndim = rd32 (e + 60);
		if (dtype > DTYPE_F16 || ndim != t->ndim)
			return bd_error_set (error, BD_ERR_FORMAT, "%s: tensor \"%s\" has a bad type or rank", path, name);
		uint64_t elements = 1;
		for (uint32_t d = 0; d < 4; d++) {
			uint32_t dim = rd32 (e + 64 + 4 * d);
			if (dim != t->dims[d])
				return bd_error_set (error, BD_ERR_FORMAT, "%s: tensor \"%s\" has the wrong shape", path, name);
			if (d < ndim)
				elements *= dim;
		}
		uint64_t offset = rd64 (e + 80), nbytes = rd64 (e + 88);
		uint64_t elsize = dtype == DTYPE_F32 ? 4 : 2;
		if (nbytes != elements * elsize || offset % 64 || offset > data_size || nbytes > data_size - offset)
			return bd_error_set (error, BD_ERR_FORMAT, "%s: tensor \"%s\" lies outside the data", path, name);
		total += elements;   /* each under the 4 GiB file: no overflow */
		t->slot->ndim = ndim;
		memcpy (t->slot->dims, t->dims, sizeof t->dims);
	}

	size_t max_pieces = count + total / PIECE + 1;
	check_piece *pieces = malloc (max_pieces * sizeof *pieces);
	bool *bad = calloc (max_pieces, sizeof *bad);
	if (!pieces || !bad) {
		free (pieces);
		free (bad);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory loading %s (%zu weights)", path, total);
	}
	/* Second pass: each tensor's place in the file, in pieces the threads share. */
	size_t n = 0;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + table + (size_t) i * ENTRY_SIZE;
		expected_tensor *t = find_expected (expected, n_expected, e);
		uint8_t *src = b + data + rd64 (e + 80);
		bool f32 = rd32 (e + 56) == DTYPE_F32;
		size_t elements = rd64 (e + 88) / (f32 ? 4 : 2);
		for (size_t k = 0; k < elements; k += PIECE)
			pieces[n++] = (check_piece) { src + k * (f32 ? 4 : 2), elements - k < PIECE ? elements - k : PIECE,
			                              f32, i };
		t->slot->data = src;   /* 64-byte aligned: the buffer and every offset are */
		t->slot->half = !f32;
	}
	/* The checksum (task 0) and the checks side by side: on two cores a fresh process opens
	 * the model in half the time. A big-endian host turns the values round first, so that
	 * what is checked is what the backends will read, and the checksum before that. */
	load_job job = { b, size, version, 0, pieces, bad, true };
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	job.checksum = file_checksum (b, size, version);
	job.with_checksum = false;
	for (size_t k = 0; k < n; k++)
		to_host_order (pieces[k].src, pieces[k].elements, pieces[k].f32);
#endif
	bd_thread_pool *own = !pool && total >= 2 * PIECE ? bd_thread_pool_new (0) : NULL;   /* none: all here */
	bd_thread_pool_run (pool ? pool : own, n + 1, load_task, &job);
	bd_thread_pool_free (own);
	*checksum = job.checksum;
	*checksum_done = true;
	bd_status st = BD_OK;
	for (size_t k = 0; k < n && st == BD_OK; k++)
		if (bad[k])
			st = bd_error_set (error, BD_ERR_FORMAT, "%s: tensor \"%.56s\" holds NaN, infinity or a weight over %g",
			                   path, (const char *) (b + table + (size_t) pieces[k].tensor * ENTRY_SIZE),
			                   MAX_ABS_WEIGHT);
	free (pieces);
	free (bad);
	return st;
}

/* The model in @bytes, a file of @size whose frame check_frame passed, in memory of our own
 * (bd_alloc_aligned): the model keeps it, or it is freed. The checks run on @pool (NULL:
 * one of its own where the model is large enough). */
static bd_status
load_owned (uint8_t *bytes, size_t size, const char *name, bd_thread_pool *pool, bd_model **out_model,
            bd_error *error)
{
	bd_model *m = calloc (1, sizeof *m);
	if (!m) {
		bd_free_aligned (bytes);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory loading %s", name);
	}
	m->file = bytes;
	uint32_t version = rd32 (bytes + 8), checksum = 0;
	bool checksum_done = false;
	bd_status st = parse_header (m, bytes, name, error);
	if (st == BD_OK)
		st = load_tensors (m, bytes, size, version, name, pool, &checksum, &checksum_done, error);
	/* A damaged file is called damaged, whatever else failed: not "bad depth". Version 1
	 * leaves the header out of the checksum, and relies on the range checks alone. */
	if (!checksum_done)
		checksum = file_checksum (bytes, size, version);
	if (checksum != rd32 (bytes + 128))
		st = bd_error_set (error, BD_ERR_FORMAT, "%s is damaged (checksum mismatch)", name);
	if (st != BD_OK) {
		bd_model_free (m);
		return st;
	}
	*out_model = m;
	return BD_OK;
}

bd_status
bd_model_load_bytes (const uint8_t *bytes, size_t size, const char *name, bd_model **out_model, bd_error *error)
{
	if (out_model)
		*out_model = NULL;
	if (!bytes || !name || !out_model)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_model_load_bytes: missing argument");
	if (size < HEADER_SIZE)
		return bd_error_set (error, BD_ERR_FORMAT, "%s is too short to be a Backdrop model (%zu bytes)",
		                     name, size);
	bd_status st = check_frame (bytes, size, name, error);
	if (st != BD_OK)
		return st;
	/* Our own copy, which the model keeps: the caller's bytes may go. */
	uint8_t *own = bd_alloc_aligned (size, 1);
	if (!own)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory loading %s (%zu bytes)", name, size);
	memcpy (own, bytes, size);
	return load_owned (own, size, name, NULL, out_model, error);
}

bd_status
bd_model_open (const char *path, bd_model **out_model, bd_error *error)
{
	if (out_model)
		*out_model = NULL;
	if (!path || !out_model)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_model_open: no path or result pointer");

	uint8_t *bytes = NULL;
	size_t size = 0;
	bd_thread_pool *pool = NULL;   /* the read's threads check the values after it */
	bd_status st = bd_model_read_file (path, &bytes, &size, &pool, error);
	if (st == BD_OK && size < HEADER_SIZE)
		st = bd_error_set (error, BD_ERR_FORMAT, "%s is too short to be a Backdrop model (%zu bytes)", path, size);
	if (st == BD_OK)
		st = check_frame (bytes, size, path, error);
	if (st != BD_OK)
		bd_free_aligned (bytes);
	else
		st = load_owned (bytes, size, path, pool, out_model, error);   /* the model keeps the bytes */
	bd_thread_pool_free (pool);
	return st;
}

void
bd_model_free (bd_model *model)
{
	if (!model)
		return;
	bd_free_aligned (model->file);
	free (model);
}

uint32_t bd_model_depth (const bd_model *m)      { return m ? m->depth : 0; }
uint32_t bd_model_input_size (const bd_model *m) { return m ? m->input_size : 0; }
const char *bd_model_name (const bd_model *m)    { return m ? m->name : ""; }

uint32_t
bd_model_width (const bd_model *m, uint32_t level)
{
	return m && level < m->depth ? m->widths[level] : 0;
}
