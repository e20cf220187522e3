/* The cut-out over a new background: transparent, a colour, the photo blurred, or another
 * image scaled to cover. The background is drawn into the output first, then the photo is
 * blended over it in place, so no full-size temporary is needed. */
#include "image.h"

#include <math.h>

/* A blurred background is smooth, so it is blurred at a reduced size and enlarged again. */
static bd_status
draw_blur (bd_thread_pool *pool, const bd_image *photo, float radius, uint8_t *out,
           size_t out_stride, bd_error *error)
{
	uint32_t f = radius > 8 ? (uint32_t) (radius / 8) : 1;
	uint32_t sw = (photo->width + f - 1) / f, sh = (photo->height + f - 1) / f;
	uint8_t *small = bd_alloc_zeroed ((size_t) sw * sh, 3);
	if (!small)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory blurring the background");
	bd_status st = bd_resample_rgb (pool, photo, sw, sh, NULL, small, (size_t) sw * 3, 3, error);
	uint32_t r = (uint32_t) lroundf (radius / (float) f / 2.0f);
	if (st == BD_OK)
		st = bd_box_blur_u8 (pool, small, sw, sh, (size_t) sw * 3, 3, r > 0 ? r : 1, error);
	bd_image view = { small, sw, sh, (size_t) sw * 3, BD_PIXEL_RGB8 };
	if (st == BD_OK)
		st = bd_resample_rgb (pool, &view, photo->width, photo->height, NULL, out, out_stride, 4, error);
	bd_free_aligned (small);
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
	const bd_image      *photo;
	const uint8_t       *alpha;
	size_t               alpha_stride;
	const bd_background *bg;
	uint8_t             *out;
	size_t               out_stride;
} blend_ctx;

static void
blend_task (void *data, size_t y)
{
	const blend_ctx *c = data;
	uint32_t ch = bd_image_channels (c->photo);
	const uint8_t *src = c->photo->pixels + y * c->photo->stride;
	const uint8_t *a = c->alpha + y * c->alpha_stride;
	uint8_t *o = c->out + y * c->out_stride;
	for (uint32_t x = 0; x < c->photo->width; x++, src += ch, o += 4) {
		/* A photo that already has transparency keeps it: the masks multiply. */
		uint32_t fa = ch == 4 ? (a[x] * src[3] + 127) / 255 : a[x];
		if (c->bg->kind == BD_BACKGROUND_TRANSPARENT) {
			o[0] = src[0]; o[1] = src[1]; o[2] = src[2]; o[3] = (uint8_t) fa;
			continue;
		}
		const uint8_t *b = c->bg->kind == BD_BACKGROUND_COLOR ? c->bg->color : o;
		uint32_t ba = c->bg->kind == BD_BACKGROUND_COLOR ? c->bg->color[3] : 255;
		/* Porter-Duff "over" with straight (unpremultiplied) colours. */
		uint32_t oa = fa * 255 + ba * (255 - fa);           /* scaled by 255 */
		for (int k = 0; k < 3; k++) {
			uint32_t num = src[k] * fa * 255 + b[k] * ba * (255 - fa);
			o[k] = (uint8_t) (oa ? (num + oa / 2) / oa : 0);
		}
		o[3] = (uint8_t) ((oa + 127) / 255);
	}
}

bd_status
bd_composite (const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
              const bd_background *background, uint8_t *out, size_t out_stride, bd_error *error)
{
	bd_status st = bd_image_check (photo, "photo", error);
	if (st != BD_OK)
		return st;
	if (!alpha || !out || !background || alpha_stride < photo->width ||
	    out_stride < (size_t) photo->width * 4)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bd_composite: missing mask or output, or a stride too small");
	if (background->kind == BD_BACKGROUND_IMAGE &&
	    (st = bd_image_check (background->image, "background image", error)) != BD_OK)
		return st;
	if (background->kind > BD_BACKGROUND_IMAGE)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "unknown background kind %d", background->kind);
	if (background->kind == BD_BACKGROUND_BLUR && !(background->blur_radius >= 0 && background->blur_radius <= 1000))
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "blur radius must be within 0..1000 pixels");

	bd_thread_pool *pool = bd_thread_pool_new (0);
	if (!pool)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	if (background->kind == BD_BACKGROUND_BLUR)
		st = draw_blur (pool, photo, background->blur_radius, out, out_stride, error);
	else if (background->kind == BD_BACKGROUND_IMAGE)
		st = draw_cover (pool, photo, background->image, out, out_stride, error);
	if (st == BD_OK) {
		blend_ctx c = { photo, alpha, alpha_stride, background, out, out_stride };
		bd_thread_pool_run (pool, photo->height, blend_task, &c);
	}
	bd_thread_pool_free (pool);
	return st;
}
