#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# People turned sideways and upside down (turned_people.py) through backdrop-cli, scored by
# angle: a measure of poses no labelled set shows, beside evaluate-cli.sh's real splits.
#
#   training/evaluate-turned.sh CLI MODEL DATASETS OUT      e.g.
#   training/evaluate-turned.sh build/cli/backdrop-cli data/backdrop-portrait.bdm ../shared/datasets turned-out
#
# OUT/images and OUT/masks are made once (the validation photos of ccp-person and
# scenes-no-people); OUT/pred gets the masks. DEVICE and PRECISION pass to the CLI.
set -euo pipefail
cli=$(realpath "$1") model=$(realpath "$2") sets=$(realpath "$3") out=$4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${PYTHON:-python3}
[[ -d $out/images ]] || "$python" "$here/turned_people.py" make "$sets" "$out"
"$here/cli-masks.sh" "$cli" "$model" "$out/images" "$out/pred"
"$python" "$here/turned_people.py" score "$out/pred" "$out"
