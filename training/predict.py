#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write PyTorch's masks for a folder of photos, the way the engine pre-processes them, so that
evaluate.py can score them (and compare with what backdrop-cli writes for the same photos).

    predict.py --model ../data/backdrop-portrait.bdm --images DIR --out PRED_DIR [--list splits/ccp-person.txt]

The mask is the network's probability x 255 at the photo's size (bilinear upsampling; the engine
uses an edge-aware upsampler, so its masks differ slightly at edges).
"""
import argparse
import os

import numpy as np
import torch
from PIL import Image

import bdm
import model as unet
from preprocess import predict

EXTS = (".webp", ".jpg", ".jpeg", ".png")


def load_model(path):
    """A .bdm file (folded, what the engine runs) or a training checkpoint (.pt)."""
    if path.endswith(".pt"):
        ck = torch.load(path, map_location="cpu")
        net = unet.build(ck["config"])
        net.load_state_dict(ck["model"])
        return net.eval()
    header, tensors = bdm.read(path)
    return unet.FoldedUNet(header["depth"], {k: torch.from_numpy(v) for k, v in tensors.items()},
                           header["input_size"]).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help=".bdm model file or .pt checkpoint")
    ap.add_argument("--images", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--list", help="only the stems listed in this file (one per line)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch's default)")
    ap.add_argument("--input-size", type=int, help="long side to scale to (default: the model's)")
    ap.add_argument("--enlarge", action="store_true",
                    help="scale smaller photos up to it too (the engine does not: to compare)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    net = load_model(args.model)
    wanted = None
    if args.list:
        with open(args.list) as f:
            wanted = {line.strip() for line in f if line.strip()}
    os.makedirs(args.out, exist_ok=True)
    files = sorted(f for f in os.listdir(args.images) if f.lower().endswith(EXTS))
    n = 0
    for f in files:
        stem = os.path.splitext(f)[0]
        if wanted is not None and stem not in wanted:
            continue
        prob = predict(net, Image.open(os.path.join(args.images, f)), args.input_size or net.input_size,
                       enlarge=args.enlarge)
        Image.fromarray(np.round(prob * 255).astype(np.uint8)).save(os.path.join(args.out, stem + ".png"))
        n += 1
    print(f"wrote {n} masks to {args.out}")


if __name__ == "__main__":
    main()
