/* SPDX-License-Identifier: Apache-2.0 */
#include "synthetic-model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library's CRC-32 is internal; this copy keeps the writer independent of it. */
static uint32_t
crc32_bytes_from (uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
	}
	return crc;
}

static uint32_t
crc32_bytes (const uint8_t *p, size_t n)
{
	return ~crc32_bytes_from (0xffffffffu, p, n);
}

float
bd_rng_uniform (bd_rng *rng, float lo, float hi)
{
	/* splitmix64 */
	uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return lo + (hi - lo) * (float) ((z >> 40) * (1.0 / 16777216.0));
}

void
bd_synthetic_spec_init (bd_synthetic_spec *spec, uint32_t depth, uint32_t base,
                        uint32_t input_size, uint64_t seed)
{
	memset (spec, 0, sizeof *spec);
	spec->depth = depth;
	for (uint32_t l = 0; l < depth && l < 8; l++)
		spec->widths[l] = base << l;
	spec->input_size = input_size;
	spec->seed = seed;
}

typedef struct {
	char     name[56];
	uint32_t dims[4];
	uint32_t ndim;
	uint64_t count;
	float    scale;       /* weights uniform in +-scale */
} tensor_spec;

static size_t
list_tensors (const bd_synthetic_spec *s, tensor_spec *t)
{
	size_t n = 0;
	const uint32_t *w = s->widths;
#define ADD(nd, d0, d1, d2, d3, fan_in, ...) do { \
		tensor_spec *e = &t[n++]; memset (e, 0, sizeof *e); \
		snprintf (e->name, sizeof e->name, __VA_ARGS__); \
		e->ndim = nd; e->dims[0] = d0; e->dims[1] = d1; e->dims[2] = d2; e->dims[3] = d3; \
		e->count = (uint64_t) (d0) * ((d1) != 0 ? (d1) : 1) * ((d2) != 0 ? (d2) : 1) * ((d3) != 0 ? (d3) : 1); \
		e->scale = sqrtf (6.0f / (float) (fan_in)); } while (0)
	for (uint32_t l = 0; l < s->depth; l++) {
		uint32_t cin = l == 0 ? 3 : w[l - 1];
		ADD (4, w[l], cin, 3, 3, cin * 9, "enc%u.conv0.weight", l);
		ADD (1, w[l], 0, 0, 0, cin * 9, "enc%u.conv0.bias", l);
		ADD (4, w[l], w[l], 3, 3, w[l] * 9, "enc%u.conv1.weight", l);
		ADD (1, w[l], 0, 0, 0, w[l] * 9, "enc%u.conv1.bias", l);
	}
	for (uint32_t l = 0; l + 1 < s->depth; l++) {
		ADD (4, w[l + 1], w[l], 2, 2, w[l + 1], "up%u.weight", l);
		ADD (1, w[l], 0, 0, 0, w[l + 1] * 4, "up%u.bias", l);
		ADD (4, w[l], 2 * w[l], 3, 3, 2 * w[l] * 9, "dec%u.conv0.weight", l);
		ADD (1, w[l], 0, 0, 0, 2 * w[l] * 9, "dec%u.conv0.bias", l);
		ADD (4, w[l], w[l], 3, 3, w[l] * 9, "dec%u.conv1.weight", l);
		ADD (1, w[l], 0, 0, 0, w[l] * 9, "dec%u.conv1.bias", l);
	}
	ADD (4, 1, w[0], 1, 1, w[0], "head.weight");
	ADD (1, 1, 0, 0, 0, w[0], "head.bias");
#undef ADD
	return n;
}

