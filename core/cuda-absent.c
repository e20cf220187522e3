/* SPDX-License-Identifier: Apache-2.0 */
/* Linked instead of gpu/ when Backdrop is built without nvcc: there is no CUDA backend. */
#include "backdrop-private.h"

const bd_backend_ops *
bd_cuda_backend_get (void)
{
	return NULL;
}
