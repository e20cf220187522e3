/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

#include "cuda-common.cuh"

/* Buffers of bd_gpu_keep_main_subject, grown as larger masks come. */
typedef struct {
	uint8_t  *max, *drop;   /* device: the grid's maxima (its border included), the blocks to clear */
	uint32_t *core;         /* device: the grid's person counts */
	uint8_t  *host;         /* page-locked: the maxima and counts on their way down, the blocks up */
	size_t    max_bytes, drop_bytes, core_bytes, host_bytes;
} bd_gpu_subject_buffers;

/* bd_mask_keep_main_subject (core/image/keep-subject.c) on @alpha, a mask on the device
 * (@width x @height, dense rows): its grid of blocks made and its clearing done on the
 * device, the regions and their growth on the host (bd_subject_blocks_to_drop, the grid's
 * working arrays in @scratch); the host's bytes exactly. The clearing is queued on @stream. */
bd_status bd_gpu_keep_main_subject (bd_gpu_subject_buffers *b, bd_scratch *scratch, cudaStream_t stream, uint8_t *alpha,
                                    uint32_t width, uint32_t height, float min_fraction, float min_height,
                                    bd_error *error);
void      bd_gpu_subject_free (bd_gpu_subject_buffers *b);
