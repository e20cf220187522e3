#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Re-encode the data sets at the training resolution, small enough to travel to the GPU
machine in two calls (the first four sets: about 70 MiB in all; a call carries 64 MiB):

    pack_data.py --src ../shared/datasets --dst .data [--sets ccp-person,davis-no-people]

Photos: long side at most 512 (area-averaged, as the engine scales), WebP quality 75.
Masks: same size, lossless PNG. Sets without masks stay without. Everything is packed, the
validation stems too: train.py splits by name, so the split is the same on both sides.
Without --sets, every set of data.SETS that the source holds; teacher labels are not packed
(train.py --teacher reads them at any size).
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
    ap.add_argument("--src", required=True, help="folder with the data sets")
    ap.add_argument("--dst", required=True, help="output folder (keep it out of git: .data/ is ignored)")
    ap.add_argument("--max-side", type=int, default=512)
    ap.add_argument("--quality", type=int, default=75)
    ap.add_argument("--sets", help="comma-separated set names (default: all that --src holds)")
    args = ap.parse_args()
    names = args.sets.split(",") if args.sets else \
        [n for n in data.SETS if n not in data.OPTIONAL_SETS or os.path.isdir(os.path.join(args.src, n))]
    unknown = [n for n in names if n not in data.SETS]
    if unknown:
        ap.error(f"unknown sets {', '.join(unknown)}; known: {', '.join(data.SETS)}")
    jobs = []
    for name in names:
        spec = data.SETS[name]
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
