/* SPDX-License-Identifier: Apache-2.0 */
/* The photo's own run as far as its first pass, the quick looks after it (quick-look.c), and
 * the run they ask for. Where the first pass is unsure of its person, looks turned a quarter
 * either way may find someone lying down (upright.c); where it finds a person, the look as
 * it stands may find her more surely than the photo's own pass, at half the scale: a
 * close-up (close-up.c). Either way the photo's run ends there, before its mirror pass
 * (bd_between_passes), and the photo is run again as the looks say: turned, or with the
 * network at the looks' size. */
#include "quick-looks.h"

#include <stdlib.h>

/* The photo's own run, as far as its first pass: how to run it again, if at all. */
typedef struct {
	const bd_image       *photo;
	const bd_run_options *options;
	bd_run_fn             run;
	int                   way;            /* turned: 1 to the left, 2 to the right (bd_upright_choose) */
	uint8_t              *turned[2];      /* the turned looks' masks */
	uint32_t              width, height;  /* their size */
	bool                  smaller;        /* a close-up: at the looks' size (bd_close_up_is_surer) */
} looks_check;

/* The look as it stands of @small, for the close-up check, where upright.c made none. */
static bd_status
look_as_it_stands (bd_session *session, const bd_small_photo *small, const looks_check *c, bd_mask_look *look,
                   bd_error *error)
{
	uint8_t *alpha = malloc ((size_t) small->width * small->height);
	if (!alpha)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory");
	bd_image view = { small->pixels, small->width, small->height, (size_t) small->width * 3, BD_PIXEL_RGB8 };
	bd_status st = bd_look_quickly (session, &view, c->options, c->run, 1, alpha, look, error);
	free (alpha);
	return st;
}

/* bd_between_passes_fn: the quick looks that can change how the photo is run; the run ends
 * there where they turn it or find a close-up, before its mirror pass. */
static bd_status
check_first_pass (bd_session *session, const float *prob, uint32_t width, uint32_t height, size_t stride,
                  bool *go_on, bd_error *error)
{
	looks_check *c = session->between_passes_data;
	bd_mask_look first = bd_look_at_pass (prob, width, height, stride), standing;
	bool stood = false;
	bd_small_photo small = { NULL, 0, 0 };
	bd_status st = BD_OK;
	if (c->options->upright)
		st = bd_upright_choose (session, &first, c->photo, &small, c->options, c->run, &c->way, c->turned,
		                        &c->width, &c->height, &standing, &stood, error);
	/* A look at the looks' size sees the photo smaller than its first pass did only where that
	 * pass was larger. */
	if (st == BD_OK && c->way == 0 && c->options->close_ups && bd_close_up_worth_a_look (&first) &&
	    (width > BD_LOOK_SIDE || height > BD_LOOK_SIDE)) {
		if (!stood && (st = bd_small_photo_make (session, c->photo, &small, error)) == BD_OK)
			st = look_as_it_stands (session, &small, c, &standing, error);
		c->smaller = st == BD_OK && bd_close_up_is_surer (&first, &standing);
	}
	bd_small_photo_clear (&small);
	*go_on = c->way == 0 && !c->smaller;
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

bd_status
bd_run_looking (bd_session *session, const bd_image *photo, const bd_run_options *options, uint8_t *alpha,
                size_t alpha_stride, bd_run_fn run, bd_error *error)
{
	looks_check check = { photo, options, run, 0, { NULL, NULL }, 0, 0, false };
	session->between_passes = check_first_pass;
	session->between_passes_data = &check;
	bd_status st = run (session, photo, options, alpha, alpha_stride, error);
	session->between_passes = NULL;
	session->between_passes_data = NULL;
	if (st == BD_OK && (check.way || check.smaller)) {
		/* The photo's own run ended after its first pass: half its bar with mirror averaging. */
		bd_progress_span rest = { options, options->mirror_average ? 0.5f : 1.0f, 1.0f };
		bd_run_options again = *options;
		if (options->progress) {
			again.progress = bd_progress_in_span;
			again.user_data = &rest;
		}
		st = check.way ? bd_run_turned (session, photo, check.way == 2, check.turned, check.width, check.height,
		                                &again, run, alpha, alpha_stride, error)
		               : bd_run_smaller (session, photo, &again, run, alpha, alpha_stride, error);
	}
	free (check.turned[0]);
	return st;
}
