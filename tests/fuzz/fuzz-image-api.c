/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: the library's image functions with caller-supplied sizes, strides,
 * formats and options, video's temporal filter too. Buffers are exactly as large as the sizes
 * and strides claim, so ASan sees any access outside them; a stride that cannot address its
 * rows must be refused. */
#include "image/image.h"
#include "synthetic-model.h"

#include <stdlib.h>
#include <string.h>

static bd_session *session;
static bd_thread_pool *pool;

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
	bd_synthetic_spec spec;
	bd_synthetic_spec_init (&spec, 2, 2, 32, 1);
	size_t size;
	uint8_t *b = bd_synthetic_model_bytes (&spec, &size);
	bd_model *m = NULL;
	bd_session_options o;
	bd_session_options_init (&o);
	o.device = BD_DEVICE_CPU;
	o.threads = 1;
	if (!b || bd_model_load_bytes (b, size, "fuzz", &m, NULL) != BD_OK || bd_session_new (m, &o, &session, NULL) != BD_OK)
		abort ();
	free (b);
	pool = bd_thread_pool_new (1);
	return 0;
}

typedef struct {
	const uint8_t *p;
	size_t         n;
} reader;

static uint64_t
take (reader *r, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes && r->n; i++, r->p++, r->n--)
		v |= (uint64_t) *r->p << (8 * i);
	return v;
}

/* A stride near a row, or a wild one (the top values of size_t), as a caller might pass. */
static size_t
take_stride (reader *r, size_t row)
{
	uint8_t kind = (uint8_t) take (r, 1);
	if (kind < 200)
		return row + kind % 16;
	if (kind < 230)
		return row - (kind % 4);   /* too small, or wraps for row 0 */
	return SIZE_MAX - take (r, 2);
}

/* A buffer of @height rows of @row bytes, @stride apart, or NULL when that extent is not
 * addressable (the call must then be refused) or too large to fuzz with (*skip). */