static void
put32 (uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
put64 (uint8_t *p, uint64_t v)
{
	put32 (p, (uint32_t) v);
	put32 (p + 4, (uint32_t) (v >> 32));
}

static void
putf (uint8_t *p, float f)
{
	uint32_t u;
	memcpy (&u, &f, 4);
	put32 (p, u);
}

static uint16_t
float_to_half (float f)
{
	uint32_t u;
	memcpy (&u, &f, 4);
	uint32_t sign = (u >> 16) & 0x8000;
	int32_t exp = (int32_t) ((u >> 23) & 0xff) - 127 + 15;
	uint32_t mant = u & 0x7fffff;
	if (exp <= 0)
		return (uint16_t) sign;   /* the weights here are never that small on purpose */
	if (exp >= 31)
		return (uint16_t) (sign | 0x7c00);
	uint32_t h = sign | (uint32_t) exp << 10 | mant >> 13;
	if (mant & 0x1000)            /* round to nearest */
		h++;
	return (uint16_t) h;
}

uint32_t
bd_synthetic_crc32 (uint32_t crc, const uint8_t *p, size_t n)
{
	return ~crc32_bytes_from (~crc, p, n);
}

void
bd_synthetic_model_fix_checksum (uint8_t *bytes, size_t size)
{
	uint32_t version = 0;
	memcpy (&version, bytes + BD_SYN_OFFSET_VERSION, 4);
	if (version == 1) {
		/* Version 1: everything after the header. */
		if (size >= BD_SYN_HEADER_SIZE)
			put32 (bytes + BD_SYN_OFFSET_CHECKSUM,
			       crc32_bytes (bytes + BD_SYN_HEADER_SIZE, size - BD_SYN_HEADER_SIZE));
		return;
	}
	/* Version 2: the whole file, the checksum field read as zeros. */
	if (size < BD_SYN_OFFSET_CHECKSUM + 4)
		return;
	static const uint8_t zeros[4] = { 0 };
	uint32_t crc = bd_synthetic_crc32 (0, bytes, BD_SYN_OFFSET_CHECKSUM);
	crc = bd_synthetic_crc32 (crc, zeros, 4);
	crc = bd_synthetic_crc32 (crc, bytes + BD_SYN_OFFSET_CHECKSUM + 4, size - BD_SYN_OFFSET_CHECKSUM - 4);
	put32 (bytes + BD_SYN_OFFSET_CHECKSUM, crc);
}

uint8_t *
bd_synthetic_model_bytes (const bd_synthetic_spec *s, size_t *size)
{
	tensor_spec t[10 * 8 - 4];   /* a depth-8 U-Net's tensors */
	size_t n = list_tensors (s, t);
	size_t el = s->f16 ? 2 : 4;
	size_t table = BD_SYN_HEADER_SIZE, data = (table + n * BD_SYN_ENTRY_SIZE + 63) / 64 * 64;
	size_t data_size = 0;
	for (size_t i = 0; i < n; i++)
		data_size += (t[i].count * el + 63) / 64 * 64;
	size_t total = data + data_size;
	uint8_t *b = calloc (1, total);
	if (!b)
		return NULL;
	memcpy (b, "BDMODEL", 8);
	put32 (b + 8, s->version ? s->version : 2);
	put32 (b + 12, BD_SYN_HEADER_SIZE);
	put64 (b + 16, total);
	put32 (b + 24, s->depth);
	put32 (b + 28, 3);
	put32 (b + 32, 1);
	put32 (b + 36, s->input_size);
	const float mean[3] = { 0.485f, 0.456f, 0.406f }, std[3] = { 0.229f, 0.224f, 0.225f };
	for (int c = 0; c < 3; c++) {
		putf (b + 40 + 4 * c, mean[c]);
		putf (b + 52 + 4 * c, std[c]);
	}
	for (uint32_t l = 0; l < s->depth; l++)
		put32 (b + 64 + 4 * l, s->widths[l]);
	put32 (b + 96, (uint32_t) n);
	put64 (b + 104, table);
	put64 (b + 112, data);
	put64 (b + 120, data_size);
	snprintf ((char *) b + 132, 60, "synthetic depth %u width %u", s->depth, s->widths[0]);

	bd_rng rng = { s->seed };
	size_t offset = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t *e = b + table + i * BD_SYN_ENTRY_SIZE;
		memcpy (e, t[i].name, 56);
		put32 (e + 56, s->f16 ? 1 : 0);
		put32 (e + 60, t[i].ndim);
		for (int d = 0; d < 4; d++)
			put32 (e + 64 + 4 * d, t[i].dims[d]);
		put64 (e + 80, offset);
		put64 (e + 88, t[i].count * el);
		uint8_t *dst = b + data + offset;
		for (uint64_t k = 0; k < t[i].count; k++) {
			float v = bd_rng_uniform (&rng, -t[i].scale, t[i].scale);
			if (s->f16) {
				uint16_t h = float_to_half (v);
				dst[2 * k] = (uint8_t) h;
				dst[2 * k + 1] = (uint8_t) (h >> 8);
			} else {
				putf (dst + 4 * k, v);
			}
		}
		offset += (t[i].count * el + 63) / 64 * 64;
	}
	bd_synthetic_model_fix_checksum (b, total);
	*size = total;
	return b;
}

bool
bd_synthetic_model_write (const bd_synthetic_spec *spec, const char *path)
{
	size_t size;
	uint8_t *b = bd_synthetic_model_bytes (spec, &size);
	if (!b)
		return false;
	FILE *f = fopen (path, "wb");
	bool ok = f && fwrite (b, 1, size, f) == size;
	if (f && fclose (f) != 0)
		ok = false;
	free (b);
	return ok;
}
