#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: a folder of COUNT JPEGs (100 by default) of about 1 MP (1333x750, made
# from the photos in PHOTOS, brightness varied) through backdrop-cli, masks then cut-outs
# (PNG), three runs each, one process a run (start-up included), each GPU's busy share sampled
# by nvidia-smi every 50 ms, and the cores the CLI kept busy (its CPU time over the run's).
# DEVICES (default "cuda") lists the --device values to run, in turns within each round (e.g.
# "cuda:0 cuda:all" on a host with several GPUs); where it names more than one, the first run
# of each is compared with the first device's, file by file.
# BUNDLE comes from tools/gpu-cli-bundle (a CUDA build).
#
#   [DEVICES="cuda:0 cuda:all"] bench/gpu-cli-folder.sh BUNDLE MODEL PHOTOS [COUNT]
set -u
bundle=$(realpath "${1:?usage: bench/gpu-cli-folder.sh BUNDLE MODEL PHOTOS [COUNT]}") model=$(realpath "${2:?model}")
photos=$(realpath "${3:?photos}") count=${4:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$photos" "$work/photos" "$count" <<'PY'
import os, sys
from PIL import Image, ImageEnhance
src, dst, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(dst, exist_ok=True)
names = sorted(os.listdir(src))
for i in range(count):
    im = Image.open(os.path.join(src, names[i % len(names)])).convert("RGB").resize((1333, 750), Image.BICUBIC)
    im = ImageEnhance.Brightness(im).enhance(0.85 + 0.3 * (i // len(names)) / max(1, count // len(names)))
    im.save(os.path.join(dst, "p%05d.jpg" % i), quality=90)
PY
ls "$work/photos" | wc -l
nvidia-smi --query-gpu=index,name --format=csv,noheader
python3 - "$bundle/run.sh" "$model" "$work/photos" "$work" ${DEVICES:-cuda} <<'PY'
import filecmp, os, resource, subprocess, sys, tempfile, time, shutil
cli, model, photos, work, devices = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
for kind in ("mask", "cutout"):
    firsts = {}
    for r in range(3):
        for device in devices:
            out = tempfile.mkdtemp(dir=work)
            smi = subprocess.Popen(["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits", "-lms", "50"],
                                   stdout=subprocess.PIPE, text=True)
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.time()
            p = subprocess.run([cli, "-q", "--model", model, "--device", device, "--output", kind, "--output-dir", out, photos],
                               capture_output=True, text=True)
            dt = time.time() - t0
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cores = (cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime) / dt
            smi.terminate()
            busy = {}
            for line in smi.communicate()[0].splitlines():
                fields = [f.strip() for f in line.split(",")]
                if len(fields) == 2 and fields[1].isdigit():
                    busy.setdefault(fields[0], []).append(int(fields[1]))
            shares = " ".join(f"GPU{g} {sum(v) / len(v):.0f}%" for g, v in sorted(busy.items()))
            n = len(os.listdir(out))
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            print(f"{kind} {device} run {r + 1}: {n} files in {dt:.2f} s, {n / dt:.1f} photos/s, busy {shares}, CPU {cores:.1f} of {os.cpu_count()} cores, "
                  f"max RSS so far {rss:.0f} MB, rc {p.returncode} {p.stderr.strip()[:200]}", flush=True)
            if r == 0:
                firsts[device] = out
            else:
                shutil.rmtree(out)
    base = firsts[devices[0]]
    for device in devices[1:]:
        names = sorted(os.listdir(base))
        same = names == sorted(os.listdir(firsts[device])) and \
            all(filecmp.cmp(os.path.join(base, f), os.path.join(firsts[device], f), shallow=False) for f in names)
        print(f"{kind}: {device}'s files {'the same as' if same else 'DIFFER from'} {devices[0]}'s, {len(names)} files")
    for out in firsts.values():
        shutil.rmtree(out)
PY
