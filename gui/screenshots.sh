#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Makes docs/screenshots/*.png (welcome, editor light and dark, mask, unsure, region before
# and after, edge-aware brush, crop, narrow, batch)
# with the real app, photos and model, under Xvfb with private HOME and XDG folders.
#
#   gui/screenshots.sh [BUILD-DIR]          (default: build; run from anywhere)
#
# Environment: BACKDROP_MODEL (default: data/backdrop-portrait.bdm), BACKDROP_SCREENSHOT_PHOTOS
# (a folder; default: ../shared/datasets/ccp-person/images), BACKDROP_SCREENSHOT_OUT (default:
# docs/screenshots), BACKDROP_SCREENSHOT_ONLY (a comma-separated list of the files to write).
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
photos=${BACKDROP_SCREENSHOT_PHOTOS:-$repo/../shared/datasets/ccp-person/images}
out=${BACKDROP_SCREENSHOT_OUT:-$repo/docs/screenshots}
export BACKDROP_MODEL="${BACKDROP_MODEL:-$repo/data/backdrop-portrait.bdm}"

[ -x "$build/gui/backdrop-screenshots" ] || { echo "screenshots.sh: build $build first" >&2; exit 1; }
[ -f "$BACKDROP_MODEL" ] || { echo "screenshots.sh: no model at $BACKDROP_MODEL" >&2; exit 1; }
[ -d "$photos" ] || { echo "screenshots.sh: no photos in $photos" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/home" "$tmp/config" "$tmp/cache" "$tmp/data" "$tmp/runtime"
chmod 700 "$tmp/runtime"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_CACHE_HOME="$tmp/cache" \
       XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/runtime"
export GTK_A11Y=none NO_AT_BRIDGE=1 GDK_BACKEND=x11 GSETTINGS_BACKEND=memory \
       GSETTINGS_SCHEMA_DIR="$build/data" LANG="${LANG:-C.UTF-8}"

# The editor's photo first, then the rest of the batch: portraits that show hair and hands.
set -- ccp0024.webp ccp0003.webp ccp0005.webp ccp0008.webp ccp0016.webp ccp0037.webp
# The mask views show a photo where the model left some places undecided (0.9 % of it).
export BACKDROP_SCREENSHOT_MASK_PHOTO="$photos/ccp0065.webp"
# The region tool removes a garden lamp that Keep Passers-By keeps.
export BACKDROP_SCREENSHOT_REGION_PHOTO="$photos/ccp0018.webp" BACKDROP_SCREENSHOT_REGION_POINT=72,165
# The edge-aware brush keeps the wavy hair that the model cut off at both sides of a head.
export BACKDROP_SCREENSHOT_BRUSH_PHOTO="$photos/ccp0003.webp" BACKDROP_SCREENSHOT_BRUSH_SIZE=18 \
       BACKDROP_SCREENSHOT_BRUSH_STROKES='141,66,134,118;214,70,226,120'
files=""
for f in "$@"; do files="$files $photos/$f"; done

# shellcheck disable=SC2086
xvfb-run -a -s '-screen 0 1280x800x24' "$build/gui/backdrop-screenshots" "$out" $files
