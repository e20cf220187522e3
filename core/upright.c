/* SPDX-License-Identifier: Apache-2.0 */
/* People lying down or sideways. The network learned from people standing, and misses most of
 * one turned a quarter: the held-out CCP people turned onto empty scenes score IoU 0.27 at 90
 * degrees and 0.33 at 270, against 0.79 upside down (docs/MODEL.md, "People lying down").
 * Where the first pass of the photo's own run is unsure of its person (the mean probability
 * of the pixels called person at most UPRIGHT_FIRST_SURE: every CCP portrait is surer, no
 * turned person of the validation sets is), quick runs follow at 256 pixels on the long
 * side (one pass each, no mirror, no guided filter): the photo turned a quarter to the left,
 * as it stands and turned to the right, each where it can still change the outcome. Where
 * the network finds a person in a turned one more surely, the photo's run ends there, before
 * its mirror pass (bd_between_passes), and the photo is run again turned that way, as fully
 * as asked, and the mask turned back. That run's second view is not a mirror pass but the
 * two turned quick runs, already made: each pixel of its pass is averaged with whichever of
 * them is nearer to it there (the one turned the same way, or the other read half a turn
 * round), where that one is lower: the looks only take away (bd_look_average). On the 97
 * turned CCP people that scored better than the mirror pass at 9/8 (IoU 0.728 against 0.722,
 * boundary IoU 0.561 against 0.558) and spares a photo lying down its costliest pass
 * (docs/MODEL.md).
 *
 * "More surely", chosen on every validation photo at each quarter turn: the surer turned run
 * has the mean probability of its pixels called person higher by UPRIGHT_MARGIN, a person
 * covering at least UPRIGHT_MIN_MASS of the photo (empty scenes and small distant people
 * stay as they are), and fewer unsure pixels (probability between 0.15 and 0.85) than
 * UPRIGHT_UNSURE_RATIO times those of the run as it stands, or, where that run found almost
 * nothing (under UPRIGHT_NOTHING of the photo) and so has no unsure pixels to compare, a
 * turned run sure of its own (over UPRIGHT_SURE_ENOUGH: the turned CCP people turned that
 * way are at 0.948 or surer; an ice cave and a park of small people standing, where nobody
 * lies down, were turned at 0.931 with 0.93). And the other turned run must find
 * her too (over UPRIGHT_OTHER_MASS, more surely than the run as it stands): someone lying
 * down stands in one and stands on her head in the other, which the network does well; a
 * shape that looks like a person only one way up is left alone. The quick runs are compared
 * with each other, not with the photo's full run (finer, surer of itself): against that,
 * close-up faces the network is unsure of were turned too. Of the 739 validation photos of
 * people standing, of empty scenes and of unlabelled people, three are turned: two without
 * people and tables seen from above (docs/MODEL.md). */
#include "image/image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UPRIGHT_SURE_ENOUGH  0.94    /* a quick run sure of its person: below */
#define UPRIGHT_FIRST_SURE   0.96    /* turned CCP people that turn: 0.956 at most; CCP: 0.962 */
#define UPRIGHT_SIDE         256     /* the quick runs' long side */
#define UPRIGHT_MARGIN       0.02
#define UPRIGHT_MIN_MASS     0.06
#define UPRIGHT_UNSURE_RATIO 0.8
#define UPRIGHT_NOTHING      0.02
#define UPRIGHT_OTHER_MASS   0.04

/* What a mask says of how sure the network was. */
typedef struct {
	double mass;     /* mean alpha, in [0, 1] */
	double sure;     /* mean alpha of the pixels at least half opaque */
	double unsure;   /* share of pixels between 0.15 and 0.85 */
} mask_look;

/* @alpha's look, every pixel of it. */
static mask_look
look_at (const uint8_t *alpha, uint32_t width, uint32_t height, size_t stride)
{
	uint64_t sum = 0, above = 0, above_sum = 0, unsure = 0, n = 0;
	for (uint32_t y = 0; y < height; y++) {
		const uint8_t *row = alpha + (size_t) y * stride;
		for (uint32_t x = 0; x < width; x++, n++) {
			uint32_t a = row[x];
			sum += a;
			above += a >= 128;
			above_sum += a >= 128 ? a : 0;
			unsure += a > 38 && a < 217;
		}
	}
	return (mask_look) {
		.mass = (double) sum / (255.0 * (double) n),
		.sure = above ? (double) above_sum / (255.0 * (double) above) : 0.0,
		.unsure = (double) unsure / (double) n,
	};
}

/* Whether @turned finds a person more surely than @own, the run as it stands. */
static bool
turned_is_surer (const mask_look *own, const mask_look *turned)
{
	if (turned->mass <= UPRIGHT_MIN_MASS || turned->sure <= own->sure + UPRIGHT_MARGIN)
		return false;
	return turned->unsure < own->unsure * UPRIGHT_UNSURE_RATIO ||
	       (own->mass < UPRIGHT_NOTHING && turned->sure > UPRIGHT_SURE_ENOUGH);
}

