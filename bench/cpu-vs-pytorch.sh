#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CPU engine against PyTorch on identical U-Net shapes, in one run on one machine:
# depth 5, base widths 16, 32 and 64, at 512x512 and at 512x352 (a 2:3 portrait letterboxed
# to a 512-pixel long side), batch 1.
#
#   bench/cpu-vs-pytorch.sh [BUILD_DIR] [RUNS] [THREADS]
#
# BUILD_DIR holds bench/bench-forward (default: build). PyTorch comes from the Python that
# has it (PYTHON, default /usr/bin/python3; Debian: apt-get install python3-torch). Each
# shape runs ours in fp32 (exact), ours in fast precision (bf16 convolutions on AMX on Intel,
# with AVX-512 BF16 on AMD, else fp32 again), then PyTorch's fp32, in turn, so all see the
# same machine state.
set -euo pipefail
build=${1:-build}
runs=${2:-10}
threads=${3:-$(nproc)}
python=${PYTHON:-/usr/bin/python3}
bench="$build/bench/bench-forward"
[[ -x $bench ]] || { echo "cpu-vs-pytorch: build first: $bench is missing" >&2; exit 1; }
have_torch=1
"$python" -c 'import torch' 2>/dev/null || { have_torch=0; echo "cpu-vs-pytorch: no PyTorch in $python; ours alone" >&2; }

median() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'; }
printf '%-24s %10s %10s %10s %10s %10s\n' "shape" "fp32 ms" "fast ms" "pytorch ms" "pt/fp32" "pt/fast"
for shape in "16 512 512" "32 512 512" "64 512 512" "16 512 352" "32 512 352"; do
    read -r width size height <<<"$shape"
    ours=$("$bench" --exact --width "$width" --size "$size" --height "$height" --runs "$runs" --threads "$threads" | median)
    fast=$("$bench" --width "$width" --size "$size" --height "$height" --runs "$runs" --threads "$threads" | median)
    theirs=-
    if ((have_torch)); then
        theirs=$("$python" "$(dirname "$0")/torch_unet.py" --width "$width" --size "$size" --height "$height" \
                 --runs "$runs" --threads "$threads" | median)
    fi
    ratio() { [[ $theirs != - ]] && awk -v a="$theirs" -v b="$1" 'BEGIN { printf "%.2fx", a / b }' || echo -; }
    printf '%-24s %10s %10s %10s %10s %10s\n' "w$width ${size}x$height" "$ours" "$fast" "$theirs" "$(ratio "$ours")" \
        "$(ratio "$fast")"
done
