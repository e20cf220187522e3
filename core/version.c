/* SPDX-License-Identifier: Apache-2.0 */
/* The library's version, from meson.build's project version (BD_LIBRARY_VERSION): a program
 * compiled against one backdrop.h and run with another library can tell. */
#include "backdrop-private.h"

const char *
bd_version (void)
{
	return BD_LIBRARY_VERSION;
}
