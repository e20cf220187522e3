/* SPDX-License-Identifier: Apache-2.0 */
/* The library's version: BD_VERSION_STRING as this library was built (backdrop-version.h,
 * from meson.build's project version), so that a program compiled against one backdrop.h and
 * run with another library can tell. */
#include "backdrop-private.h"

const char *
bd_version (void)
{
	return BD_VERSION_STRING;
}
