/* SPDX-License-Identifier: Apache-2.0 */
/* The bf16 convolution's choice and weights, for CPUs with AVX-512 BF16 (Zen 4 and later,
 * Sapphire Rapids and later): 3x3 convolutions with inputs and weights rounded to bf16 (8
 * significant bits), sums, bias and outputs in fp32, run by conv-dot.c built as
 * bd_conv2d_bf16. Meson builds this file with -mavx512bf16 only; bd_conv2d_bf16's callers
 * check bd_cpu_bf16_usable () first. */
#include "ops.h"

#include <stdlib.h>
#include <string.h>

#define VL BD_LANES

bool
bd_cpu_bf16_usable (void)
{
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && (!strcmp (force, "generic") || !strcmp (force, "v3") || !strcmp (force, "fp32")))
		return false;
	__builtin_cpu_init ();
	return __builtin_cpu_supports ("avx512bf16") && __builtin_cpu_supports ("x86-64-v4");
}

/* AMD's Zen 4 and 5 issue vdpbf16ps on both FMA pipes: twice the multiply-adds of fp32
 * (1.76x faster end to end on Zen 5). Intel's Sapphire Rapids issues it on one port only,
 * so with the copy to bf16 it is 1.5-1.7x slower than fp32 there (bench/cpu-vs-pytorch.sh,
 * 16 cores): use it by default on AMD alone; BACKDROP_CPU_KERNEL=bf16 forces it. */
bool
bd_cpu_bf16_pays (void)
{
	if (!bd_cpu_bf16_usable ())
		return false;
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && !strcmp (force, "bf16"))
		return true;
	return __builtin_cpu_is ("amd");
}

bd_status
bd_cpu_conv_pack_bf16 (bd_cpu_conv *conv, bd_error *error)
{
	if (conv->taps != 9)
		return bd_error_set (error, BD_ERR_INVALID_ARGUMENT, "bf16 convolutions are 3x3 only");
	uint32_t pairs = (conv->in_channels + 1) / 2;
	size_t per_block = (size_t) pairs * 9 * 2 * VL, n;
	if (!bd_size_mul (per_block, conv->cout_blocks, &n))
		return bd_error_set (error, BD_ERR_TOO_LARGE, "convolution too large");
	uint16_t *w = bd_alloc_zeroed (n, sizeof *w);
	if (!w)
		return bd_error_set (error, BD_ERR_NO_MEMORY, "out of memory packing weights");
	size_t fp32_block = (size_t) conv->in_channels * 9 * VL;
	for (uint32_t b = 0; b < conv->cout_blocks; b++)
		for (uint32_t ci = 0; ci < conv->in_channels; ci++)
			for (uint32_t t = 0; t < 9; t++)
				for (uint32_t o = 0; o < VL; o++) {
					float f = conv->weights[b * fp32_block + ((size_t) ci * 9 + t) * VL + o];
					w[b * per_block + (((size_t) (ci / 2) * 9 + t) * VL + o) * 2 + ci % 2] = bd_bf16_from_float (f);
				}
	conv->weights_bf16 = w;
	return BD_OK;
}
