#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# backdrop-cli's masks of every photo in a folder, named as the photos (STEM.png, the layout
# evaluate.py pairs with the ground truth), into a fresh folder.
#
#   training/cli-masks.sh CLI MODEL PHOTOS OUT
#
# DEVICE (auto, cpu, cuda) and PRECISION (fast, exact) pass to the CLI.
set -euo pipefail
cli=$1 model=$2 photos=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
"$cli" --quiet --device "${DEVICE:-auto}" --precision "${PRECISION:-fast}" --model "$model" --output mask \
    "$photos" --output-dir "$out"
# The CLI names a mask STEM-mask.png.
for f in "$out"/*-mask.png; do
    mv "$f" "${f%-mask.png}.png"
done
