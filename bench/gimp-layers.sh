#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GIMP plug-in on several layers at once: "Remove Background" (layer masks) on LAYERS
# copies of PHOTO scaled to SIDE pixels on its long side, in gimp-console. Each round runs
# GIMP twice, the same script with and without the plug-in's call, and prints the
# difference: the plug-in's own time (its start, the model, every layer read, run and
# written back). PLUGIN is the plug-in binary (build/plugin-gimp/backdrop-remove-background);
# several, in turns, to compare builds.
#
#   bench/gimp-layers.sh MODEL PHOTO LAYERS SIDE DEVICE ROUNDS PLUGIN...
#   e.g. bench/gimp-layers.sh data/backdrop-portrait.bdm photo.jpg 4 4000 cpu 3 build/plugin-gimp/backdrop-remove-background
set -euo pipefail
model=$(realpath "${1:?usage: gimp-layers.sh MODEL PHOTO LAYERS SIDE DEVICE ROUNDS PLUGIN...}")
photo=$(realpath "${2:?photo}") layers=${3:?layers} side=${4:?side} device=${5:?device} rounds=${6:?rounds}
shift 6
[[ $# -gt 0 ]] || { echo "gimp-layers.sh: name at least one plug-in binary" >&2; exit 2; }
gimp=$(command -v gimp-console-3.0 || true)
[[ -n $gimp ]] || { echo "gimp-layers.sh: gimp-console-3.0 is not installed" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home"

# A Script-Fu string holds the path as it is (no quotes or backslashes in ours).
script="(let* ((img (car (gimp-file-load RUN-NONINTERACTIVE \"$photo\")))
               (layer (vector-ref (car (gimp-image-get-layers img)) 0))
               (w (car (gimp-drawable-get-width layer)))
               (h (car (gimp-drawable-get-height layer)))
               (s (/ $side (max w h))))
          (gimp-image-scale img (round (* w s)) (round (* h s)))
          (let loop ((i 1) (all (list layer)))
            (if (< i $layers)
                (let ((copy (car (gimp-layer-copy layer))))
                  (gimp-image-insert-layer img copy 0 -1)
                  (loop (+ i 1) (cons copy all)))
                (begin CALL))))"
call="(plug-in-backdrop-remove-background #:run-mode RUN-NONINTERACTIVE #:image img
        #:drawables (list->vector all) #:output \"mask\" #:device \"$device\" #:model \"$model\")"

run_gimp () {   # PROFILE EXPR: seconds
    local t0 t1
    t0=$(date +%s.%N)
    HOME="$work/home" GIMP3_DIRECTORY="$1" LC_ALL=C.UTF-8 timeout -k 10 900 "$gimp" -i -d -f --quit \
        --batch-interpreter=plug-in-script-fu-eval -b "$2" >"$work/log" 2>&1 ||
        { cat "$work/log" >&2; exit 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}

n=0
for plugin in "$@"; do
    n=$((n + 1))
    mkdir -p "$work/profile$n/plug-ins/backdrop-remove-background"
    cp "$plugin" "$work/profile$n/plug-ins/backdrop-remove-background/backdrop-remove-background"
    run_gimp "$work/profile$n" "(gimp-message \"warm\")" >/dev/null   # GIMP's first start writes its profile
done
echo "$layers layers of ${side} px (long side), masks, $device, $(nproc) cores"
for r in $(seq "$rounds"); do
    n=0
    for plugin in "$@"; do
        n=$((n + 1))
        without=$(run_gimp "$work/profile$n" "${script/CALL/#t}")
        with=$(run_gimp "$work/profile$n" "${script/CALL/$call}")
        awk -v p="$plugin" -v r="$r" -v a="$without" -v b="$with" -v n="$layers" 'BEGIN {
            printf "round %d  %-60s plug-in %.2f s (%.2f s a layer; GIMP alone %.2f s)\n", r, p, b - a, (b - a) / n, a }'
    done
done