/* Whether the quick look turned the other way can still change where the photo turns, once
 * the one turned first (@first) is made: the photo turns only where a turned look is the
 * surer (turned_is_surer), and the other way only where @first finds her too, more surely
 * than the photo as it stands (way_to_turn). Otherwise the photo stays as it stands whatever
 * the second look finds, and that look is not made. */
static bool
second_look_matters (const mask_look *own, const mask_look *first)
{
	return turned_is_surer (own, first) || (first->mass > UPRIGHT_OTHER_MASS && first->sure > own->sure);
}

/* Which way to turn the photo: 0 as it stands, 1 to the left, 2 to the right. */
static int
way_to_turn (const mask_look *own, const mask_look *left, const mask_look *right)
{
	bool l = turned_is_surer (own, left), r = turned_is_surer (own, right);
	if (!l && !r)
		return 0;
	int way = l && (!r || left->sure >= right->sure) ? 1 : 2;
	const mask_look *other = way == 1 ? right : left;
	return other->mass > UPRIGHT_OTHER_MASS && other->sure > own->sure ? way : 0;
}

/* One quick run of @view (@which: 1 as it stands, 2 turned; bd_session.upright_run): one
 * pass, no mirror, no guided filter. */
static bd_status
look_quickly (bd_session *session, const bd_image *view, const bd_run_options *options, bd_run_fn run, int which,
              uint8_t *alpha, mask_look *look, bd_error *error)
{
	bd_run_options quick = *options;
	quick.mirror_average = 0;
	quick.refine_edges = 0;
	quick.progress = NULL;
	session->upright_run = which;
	bd_status st = run (session, view, &quick, alpha, view->width, error);
	session->upright_run = 0;
	if (st == BD_OK)
		*look = look_at (alpha, view->width, view->height, view->width);
	return st;
}

/* The quick runs of @photo at UPRIGHT_SIDE (never enlarged), and where to turn it (*@way,
 * as way_to_turn), each only where it can still change that: turned to the left, as it
 * stands, and turned to the right (second_look_matters). Of the validation photos that take
 * the quick looks (street scenes, groups, photos without people), two in five need only the
 * first and a third the first two. @turned gets the two turned runs' masks, [0] the left
 * one's and [1] the right one's (written only where it was made, as it always is where the
 * photo turns), each *@width x *@height (the photo's small copy turned), one block for the
 * caller to free, or NULL on an error. */
static bd_status
choose_by_quick_looks (bd_session *session, const bd_image *photo, const bd_run_options *options, bd_run_fn run,
                       int *way, uint8_t *turned[2], uint32_t *width, uint32_t *height, bd_error *error)
{
	uint32_t longest = photo->width > photo->height ? photo->width : photo->height;
	double scale = longest > UPRIGHT_SIDE ? (double) UPRIGHT_SIDE / longest : 1.0;
	uint32_t w = (uint32_t) lround (photo->width * scale), h = (uint32_t) lround (photo->height * scale);
	w = w ? w : 1;
	h = h ? h : 1;
	size_t n = (size_t) w * h;
	uint8_t *small = malloc (n * 3), *turned_pixels = malloc (n * 3), *alpha = malloc (n * 3);
	bd_status st = small && turned_pixels && alpha ? BD_OK : bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	if (st == BD_OK)
		st = session->backend->resample_rgb
		             ? session->backend->resample_rgb (session, photo, w, h, small, error)
		             : bd_resample_rgb (session->pool, photo, w, h, NULL, small, (size_t) w * 3, 3, error);
	mask_look looks[3];   /* as it stands, to the left, to the right */
	*way = 0;
	/* Both turned views are h x w: they share the turned quick run's buffers. The left look
	 * comes first: where it finds nobody (UPRIGHT_OTHER_MASS), the photo turns neither way
	 * (way_to_turn) and no other look is made. */
	bd_image turned_view = { turned_pixels, h, w, (size_t) h * 3, BD_PIXEL_RGB8 };
	if (st == BD_OK) {
		bd_rotate_quarter (session->pool, small, w, h, (size_t) w * 3, 3, false, turned_pixels, (size_t) h * 3);
		st = look_quickly (session, &turned_view, options, run, 2, alpha, &looks[1], error);
	}
	bool go_on = st == BD_OK && looks[1].mass > UPRIGHT_OTHER_MASS;
	if (go_on) {
		bd_image view = { small, w, h, (size_t) w * 3, BD_PIXEL_RGB8 };
		st = look_quickly (session, &view, options, run, 1, alpha + 2 * n, &looks[0], error);
		go_on = st == BD_OK && second_look_matters (&looks[0], &looks[1]);
	}
	if (go_on) {
		bd_rotate_quarter (session->pool, small, w, h, (size_t) w * 3, 3, true, turned_pixels, (size_t) h * 3);
		st = look_quickly (session, &turned_view, options, run, 2, alpha + n, &looks[2], error);
		if (st == BD_OK)
			*way = way_to_turn (&looks[0], &looks[1], &looks[2]);
	}
	free (small);
	free (turned_pixels);
	if (st != BD_OK) {
		free (alpha);
		alpha = NULL;
	}
	turned[0] = alpha;
	turned[1] = alpha ? alpha + n : NULL;
	*width = h;
	*height = w;
	return st;
}

