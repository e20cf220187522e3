#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Video on the GPU host, the issue's two targets (docs/PERFORMANCE.md, "Video"):
#   1. the element alone at 1080p: raw frames from memory -> backdrop (composite over a blur)
#      -> fakesink, frames/s;
#   2. a 1080p30 file -> composite file with backdrop-video, as a multiple of real time.
# The frames are DAVIS clips scaled to 1920x1080 when the set is there, else ffmpeg's
# testsrc2. Needs ffmpeg, gst-launch-1.0 and a build with CUDA and the video parts.
#
#   bench/video-gpu.sh BUILD [DEVICE] [SECONDS]     e.g. bench/video-gpu.sh build-cuda cuda 10
set -euo pipefail
build=$(cd "${1:?usage: video-gpu.sh BUILD [DEVICE] [SECONDS]}" && pwd)
device=${2:-cuda}
seconds=${3:-10}
export GST_PLUGIN_PATH=$build/gst
export BACKDROP_MODEL=${BACKDROP_MODEL:-$build/data/backdrop-portrait.bdm}
here=$(cd "$(dirname "$0")" && pwd)
davis=${DAVIS:-$here/../../shared/datasets/davis-people-train}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
frames=$((seconds * 30))

if [[ -d $davis/images ]]; then
    i=0
    for f in "$davis"/images/*.webp; do
        ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$work/$(printf 'f%04d.webp' $i)"
        i=$((i + 1))
    done
    ffmpeg -v error -framerate 30 -stream_loop -1 -i "$work/f%04d.webp" \
        -f lavfi -i "sine=duration=$seconds" -frames:v $frames -vf scale=1920:1080 -c:v libx264 -preset veryfast -crf 18 \
        -pix_fmt yuv420p -c:a aac -shortest "$work/in.mp4"
    what="DAVIS frames at 1920x1080"
else
    ffmpeg -v error -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$seconds" -f lavfi -i "sine=duration=$seconds" \
        -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac "$work/in.mp4"
    what="testsrc2 at 1920x1080"
fi
# Raw I420 in memory for the element alone (decoding is not its work).
ffmpeg -v error -i "$work/in.mp4" -frames:v 300 -f rawvideo -pix_fmt yuv420p "$work/in.yuv"
n=$(( $(stat -c %s "$work/in.yuv") / (1920 * 1080 * 3 / 2) ))
echo "video on $device, $what; $(nproc) cores"
for out in "mask" "composite background=blur"; do
    t0=$(date +%s.%N)
    gst-launch-1.0 -q filesrc location="$work/in.yuv" blocksize=$((1920 * 1080 * 3 / 2)) \
        ! rawvideoparse width=1920 height=1080 format=i420 framerate=30/1 \
        ! backdrop device=$device output=$out ! fakesink sync=false
    t1=$(date +%s.%N)
    awk -v n=$n -v a=$t0 -v b=$t1 -v o="$out" 'BEGIN { printf "element alone, 1080p, output=%s: %.0f frames/s (%d frames, start-up included)\n", o, n / (b - a), n }'
done
t0=$(date +%s.%N)
"$build/video/backdrop-video" -q --device $device --output composite --background blur "$work/in.mp4" "$work/out.mp4"
t1=$(date +%s.%N)
awk -v s=$seconds -v a=$t0 -v b=$t1 'BEGIN { printf "backdrop-video, %d s of 1080p30 to a composite MP4: %.1f s, %.1fx real time\n", s, b - a, s / (b - a) }'
