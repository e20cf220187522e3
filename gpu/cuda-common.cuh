/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the CUDA backend's files: error checking, activation views, launch helpers. */
#pragma once

extern "C" {
#include "backdrop-private.h"
}

#include <cuda_fp16.h>
#include <cuda_runtime.h>

/* Turns a failed CUDA call into BD_ERR_DEVICE with the call, file and line, recorded in
 * the bd_error named `error` of the enclosing function, and returns it. */
#define BD_CUDA_CHECK(call)                                                                  \
	do {                                                                                 \
		cudaError_t bd_cuda_status_ = (call);                                        \
		if (bd_cuda_status_ != cudaSuccess)                                          \
			return bd_error_set (error, BD_ERR_DEVICE, "%s failed: %s (%s:%d)", #call, \
			                     cudaGetErrorString (bd_cuda_status_), __FILE__, __LINE__); \
	} while (0)

/* After a launch: the launch's own error, if any. */
#define BD_CUDA_CHECK_LAUNCH() BD_CUDA_CHECK (cudaGetLastError ())

/* Grows a device buffer to at least @bytes (its contents are not kept); BD_ERR_NO_MEMORY when
 * the GPU has no room, so that a caller can fall back to the host. */
static inline bd_status
bd_gpu_grow (void **buf, size_t *have, size_t bytes, bd_error *error)
{
	if (*have >= bytes)
		return BD_OK;
	cudaFree (*buf);
	*buf = nullptr;
	*have = 0;
	cudaError_t e = cudaMalloc (buf, bytes);
	if (e == cudaErrorMemoryAllocation) {
		cudaGetLastError ();   /* not sticky: clear it */
		return bd_error_set (error, BD_ERR_NO_MEMORY, "the GPU has no room for %zu MB", bytes >> 20);
	}
	BD_CUDA_CHECK (e);
	*have = bytes;
	return BD_OK;
}

/* Grows page-locked host memory @*buffer (@*size bytes) to at least @bytes, its contents lost:
 * copies from it wait for nothing already queued. */
static inline bd_status
bd_gpu_grow_host (void **buffer, size_t *size, size_t bytes, bd_error *error)
{
	if (*size >= bytes)
		return BD_OK;
	cudaFreeHost (*buffer);
	*buffer = nullptr;
	*size = 0;
	BD_CUDA_CHECK (cudaMallocHost (buffer, bytes));
	*size = bytes;
	return BD_OK;
}

/* @height rows of @row bytes between host and device, rows @dpitch and @spitch apart: one
 * plain copy where the pitches agree. From pageable memory the driver takes a 2-D copy row by
 * row: a 1 MP photo's 750 rows cost 1.1-1.3 ms of the calling thread on an H100 host, as much
 * as the rest of the photo's work (Nsight Systems, docs/PERFORMANCE.md). */
static inline cudaError_t
bd_gpu_copy_rows (void *dst, size_t dpitch, const void *src, size_t spitch, size_t row, size_t height,
                  cudaMemcpyKind kind, cudaStream_t stream)
{
	if (height == 0)
		return cudaSuccess;
	if (dpitch == spitch)
		return cudaMemcpyAsync (dst, src, spitch * (height - 1) + row, kind, stream);
	return cudaMemcpy2DAsync (dst, dpitch, src, spitch, row, height, kind, stream);
}

static inline unsigned
bd_div_up (size_t a, unsigned b)
{
	return (unsigned) ((a + b - 1) / b);
}

/* Channels are stored padded to 16, so every pixel's channels start 32-byte aligned in
 * fp16 and a 16-channel slice of a concatenation is a plain pointer offset. */
static inline uint32_t
bd_pad16 (uint32_t c)
{
	return (c + 15u) & ~15u;
}

/* An NHWC activation (or a channel slice of one): element (y, x, c) is at
 * data[(y * width + x) * pixel_stride + c]. Elements are half or float by precision. */
struct bd_gpu_view {
	void    *data;
	uint32_t height, width;
	uint32_t channels;       /* storage channels of this view, a multiple of 16 */
	uint32_t pixel_stride;   /* elements from one pixel to the next in the buffer */
};

static inline size_t
bd_precision_size (bd_precision p)
{
	return p == BD_PRECISION_FAST ? sizeof (__half) : sizeof (float);
}

/* Programmatic dependent launch (compute capability 9.0 and newer): a kernel launched by
 * bd_launch_early with @early_allowed may be scheduled while the kernel before it on the
 * stream finishes its last blocks, so its blocks set up (barriers, weights in shared memory)
 * in that kernel's tail instead of after it. Such a kernel must call
 * bd_wait_for_earlier_kernels () in every thread before it reads or writes any activation:
 * the wait returns once the kernel before it has finished and its writes are visible, and
 * since that kernel waited in turn, every earlier one has too (memory that a later layer
 * reuses is free by then). @early_allowed is the session's own launch_early, set when its
 * GPU can and BACKDROP_GPU_NO_PDL=1 is not set: two sessions on two GPUs decide apart. */

__device__ __forceinline__ void
bd_wait_for_earlier_kernels ()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile ("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/* Lets the next kernel be scheduled once every block of this one has said so (or ended). */
__device__ __forceinline__ void
bd_allow_next_kernel ()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile ("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/* As bd_launch_early, with the blocks in clusters of @cluster (1 x 1 x 1: none). */
template <typename... Params, typename... Args>
static inline cudaError_t
bd_launch_early_in_clusters (bool early_allowed, dim3 cluster, void (*kernel) (Params...), dim3 grid, dim3 block,
                             size_t smem, cudaStream_t stream, const Args &...args)
{
	cudaLaunchAttribute attrs[2];
	unsigned n = 0;
	if (early_allowed) {
		attrs[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
		attrs[n++].val.programmaticStreamSerializationAllowed = 1;
	}
	if (cluster.x * cluster.y * cluster.z > 1) {
		attrs[n].id = cudaLaunchAttributeClusterDimension;
		attrs[n].val.clusterDim.x = cluster.x;
		attrs[n].val.clusterDim.y = cluster.y;
		attrs[n++].val.clusterDim.z = cluster.z;
	}
	cudaLaunchConfig_t config = {};
	config.gridDim = grid;
	config.blockDim = block;
	config.dynamicSmemBytes = smem;
	config.stream = stream;
	config.attrs = attrs;
	config.numAttrs = n;
	return cudaLaunchKernelEx (&config, kernel, args...);
}

template <typename... Params, typename... Args>
static inline cudaError_t
bd_launch_early (bool early_allowed, void (*kernel) (Params...), dim3 grid, dim3 block, size_t smem,
                 cudaStream_t stream, const Args &...args)
{
	return bd_launch_early_in_clusters (early_allowed, dim3 (1, 1, 1), kernel, grid, block, smem, stream, args...);
}
