#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The live-camera pipeline of docs/VIDEO.md at 720p on this machine's CPU, as frames per second
# by network size: a camera's YUV frames -> videoconvert -> backdrop (composite over a blur)
# -> videoconvert to YUY2 (what v4l2loopback takes) -> fakesink, as fast as it goes.
# The frames are DAVIS clips scaled to 1280x720 (people, motion) when the set is there, else
# videotestsrc's moving ball.
#
#   tools/in-trixie bench/video-live.sh BUILD [DEVICE] [SIZES...]
#   e.g. tools/in-trixie bench/video-live.sh build-test cpu 512 320 256 192
#        tools/in-trixie bench/video-live.sh build-cuda cuda 512     (on the GPU host)
set -euo pipefail
build=$(cd "${1:?usage: video-live.sh BUILD [DEVICE] [SIZES...]}" && pwd)
device=${2:-cpu}
shift $(( $# < 2 ? $# : 2 ))
sizes=${*:-512 320 256 192}
frames=${FRAMES:-90}
export GST_PLUGIN_PATH=$build/gst
export BACKDROP_MODEL=${BACKDROP_MODEL:-$build/data/backdrop-portrait.bdm}
here=$(cd "$(dirname "$0")" && pwd)
davis=${DAVIS:-$here/../../shared/datasets/davis-people-train}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -d $davis/images ]] && command -v ffmpeg >/dev/null; then
    i=0
    for f in $(ls "$davis"/images/hike-*.webp "$davis"/images/lucia-*.webp | head -n "$frames"); do
        ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$work/$(printf 'f%03d.webp' $i)"
        i=$((i + 1))
    done
    ffmpeg -v error -i "$work/f%03d.webp" -vf scale=1280:720 -pix_fmt yuv420p -f rawvideo "$work/in.yuv"
    n=$(( $(stat -c %s "$work/in.yuv") / (1280 * 720 * 3 / 2) ))
    src="filesrc location=$work/in.yuv ! rawvideoparse width=1280 height=720 format=i420 framerate=30/1"
    what="$n DAVIS frames (hike, lucia) at 1280x720"
else
    n=$frames
    src="videotestsrc num-buffers=$n pattern=ball ! video/x-raw,width=1280,height=720,format=I420,framerate=30/1"
    what="$n videotestsrc frames at 1280x720 (no DAVIS set)"
fi
echo "backdrop live pipeline, $what, device $device, $(nproc) cores"
for s in $sizes; do
    t0=$(date +%s.%N)
    gst-launch-1.0 -q $src ! videoconvert ! ${QUEUE:+queue !} \
        backdrop device=$device input-size=$s output=composite background=${BACKGROUND:-blur} ! \
        ${QUEUE:+queue !} videoconvert ! video/x-raw,format=YUY2 ! fakesink sync=false
    t1=$(date +%s.%N)
    awk -v n="$n" -v s="$s" -v a="$t0" -v b="$t1" \
        'BEGIN { printf "input-size %4d: %6.1f frames/s (%.1f ms a frame)\n", s, n / (b - a), 1000 * (b - a) / n }'
done
