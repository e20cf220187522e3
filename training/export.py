#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checkpoint -> model file (batch-norm folded), checked, plus an optional golden pair.

    export.py --ckpt runs/w16/last.pt --out ../data/backdrop-portrait.bdm \
              --golden ../tests/golden/portrait.bdg --golden-image PHOTO

Checks, each fatal: the folded network equals the eval-mode network it came from; the file
reads back (as strictly as the C loader reads it) to the same tensors; the network rebuilt from
the file gives the same output. The golden output is computed in float64 on the CPU from the
tensors as stored, so it is the exact reference the C engine must match (within 1e-3).
"""
import argparse
import os

import numpy as np
import torch
from PIL import Image

import bdm
import model as unet
from preprocess import preprocess


def load_checkpoint(path):
    ck = torch.load(path, map_location="cpu")
    net = unet.build(ck["config"])
    net.load_state_dict(ck["model"])
    return net.eval(), ck


def max_prob_diff(a, b, x):
    with torch.no_grad():
        return (torch.sigmoid(a(x)) - torch.sigmoid(b(x))).abs().max().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ckpt", help="checkpoint to export")
    ap.add_argument("--out", help="model file to write (.bdm)")
    ap.add_argument("--model-file", help="instead of --ckpt and --out: a finished model file (a blend of "
                    "two, interpolate.py), for which only the golden pair is written")
    ap.add_argument("--name", default="backdrop-portrait", help="name stored in the header")
    ap.add_argument("--f16", action="store_true", help="store tensors as IEEE half (half the size)")
    ap.add_argument("--golden", help="golden file to write (.bdg)")
    ap.add_argument("--golden-image", help="photo for the golden pair")
    ap.add_argument("--golden-side", type=int, default=256, help="long side of the golden input (small file)")
    args = ap.parse_args()

    torch.manual_seed(0)
    if args.model_file:
        if not (args.golden and args.golden_image):
            ap.error("--model-file writes the golden pair: give --golden and --golden-image")
        header, back = bdm.read(args.model_file)
        return write_golden(args, header["depth"], back)
    if not (args.ckpt and args.out):
        ap.error("give --ckpt and --out (or --model-file)")
    net, ck = load_checkpoint(args.ckpt)
    folded = unet.fold(net)
    fnet = unet.FoldedUNet(net.depth, folded, net.input_size).eval()
    x = torch.randn(1, 3, 96, 128)
    d = max_prob_diff(net, fnet, x)
    print(f"folded vs batch-norm network: max |dp| = {d:.2e} on random input")
    if d > 1e-4:
        raise SystemExit("folding changed the network")

    dtype = 1 if args.f16 else 0
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    blob = bdm.write(args.out, net.depth, net.widths, net.input_size, unet.IMAGENET_MEAN, unet.IMAGENET_STD,
                     {k: v.numpy() for k, v in folded.items()}, name=args.name, dtype=dtype)
    header, back = bdm.verify(args.out, {k: v.numpy() for k, v in folded.items()}, dtype)
    rnet = unet.FoldedUNet(net.depth, {k: torch.from_numpy(v) for k, v in back.items()}, net.input_size).eval()
    d2 = max_prob_diff(net, rnet, x)
    print(f"{args.out}: {len(blob)} bytes, {header['tensor_count']} tensors, widths {header['widths']}, "
          f"step {ck.get('step')}; file vs checkpoint max |dp| = {d2:.2e}")
    if d2 > (1e-4 if dtype == 0 else 5e-3):
        raise SystemExit("the file does not reproduce the network")

    if args.golden:
        write_golden(args, net.depth, back)


def write_golden(args, depth, back):
    """The golden pair from the tensors as stored, in float64 on the CPU."""
    img = Image.open(args.golden_image)
    xg, (t, l, h, w) = preprocess(img, args.golden_side, 1 << (depth - 1))
    gnet = unet.FoldedUNet(depth, {k: torch.from_numpy(v).double() for k, v in back.items()}).eval()
    rnet = unet.FoldedUNet(depth, {k: torch.from_numpy(v) for k, v in back.items()}).eval()
    with torch.no_grad():
        y = torch.sigmoid(gnet(xg.double()))[0, 0].float().numpy()
    bdm.write_golden(args.golden, xg[0].numpy(), y)
    xr, yr = bdm.read_golden(args.golden)
    assert np.array_equal(xr, xg[0].numpy()) and np.array_equal(yr, y)
    with torch.no_grad():  # how far plain fp32 lands from the float64 reference
        y32 = torch.sigmoid(rnet(xg))[0, 0].numpy()
    print(f"{args.golden}: input 3x{xg.shape[2]}x{xg.shape[3]} from {args.golden_image}, "
          f"photo at ({t},{l}) {h}x{w}; fp32 vs fp64 max |dp| = {np.abs(y32 - y).max():.2e}, "
          f"person fraction {float((y[t:t + h, l:l + w] >= 0.5).mean()):.3f}")


if __name__ == "__main__":
    main()
