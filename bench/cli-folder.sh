#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A folder through backdrop-cli, end to end (decode, network, compositing, encoding, writing),
# timed by the wall clock: photos a second. With two CLIs (e.g. a build of an older commit
# and this one) they run in turn, so that both see the same machine.
#
#   bench/cli-folder.sh FOLDER RUNS CLI [CLI2] [-- CLI-ARGS...]
#   e.g. bench/cli-folder.sh photos 2 build/cli/backdrop-cli old/cli/backdrop-cli -- --device cpu
#
# Each run writes into a new temporary folder (removed after). Default CLI-ARGS: --output
# cutout. Prints one line per run and the best of each CLI.
set -euo pipefail
folder=${1:?usage: bench/cli-folder.sh FOLDER RUNS CLI [CLI2] [-- CLI-ARGS...]}
runs=${2:?runs} && shift 2
clis=()
while [[ $# -gt 0 && $1 != -- ]]; do clis+=("$1"); shift; done
[[ $# -gt 0 ]] && shift
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(--output cutout)
[[ ${#clis[@]} -ge 1 ]] || { echo "bench/cli-folder.sh: no CLI given" >&2; exit 2; }
n=$(find -L "$folder" -maxdepth 1 -type f | wc -l)
declare -A best
for ((r = 1; r <= runs; r++)); do
    for cli in "${clis[@]}"; do
        out=$(mktemp -d)
        t0=$(date +%s.%N)
        "$cli" -q "${args[@]}" --output-dir "$out" "$folder" 2>&1 | grep -v '^backdrop-cli: using' || true
        t1=$(date +%s.%N)
        written=$(find "$out" -type f | wc -l)
        rm -rf "$out"
        s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
        printf '%-50s run %d: %d of %d photos in %6s s, %5.2f photos/s\n' "$cli" "$r" "$written" "$n" "$s" \
            "$(awk -v w="$written" -v s="$s" 'BEGIN { print w / s }')"
        if [[ -z ${best[$cli]-} ]] || awk -v a="$s" -v b="${best[$cli]}" 'BEGIN { exit !(a < b) }'; then
            best[$cli]=$s
        fi
    done
done
for cli in "${clis[@]}"; do printf 'best  %-50s %6s s\n' "$cli" "${best[$cli]}"; done
