/* The cut-out over a new background: transparent, a colour, the photo blurred, or another
 * image scaled to cover. The background is drawn into the output first, then the photo is
 * blended over it in place, so no full-size temporary is needed. */
#include "image.h"

#include <math.h>

/* Three box passes of @r along each axis of @k interleaved float channels, in place. */
static void
box_blur_f32 (float *img, uint32_t w, uint32_t h, uint32_t k, uint32_t r, float *line)
{
	for (int axis = 0; axis < 2; axis++) {
		uint32_t n = axis ? h : w, lines = axis ? w : h;
		size_t step = axis ? (size_t) w * k : k, next = axis ? k : (size_t) w * k;
		for (uint32_t i = 0; i < lines; i++) {
			float *p = img + i * next;
			for (int pass = 0; pass < 3; pass++)
				for (uint32_t c = 0; c < k; c++) {
					for (uint32_t j = 0; j < n; j++)
						line[j] = p[j * step + c];
					/* Edges repeat the border sample, so borders do not darken. */
					float sum = 0;
					for (int64_t j = -(int64_t) r; j <= (int64_t) r; j++)
						sum += line[j < 0 ? 0 : j >= n ? n - 1 : j];
					for (uint32_t j = 0; j < n; j++) {
						p[j * step + c] = sum / (float) (2 * r + 1);
						int64_t in = (int64_t) j + r + 1, out = (int64_t) j - r;
						sum += line[in >= n ? n - 1 : in] - line[out < 0 ? 0 : out];
					}
				}
		}
	}
}

/* The photo blurred behind the person. Only background pixels are averaged (weighted by
 * 1 - alpha), so the person's colours do not bleed into a halo around them; where nothing
 * near is background, the plain blur takes over. Blurred at a reduced size and enlarged:
 * a blurred background is smooth anyway. */
static bd_status
draw_blur (bd_thread_pool *pool, const bd_image *photo, const uint8_t *alpha, size_t alpha_stride,
           float radius, uint8_t *out, size_t out_stride, bd_error *error)
{
	uint32_t f = radius > 8 ? (uint32_t) (radius / 8) : 1;
	uint32_t sw = (photo->width + f - 1) / f, sh = (photo->height + f - 1) / f;
	uint32_t ch = bd_image_channels (photo);
	enum { K = 8 };   /* weighted RGB, weight, plain RGB, pixel count */
	float *small = bd_alloc_zeroed ((size_t) sw * sh, K * sizeof (float));
	float *line = bd_alloc_zeroed (sw > sh ? sw : sh, sizeof (float));
	uint8_t *rgb = bd_alloc_zeroed ((size_t) sw * sh, 3);
	if (!small || !line || !rgb) {
		bd_free_aligned (small);
		bd_free_aligned (line);
		bd_free_aligned (rgb);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory blurring the background");
	}
	for (uint32_t y = 0; y < photo->height; y++) {
		const uint8_t *px = photo->pixels + (size_t) y * photo->stride, *a = alpha + (size_t) y * alpha_stride;
		for (uint32_t x = 0; x < photo->width; x++, px += ch) {
			float *s = small + ((size_t) (y / f) * sw + x / f) * K, wt = (float) (255 - a[x]) / 255.0f;
			for (int c = 0; c < 3; c++) {
				s[c] += wt * px[c];
				s[4 + c] += px[c];
			}
			s[3] += wt;
			s[7] += 1;
		}
	}
	uint32_t r = (uint32_t) lroundf (radius / (float) f / 2.0f);
	box_blur_f32 (small, sw, sh, K, r > 0 ? r : 1, line);
	for (size_t i = 0; i < (size_t) sw * sh; i++) {
		const float *s = small + i * K;
		/* A little plain blur keeps the ratio defined where nothing near is background. */
		const float eps = 0.02f * s[7];
		for (int c = 0; c < 3; c++) {
			float plain = s[4 + c] / s[7];
			float v = (s[c] + eps * plain) / (s[3] + eps);
			rgb[3 * i + c] = (uint8_t) (v < 0 ? 0 : v > 255 ? 255 : v + 0.5f);
		}
	}
	bd_image view = { rgb, sw, sh, (size_t) sw * 3, BD_PIXEL_RGB8 };
	bd_status st = bd_resample_rgb (pool, &view, photo->width, photo->height, NULL, out, out_stride, 4, error);
	bd_free_aligned (small);
	bd_free_aligned (line);
	bd_free_aligned (rgb);
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
		st = draw_blur (pool, photo, alpha, alpha_stride, background->blur_radius, out, out_stride, error);
	else if (background->kind == BD_BACKGROUND_IMAGE)
		st = draw_cover (pool, photo, background->image, out, out_stride, error);
	if (st == BD_OK) {
		blend_ctx c = { photo, alpha, alpha_stride, background, out, out_stride };
		bd_thread_pool_run (pool, photo->height, blend_task, &c);
	}
	bd_thread_pool_free (pool);
	return st;
}
