/* SPDX-License-Identifier: Apache-2.0 */
/* The model loader against good files and against every kind of bad one: missing, empty,
 * truncated, bit-flipped, wrong magic or version, absurd or overflowing sizes. A bad file
 * must give BD_ERR_FORMAT (or BD_ERR_IO) and a message, never a crash (run under ASan/UBSan). */
#include "backdrop-private.h"
#include "reference.h"
#include "synthetic-model.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *tmpdir;

static char *
write_bytes (const char *name, const uint8_t *bytes, size_t size)
{
	char *path = g_build_filename (tmpdir, name, NULL);
	g_autoptr (GError) error = NULL;
	g_assert_true (g_file_set_contents (path, (const char *) bytes, (gssize) size, &error));
	return path;
}

static uint8_t *
good_model (size_t *size, bool f16)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 3, 8, 64, 11);
	spec.f16 = f16;
	uint8_t *b = bd_synthetic_model_bytes (&spec, size);
	g_assert_nonnull (b);
	return b;
}

/* Loads @bytes and expects the status @want with a non-empty message. */
static void
expect_status (const uint8_t *bytes, size_t size, bd_status want, const char *what)
{
	g_autofree char *path = write_bytes ("m.bdm", bytes, size);
	bd_model *m = NULL;
	bd_error err = { 0 };
	bd_status st = bd_model_open (path, &m, &err);
	if (st != want)
		g_error ("%s: status %s (%s), expected %s", what, bd_status_name (st), err.message, bd_status_name (want));
	if (want != BD_OK) {
		g_assert_null (m);
		g_assert_cmpuint (strlen (err.message), >, 10);
	}
	bd_model_free (m);
}

static void
put32 (uint8_t *p, uint32_t v)
{
	memcpy (p, &v, 4);   /* the test machines are little-endian, like the format */
}

static void
put64 (uint8_t *p, uint64_t v)
{
	memcpy (p, &v, 8);
}

static void
test_good (void)
{
	size_t size;
	g_autofree uint8_t *b = good_model (&size, false);
	g_autofree char *path = write_bytes ("good.bdm", b, size);
	bd_model *m = NULL;
	bd_error err = { 0 };
	g_assert_cmpint (bd_model_open (path, &m, &err), ==, BD_OK);
	g_assert_cmpuint (bd_model_depth (m), ==, 3);
	g_assert_cmpuint (bd_model_width (m, 2), ==, 32);
	g_assert_cmpuint (bd_model_width (m, 3), ==, 0);
	g_assert_cmpuint (bd_model_input_size (m), ==, 64);
	g_assert_cmpstr (bd_model_name (m), ==, "synthetic depth 3 width 8");
	bd_model_free (m);
}

/* f16 weights are widened as a session packs them: the network must agree with the f32 file
 * closely. In exact precision, so that only the f16 rounding differs (fast precision's
 * integers on some CPUs would add their own). */
