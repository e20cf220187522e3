/* SPDX-License-Identifier: Apache-2.0 */
/* The quick looks at a photo after its own run's first pass, and what they decide: whether
 * to run it turned a quarter (upright.c: people lying down) or at the looks' size (close-up.c:
 * people closer than the network learned). quick-look.c makes a look, run-looking.c makes
 * the ones that can matter and runs the photo again as they decide. */
#pragma once

#include "backdrop-private.h"

#define BD_LOOK_SIDE         256     /* the quick looks' long side (never enlarged) */
#define BD_LOOK_MIN_MASS     0.06    /* a person covering less of a look is nobody to go by */
#define BD_LOOK_UNSURE_RATIO 0.8     /* "fewer unsure pixels": under this share of the other's */

/* What a mask says of how sure the network was. */
typedef struct {
	double mass;     /* mean alpha, in [0, 1] */
	double sure;     /* mean alpha of the pixels at least half opaque */
	double unsure;   /* share of pixels between 0.15 and 0.85 */
} bd_mask_look;

/* A photo's small copy for the quick looks: the photo at BD_LOOK_SIDE on its long side
 * (never enlarged), RGB, dense; made once, by the first look that needs it. */
typedef struct {
	uint8_t *pixels;   /* width x height x 3, malloc'd; NULL until made */
	uint32_t width, height;
} bd_small_photo;

bd_status bd_small_photo_make  (bd_session *session, const bd_image *photo, bd_small_photo *small, bd_error *error);
void      bd_small_photo_clear (bd_small_photo *small);

/* What @prob, a pass's probabilities (@width x @height, rows @stride floats apart), says,
 * read as look_at reads an 8-bit mask (quick-look.c). */
bd_mask_look bd_look_at_pass (const float *prob, uint32_t width, uint32_t height, size_t stride);

/* One quick run of @view (@which: 1 as it stands, 2 turned; bd_session.look_run): one
 * pass, no mirror, no guided filter; @alpha gets its mask (view->width dense) and @look
 * what it says. */
bd_status bd_look_quickly (bd_session *session, const bd_image *view, const bd_run_options *options, bd_run_fn run,
                           int which, uint8_t *alpha, bd_mask_look *look, bd_error *error);

/* Where to turn @photo (upright.c): *@way 0 as it stands, 1 to the left, 2 to the right.
 * Where its first pass (@first) is unsure of its person, from quick looks at its small copy
 * (@small, made here if not yet), each made only where it can still change that. @turned
 * gets the two turned looks' masks ([0] left, [1] right; one block for the caller to free,
 * NULL where none was made or on an error), each *@width x *@height, and *@standing the
 * look as it stands where it was made (*@stood). */
bd_status bd_upright_choose (bd_session *session, const bd_mask_look *first, const bd_image *photo,
                             bd_small_photo *small, const bd_run_options *options, bd_run_fn run, int *way,
                             uint8_t *turned[2], uint32_t *width, uint32_t *height, bd_mask_look *standing,
                             bool *stood, bd_error *error);

/* @run's mask of @photo turned a quarter (to the right with @clockwise), turned back, its
 * second view the turned looks @turned ([0] left, [1] right, @width x @height) (upright.c). */
bd_status bd_run_turned (bd_session *session, const bd_image *photo, bool clockwise, uint8_t *turned[2],
                         uint32_t width, uint32_t height, const bd_run_options *options, bd_run_fn run,
                         uint8_t *alpha, size_t alpha_stride, bd_error *error);

/* Whether the photo's own first pass (@first) may be a close-up's (a person, some of her
 * unsure), worth the look as it stands for bd_close_up_is_surer (close-up.c). */
bool      bd_close_up_worth_a_look (const bd_mask_look *first);
/* Whether the look as it stands (@look, at BD_LOOK_SIDE) finds the person more surely than
 * the photo's own first pass (@first): a close-up, run at the looks' size (close-up.c). */
bool      bd_close_up_is_surer (const bd_mask_look *first, const bd_mask_look *look);

/* @run's mask of @photo with the network at BD_LOOK_SIDE (close-up.c). */
bd_status bd_run_smaller (bd_session *session, const bd_image *photo, const bd_run_options *options, bd_run_fn run,
                          uint8_t *alpha, size_t alpha_stride, bd_error *error);
