#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shared library exports exactly the functions backdrop.h declares with BD_API: nothing of
# the internals leaks (per-CPU kernels, ops), nothing of the API is missing.
#
#   tests/check-exports.sh LIBBACKDROP.so BACKDROP.h
set -euo pipefail
lib=$1 header=$2
command -v nm >/dev/null || { echo "no nm (binutils)"; exit 77; }
want=$(sed -n 's/^BD_API[^(]*[ *]\(bd_[a-z0-9_]*\) *(.*/\1/p' "$header" | sort -u)
# Every defined dynamic symbol but the version node (type A).
got=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$want") <(echo "$got"))
missing=$(comm -23 <(echo "$want") <(echo "$got"))
[[ -z $extra ]] || echo "exported but not in $header: $(echo $extra)"
[[ -z $missing ]] || echo "in $header but not exported: $(echo $missing)"
[[ -z $extra && -z $missing ]] || exit 1
echo "$(echo "$want" | wc -l) functions exported, all in $header"
