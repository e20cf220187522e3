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
