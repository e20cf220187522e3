#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary folder, checks that the installed library exports only
# bd_ names, and builds a small program against the installed library the way another project
# would: `pkg-config --cflags --libs backdrop-0`, the headers from include/backdrop-0/. The program opens no model; it checks the run-time version and
# that the API answers a bad call with a status, not a crash.
#
#   tests/check-installed-library.sh BUILD-DIR PREFIX LIBDIR CC [SANITIZERS]
set -eu

build=$1 prefix=$2 libdir=$3 cc=$4 sanitize=${5:-none}
# A sanitizer build's library needs the program built with the same runtime.
san_flags=
[ "$sanitize" = none ] || [ -z "$sanitize" ] || san_flags="-fsanitize=$sanitize"
command -v pkg-config >/dev/null || { echo "no pkg-config"; exit 77; }
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT INT TERM

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null
pcdir=$dest$prefix/$libdir/pkgconfig
[ -f "$pcdir/backdrop-0.pc" ] || { echo "MISSING: $prefix/$libdir/pkgconfig/backdrop-0.pc"; exit 1; }
[ -f "$dest$prefix/include/backdrop-0/backdrop.h" ] || { echo "MISSING: $prefix/include/backdrop-0/backdrop.h"; exit 1; }
# Only the bd_ API leaves the installed library (the issue's `nm -D --defined-only`), whatever
# the linker version script or a future source file does.
if command -v nm >/dev/null; then
    for so in "$dest$prefix/$libdir"/libbackdrop.so.*.*; do
        others=$(nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | grep -v '^bd_' || true)
        [ -z "$others" ] || { echo "$(basename "$so") exports more than the bd_ API:" $others; exit 1; }
        echo "$(basename "$so"): $(nm -D --defined-only "$so" | awk '$2 != "A"' | wc -l) symbols, all bd_"
    done
fi

cat > "$dest/use.c" <<'C'
#include <backdrop.h>
#include <stdio.h>
#include <string.h>

int
main (void)
{
    if (strcmp (bd_version (), BD_VERSION_STRING) != 0) {
        printf ("library %s, header %s\n", bd_version (), BD_VERSION_STRING);
        return 1;
    }
    bd_model *model = (bd_model *) 1;
    bd_error error;
    bd_status status = bd_model_open ("/nonexistent/model.bdm", &model, &error);
    if (status != BD_ERR_IO || model != NULL || error.status != status) {
        printf ("bd_model_open of a missing file: %s\n", bd_status_name (status));
        return 1;
    }
    printf ("libbackdrop %s: %s\n", bd_version (), error.message);
    return 0;
}
C
# The .pc file's prefix moved into the temporary folder (its other paths follow ${prefix}).
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs backdrop-0)
# shellcheck disable=SC2086
"$cc" -Wall -Werror $san_flags -o "$dest/use" "$dest/use.c" $flags
LD_LIBRARY_PATH=$dest$prefix/$libdir "$dest/use"
