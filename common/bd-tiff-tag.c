/* SPDX-License-Identifier: Apache-2.0 */
/* One tag of a TIFF header's first IFD: the EXIF orientation of a JPEG, the size of a TIFF
 * file before its decoder allocates anything. Every offset is checked against the size. */
#include "bd-decode-private.h"

#include <string.h>

static guint
rd16 (const guint8 *p, gboolean big)
{
	return big ? (guint) p[0] << 8 | p[1] : (guint) p[1] << 8 | p[0];
}

static guint32
rd32 (const guint8 *p, gboolean big)
{
	return big ? (guint32) rd16 (p, TRUE) << 16 | rd16 (p + 2, TRUE)
	           : (guint32) rd16 (p + 2, FALSE) << 16 | rd16 (p, FALSE);
}

guint32
bd_tiff_tag (const guint8 *tiff, gsize n, guint tag, guint32 fallback)
{
	/* Byte order, 42, the offset of the first IFD. */
	if (n < 8)
		return fallback;
	gboolean big;
	if (tiff[0] == 'M' && tiff[1] == 'M')
		big = TRUE;
	else if (tiff[0] == 'I' && tiff[1] == 'I')
		big = FALSE;
	else
		return fallback;
	if (rd16 (tiff + 2, big) != 42)
		return fallback;
	guint32 ifd = rd32 (tiff + 4, big);
	if (ifd > n || n - ifd < 2)
		return fallback;
	guint count = rd16 (tiff + ifd, big);
	for (guint i = 0; i < count; i++) {
		gsize at = (gsize) ifd + 2 + (gsize) i * 12;
		if (at + 12 > n)
			return fallback;
		if (rd16 (tiff + at, big) != tag || rd32 (tiff + at + 4, big) != 1)
			continue;
		/* One value sits in the entry's last four bytes: a SHORT (3) in the first two. */
		switch (rd16 (tiff + at + 2, big)) {
		case 3: return rd16 (tiff + at + 8, big);
		case 4: return rd32 (tiff + at + 8, big);
		default: return fallback;
		}
	}
	return fallback;
}