static void
test_f16 (void)
{
	size_t s32, s16;
	g_autofree uint8_t *b32 = good_model (&s32, false), *b16 = good_model (&s16, true);
	g_assert_cmpuint (s16, <, s32);
	g_autofree char *p32 = write_bytes ("f32.bdm", b32, s32), *p16 = write_bytes ("f16.bdm", b16, s16);
	bd_model *m32 = NULL, *m16 = NULL;
	bd_session *a = NULL, *b = NULL;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.precision = BD_PRECISION_EXACT;
	g_assert_cmpint (bd_model_open (p32, &m32, NULL), ==, BD_OK);
	g_assert_cmpint (bd_model_open (p16, &m16, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (m32, &o, &a, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_new (m16, &o, &b, NULL), ==, BD_OK);
	uint32_t h = 16, w = 24;
	float in[3 * 16 * 24], out32[16 * 24], out16[16 * 24];
	bd_rng rng = { 5 };
	for (size_t i = 0; i < G_N_ELEMENTS (in); i++)
		in[i] = bd_rng_uniform (&rng, -2, 2);
	g_assert_cmpint (bd_session_forward (a, in, h, w, out32, NULL), ==, BD_OK);
	g_assert_cmpint (bd_session_forward (b, in, h, w, out16, NULL), ==, BD_OK);
	g_test_message ("f16 against f32 weights: relative error %g", ref_relative_error (out16, out32, h * w));
	g_assert_cmpfloat (ref_relative_error (out16, out32, h * w), <, 3e-3);
	bd_session_free (a);
	bd_session_free (b);
	bd_model_free (m32);
	bd_model_free (m16);
}

static void
test_missing_and_special (void)
{
	bd_model *m = NULL;
	bd_error err = { 0 };
	g_autofree char *missing = g_build_filename (tmpdir, "no-such.bdm", NULL);
	g_assert_cmpint (bd_model_open (missing, &m, &err), ==, BD_ERR_IO);
	g_assert_nonnull (strstr (err.message, "no-such.bdm"));
	g_assert_cmpint (bd_model_open (tmpdir, &m, &err), ==, BD_ERR_IO);
	g_assert_cmpint (bd_model_open (NULL, &m, &err), ==, BD_ERR_INVALID_ARGUMENT);
	expect_status ((const uint8_t *) "", 0, BD_ERR_FORMAT, "empty file");
	const char text[] = "this is a text file, not a model at all, and it is long enough to have a header"
	                    "...................................................................................."
	                    "....................................................................................";
	expect_status ((const uint8_t *) text, sizeof text, BD_ERR_FORMAT, "text file");
}

static void
test_truncated (void)
{
	size_t size;
	g_autofree uint8_t *b = good_model (&size, false);
	const size_t cuts[] = { 1, 8, 100, 255, 256, 300, 1000, size / 2, size - 64, size - 1 };
	for (size_t i = 0; i < G_N_ELEMENTS (cuts); i++) {
		g_autofree char *what = g_strdup_printf ("truncated to %zu bytes", cuts[i]);
		expect_status (b, cuts[i], BD_ERR_FORMAT, what);
	}
	/* Trailing bytes are as wrong as missing ones. */
	g_autofree uint8_t *longer = g_malloc0 (size + 10);
	memcpy (longer, b, size);
	expect_status (longer, size + 10, BD_ERR_FORMAT, "trailing bytes");
}

/* Version 2 checksums the whole file, the header included: every single-bit flip anywhere
 * in a small model must be refused (version 1 let a third of the header's flips load). */
static void
test_bit_flips (void)
{
	size_t size;
	g_autofree uint8_t *b = good_model (&size, false);
	g_autofree uint8_t *c = g_malloc (size);
	/* Every bit of the header, then random bits of the rest. */
	for (size_t bit = 0; bit < 8 * BD_SYN_HEADER_SIZE; bit++) {
		memcpy (c, b, size);
		c[bit / 8] ^= (uint8_t) (1u << (bit % 8));
		g_autofree char *what = g_strdup_printf ("bit %zu of byte %zu flipped", bit % 8, bit / 8);
		expect_status (c, size, BD_ERR_FORMAT, what);
	}
	GRand *rand = g_rand_new_with_seed (g_test_rand_int ());
	for (int i = 0; i < 300; i++) {
		size_t pos = (size_t) g_rand_int_range (rand, BD_SYN_HEADER_SIZE, (gint32) size);
		memcpy (c, b, size);
		c[pos] ^= (uint8_t) (1u << g_rand_int_range (rand, 0, 8));
		g_autofree char *what = g_strdup_printf ("bit flip at byte %zu", pos);
		expect_status (c, size, BD_ERR_FORMAT, what);
	}
	g_rand_free (rand);
}

/* Loads @bytes and expects BD_ERR_FORMAT with @want in the message. */
static void
expect_message (const uint8_t *bytes, size_t size, const char *want)
{
	g_autofree char *path = write_bytes ("m.bdm", bytes, size);
	bd_model *m = NULL;
	bd_error err = { 0 };
	g_assert_cmpint (bd_model_open (path, &m, &err), ==, BD_ERR_FORMAT);
	g_assert_null (m);
	if (!strstr (err.message, want))
		g_error ("expected \"%s\" in: %s", want, err.message);
}

/* A model large enough that threads read it in pieces (core/model-read.c) and check its
 * weights in pieces beside the checksum (core/model.c): it loads, damage is still called
 * damage before a bad weight is (the file's last byte too, in the last piece read), and a
 * bad weight in each of the first three pieces of the largest tensor is named. */
static void
test_large (void)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 4, 32, 64, 5);   /* 1.9 million weights */
	size_t size;
	g_autofree uint8_t *b = bd_synthetic_model_bytes (&spec, &size);
	g_assert_nonnull (b);
	g_assert_cmpuint (size, >, 3 * ((size_t) 2 << 20));   /* four pieces read, as model-read.c's READ_PIECE */
	expect_status (b, size, BD_OK, "a model of 1.9 million weights");

	uint64_t data, largest_bytes = 0, largest_offset = 0;
	uint32_t count;
	const uint8_t *largest = NULL;
	memcpy (&data, b + BD_SYN_OFFSET_DATA, 8);
	memcpy (&count, b + BD_SYN_OFFSET_COUNT, 4);
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = b + BD_SYN_HEADER_SIZE + (size_t) i * BD_SYN_ENTRY_SIZE;
		uint64_t nbytes;
		memcpy (&nbytes, e + 88, 8);
		if (nbytes > largest_bytes) {
			largest = e;
			largest_bytes = nbytes;
			memcpy (&largest_offset, e + 80, 8);
		}
	}
	const uint64_t piece = 262144;   /* elements, as core/model.c's PIECE */
	g_assert_cmpuint (largest_bytes / 4, >, 2 * piece);   /* three pieces or more */
	g_autofree char *name = g_strndup ((const char *) largest, 56);
	g_autofree uint8_t *c = g_malloc (size);
	for (uint64_t k = 0; k < 3; k++) {
		memcpy (c, b, size);
		float nan = NAN;
		memcpy (c + data + largest_offset + 4 * (k * piece + 7), &nan, 4);
		expect_message (c, size, "damaged");
		bd_synthetic_model_fix_checksum (c, size);
		expect_message (c, size, name);
	}
	memcpy (c, b, size);
	c[size - 1] ^= 0x10;   /* the last weight's last byte */
	expect_message (c, size, "damaged");
}

