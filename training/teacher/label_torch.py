#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Teacher labels on a GPU without onnxruntime: the same labels as label_onnxruntime.py (one
8-bit soft mask per photo, 255 = person, at the photo's size, LABELS/<set>/<stem>.png), from
the teacher's ONNX file run by onnx_torch.py in PyTorch, a batch at a time. Resumable.

    label_torch.py [--model isnet-medium.onnx] --out LABELS SET_DIR...

The contract is the package's own pre-processing: RGB resized bilinearly to 1024x1024 (no
anti-aliasing, as its tensorResizeBilinear), (x - 128) / 256, output resized back bilinearly.
The model and its labels are for training only (docs/MODEL.md, "The teacher").
"""
import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

import onnx_torch

SIZE = 1024
EXTS = (".webp", ".jpg", ".jpeg", ".png")
DEFAULT_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".cache", "isnet-medium.onnx")


def load(path):
    return np.array(Image.open(path).convert("RGB"))


def save(alpha, target):
    Image.fromarray(alpha).save(target + ".tmp.png")
    os.replace(target + ".tmp.png", target)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--limit", type=int, default=0, help="at most this many photos per set (0: all)")
    ap.add_argument("sets", nargs="+")
    a = ap.parse_args()
    dev = torch.device(a.device)
    t0 = time.time()
    # A CPU has no fast half-precision convolutions: compute there in fp32.
    graph = onnx_torch.Graph(onnx_torch.read_model(a.model), dev, torch.float32 if dev.type == "cpu" else None)
    half = any(t.dtype == torch.float16 for t in graph.consts.values())
    print(f"teacher: {len(graph.nodes)} nodes read in {time.time() - t0:.1f} s, on {dev}", flush=True)
    if dev.type == "cuda":
        torch.backends.cudnn.benchmark = True
    jobs = []
    for d in a.sets:
        name = os.path.basename(os.path.normpath(d))
        os.makedirs(os.path.join(a.out, name), exist_ok=True)
        files = sorted(f for f in os.listdir(os.path.join(d, "images")) if f.lower().endswith(EXTS))
        files = files[:a.limit or None]
        for f in files:
            target = os.path.join(a.out, name, os.path.splitext(f)[0] + ".png")
            if not os.path.exists(target):
                jobs.append((os.path.join(d, "images", f), target))
    done, t0 = 0, time.time()
    with ThreadPoolExecutor(8) as pool:
        pending = []
        batches = [jobs[i:i + a.batch] for i in range(0, len(jobs), a.batch)]
        decoded = pool.map(lambda b: [load(p) for p, _ in b], batches)
        for batch, imgs in zip(batches, decoded):
            x = torch.stack([F.interpolate(torch.from_numpy(im).to(dev).permute(2, 0, 1)[None].float(),
                                           size=(SIZE, SIZE), mode="bilinear", align_corners=False)[0]
                             for im in imgs])
            x = (x - 128.0) / 256.0
            y = graph(x.half() if half and graph.nodes[0]["op"] != "Cast" else x).float()
            for im, (_, target), yi in zip(imgs, batch, y):
                h, w = im.shape[:2]
                alpha = F.interpolate(yi[None].clamp(0, 1), size=(h, w), mode="bilinear", align_corners=False)
                alpha = (alpha[0, 0] * 255 + 0.5).to(torch.uint8).cpu().numpy()
                pending.append(pool.submit(save, alpha, target))
            done += len(batch)
            if done % 400 < a.batch:
                print(f"teacher: {done}/{len(jobs)} photos, {(time.time() - t0) / done * 1000:.1f} ms each",
                      flush=True)
        for p in pending:
            p.result()
    print(f"teacher: {done} photos labelled in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
