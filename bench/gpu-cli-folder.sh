#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: a folder of 100 JPEGs of about 1 MP (1333x750, made from the photos in
# PHOTOS, brightness varied) through backdrop-cli --device cuda, masks then cut-outs (PNG),
# three runs each, one process a run (start-up included), the GPU's busy share sampled by
# nvidia-smi every 50 ms. BUNDLE comes from tools/gpu-cli-bundle (a CUDA build).
#
#   bench/gpu-cli-folder.sh BUNDLE MODEL PHOTOS
set -u
bundle=$(realpath "${1:?usage: bench/gpu-cli-folder.sh BUNDLE MODEL PHOTOS}") model=$(realpath "${2:?model}")
photos=$(realpath "${3:?photos}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$photos" "$work/photos" <<'PY'
import os, sys
from PIL import Image, ImageEnhance
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
names = sorted(os.listdir(src))
for i in range(100):
    im = Image.open(os.path.join(src, names[i % len(names)])).convert("RGB").resize((1333, 750), Image.BICUBIC)
    im = ImageEnhance.Brightness(im).enhance(0.85 + 0.3 * (i // len(names)) / 5)
    im.save(os.path.join(dst, "p%03d.jpg" % i), quality=90)
PY
ls "$work/photos" | wc -l
cli=$bundle/run.sh
nvidia-smi --query-gpu=name --format=csv,noheader
python3 - "$cli" "$model" "$work/photos" <<'PY'
import os, resource, subprocess, sys, tempfile, time, shutil
cli, model, photos = sys.argv[1], sys.argv[2], sys.argv[3]
for kind in ("mask", "cutout"):
    for r in range(3):
        out = tempfile.mkdtemp()
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-lms", "50"],
                               stdout=subprocess.PIPE, text=True)
        t0 = time.time()
        p = subprocess.run([cli, "-q", "--model", model, "--device", "cuda", "--output", kind, "--output-dir", out, photos],
                           capture_output=True, text=True)
        dt = time.time() - t0
        smi.terminate(); util = [int(x) for x in smi.communicate()[0].split() if x.isdigit()]
        n = len(os.listdir(out)); shutil.rmtree(out)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"{kind} run {r+1}: {n} files in {dt:.2f} s, {n/dt:.1f} photos/s, GPU busy {sum(util)/max(1,len(util)):.0f}% (mean of {len(util)} samples), max RSS so far {rss:.0f} MB, rc {p.returncode} {p.stderr.strip()[:200]}")
PY
