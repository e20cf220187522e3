/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer harness: the programs' photo decoder (common/bd-image-io.c) on arbitrary bytes.
 * A decoded photo must be 8-bit RGB(A), within the size limit, its pixels readable. */
#include "backdrop.h"
#include "bd-image-io.h"

#include <stdlib.h>

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
	GBytes *bytes = g_bytes_new_static (data, size);
	GError *error = NULL;
	GdkPixbuf *p = bd_image_load_bytes (bytes, &error);
	if (p) {
		int w = gdk_pixbuf_get_width (p), h = gdk_pixbuf_get_height (p), n = gdk_pixbuf_get_n_channels (p);
		if (w < 1 || h < 1 || (uint64_t) w * h > BD_MAX_PIXELS || gdk_pixbuf_get_bits_per_sample (p) != 8 ||
		    (n != 3 && n != 4) || error)
			abort ();
		/* Touch the last pixel of every row: ASan sees any short buffer. */
		const guint8 *px = gdk_pixbuf_read_pixels (p);
		volatile guint sum = 0;
		for (int y = 0; y < h; y++)
			sum += px[(size_t) y * gdk_pixbuf_get_rowstride (p) + (size_t) (w - 1) * n + n - 1];
		g_object_unref (p);
	} else if (!error || !error->message[0]) {
		abort ();   /* a refusal always says why */
	}
	g_clear_error (&error);
	g_bytes_unref (bytes);
	return 0;
}
