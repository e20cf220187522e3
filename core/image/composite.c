/* SPDX-License-Identifier: Apache-2.0 */
/* The cut-out over a new background: transparent, a colour, the photo blurred, or another
 * image scaled to cover. The background is drawn into the output first, then the person is
 * blended over it in place, so no full-size temporary is needed.
 *
 * Where the mask is partly transparent (hair, motion blur, soft edges) a photo pixel mixes
 * the person's colour with the old background's. Blending it as it is would carry a fringe of
 * the old background onto the new one, so the person's own colour is estimated first, as in
 * Forte and Pitie's blur fusion: with local means of person and background colours Fm and Bm,
 * F = Fm + a (I - a Fm - (1 - a) Bm), which keeps a F + (1 - a) Bm close to the photo. */
#include "image.h"

#include <math.h>

/* The photo blurred behind the person: the background's local mean colour (colour-means.c),
 * so the person's colours do not bleed into a halo around them. Computed at a reduced size
 * and enlarged: a blurred background is smooth anyway. */
static bd_status
draw_blur (bd_thread_pool *pool, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
           float radius, uint8_t *out, size_t out_stride, bd_error *error)
{
	uint32_t f = radius > 8 ? (uint32_t) (radius / 8) : 1;
	uint32_t r = (uint32_t) lroundf (radius / (float) f / 2.0f);
	bd_colour_means means;
	uint32_t radii[1] = { r > 0 ? r : 1 };
	bd_status st = bd_colour_means_make (pool, photo, alpha, alpha_stride, f, radii, 1, &means, error);
	if (st != BD_OK)
		return st;
	size_t n = (size_t) means.w * means.h;
	uint8_t *rgb = bd_alloc_zeroed (n, 3);
	if (!rgb) {
		bd_colour_means_clear (&means);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory blurring the background");
	}
	for (size_t i = 0; i < 3 * n; i++)
		rgb[i] = (uint8_t) (means.bg[i] + 0.5f);
	bd_image view = { rgb, means.w, means.h, (size_t) means.w * 3, BD_PIXEL_RGB8 };
	st = bd_resample_rgb (pool, &view, photo->width, photo->height, NULL, out, out_stride, 4, error);
	bd_free_aligned (rgb);
	bd_colour_means_clear (&means);
	return st;
}

/* The middle of @bg with the photo's aspect ratio, enlarged or shrunk to fill the output. */
static bd_status
draw_cover (bd_thread_pool *pool, const bd_image *photo, const bd_image *bg, uint8_t *out,
            size_t out_stride, bd_error *error)
{
	double scale = fmax ((double) photo->width / bg->width, (double) photo->height / bg->height);
	uint32_t cw = (uint32_t) fmin (bg->width, ceil (photo->width / scale));
	uint32_t ch = (uint32_t) fmin (bg->height, ceil (photo->height / scale));
	cw = cw ? cw : 1;
	ch = ch ? ch : 1;
	bd_image crop = *bg;
	crop.pixels += (size_t) ((bg->height - ch) / 2) * bg->stride +
	               (size_t) ((bg->width - cw) / 2) * bd_image_channels (bg);
	crop.width = cw;
	crop.height = ch;
	return bd_resample_rgb (pool, &crop, photo->width, photo->height, NULL, out, out_stride, 4, error);
}

typedef struct {
	const bd_image        *photo;
	const uint8_t         *alpha;
	size_t                 alpha_stride;
	const bd_background   *bg;
	const bd_colour_means *means;
	uint8_t               *out;
	size_t                 out_stride;
} blend_ctx;

/* Bilinear position of output coordinate @x in a field @factor times smaller, @n long. */
static inline void
field_pos (uint32_t x, uint32_t factor, uint32_t n, uint32_t *i0, uint32_t *i1, float *t)
{
	float u = ((float) x + 0.5f) / (float) factor - 0.5f;
	u = u < 0 ? 0 : u;
	*i0 = (uint32_t) u < n ? (uint32_t) u : n - 1;
	*i1 = *i0 + 1 < n ? *i0 + 1 : *i0;
	*t = u - (float) *i0;
	*t = *t > 1 ? 1 : *t;
}