/* The checksum against the bit-at-a-time one of the synthetic model's writer: every length
 * to 600 bytes from every alignment to 16 (the folding path takes 256 bytes or more, slicing
 * the rest and the tail), a few megabytes, and a CRC continued over two calls as over one. */
/* Every half the files can hold, widened as the backends widen weights (F16C where the
 * processor has it, else bd_half_to_float), against the definition: (-1)^s x 2^(e-15) x
 * 1.m, subnormals 2^-14 x 0.m, infinities. Bit for bit, in pieces of the pool as a session
 * widens, an odd count so that the vector loop's tail is taken too. NaN stays NaN (the
 * loader refuses it before any widening). */
static void
test_widen_halves (void)
{
	enum { N = 65535 };
	uint16_t *halves = g_new (uint16_t, N);
	float *got = g_new (float, N);
	for (uint32_t i = 0; i < N; i++)
		halves[i] = (uint16_t) i;
	bd_weight w = { .data = halves, .half = true, .dims = { N, 1, 1, 1 }, .ndim = 4 };
	g_assert_cmpuint (bd_weight_count (&w), ==, N);
	bd_thread_pool *pool = bd_thread_pool_new (2);
	bd_weight_widen (pool, &w, got);
	bd_thread_pool_free (pool);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t e = i >> 10 & 31, m = i & 1023;
		float want = e == 31 ? (m ? NAN : INFINITY) : e ? ldexpf ((float) (1024 + m), (int) e - 25)
		                                               : ldexpf ((float) m, -24);
		if (i & 0x8000)
			want = -want;
		if (isnan (want)) {
			g_assert_true (isnan (got[i]) && isnan (bd_half_to_float (halves[i])));
			continue;
		}
		uint32_t a, b, c;
		float direct = bd_half_to_float (halves[i]);
		memcpy (&a, &got[i], 4);
		memcpy (&b, &want, 4);
		memcpy (&c, &direct, 4);
		if (a != b || c != b)
			g_error ("half 0x%04x: widened 0x%08x, bd_half_to_float 0x%08x, want 0x%08x", i, a, c, b);
	}
	g_free (halves);
	g_free (got);
}

