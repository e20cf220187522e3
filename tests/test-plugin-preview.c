/* SPDX-License-Identifier: Apache-2.0 */
/* The GIMP dialog's preview picture (plugin-gimp/preview-paint.c): kept pixels as they are,
 * removed ones half red, a transparent layer pixel on grey. */
#include <glib.h>

#include "preview-paint.h"

static void
test_preview_paint (void)
{
  /* Two by two RGBA: a kept blue pixel, a removed blue one, a half-removed grey one, and a
   * transparent kept one; rows padded to 12 bytes. */
  const guint8 photo[2 * 12] = {
    0, 0, 255, 255,   0, 0, 255, 255,   9, 9, 9, 9,
    100, 100, 100, 255,   50, 200, 50, 0,   9, 9, 9, 9,
  };
  const guint8 alpha[4] = { 255, 0, 128, 255 };
  guint8 out[12];

  bd_preview_paint (photo, 2, 2, 4, 12, alpha, out);
  /* kept: unchanged */
  g_assert_cmpuint (out[0], ==, 0);
  g_assert_cmpuint (out[1], ==, 0);
  g_assert_cmpuint (out[2], ==, 255);
  /* removed: half red over blue */
  g_assert_cmpuint (out[3], ==, (0 * 128 + 230 * 127 + 127) / 255);
  g_assert_cmpuint (out[4], ==, (0 * 128 + 30 * 127 + 127) / 255);
  g_assert_cmpuint (out[5], ==, (255 * 128 + 30 * 127 + 127) / 255);
  /* half removed: a quarter red */
  g_assert_cmpuint (out[6], ==, (100 * (255 - 63) + 230 * 63 + 127) / 255);
  g_assert_cmpuint (out[8], ==, (100 * (255 - 63) + 30 * 63 + 127) / 255);
  /* transparent in the layer: grey, not its hidden colour */
  g_assert_cmpuint (out[9], ==, 128);
  g_assert_cmpuint (out[10], ==, 128);
  g_assert_cmpuint (out[11], ==, 128);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gimp/preview-paint", test_preview_paint);
  return g_test_run ();
}
