#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Re-encode the four data sets at the training resolution, small enough to travel to the GPU
machine in two calls (about 70 MiB in all; a call carries 64 MiB):

    pack_data.py --src ../shared/datasets --dst .data

Photos: long side at most 512 (area-averaged, as the engine scales), WebP quality 75.
Masks: same size, lossless PNG. Sets without masks stay without. Everything is packed, the
validation stems too: train.py splits by name, so the split is the same on both sides.
"""
import argparse
import os
from concurrent.futures import ProcessPoolExecutor

from PIL import Image

import data
from preprocess import resize, scaled_size


def pack_one(job):
    src, dst, set_name, stem, max_side, quality = job
    img = Image.open(data.find_file(os.path.join(src, set_name, "images"), stem)).convert("RGB")
    size = scaled_size(img.width, img.height, max_side) if max(img.size) > max_side else img.size
    resize(img, size).save(os.path.join(dst, set_name, "images", stem + ".webp"), "WEBP",
                           quality=quality, method=6)
    if data.SETS[set_name]["masks"]:
        m = Image.open(data.find_file(os.path.join(src, set_name, "masks"), stem)).convert("L")
        resize(m, size).save(os.path.join(dst, set_name, "masks", stem + ".png"), optimize=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="folder with the four data sets")
    ap.add_argument("--dst", required=True, help="output folder (keep it out of git: .data/ is ignored)")
    ap.add_argument("--max-side", type=int, default=512)
    ap.add_argument("--quality", type=int, default=75)
    args = ap.parse_args()
    jobs = []
    for name, spec in data.SETS.items():
        os.makedirs(os.path.join(args.dst, name, "images"), exist_ok=True)
        if spec["masks"]:
            os.makedirs(os.path.join(args.dst, name, "masks"), exist_ok=True)
        jobs += [(args.src, args.dst, name, s, args.max_side, args.quality) for s in data.list_stems(args.src, name)]
    with ProcessPoolExecutor() as pool:
        list(pool.map(pack_one, jobs, chunksize=32))
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.dst) for f in fs)
    print(f"packed {len(jobs)} photos into {args.dst}: {total / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
