#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The `backdrop` element alone at 1080p on the GPU machine (issue 23's "element alone" target;
# docs/PERFORMANCE.md, "Video"): raw I420 frames read from a file -> rawvideoparse -> backdrop
# -> fakesink, as fast as it goes, for each output. FRAMES frames are made from the photos in
# PHOTOS (scaled to 1920x1080, BT.601), and each output runs twice, on 30 frames and on all:
# frames/s with the start-up, and after it (the difference of the two runs). BUNDLE comes from
# tools/gpu-gst-bundle; the GPU machine has no GStreamer of its own. FRAMES defaults to 1200
# (3.7 GB of input in the temporary folder): with 300, the start-up (about half a second, give
# or take a tenth) is most of the long run, and the figure after it moved by a fifth from run
# to run.
#
#   bench/video-gpu-element.sh BUNDLE MODEL PHOTOS [FRAMES] [DEVICE]     e.g. ... 1200 cuda
#
# ELEMENT="lanes=2" (the environment) adds properties to the element. QUEUE=1 puts a queue
# before it, so that reading the file and parsing its frames run on a thread of their own
# and the element's streaming thread does the element's work alone.
set -euo pipefail
bundle=$(realpath "${1:?usage: video-gpu-element.sh BUNDLE MODEL PHOTOS [FRAMES] [DEVICE]}")
model=$(realpath "${2:?model}") photos=$(realpath "${3:?photos}")
frames=${4:-1200} device=${5:-cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$photos" "$work/in.yuv" "$frames" <<'PY'
import os, sys
import numpy as np
from PIL import Image
src, dst, frames = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sorted(os.listdir(src))
planes = []
for name in names:
    rgb = np.asarray(Image.open(os.path.join(src, name)).convert("RGB").resize((1920, 1080), Image.BILINEAR), np.float32)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
    u = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
    v = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
    half = lambda p: p.reshape(540, 2, 960, 2).mean(axis=(1, 3))
    planes.append(b"".join(np.clip(np.rint(p), 0, 255).astype(np.uint8).tobytes() for p in (y, half(u), half(v))))
with open(dst, "wb") as f:
    for i in range(frames):
        f.write(planes[i % len(planes)])
PY
frame=$((1920 * 1080 * 3 / 2))
head -c $((30 * frame)) "$work/in.yuv" >"$work/short.yuv"
run () {   # FILE OUTPUT...: seconds
    local t0 t1
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086   # ELEMENT holds several properties, QUEUE's expansion three words
    "$bundle/gst-launch.sh" -q filesrc location="$1" blocksize=$frame \
        ! rawvideoparse width=1920 height=1080 format=i420 framerate=30/1 ${QUEUE:+! queue max-size-buffers=4} \
        ! backdrop device="$device" model="$model" ${ELEMENT:-} "${@:2}" ! fakesink sync=false >"$work/log" 2>&1 ||
        { cat "$work/log" >&2; exit 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
echo "the backdrop element${ELEMENT:+ ($ELEMENT)}${QUEUE:+ after a queue}, $device, 1920x1080 I420 from a file, $frames frames made from $(ls "$photos" | wc -l) photos; $(nproc) cores"
for out in "output=mask" "output=cutout" "output=composite background=#1e8c5a" "output=composite background=blur"; do
    # shellcheck disable=SC2086
    short=$(run "$work/short.yuv" $out) long=$(run "$work/in.yuv" $out)
    awk -v s="$short" -v l="$long" -v n="$frames" -v o="$out" 'BEGIN {
        printf "%-36s %6.1f frames/s with the start-up (%d frames in %.2f s), %6.1f after it\n", o, n / l, n, l, (n - 30) / (l - s) }'
done
