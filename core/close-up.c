/* SPDX-License-Identifier: Apache-2.0 */
/* People closer than the network learned. Its training photos show people whole, or at most
 * a head and shoulders enlarged from a full-length photo: at 512 pixels a close-up's head is
 * larger than almost any it saw, and it loses the clothes below it, wide hair and shoulders.
 * The held-out CCP people cropped to their top quarter (head and shoulders) and scaled to 512
 * pixels score IoU 0.886 through the CLI, 0.941 when the network sees them at 256; to their
 * top two fifths, 0.897 and 0.951 (docs/MODEL.md, "Close-ups at the quick looks' size"). A
 * person whole in the photo does better at 512 (CCP 0.951 against 0.939 at 256; small,
 * distant people much better).
 *
 * So the photo's own first pass is compared with its quick look as it stands (quick-look.c,
 * at 256 pixels): where the look finds the person more surely, the photo is run again with
 * the network at the look's size, mirror pass and all, and the guided filter brings the mask
 * back to the photo's size. "More surely" is upright.c's turned_is_surer without its margin:
 * a person covering over BD_LOOK_MIN_MASS of the look, pixels called person surer on average
 * than the first pass's, and fewer unsure pixels than BD_LOOK_UNSURE_RATIO times the first
 * pass's share. With the margin of 0.02 that turning a photo needs, half the close-ups'
 * gain was lost and no labelled split did better. A first pass that finds nobody, or is
 * nearly free of unsure pixels, pays no look (bd_close_up_worth_a_look). */
#include "quick-looks.h"

/* Under this share of unsure pixels the first pass is left as it is, without a look: more
 * than half the CCP portraits; of the validation photos and close-ups that the run at 256
 * made better, none had under 1.2%. */
#define CLOSE_UP_MIN_UNSURE 0.01

bool
bd_close_up_worth_a_look (const bd_mask_look *first)
{
	return first->mass > BD_LOOK_MIN_MASS && first->unsure > CLOSE_UP_MIN_UNSURE;
}

bool
bd_close_up_is_surer (const bd_mask_look *first, const bd_mask_look *look)
{
	return look->mass > BD_LOOK_MIN_MASS && look->sure > first->sure &&
	       look->unsure < first->unsure * BD_LOOK_UNSURE_RATIO;
}

bd_status
bd_run_smaller (bd_session *session, const bd_image *photo, const bd_run_options *options, bd_run_fn run,
                uint8_t *alpha, size_t alpha_stride, bd_error *error)
{
	session->run_side = BD_LOOK_SIDE;
	session->look_run = 4;
	bd_status st = run (session, photo, options, alpha, alpha_stride, error);
	session->look_run = 0;
	session->run_side = 0;
	return st;
}
