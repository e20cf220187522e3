#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shipped model's quality as users get it: backdrop-cli writes the masks of every
# validation photo (training/splits), then evaluate.py scores them against the labels.
#
#   training/evaluate-cli.sh CLI MODEL DATASETS OUT [MORE]     e.g.
#   training/evaluate-cli.sh build/cli/backdrop-cli data/backdrop-portrait.bdm ../shared/datasets eval-out .data
#
# MORE is a second folder of sets, for debian-negatives (training/fetch_negatives.py writes it).
# DEVICE (auto, cpu, cuda) and PRECISION (fast, exact) pass to the CLI.
# OUT/<set>/ gets the masks, scores.csv, summary.json and worst.png (a contact sheet).
# Needs Python with numpy and Pillow (Debian: python3-numpy python3-pil).
set -euo pipefail
cli=$(realpath "$1") model=$(realpath "$2") sets=$(realpath "$3") out=$4 more=${5:+$(realpath "$5")}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
mkdir -p "$out"
for set in ccp-person davis-people-train lfw-portraits-pseudo davis-no-people debian-negatives; do
    split="$here/splits/$set.txt"
    data=$sets
    [[ ! -d $data/$set/images && -n $more ]] && data=$more
    [[ -f $split && -d $data/$set/images ]] || { echo "evaluate-cli: skipping $set (no split or data)" >&2; continue; }
    inputs="$out/$set/inputs"
    rm -rf "$inputs" "$out/$set/masks"
    mkdir -p "$inputs"
    while read -r stem; do
        for f in "$data/$set/images/$stem".*; do ln -s "$f" "$inputs/"; done
    done <"$split"
    "$cli" --quiet --device "${DEVICE:-auto}" --precision "${PRECISION:-fast}" --model "$model" --output mask "$inputs" --output-dir "$out/$set/masks"
    gt=()
    [[ -d $data/$set/masks ]] && gt=(--gt "$data/$set/masks")
    echo "== $set"
    "$python" "$here/evaluate.py" --pred "$out/$set/masks" "${gt[@]}" --images "$inputs" \
        --sheet "$out/$set/worst.png" --csv "$out/$set/scores.csv" --json "$out/$set/summary.json" | grep -v '^worst:'
done
