#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: backdrop-cli --device cuda (fast and exact) against --device cpu on the
# same photos, mask by mask, then the time for 20 photos of 1 MP (masks) and 10 of 12 MP
# (cut-outs), decoding and encoding included. BUNDLE comes from tools/gpu-cli-bundle.
#
#   bench/gpu-cli-check.sh BUNDLE MODEL.bdm PHOTO_DIR
set -u
bundle=${1:?usage: bench/gpu-cli-check.sh BUNDLE MODEL PHOTOS} model=${2:?model} photos=${3:?photos}
cli="$bundle/run.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The photos as PNG: the bundle reads PNG and JPEG without gdk-pixbuf's loader modules.
mkdir "$tmp/photos"
python3 - "$photos" "$tmp/photos" <<'PY'
import os, sys
from PIL import Image
for name in sorted(os.listdir(sys.argv[1])):
    Image.open(os.path.join(sys.argv[1], name)).convert("RGB").save(os.path.join(sys.argv[2], os.path.splitext(name)[0] + ".png"))
PY
status=0
for run in "cuda fast" "cuda exact" "cpu fast"; do
    set -- $run
    "$cli" --quiet --device "$1" --precision "$2" --model "$model" --output mask "$tmp/photos" \
        --output-dir "$tmp/$1-$2" || { echo "backdrop-cli --device $1 --precision $2 failed"; status=1; }
done
"$cli" --device auto --model "$model" --output mask "$tmp/photos" --output-dir "$tmp/auto" 2>&1 | head -1
python3 - "$tmp" <<'PY' || status=1
import os, sys
import numpy as np
from PIL import Image
tmp, bad = sys.argv[1], 0
for name in sorted(os.listdir(f"{tmp}/cpu-fast")):
    cpu, fast, exact = (np.asarray(Image.open(f"{tmp}/{d}/{name}")).astype(int) for d in ("cpu-fast", "cuda-fast", "cuda-exact"))
    shares = [np.mean(np.abs(a - b) <= 1) for a, b in ((exact, cpu), (fast, cpu), (fast, exact))]
    bad += min(shares) < 0.999
    print(f"{name:28} {cpu.shape[1]}x{cpu.shape[0]:<5} exact~cpu {shares[0]:.4%}  fast~cpu {shares[1]:.4%}  "
          f"fast~exact {shares[2]:.4%}   (pixels within 1/255)")
sys.exit(1 if bad else 0)
PY
# Timing photos: the first photo scaled to 1 MP and 12 MP, saved as JPEG.
python3 - "$tmp/photos" "$tmp" <<'PY'
import os, sys
from PIL import Image
src = os.path.join(sys.argv[1], sorted(os.listdir(sys.argv[1]))[0])   # the first photo
im = Image.open(src).convert("RGB")
for label, size, n in (("1mp", (816, 1224), 20), ("12mp", (2832, 4248), 10)):
    os.makedirs(f"{sys.argv[2]}/{label}")
    scaled = im.resize(size, Image.BILINEAR)
    for i in range(n):
        scaled.save(f"{sys.argv[2]}/{label}/{label}-{i}.jpg", quality=90)
PY
echo "20 photos of 1 MP, masks, --device cuda:";    "$cli" --device cuda --model "$model" --output mask "$tmp/1mp" --output-dir "$tmp/o1" 2>&1 | tail -1
echo "10 photos of 12 MP, cut-outs, --device cuda:"; "$cli" --device cuda --model "$model" --output cutout "$tmp/12mp" --output-dir "$tmp/o12" 2>&1 | tail -1
echo "10 photos of 12 MP, cut-outs, --device cpu:";  "$cli" --device cpu --model "$model" --output cutout "$tmp/12mp" --output-dir "$tmp/o12c" 2>&1 | tail -1
exit $status
