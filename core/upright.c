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
 * its mirror pass (bd_between_passes; run-looking.c), and the photo is run again turned that
 * way, as fully as asked, and the mask turned back. That run's second view is not a mirror pass but the
 * two turned quick runs, already made: each pixel of its pass is averaged with whichever of
 * them is nearer to it there (the one turned the same way, or the other read half a turn
 * round), where that one is lower: the looks only take away (bd_look_average). On the 97
 * turned CCP people that scored better than the mirror pass at 9/8 (IoU 0.728 against 0.722,
 * boundary IoU 0.561 against 0.558) and spares a photo lying down its costliest pass
 * (docs/MODEL.md).
 *
 * "More surely", chosen on every validation photo at each quarter turn: the surer turned run
 * has the mean probability of its pixels called person higher by UPRIGHT_MARGIN, a person
 * covering at least BD_LOOK_MIN_MASS of the photo (empty scenes and small distant people
 * stay as they are), and fewer unsure pixels (probability between 0.15 and 0.85) than
 * BD_LOOK_UNSURE_RATIO times those of the run as it stands, or, where that run found almost
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
#include "quick-looks.h"
#include "image/image.h"

#include <stdlib.h>

#define UPRIGHT_SURE_ENOUGH  0.94    /* a quick run sure of its person: below */
#define UPRIGHT_FIRST_SURE   0.96    /* turned CCP people that turn: 0.956 at most; CCP: 0.962 */
#define UPRIGHT_MARGIN       0.02
#define UPRIGHT_NOTHING      0.02
#define UPRIGHT_OTHER_MASS   0.04

/* Whether @turned finds a person more surely than @own, the run as it stands. */
static bool
turned_is_surer (const bd_mask_look *own, const bd_mask_look *turned)
{
	if (turned->mass <= BD_LOOK_MIN_MASS || turned->sure <= own->sure + UPRIGHT_MARGIN)
		return false;
	return turned->unsure < own->unsure * BD_LOOK_UNSURE_RATIO ||
	       (own->mass < UPRIGHT_NOTHING && turned->sure > UPRIGHT_SURE_ENOUGH);
}

/* Whether the quick look turned the other way can still change where the photo turns, once
 * the one turned first (@first) is made: the photo turns only where a turned look is the
 * surer (turned_is_surer), and the other way only where @first finds her too, more surely
 * than the photo as it stands (way_to_turn). Otherwise the photo stays as it stands whatever
 * the second look finds, and that look is not made. */
static bool
second_look_matters (const bd_mask_look *own, const bd_mask_look *first)
{
	return turned_is_surer (own, first) || (first->mass > UPRIGHT_OTHER_MASS && first->sure > own->sure);
}

/* Which way to turn the photo: 0 as it stands, 1 to the left, 2 to the right. */
static int
way_to_turn (const bd_mask_look *own, const bd_mask_look *left, const bd_mask_look *right)
{
	bool l = turned_is_surer (own, left), r = turned_is_surer (own, right);
	if (!l && !r)
		return 0;
	int way = l && (!r || left->sure >= right->sure) ? 1 : 2;
	const bd_mask_look *other = way == 1 ? right : left;
	return other->mass > UPRIGHT_OTHER_MASS && other->sure > own->sure ? way : 0;
}

/* Only where the first pass is unsure of its person (@first's sure at most
 * UPRIGHT_FIRST_SURE), the quick looks: turned to the left, as it stands, and turned to the
 * right, each only where it can still change where the photo turns (second_look_matters). Of
 * the validation photos that take them (street scenes, groups, photos without people), two
 * in five need only the first and a third the first two. */
bd_status
bd_upright_choose (bd_session *session, const bd_mask_look *first, const bd_image *photo, bd_small_photo *small,
                   const bd_run_options *options, bd_run_fn run, int *way, uint8_t *turned[2], uint32_t *width,
                   uint32_t *height, bd_mask_look *standing, bool *stood, bd_error *error)
{
	*way = 0;
	*stood = false;
	turned[0] = turned[1] = NULL;
	if (first->sure > UPRIGHT_FIRST_SURE)
		return BD_OK;
	bd_status st = bd_small_photo_make (session, photo, small, error);
	if (st != BD_OK)
		return st;
	uint32_t w = small->width, h = small->height;
	size_t n = (size_t) w * h;
	uint8_t *turned_pixels = malloc (n * 3), *alpha = malloc (n * 3);
	if (!turned_pixels || !alpha)
		st = bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_mask_look looks[3];   /* as it stands, to the left, to the right */
	/* Both turned views are h x w: they share the turned quick run's buffers. The left look
	 * comes first: where it finds nobody (UPRIGHT_OTHER_MASS), the photo turns neither way
	 * (way_to_turn) and no other look is made. */
	bd_image turned_view = { turned_pixels, h, w, (size_t) h * 3, BD_PIXEL_RGB8 };
	if (st == BD_OK) {
		bd_rotate_quarter (session->pool, small->pixels, w, h, (size_t) w * 3, 3, false, turned_pixels,
		                   (size_t) h * 3);
		st = bd_look_quickly (session, &turned_view, options, run, 2, alpha, &looks[1], error);
	}
	bool go_on = st == BD_OK && looks[1].mass > UPRIGHT_OTHER_MASS;
	if (go_on) {
		bd_image view = { small->pixels, w, h, (size_t) w * 3, BD_PIXEL_RGB8 };
		st = bd_look_quickly (session, &view, options, run, 1, alpha + 2 * n, &looks[0], error);
		*stood = st == BD_OK;
		*standing = looks[0];
		go_on = st == BD_OK && second_look_matters (&looks[0], &looks[1]);
	}
	if (go_on) {
		bd_rotate_quarter (session->pool, small->pixels, w, h, (size_t) w * 3, 3, true, turned_pixels,
		                   (size_t) h * 3);
		st = bd_look_quickly (session, &turned_view, options, run, 2, alpha + n, &looks[2], error);
		if (st == BD_OK)
			*way = way_to_turn (&looks[0], &looks[1], &looks[2]);
	}
	free (turned_pixels);
	if (st != BD_OK) {
		free (alpha);
		alpha = NULL;
		*way = 0;
	}
	turned[0] = alpha;
	turned[1] = alpha ? alpha + n : NULL;
	*width = h;
	*height = w;
	return st;
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
bd_run_turned (bd_session *session, const bd_image *photo, bool clockwise, uint8_t *turned[2], uint32_t width,
               uint32_t height, const bd_run_options *options, bd_run_fn run, uint8_t *alpha, size_t alpha_stride,
               bd_error *error)
{
	/* Its second view: the quick looks that chose the turn, where a mirror pass would be. */
	int way = clockwise ? 2 : 1;
	bd_turned_looks seen = { turned[way - 1], turned[2 - way], width, height };
	session->look_run = 3;
	session->turned_looks = &seen;
	bd_status st = session->backend->run_turned
	                       ? session->backend->run_turned (session, photo, clockwise, options, alpha, alpha_stride,
	                                                       error)
	                       : run_turned_on_host (session, photo, clockwise, options, run, alpha, alpha_stride,
	                                             error);
	session->look_run = 0;
	session->turned_looks = NULL;
	return st;
}
