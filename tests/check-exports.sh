#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shared library exports exactly the functions its headers declare with BD_API: backdrop.h
# (the API) and backdrop-testing.h (the test hooks, not installed, exported for ctypes). Nothing
# of the internals leaks (per-CPU kernels, ops), nothing of the API is missing.
#
#   tests/check-exports.sh LIBBACKDROP.so HEADER...
set -euo pipefail
lib=$1
shift
header="$*"
command -v nm >/dev/null || { echo "no nm (binutils)"; exit 77; }
want=$(sed -n 's/^BD_API[^(]*[ *]\(bd_[a-z0-9_]*\) *(.*/\1/p' "$@" | sort -u)
# Every defined dynamic symbol but the version node (type A).
got=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$want") <(echo "$got"))
missing=$(comm -23 <(echo "$want") <(echo "$got"))
[[ -z $extra ]] || echo "exported but not in $header: $(echo $extra)"
[[ -z $missing ]] || echo "in $header but not exported: $(echo $missing)"
[[ -z $extra && -z $missing ]] || exit 1
echo "$(echo "$want" | wc -l) functions exported, all in $header"