static void
test_crc32 (void)
{
	enum { BIG = 3 << 20 };
	g_autofree uint8_t *b = g_malloc (BIG + 16);
	GRand *rand = g_rand_new_with_seed (g_test_rand_int ());
	for (size_t i = 0; i < BIG + 16; i++)
		b[i] = (uint8_t) g_rand_int (rand);
	g_assert_cmphex (bd_crc32 (0, "123456789", 9), ==, 0xCBF43926);   /* the standard check value */
	for (size_t offset = 0; offset < 16; offset++)
		for (size_t n = 0; n <= 600; n++) {
			uint32_t start = g_rand_int (rand);
			g_assert_cmphex (bd_crc32 (start, b + offset, n), ==, bd_synthetic_crc32 (start, b + offset, n));
		}
	uint32_t whole = bd_crc32 (0, b + 3, BIG);
	g_assert_cmphex (whole, ==, bd_synthetic_crc32 (0, b + 3, BIG));
	for (int i = 0; i < 20; i++) {
		size_t cut = (size_t) g_rand_int_range (rand, 0, BIG);
		g_assert_cmphex (bd_crc32 (bd_crc32 (0, b + 3, cut), b + 3 + cut, BIG - cut), ==, whole);
	}
	g_rand_free (rand);
}

/* Version 1 files (the header outside the checksum) still load, and give the same network. */
static void
test_version1 (void)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 3, 8, 64, 11);
	size_t s1, s2;
	g_autofree uint8_t *b2 = bd_synthetic_model_bytes (&spec, &s2);
	spec.version = 1;
	g_autofree uint8_t *b1 = bd_synthetic_model_bytes (&spec, &s1);
	g_assert_cmpuint (s1, ==, s2);
	g_assert_cmpmem (b1 + BD_SYN_HEADER_SIZE, s1 - BD_SYN_HEADER_SIZE, b2 + BD_SYN_HEADER_SIZE, s2 - BD_SYN_HEADER_SIZE);
	expect_status (b1, s1, BD_OK, "version 1");
	expect_status (b2, s2, BD_OK, "version 2");
	/* A version-1 checksum in a version-2 file, and the other way round, are damage. */
	put32 (b1 + BD_SYN_OFFSET_VERSION, 2);
	expect_status (b1, s1, BD_ERR_FORMAT, "version 2 with a version-1 checksum");
	put32 (b2 + BD_SYN_OFFSET_VERSION, 1);
	expect_status (b2, s2, BD_ERR_FORMAT, "version 1 with a version-2 checksum");
}

/* Every depth the format allows, 1..8, loads and runs (the tensor table of depth 6..8 once
 * overflowed a 52-entry stack array: ASan's stack-buffer-overflow, exit 139 in the CLI). */
static void
test_depths (void)
{
	for (uint32_t depth = 1; depth <= 8; depth++) {
		bd_synthetic_spec spec;
		uint32_t multiple = 1u << (depth - 1);
		bd_synthetic_spec_init (&spec, depth, 1, multiple < 32 ? 32 : multiple, depth);
		size_t size;
		g_autofree uint8_t *b = bd_synthetic_model_bytes (&spec, &size);
		g_assert_nonnull (b);
		g_autofree char *path = write_bytes ("depth.bdm", b, size);
		bd_model *m = NULL;
		bd_session *s = NULL;
		bd_error err = { 0 };
		bd_session_options o;
		bd_session_options_init (&o);
		o.device = BD_DEVICE_CPU;
		o.threads = 1;
		if (bd_model_open (path, &m, &err) != BD_OK)
			g_error ("depth %u: %s", depth, err.message);
		g_assert_cmpuint (bd_model_depth (m), ==, depth);
		g_assert_cmpuint (bd_model_width (m, depth - 1), ==, 1u << (depth - 1));
		g_assert_cmpint (bd_session_new (m, &o, &s, &err), ==, BD_OK);
		uint32_t side = multiple;
		g_autofree float *in = g_malloc (3 * sizeof (float) * side * side);
		g_autofree float *out = g_malloc (sizeof (float) * side * side);
		bd_rng rng = { depth };
		for (size_t i = 0; i < 3 * (size_t) side * side; i++)
			in[i] = bd_rng_uniform (&rng, -2, 2);
		g_assert_cmpint (bd_session_forward (s, in, side, side, out, &err), ==, BD_OK);
		for (size_t i = 0; i < (size_t) side * side; i++)
			g_assert_true (out[i] >= 0 && out[i] <= 1);
		bd_session_free (s);
		bd_model_free (m);
	}
}

