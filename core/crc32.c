/* SPDX-License-Identifier: Apache-2.0 */
#include "backdrop-private.h"

/* CRC-32 as zlib computes it (reflected polynomial 0xEDB88320), slicing by 8: a model's
 * 15 MB in about half the time of slicing by 4. */
static uint32_t crc_table[8][256];
static int      crc_ready;

static void
crc_init (void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	__atomic_store_n (&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t
bd_crc32 (uint32_t crc, const void *data, size_t size)
{
	/* Building the table twice from two threads is harmless: both write the same values. */
	if (!__atomic_load_n (&crc_ready, __ATOMIC_ACQUIRE))
		crc_init ();
	const uint8_t *p = data;
	crc = ~crc;
	while (size >= 8) {
		uint32_t lo = crc ^ ((uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24);
		uint32_t hi = (uint32_t) p[4] | (uint32_t) p[5] << 8 | (uint32_t) p[6] << 16 | (uint32_t) p[7] << 24;
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
		      crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		size -= 8;
	}
	while (size--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
