/* SPDX-License-Identifier: Apache-2.0 */
/* The library's memory: vector-aligned zeroed blocks, large ones straight from the kernel
 * (the CPU backend's activation arena), and blocks a session keeps between calls. */
#include "backdrop-private.h"

#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

void *
bd_alloc_aligned (size_t count, size_t size)
{
	size_t bytes;
	if (!bd_size_mul (count, size, &bytes) || bytes > SIZE_MAX - 64)
		return NULL;
	/* Round up so aligned_alloc's size rule holds; 64 bytes suits AVX-512 loads. */
	bytes = (bytes + 63) & ~(size_t) 63;
	return aligned_alloc (64, bytes ? bytes : 64);
}

void *
bd_alloc_zeroed (size_t count, size_t size)
{
	void *p = bd_alloc_aligned (count, size);
	/* The whole block, its rounding up to 64 bytes too (bd_alloc_aligned checked the size). */
	if (p)
		memset (p, 0, (count * size + 63) & ~(size_t) 63);
	return p;
}

void *
bd_alloc_pages (size_t bytes)
{
#if defined(MAP_ANONYMOUS)
	/* Fresh pages are zero and cost nothing until touched: the threads that first write them
	 * take the faults, instead of one memset touching everything before the work begins.
	 * Small pages, not large ones (MADV_HUGEPAGE): a large page's fault may wait on the
	 * kernel compacting memory, or on a virtual machine's host lending pages back, which took
	 * a lone photo through the CLI from 360-420 ms to 620-730 ms (docs/PERFORMANCE.md). */
	void *p = mmap (NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	return p;
#else
	return bd_alloc_zeroed (bytes, 1);
#endif
}

void
bd_free_pages (void *p, size_t bytes)
{
	if (!p)
		return;
#if defined(MAP_ANONYMOUS)
	munmap (p, bytes ? bytes : 1);
#else
	(void) bytes;
	bd_free_aligned (p);
#endif
}

void
bd_free_aligned (void *p)
{
	free (p);
}

/* Fresh memory for every call cost the main-subject pass a quarter of its time at 1 MP: its
 * grid's 1.4 MB were faulted in again each time. */
void *
bd_scratch_take (bd_scratch *scratch, size_t bytes)
{
	if (scratch->bytes < bytes) {
		free (scratch->block);
		scratch->block = malloc (bytes);
		scratch->bytes = scratch->block ? bytes : 0;
	}
	return scratch->block;
}

void
bd_scratch_free (bd_scratch *scratch)
{
	free (scratch->block);
	scratch->block = NULL;
	scratch->bytes = 0;
}
