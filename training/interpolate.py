#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Blend two checkpoints of the same network weight by weight: (1 - t) * A + t * B.

    interpolate.py --a ../.runs/w32d/last.pt --b ../.runs/w32g/last.pt --t 0.4 --out ../.runs/w32h/last.pt

When B was fine-tuned from A, the networks in between keep most of what B learnt while
giving back less of what A knew (robust fine-tuning by weight interpolation, "WiSE-FT").
The shipped model blends stage 3 with stage 4, the hard-negative stage: stage 4 alone called
far fewer background pixels person but lost small people in motion (docs/MODEL.md).
Batch-norm statistics are blended like the weights; integer buffers come from B.
"""
import argparse
import os

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="checkpoint A (t = 0)")
    ap.add_argument("--b", required=True, help="checkpoint B (t = 1), same architecture")
    ap.add_argument("--t", type=float, required=True, help="share of B, 0..1")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not 0.0 <= args.t <= 1.0:
        raise SystemExit("interpolate: --t must lie in 0..1")
    a = torch.load(args.a, map_location="cpu", weights_only=False)
    b = torch.load(args.b, map_location="cpu", weights_only=False)
    if a["config"] != b["config"] or a["model"].keys() != b["model"].keys():
        raise SystemExit("interpolate: the two checkpoints are not the same architecture")
    blended = {}
    for k, vb in b["model"].items():
        va = a["model"][k]
        if va.shape != vb.shape:
            raise SystemExit(f"interpolate: {k} has shape {tuple(va.shape)} in A, {tuple(vb.shape)} in B")
        blended[k] = torch.lerp(va.float(), vb.float(), args.t) if vb.is_floating_point() else vb.clone()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    torch.save({"config": b["config"], "step": b["step"], "model": blended,
                "blend": {"a": args.a, "b": args.b, "t": args.t}}, args.out)
    print(f"wrote {args.out}: {1 - args.t:g} x {args.a} + {args.t:g} x {args.b}")


if __name__ == "__main__":
    main()