/* The photo's own run, as far as its first pass: where to turn it (0: not at all). */
typedef struct {
	const bd_image       *photo;
	const bd_run_options *options;
	bd_run_fn             run;
	int                   way;
	uint8_t              *turned[2];      /* the turned quick runs' masks (choose_by_quick_looks) */
	uint32_t              width, height;  /* their size */
} turn_check;

/* Mean of the probabilities at least one half: how sure the pass is of its person. */
static double
sureness (const float *prob, uint32_t width, uint32_t height, size_t stride)
{
	double sum = 0;
	size_t above = 0;
	for (uint32_t y = 0; y < height; y++) {
		const float *row = prob + y * stride;
		float row_sum = 0;
		uint32_t row_above = 0;
		for (uint32_t x = 0; x < width; x++) {
			bool person = row[x] >= 0.5f;
			row_sum += person ? row[x] : 0.0f;
			row_above += person;
		}
		sum += row_sum;
		above += row_above;
	}
	return above ? sum / (double) above : 0.0;
}

/* bd_between_passes_fn: where the first pass is unsure of its person, the quick looks; the
 * run ends there where they turn the photo, before its mirror pass. */
static bd_status
check_turn (bd_session *session, const float *prob, uint32_t width, uint32_t height, size_t stride, bool *go_on,
            bd_error *error)
{
	turn_check *c = session->between_passes_data;
	if (sureness (prob, width, height, stride) > UPRIGHT_FIRST_SURE)
		return BD_OK;
	bd_status st = choose_by_quick_looks (session, c->photo, c->options, c->run, &c->way, c->turned, &c->width,
	                                      &c->height, error);
	*go_on = c->way == 0;
	return st;
}

bd_status
bd_between_passes (bd_session *session, const float *prob, uint32_t width, uint32_t height, size_t stride,
                   bool *go_on, bd_error *error)
{
	*go_on = true;
	bd_between_passes_fn between = session->between_passes;
	session->between_passes = NULL;
	return between ? between (session, prob, width, height, stride, go_on, error) : BD_OK;
}

/* @run's mask of @photo turned a quarter (to the right with @clockwise), turned back, both
 * turns on the host. */
static bd_status
run_turned_on_host (bd_session *session, const bd_image *photo, bool clockwise, const bd_run_options *options,
                    bd_run_fn run, uint8_t *alpha, size_t alpha_stride, bd_error *error)
{
	uint32_t ch = bd_image_channels (photo);
	size_t pixels = (size_t) photo->width * photo->height;
	uint8_t *photo_turned = malloc (pixels * (ch + 1)), *alpha_turned = photo_turned + pixels * ch;
	if (!photo_turned)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_rotate_quarter (session->pool, photo->pixels, photo->width, photo->height, photo->stride, ch, clockwise,
	                   photo_turned, (size_t) photo->height * ch);
	bd_image view = { photo_turned, photo->height, photo->width, (size_t) photo->height * ch, photo->format };
	bd_status st = run (session, &view, options, alpha_turned, photo->height, error);
	if (st == BD_OK)
		bd_rotate_quarter (session->pool, alpha_turned, photo->height, photo->width, photo->height, 1, !clockwise,
		                   alpha, alpha_stride);
	free (photo_turned);
	return st;
}

bd_status
bd_run_upright (bd_session *session, const bd_image *photo, const bd_run_options *options, uint8_t *alpha,
                size_t alpha_stride, bd_run_fn run, bd_error *error)
{
	turn_check check = { photo, options, run, 0, { NULL, NULL }, 0, 0 };
	session->between_passes = check_turn;
	session->between_passes_data = &check;
	bd_status st = run (session, photo, options, alpha, alpha_stride, error);
	session->between_passes = NULL;
	session->between_passes_data = NULL;
	int way = check.way;
	if (st != BD_OK || way == 0) {
		free (check.turned[0]);
		return st;
	}

	/* The photo's own run ended after its first pass: half its bar with mirror averaging. */
	bd_progress_span rest = { options, options->mirror_average ? 0.5f : 1.0f, 1.0f };
	bd_run_options again = *options;
	if (options->progress) {
		again.progress = bd_progress_in_span;
		again.user_data = &rest;
	}
	/* Its second view: the quick looks that chose the turn, where a mirror pass would be. */
	bd_turned_looks seen = { check.turned[way - 1], check.turned[2 - way], check.width, check.height };
	session->upright_run = 3;
	session->turned_looks = &seen;
	st = session->backend->run_turned
	             ? session->backend->run_turned (session, photo, way == 2, &again, alpha, alpha_stride, error)
	             : run_turned_on_host (session, photo, way == 2, &again, run, alpha, alpha_stride, error);
	session->upright_run = 0;
	session->turned_looks = NULL;
	free (check.turned[0]);
	return st;
}
