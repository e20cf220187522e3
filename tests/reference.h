/* SPDX-License-Identifier: Apache-2.0 */
/* Naive reference implementations (dense CHW, double accumulation) that the optimised
 * backends are checked against. Slow and obvious on purpose. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* out[co][y][x] = act(bias[co] + sum w[co][ci][ky][kx] * in[ci][y+ky-k/2][x+kx-k/2]), zero padding. */
void ref_conv2d (const float *in, uint32_t cin, uint32_t h, uint32_t w,
                 const float *weight, const float *bias, uint32_t cout, uint32_t k,
                 int relu, float *out);

/* ConvTranspose2d(kernel 2, stride 2): weight [cin][cout][2][2]; out is 2h x 2w. */
void ref_conv_transpose2x2 (const float *in, uint32_t cin, uint32_t h, uint32_t w,
                            const float *weight, const float *bias, uint32_t cout, float *out);

void ref_maxpool2x2 (const float *in, uint32_t c, uint32_t h, uint32_t w, float *out);

/* The whole U-Net of a model file's tensors (looked up by name in @bytes). */
int  ref_unet_forward (const uint8_t *model_bytes, const float *in, uint32_t h, uint32_t w, float *out);

/* ||a - b|| / ||b||, and whether every element is finite. */
double ref_relative_error (const float *a, const float *b, size_t n);
