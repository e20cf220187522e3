/* SPDX-License-Identifier: Apache-2.0 */
/* A model file read whole into memory of our own (core/model.c checks it there). */
#include "backdrop-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file is read in pieces the threads share: a page's fault and its copy took most of
 * opening the model (15.5 MB: 11-12 ms of 17 on the 2-core Xeon, 6 on two threads). Each
 * task first takes its pages in one call, which costs the kernel less than a fault each
 * (as the CPU backend's arena, cpu-plan.c). */
#define READ_PIECE ((size_t) 2 << 20)

typedef struct {
	int         fd;
	uint8_t    *dst;
	size_t      size;
	atomic_int  error;    /* the first errno, or -1: the file ended early */
} read_job;

static void
read_task (void *data, size_t index)
{
	read_job *j = data;
	size_t at = index * READ_PIECE, end = j->size - at < READ_PIECE ? j->size : at + READ_PIECE;
#if defined(MADV_POPULATE_WRITE)
	uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
	uintptr_t first = ((uintptr_t) (j->dst + at) + page - 1) & ~(page - 1);
	uintptr_t last = (uintptr_t) (j->dst + end) & ~(page - 1);
	if (last > first)
		madvise ((void *) first, last - first, MADV_POPULATE_WRITE);   /* refused: faulted as read into */
#endif
	while (at < end && atomic_load (&j->error) == 0) {
		ssize_t n = pread (j->fd, j->dst + at, end - at, (off_t) at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int none = 0;
			atomic_compare_exchange_strong (&j->error, &none, n < 0 ? errno : -1);
			return;
		}
		at += (size_t) n;
	}
}

bd_status
bd_model_read_file (const char *path, uint8_t **out, size_t *out_size, bd_thread_pool **pool, bd_error *error)
{
	*pool = NULL;
	int fd = open (path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bd_error_set (error, BD_ERR_IO, "cannot open model %s: %s", path, strerror (errno));
	struct stat st;
	if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
		close (fd);
		return bd_error_set (error, BD_ERR_IO, "model %s is not a regular file", path);
	}
	if ((uint64_t) st.st_size > ((uint64_t) 1 << 32)) {
		close (fd);
		return bd_error_set (error, BD_ERR_TOO_LARGE, "model %s is larger than 4 GiB", path);
	}
	size_t size = (size_t) st.st_size, pieces = (size + READ_PIECE - 1) / READ_PIECE;
	uint8_t *b = bd_alloc_aligned (size, 1);   /* read whole below, or freed */
	if (!b) {
		close (fd);
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory reading model %s (%zu bytes)", path, size);
	}
	if (pieces >= 2)
		*pool = bd_thread_pool_new (0);
	read_job job = { .fd = fd, .dst = b, .size = size };
	bd_thread_pool_run (*pool, pieces, read_task, &job);
	close (fd);
	int e = atomic_load (&job.error);
	if (e != 0) {
		bd_free_aligned (b);
		bd_thread_pool_free (*pool);
		*pool = NULL;
		/* A file that shrank while we read it is as truncated as a short one. */
		return e > 0 ? bd_error_set (error, BD_ERR_IO, "cannot read model %s: %s", path, strerror (e))
		             : bd_error_set (error, BD_ERR_FORMAT, "%s is truncated (it shrank while being read)", path);
	}
	*out = b;
	*out_size = size;
	return BD_OK;
}
