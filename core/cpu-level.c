/* SPDX-License-Identifier: Apache-2.0 */
/* Which build of the loops built once per x86-64 level (the convolution's rows, the temporal
 * filter's) this CPU runs. */
#include "backdrop-private.h"

#include <stdlib.h>
#include <string.h>

bd_cpu_level
bd_cpu_level_get (void)
{
	const char *force = getenv ("BACKDROP_CPU_KERNEL");
	if (force && strcmp (force, "generic") == 0)
		return BD_CPU_GENERIC;
#if defined(BD_HAVE_X86_KERNELS)
	__builtin_cpu_init ();
	if (__builtin_cpu_supports ("x86-64-v4") && !(force && strcmp (force, "v3") == 0))
		return BD_CPU_X86_64_V4;
	if (__builtin_cpu_supports ("x86-64-v3"))
		return BD_CPU_X86_64_V3;
#endif
	return BD_CPU_GENERIC;
}
