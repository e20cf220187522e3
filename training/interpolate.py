#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Blend two checkpoints of the same network weight by weight: (1 - t) * A + t * B.

    interpolate.py --a ../.runs/w32d/last.pt --b ../.runs/w32g/last.pt --t 0.4 --out ../.runs/w32h/last.pt
    interpolate.py --a round1.bdm --b round2.bdm --t 0.75 --out blend.bdm      # model files

Two model files (.bdm, batch norms folded) blend their folded tensors and give a model file,
stored as IEEE half like the shipped one: the second round's fine-tune has working batch
norms of its own (train.py --init-bdm), so its checkpoint and the first round's have no
common unfolded form, but the folded networks of a fine-tune and its start are close enough
to blend as they are.

When B was fine-tuned from A, the networks in between keep most of what B learnt while
giving back less of what A knew (robust fine-tuning by weight interpolation, "WiSE-FT").
The shipped model blends stage 3 with stage 4, the hard-negative stage: stage 4 alone called
far fewer background pixels person but lost small people in motion (docs/MODEL.md).
Batch-norm statistics are blended like the weights; integer buffers come from B.
"""
import argparse
import os

import torch


def blend_model_files(args):
    import bdm
    import model as unet
    ha, ta = bdm.read(args.a)
    hb, tb = bdm.read(args.b)
    if (ha["depth"], ha["widths"], ha["input_size"]) != (hb["depth"], hb["widths"], hb["input_size"]):
        raise SystemExit("interpolate: the two model files are not the same architecture")
    mixed = {k: (1 - args.t) * ta[k] + args.t * tb[k] for k in ta}
    bdm.write(args.out, hb["depth"], hb["widths"], hb["input_size"], unet.IMAGENET_MEAN, unet.IMAGENET_STD,
              mixed, name=hb["name"], dtype=1)
    bdm.verify(args.out, mixed, 1)
    print(f"wrote {args.out}: {1 - args.t:g} x {args.a} + {args.t:g} x {args.b}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="checkpoint A (t = 0)")
    ap.add_argument("--b", required=True, help="checkpoint B (t = 1), same architecture")
    ap.add_argument("--t", type=float, required=True, help="share of B, 0..1")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not 0.0 <= args.t <= 1.0:
        raise SystemExit("interpolate: --t must lie in 0..1")
    if args.a.endswith(".bdm") and args.b.endswith(".bdm"):
        return blend_model_files(args)
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