/* The weights live in the library's own memory: a model file truncated, or rewritten, in
 * place while open cannot take the process down with SIGBUS, as a mapping of it would. */
static void
test_rewritten_while_open (void)
{
	size_t size;
	g_autofree uint8_t *b = good_model (&size, false);
	g_autofree char *path = write_bytes ("in-place.bdm", b, size);
	bd_model *m = NULL;
	bd_session *s = NULL;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	g_assert_cmpint (bd_model_open (path, &m, NULL), ==, BD_OK);
	g_assert_cmpint (truncate (path, 0), ==, 0);
	g_assert_cmpint (bd_session_new (m, &o, &s, NULL), ==, BD_OK);
	float in[3 * 16 * 16] = { 0 }, out[16 * 16];
	g_assert_cmpint (bd_session_forward (s, in, 16, 16, out, NULL), ==, BD_OK);
	bd_session_free (s);
	bd_model_free (m);
}

/* Failed opens leave the result pointer NULL, whatever the reason. */
static void
test_out_pointer (void)
{
	bd_model *m = (bd_model *) &m;
	g_assert_cmpint (bd_model_open (NULL, &m, NULL), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_null (m);
	m = (bd_model *) &m;
	g_autofree char *missing = g_build_filename (tmpdir, "absent.bdm", NULL);
	g_assert_cmpint (bd_model_open (missing, &m, NULL), ==, BD_ERR_IO);
	g_assert_null (m);
	bd_session *s = (bd_session *) &s;
	g_assert_cmpint (bd_session_new (NULL, NULL, &s, NULL), ==, BD_ERR_INVALID_ARGUMENT);
	g_assert_null (s);
}

static void
test_header_fields (void)
{
	size_t size;
	g_autofree uint8_t *b = good_model (&size, false);
	g_autofree uint8_t *c = g_malloc (size);
#define CASE(what, edit, fix) do { memcpy (c, b, size); edit; if (fix) bd_synthetic_model_fix_checksum (c, size); \
		expect_status (c, size, BD_ERR_FORMAT, what); } while (0)
	CASE ("wrong magic", memcpy (c, "GGUF\0\0\0\0", 8), false);
	/* With the checksum made right, so that the field's own check is what refuses it. */
	CASE ("version 3", put32 (c + BD_SYN_OFFSET_VERSION, 3), true);
	CASE ("version 0", put32 (c + BD_SYN_OFFSET_VERSION, 0), true);
	CASE ("depth 0", put32 (c + BD_SYN_OFFSET_DEPTH, 0), true);
	CASE ("depth 9", put32 (c + BD_SYN_OFFSET_DEPTH, 9), true);
	CASE ("width 100000", put32 (c + BD_SYN_OFFSET_WIDTHS + 4, 100000), true);
	CASE ("width 4096 with tensors of width 16", put32 (c + BD_SYN_OFFSET_WIDTHS + 4, 4096), true);
	CASE ("tensor count 2^31", put32 (c + BD_SYN_OFFSET_COUNT, 0x80000000u), true);
	CASE ("tensor count of depth 8 in a depth-3 file", put32 (c + BD_SYN_OFFSET_COUNT, 76), true);
	CASE ("data offset 2^64-64", put64 (c + BD_SYN_OFFSET_DATA, UINT64_MAX - 63), true);
	CASE ("file size 2^64-1", put64 (c + BD_SYN_OFFSET_FILE_SIZE, UINT64_MAX), true);
	CASE ("negative std", { float v = -1; memcpy (c + 52, &v, 4); }, true);
	CASE ("mean FLT_MAX", { float v = FLT_MAX; memcpy (c + 40, &v, 4); }, true);
	CASE ("mean NaN", { float v = NAN; memcpy (c + 44, &v, 4); }, true);
	CASE ("std 1e30", { float v = 1e30f; memcpy (c + 56, &v, 4); }, true);
	CASE ("header size 255", put32 (c + 12, 255), true);
	/* Tensor entries with a valid checksum, so the loader's own checks are what refuse them. */
	uint8_t *e = NULL;
#define ENTRY (c + BD_SYN_HEADER_SIZE + BD_SYN_ENTRY_SIZE)
	CASE ("tensor offset overflowing", put64 (ENTRY + 80, UINT64_MAX - 63), true);
	CASE ("tensor size overflowing", put64 (ENTRY + 88, UINT64_MAX), true);
	CASE ("tensor past the end", put64 (ENTRY + 80, size), true);
	CASE ("tensor dims product overflow", { put32 (ENTRY + 64, 0xffffffffu); put32 (ENTRY + 68, 0xffffffffu); }, true);
	CASE ("unaligned tensor", put64 (ENTRY + 80, 4), true);
	CASE ("unknown dtype", put32 (ENTRY + 56, 7), true);
	CASE ("unknown tensor name", memcpy (ENTRY, "enc9.conv7.weight", 18), true);
	CASE ("duplicated tensor", memcpy (ENTRY, c + BD_SYN_HEADER_SIZE, 56), true);
	CASE ("NaN weight", { uint64_t off; memcpy (&off, c + BD_SYN_OFFSET_DATA, 8);
	                      float nan = NAN; memcpy (c + off, &nan, 4); }, true);
	CASE ("weight 1e30", { uint64_t off; memcpy (&off, c + BD_SYN_OFFSET_DATA, 8);
	                       float big = 1e30f; memcpy (c + off + 8, &big, 4); }, true);
	CASE ("weight -5000", { uint64_t off; memcpy (&off, c + BD_SYN_OFFSET_DATA, 8);
	                        float big = -5000.0f; memcpy (c + off + 12, &big, 4); }, true);
	CASE ("infinite weight", { uint64_t off; memcpy (&off, c + BD_SYN_OFFSET_DATA, 8);
	                           float inf = -INFINITY; memcpy (c + off + 4, &inf, 4); }, true);
	(void) e;
#undef ENTRY
#undef CASE

	/* A wrong header size is reported with both numbers, not the file's size twice. */
	memcpy (c, b, size);
	put32 (c + 12, 255);
	bd_synthetic_model_fix_checksum (c, size);
	g_autofree char *path = write_bytes ("hsize.bdm", c, size);
	bd_model *m = NULL;
	bd_error err = { 0 };
	g_assert_cmpint (bd_model_open (path, &m, &err), ==, BD_ERR_FORMAT);
	g_assert_nonnull (strstr (err.message, "255"));
	g_assert_nonnull (strstr (err.message, "256"));
}

int
main (int argc, char **argv)
{
	g_test_init (&argc, &argv, NULL);
	tmpdir = g_dir_make_tmp ("backdrop-test-model-XXXXXX", NULL);
	g_test_add_func ("/core/model/good", test_good);
	g_test_add_func ("/core/model/f16", test_f16);
	g_test_add_func ("/core/model/missing-and-special", test_missing_and_special);
	g_test_add_func ("/core/model/truncated", test_truncated);
	g_test_add_func ("/core/model/bit-flips", test_bit_flips);
	g_test_add_func ("/core/model/crc32", test_crc32);
	g_test_add_func ("/core/model/widen-halves", test_widen_halves);
	g_test_add_func ("/core/model/header-fields", test_header_fields);
	g_test_add_func ("/core/model/version1", test_version1);
	g_test_add_func ("/core/model/depths", test_depths);
	g_test_add_func ("/core/model/rewritten-while-open", test_rewritten_while_open);
	g_test_add_func ("/core/model/out-pointer", test_out_pointer);
	g_test_add_func ("/core/model/large", test_large);
	int ret = g_test_run ();
	g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", tmpdir);
	if (system (cmd) != 0)
		g_warning ("could not remove %s", tmpdir);
	g_free (tmpdir);
	return ret;
}
