#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Close-ups (close_ups.py: held-out CCP people cropped to their top quarter and top two
# fifths, at 512 pixels) through backdrop-cli, scored by evaluate.py: a measure of people
# closer than the labelled sets show, beside evaluate-cli.sh's real splits.
#
#   training/evaluate-close-ups.sh CLI MODEL DATASETS OUT      e.g.
#   training/evaluate-close-ups.sh build/cli/backdrop-cli data/backdrop-portrait.bdm ../shared/datasets close-out
#
# OUT/0.25 and OUT/0.4 get images and masks once, then pred (the masks). DEVICE and PRECISION
# pass to the CLI.
set -euo pipefail
cli=$(realpath "$1") model=$(realpath "$2") sets=$(realpath "$3") out=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
for frac in 0.25 0.4; do
    dir=$out/$frac
    [[ -d $dir/images ]] || "$python" "$here/close_ups.py" make "$sets" "$dir" "$frac"
    "$here/cli-masks.sh" "$cli" "$model" "$dir/images" "$dir/pred"
    echo "== top $frac of the person"
    "$python" "$here/evaluate.py" --pred "$dir/pred" --gt "$dir/masks" | grep -v '^worst:'
done
