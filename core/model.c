/* The model file loader (docs/model-format.md): the file is mapped read-only and every
 * size, offset and shape is checked before anything reads through it. */
#include "backdrop-private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_SIZE 256
#define ENTRY_SIZE 96
#define MAX_TENSORS 1024
#define MAX_WIDTH 4096

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

static float
rdf32 (const uint8_t *p)
{
	uint32_t u = rd32 (p);
	float f;
	memcpy (&f, &u, sizeof f);
	return f;
}

static float
half_to_float (uint16_t h)
{
	uint32_t sign = (uint32_t) (h >> 15) << 31;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t mant = h & 0x3ff;
	float f;
	if (exp == 0) {
		f = ldexpf ((float) mant, -24);   /* zero or subnormal */
		return sign ? -f : f;
	}
	uint32_t u = exp == 31 ? sign | 0x7f800000u | (mant << 13)
	                       : sign | ((exp + 112) << 23) | (mant << 13);
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

/* Fills @e with the tensors a U-Net of @m's architecture must have. */
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

static bd_status
parse_header (bd_model *m, const uint8_t *b, size_t size, const char *path, bd_error *error)
{
	if (size < HEADER_SIZE || memcmp (b, "BDMODEL\0", 8) != 0)
		return bd_error_set (error, BD_ERR_FORMAT, "%s is not a Backdrop model file (wrong magic)", path);
	uint32_t version = rd32 (b + 8);
	if (version != 1)
		return bd_error_set (error, BD_ERR_FORMAT,
		                     "%s is a model of format version %u; this Backdrop reads version 1",
		                     path, version);
	if (rd32 (b + 12) != HEADER_SIZE || rd64 (b + 16) != size)
		return bd_error_set (error, BD_ERR_FORMAT,
		                     "%s is truncated or has trailing bytes (header says %llu bytes, file has %zu)",
		                     path, (unsigned long long) rd64 (b + 16), size);
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
		if (!isfinite (m->mean[c]) || !(m->std[c] > 1e-6f) || !isfinite (m->std[c]))
			return bd_error_set (error, BD_ERR_FORMAT, "%s: bad normalisation constants", path);
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

static bd_status
load_tensors (bd_model *m, const uint8_t *b, size_t size, const char *path, bd_error *error)
{
	uint32_t count = rd32 (b + 96);
	uint64_t table = rd64 (b + 104), data = rd64 (b + 112), data_size = rd64 (b + 120);
	if (count < 1 || count > MAX_TENSORS || rd32 (b + 100) != 0)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: bad tensor count or flags", path);
	if (table != HEADER_SIZE || data % 64 || data < table + (uint64_t) count * ENTRY_SIZE ||
	    data > size || data_size != size - data)
		return bd_error_set (error, BD_ERR_FORMAT, "%s: tensor table or data out of bounds", path);
	uint32_t crc = bd_crc32 (0, b + table, size - table);
	if (crc != rd32 (b + 128))
		return bd_error_set (error, BD_ERR_FORMAT, "%s is damaged (checksum mismatch)", path);

	expected_tensor expected[6 * BD_MAX_DEPTH + 4];
	size_t n_expected = expected_tensors (m, expected);
	if (count != n_expected)
		return bd_error_set (error, BD_ERR_FORMAT, "%s holds %u tensors; a depth-%u U-Net needs %zu",
		                     path, count, m->depth, n_expected);

	/* First pass: check every entry and total the f16 data that needs converting. */
	size_t f16_elements = 0;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + table + (size_t) i * ENTRY_SIZE;
		char name[57];
		memcpy (name, e, 56);
		name[56] = '\0';
		expected_tensor *t = NULL;
		for (size_t k = 0; k < n_expected; k++)
			if (strcmp (expected[k].name, name) == 0)
				t = &expected[k];
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
		if (dtype == DTYPE_F16)
			f16_elements += elements;
		t->slot->ndim = ndim;
		memcpy (t->slot->dims, t->dims, sizeof t->dims);
	}

	if (f16_elements) {
		m->converted = bd_alloc_zeroed (f16_elements, sizeof (float));
		if (!m->converted)
			return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory converting %s", path);
	}
	/* Second pass: point the slots at their data. The file's data may not be 4-byte aligned
	 * for the CPU when mapped, but offsets are multiples of 64 and mmap is page-aligned. */
	float *next = m->converted;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + table + (size_t) i * ENTRY_SIZE;
		expected_tensor *t = NULL;
		for (size_t k = 0; k < n_expected; k++)
			if (strncmp (expected[k].name, (const char *) e, 56) == 0)
				t = &expected[k];
		const uint8_t *src = b + data + rd64 (e + 80);
		size_t elements = rd64 (e + 88) / (rd32 (e + 56) == DTYPE_F32 ? 4 : 2);
		if (rd32 (e + 56) == DTYPE_F32) {
			t->slot->data = (const float *) src;
		} else {
			for (size_t k = 0; k < elements; k++)
				next[k] = half_to_float ((uint16_t) (src[2 * k] | src[2 * k + 1] << 8));
			t->slot->data = next;
			next += elements;
		}
		for (size_t k = 0; k < elements; k++)
			if (!isfinite (t->slot->data[k]))
				return bd_error_set (error, BD_ERR_FORMAT, "%s: tensor \"%.56s\" holds NaN or infinity",
				                     path, (const char *) e);
	}
	return BD_OK;
}

bd_status
bd_model_open (const char *path, bd_model **out_model, bd_error *error)
{
	if (!path || !out_model)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_model_open: no path or result pointer");
	*out_model = NULL;

	int fd = open (path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bd_error_set (error, BD_ERR_IO, "cannot open model %s: %s", path, strerror (errno));
	struct stat st;
	if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
		close (fd);
		return bd_error_set (error, BD_ERR_IO, "model %s is not a regular file", path);
	}
	if (st.st_size < HEADER_SIZE) {
		close (fd);
		return bd_error_set (error, BD_ERR_FORMAT, "%s is too short to be a Backdrop model (%lld bytes)",
		                     path, (long long) st.st_size);
	}
	if ((uint64_t) st.st_size > ((uint64_t) 1 << 32)) {
		close (fd);
		return bd_error_set (error, BD_ERR_TOO_LARGE, "model %s is larger than 4 GiB", path);
	}
	size_t size = (size_t) st.st_size;
	void *map = mmap (NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close (fd);
	if (map == MAP_FAILED)
		return bd_error_set (error, BD_ERR_IO, "cannot map model %s: %s", path, strerror (errno));

	bd_model *m = calloc (1, sizeof *m);
	if (!m) {
		munmap (map, size);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory loading %s", path);
	}
	m->mapping = map;
	m->mapping_size = size;
	bd_status st2 = parse_header (m, map, size, path, error);
	if (st2 == BD_OK)
		st2 = load_tensors (m, map, size, path, error);
	if (st2 != BD_OK) {
		bd_model_free (m);
		return st2;
	}
	*out_model = m;
	return BD_OK;
}

void
bd_model_free (bd_model *model)
{
	if (!model)
		return;
	if (model->mapping)
		munmap (model->mapping, model->mapping_size);
	bd_free_aligned (model->converted);
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
