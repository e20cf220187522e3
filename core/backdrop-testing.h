/* SPDX-License-Identifier: Apache-2.0 */
/* libbackdrop's test hooks: the network alone, on tensors already preprocessed. Not part of
 * the installed API (backdrop.h): the tests, benchmarks and fuzzers of this tree include this
 * header. The two functions stay exported by the shared library (libbackdrop.map) because
 * tests/gpu-parity.py reaches them through ctypes on the GPU machine. */
#ifndef BACKDROP_TESTING_H
#define BACKDROP_TESTING_H

#include "backdrop.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The network's probability map for a tensor already preprocessed (CHW floats, h and w
 * multiples of 2^(depth-1)); for parity tests against the training framework. */
BD_API bd_status   bd_session_forward (bd_session *session, const float *input_chw,
                                uint32_t height, uint32_t width,
                                float *probabilities, bd_error *error);

/* The same for @batch tensors of one size at once (NCHW in, N x h x w out): on a GPU one pass
 * over all of them, faster per image than one call each; on the CPU one after the other. */
BD_API bd_status   bd_session_forward_batch (bd_session *session, const float *input_nchw,
                                      uint32_t batch, uint32_t height, uint32_t width,
                                      float *probabilities, bd_error *error);

/* Largest batch bd_session_forward_batch takes. */
#define BD_MAX_BATCH 64

#ifdef __cplusplus
}
#endif

#endif /* BACKDROP_TESTING_H */