static uint8_t *
buffer_for (size_t row, uint32_t height, size_t stride, bool *valid, bool *skip)
{
	*valid = bd_stride_ok (row, height, stride);
	*skip = false;
	size_t extent = *valid ? stride * (height - 1) + row : 64;
	if (extent > (1u << 22)) {
		*skip = true;
		return NULL;
	}
	uint8_t *b = malloc (extent ? extent : 1);
	if (b)
		memset (b, 0x5a, extent);
	return b;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
	reader r = { data, size };
	/* Which calls this input makes: the whole pipeline is slow next to the rest. */
	uint8_t calls = (uint8_t) take (&r, 1);
	/* Small images: the size and stride logic is the same at 32 pixels as at 32 000, and
	 * 10^7 executions must fit in an afternoon on two cores. */
	uint32_t w = 1 + (uint32_t) take (&r, 1) % 32, h = 1 + (uint32_t) take (&r, 1) % 32;
	bd_pixel_format format = take (&r, 1) & 1 ? BD_PIXEL_RGBA8 : BD_PIXEL_RGB8;
	size_t ch = format == BD_PIXEL_RGBA8 ? 4 : 3;
	size_t photo_stride = take_stride (&r, w * ch), alpha_stride = take_stride (&r, w), out_stride = take_stride (&r, w * 4);
	bool pv, av, ov, skip1, skip2, skip3;
	uint8_t *photo_px = buffer_for (w * ch, h, photo_stride, &pv, &skip1);
	uint8_t *alpha = buffer_for (w, h, alpha_stride, &av, &skip2);
	uint8_t *out = buffer_for ((size_t) w * 4, h, out_stride, &ov, &skip3);
	if (skip1 || skip2 || skip3 || !photo_px || !alpha || !out)
		goto done;
	for (size_t i = 0; pv && i < h; i++)
		for (size_t x = 0; x < w * ch; x++)
			photo_px[i * photo_stride + x] = (uint8_t) take (&r, 1);
	bd_image photo = { photo_px, w, h, photo_stride, format };
	bool all_valid = pv && av;

	/* The whole pipeline: a mask of the photo. */
	bd_run_options ro;
	bd_run_options_init (&ro);
	ro.refine_edges = take (&r, 1) & 1;
	ro.mirror_average = take (&r, 1) & 1;
	ro.main_subject_only = take (&r, 1) & 1;
	bd_status st;
	if ((calls & 31) == 0) {
		st = bd_session_run (session, &photo, &ro, alpha, alpha_stride, NULL);
		if (!all_valid && st != BD_ERR_INVALID_ARGUMENT)
			abort ();
	}
	if (!av)
		goto done;
	for (size_t i = 0; i < h; i++)
		for (size_t x = 0; x < w; x++)
			alpha[i * alpha_stride + x] = (uint8_t) take (&r, 1);

	/* Threshold and feather, any float bits (NaN and infinities too). */
	uint32_t tb = (uint32_t) take (&r, 4), fb = (uint32_t) take (&r, 4);
	float threshold, feather;
	memcpy (&threshold, &tb, 4);
	memcpy (&feather, &fb, 4);
	if (take (&r, 1) & 1)
		feather = (float) (fb % 64);
	st = bd_mask_adjust_on_pool (pool, alpha, w, h, alpha_stride, threshold, feather, NULL);
	if (st == BD_OK && (!(threshold <= 1) || !(feather >= 0 && feather <= 500)))
		abort ();
	/* The public main-subject pass (one thread, the session's fraction and height) one time in
	 * eight, else any fraction and height. */
	float fraction = (float) (take (&r, 1) % 101) / 100.0f, height = (float) (take (&r, 1) % 101) / 100.0f;
	st = (calls & 7) == 3 ? bd_mask_drop_passers_by (alpha, w, h, alpha_stride, NULL)
	                      : bd_mask_keep_main_subject (pool, NULL, alpha, w, h, alpha_stride, fraction, height, NULL);

	/* The decisive pass from the mask into the composite's buffer (read as bytes), which must
	 * match the pass in place on a copy. */
	if (ov) {
		uint32_t radius = (uint32_t) take (&r, 1) % 40;
		size_t extent = alpha_stride * (h - 1) + w;
		uint8_t *copy = malloc (extent);
		if (copy) {
			memcpy (copy, alpha, extent);
			if (bd_mask_decide_to (pool, alpha, alpha_stride, out, out_stride, w, h, radius, NULL) != BD_OK ||
			    bd_mask_decide (pool, copy, w, h, alpha_stride, radius, NULL) != BD_OK)
				abort ();
			for (size_t i = 0; i < h; i++)
				if (memcmp (out + i * out_stride, copy + i * alpha_stride, w) != 0)
					abort ();
			free (copy);
		}
	}

	/* Composites over every kind of background; the image one is the photo itself. One in
	 * 256 through the public call, which starts a pool of its own each time (under ASan,
	 * thread start-up costs milliseconds: it would be most of the harness's time), one in
	 * four on the calling thread alone. */
	bd_background bg = { .kind = (bd_background_kind) (take (&r, 1) % 5) };
	bg.color[0] = (uint8_t) take (&r, 1);
	bg.color[3] = (uint8_t) take (&r, 1);
	bg.blur_radius = (float) (take (&r, 2) % 400) / 10.0f;
	bg.image = &photo;
	st = calls == 0x80     ? bd_composite (&photo, alpha, alpha_stride, &bg, out, out_stride, NULL)
	     : (calls & 3) == 1 ? bd_composite_in_thread (&photo, alpha, alpha_stride, &bg, out, out_stride, NULL)
	                        : bd_composite_on_pool (pool, &photo, alpha, alpha_stride, &bg, out, out_stride, NULL);
	if (st == BD_OK && (!pv || !ov || bg.kind > BD_BACKGROUND_IMAGE))
		abort ();

	/* Video's temporal filter: the photo's luma plane, the map of change against a plane of
	 * its own bytes, the blend by the map into the mask, each with a fuzzed stride. */
	if (!pv)
		goto done;
	size_t luma_stride = take_stride (&r, w), change_stride = w + take (&r, 1) % 4 - 1;
	bool lv, skip4;
	uint8_t *luma = buffer_for (w, h, luma_stride, &lv, &skip4);
	size_t extent = lv && !skip4 ? luma_stride * (h - 1) + w : 0;   /* a second plane's, the same */
	uint8_t *other = extent ? malloc (extent) : NULL;
	uint16_t *change = malloc ((change_stride ? change_stride : 1) * h * sizeof *change);
	if (!skip4 && luma && change && (!lv || other)) {
		st = bd_luma_on_pool (pool, &photo, luma, luma_stride, NULL);
		if ((st == BD_OK) != lv)
			abort ();
		if (lv) {
			for (size_t i = 0; i < extent; i++)
				other[i] = (uint8_t) take (&r, 1);
			st = bd_temporal_change_luma_on_pool (pool, luma, other, luma_stride, w, h, change, change_stride, NULL);
			if ((st == BD_OK) != (change_stride >= w))
				abort ();
			if (st == BD_OK) {
				for (size_t i = 0; i < change_stride * h; i++)
					if (i % change_stride < w && change[i] > 25 * 255)
						abort ();
				/* The other frame's mask: the second plane's bytes. */
				st = bd_temporal_blend_change_on_pool (pool, change, change_stride, w, h, other, luma_stride, alpha,
				                                       alpha_stride, (float) (take (&r, 1) % 101) / 100.0f, NULL);
				if (st != BD_OK)
					abort ();
			}
		}
	}
	free (luma);
	free (other);
	free (change);
done:
	free (photo_px);
	free (alpha);
	free (out);
	return 0;
}
