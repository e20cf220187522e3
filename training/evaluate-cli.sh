#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shipped model's quality as users get it: backdrop-cli writes the masks of every
# validation photo (training/splits), then evaluate.py scores each set and prints one table of
# every split, the hard web-like one first (evaluate.py --table).
#
#   training/evaluate-cli.sh CLI MODEL DATASETS OUT [MORE]     e.g.
#   training/evaluate-cli.sh build/cli/backdrop-cli data/backdrop-portrait.bdm ../shared/datasets eval-out .data
#
# MORE is a second folder of sets, for debian-negatives (training/fetch_negatives.py writes it).
# DEVICE (auto, cpu, cuda) and PRECISION (fast, exact) pass to the CLI. LIMIT=N takes the first
# N photos of each split (a quick check); SETS="a b" only those sets; COMPARE=ROOT puts a second
# root of masks in the same layout (e.g. the teacher's) beside ours in the table; TEACHER=DIR
# (teacher labels, DIR/<set>/<stem>.png) scores people-unlabelled against them.
# OUT/<set>/<stem>.png are the masks (the layout evaluate.py --table reads); OUT/reports/<set>/
# gets scores.csv, summary.json and worst.png (a contact sheet); OUT/table.md the table.
# Needs Python with numpy and Pillow (Debian: python3-numpy python3-pil).
set -euo pipefail
cli=$(realpath "$1") model=$(realpath "$2") sets=$(realpath "$3") out=$4 more=${5:+$(realpath "$5")}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
mkdir -p "$out"
if [[ -z ${SETS:-} ]]; then
    SETS=$(cd "$here/splits" && ls *.txt | sed 's/\.txt$//' | grep -vx hard-web)
fi
for set in $SETS; do
    split="$here/splits/$set.txt"
    data=$sets
    [[ ! -d $data/$set/images && -n $more ]] && data=$more
    [[ -f $split && -d $data/$set/images ]] || { echo "evaluate-cli: skipping $set (no split or data)" >&2; continue; }
    inputs="$out/reports/$set/inputs"
    rm -rf "$inputs" "$out/$set"
    mkdir -p "$inputs" "$out/$set"
    head -n "${LIMIT:--0}" "$split" | while read -r stem; do
        for f in "$data/$set/images/$stem".*; do ln -s "$f" "$inputs/"; done
    done
    "$cli" --quiet --device "${DEVICE:-auto}" --precision "${PRECISION:-fast}" --model "$model" --output mask "$inputs" --output-dir "$out/$set"
    # The CLI names a mask STEM-mask.png; evaluate.py pairs STEM.png with the ground truth.
    for f in "$out/$set"/*-mask.png; do
        [[ -e $f ]] && mv "$f" "${f%-mask.png}.png"
    done
    gt=()
    [[ -d $data/$set/masks ]] && gt=(--gt "$data/$set/masks")
    [[ $set == people-unlabelled ]] && gt=()   # no labels of its own: only the table scores it (TEACHER)
    [[ $set == people-unlabelled && -z ${TEACHER:-} ]] && continue
    [[ $set == people-unlabelled ]] && gt=(--gt "$TEACHER/$set")
    echo "== $set"
    "$python" "$here/evaluate.py" --pred "$out/$set" "${gt[@]}" --images "$inputs" --sheet "$out/reports/$set/worst.png" \
        --csv "$out/reports/$set/scores.csv" --json "$out/reports/$set/summary.json" | grep -v '^worst:'
done
# The table: every split, the hard web-like one first. MORE's sets (debian-negatives) are scored
# by the per-set reports above; the table reads DATASETS.
table=(--table "$out" --data "$sets")
[[ -n ${COMPARE:-} ]] && table+=(--table-b "$COMPARE")
[[ -n ${TEACHER:-} ]] && table+=(--teacher "$TEACHER")
echo "== all validation splits"
"$python" "$here/evaluate.py" "${table[@]}" | tee "$out/table.md"