static void
blend_task (void *data, size_t y)
{
	const blend_ctx *c = data;
	const bd_colour_means *m = c->means;
	uint32_t ch = bd_image_channels (c->photo);
	const uint8_t *src = c->photo->pixels + y * c->photo->stride;
	const uint8_t *a = c->alpha + y * c->alpha_stride;
	uint8_t *o = c->out + y * c->out_stride;
	uint32_t y0, y1;
	float ty;
	field_pos ((uint32_t) y, m->factor, m->h, &y0, &y1, &ty);
	for (uint32_t x = 0; x < c->photo->width; x++, src += ch, o += 4) {
		/* The person's colour: the photo's where the mask is opaque or clear, else estimated. */
		uint8_t fg[3] = { src[0], src[1], src[2] };
		if (a[x] > 0 && a[x] < 255) {
			uint32_t x0, x1;
			float tx, al = a[x] / 255.0f;
			field_pos (x, m->factor, m->w, &x0, &x1, &tx);
			size_t i00 = 3 * ((size_t) y0 * m->w + x0), i01 = 3 * ((size_t) y0 * m->w + x1);
			size_t i10 = 3 * ((size_t) y1 * m->w + x0), i11 = 3 * ((size_t) y1 * m->w + x1);
			float w00 = (1 - tx) * (1 - ty), w01 = tx * (1 - ty), w10 = (1 - tx) * ty, w11 = tx * ty;
			for (int k = 0; k < 3; k++) {
				float fm = w00 * m->fg[i00 + k] + w01 * m->fg[i01 + k] + w10 * m->fg[i10 + k] + w11 * m->fg[i11 + k];
				float bm = w00 * m->bg[i00 + k] + w01 * m->bg[i01 + k] + w10 * m->bg[i10 + k] + w11 * m->bg[i11 + k];
				float f = fm + al * ((float) src[k] - al * fm - (1 - al) * bm);
				fg[k] = bd_u8_from_float (f + 0.5f);
			}
		}
		/* A photo that already has transparency keeps it: the masks multiply. */
		uint32_t fa = ch == 4 ? (a[x] * src[3] + 127) / 255 : a[x];
		if (c->bg->kind == BD_BACKGROUND_TRANSPARENT) {
			o[0] = fg[0]; o[1] = fg[1]; o[2] = fg[2]; o[3] = (uint8_t) fa;
			continue;
		}
		const uint8_t *b = c->bg->kind == BD_BACKGROUND_COLOR ? c->bg->color : o;
		uint32_t ba = c->bg->kind == BD_BACKGROUND_COLOR ? c->bg->color[3] : 255;
		/* Porter-Duff "over" with straight (unpremultiplied) colours. */
		uint32_t oa = fa * 255 + ba * (255 - fa);           /* scaled by 255 */
		for (int k = 0; k < 3; k++) {
			uint32_t num = fg[k] * fa * 255 + b[k] * ba * (255 - fa);
			o[k] = (uint8_t) (oa ? (num + oa / 2) / oa : 0);
		}
		o[3] = (uint8_t) ((oa + 127) / 255);
	}
}

bd_status
bd_composite_check (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride, const bd_background *background,
                    const uint8_t *out, size_t out_stride, bd_error *error)
{
	bd_status st = bd_image_check (photo, "photo", error);
	if (st != BD_OK)
		return st;
	if (!alpha || !out || !background || !bd_stride_ok (photo->width, photo->height, alpha_stride) ||
	    !bd_stride_ok ((size_t) photo->width * 4, photo->height, out_stride))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT,
		                     "bd_composite: missing mask or output, or a stride smaller than a row or too large");
	if (background->kind == BD_BACKGROUND_IMAGE &&
	    (st = bd_image_check (background->image, "background image", error)) != BD_OK)
		return st;
	if (background->kind > BD_BACKGROUND_IMAGE)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "unknown background kind %d", background->kind);
	if (background->kind == BD_BACKGROUND_BLUR && !(background->blur_radius >= 0 && background->blur_radius <= 1000))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "blur radius must be within 0..1000 pixels");
	return BD_OK;
}

void
bd_composite_grid (uint32_t width, uint32_t height, uint32_t *factor, uint32_t radii[2])
{
	/* A window of about 1/8 of the long side, then 1/100, on a grid at most 768 pixels long:
	 * the means vary slowly, so a 50 MP photo costs little more. */
	uint32_t longest = width > height ? width : height;
	*factor = (longest + 767) / 768;
	uint32_t reduced = (longest + *factor - 1) / *factor;
	radii[0] = reduced / 16 > 2 ? reduced / 16 : 2;
	radii[1] = reduced / 200 > 1 ? reduced / 200 : 1;
}

bd_status
bd_composite_on_pool (bd_thread_pool *pool, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                      const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error)
{
	bd_status st = bd_composite_check (photo, alpha, alpha_stride, background, out, out_stride, error);
	if (st != BD_OK)
		return st;
	if (background->kind == BD_BACKGROUND_BLUR)
		st = draw_blur (pool, photo, alpha, alpha_stride, background->blur_radius, out, out_stride, error);
	else if (background->kind == BD_BACKGROUND_IMAGE)
		st = draw_cover (pool, photo, background->image, out, out_stride, error);
	/* Colour means for the estimate. */
	bd_colour_means means = { 0 };
	uint32_t factor, radii[2];
	bd_composite_grid (photo->width, photo->height, &factor, radii);
	if (st == BD_OK)
		st = bd_colour_means_make (pool, photo, alpha, alpha_stride, factor, radii, 2, &means, error);
	if (st == BD_OK) {
		blend_ctx c = { photo, alpha, alpha_stride, background, &means, out, out_stride };
		bd_thread_pool_run (pool, photo->height, blend_task, &c);
	}
	bd_colour_means_clear (&means);
	return st;
}

bd_status
bd_composite (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
              const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error)
{
	bd_thread_pool *pool = bd_thread_pool_new (0);
	if (!pool)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_status st = bd_composite_on_pool (pool, photo, alpha, alpha_stride, background, out, out_stride, error);
	bd_thread_pool_free (pool);
	return st;
}

bd_status
bd_composite_in_thread (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
                        const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error)
{
	/* Without a pool every step runs its tasks in turn on this thread (thread-pool.c). */
	return bd_composite_on_pool (NULL, photo, alpha, alpha_stride, background, out, out_stride, error);
}
