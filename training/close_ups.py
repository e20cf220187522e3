#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Close-ups: a head and shoulders filling the frame, a test no labelled set holds.

Web photos of people are often close: a head and shoulders, the clothes running off the
frame's bottom and sides. Every labelled set here shows people whole or small. This makes a
test of that from held-out photos only: each validation person of ccp-person (its exact
mask) cropped to the top FRAC of its height (0.25: head and shoulders; 0.4: to the waist),
in a 4:5 window centred on the head, scaled to SIDE pixels on the long side (512: the size
the engine runs a photo at). CCP's photos are 512 pixels tall, so the crops are enlarged
two to four times: softer than a camera's close-up. A measure of one ability, beside the
real splits, never instead of them.

    close_ups.py make DATASETS OUT [FRAC [SIDE]]    # OUT/images/*.png, OUT/masks/*.png (97 photos)

training/evaluate-close-ups.sh runs it around backdrop-cli and scores with evaluate.py. The
photos come from a data set that may not be redistributed: keep OUT out of the repository.
"""
import os
import sys

import numpy as np
from PIL import Image

import evaluate

SPLITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "splits")


def make(data, out, frac=0.25, side=512):
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    os.makedirs(os.path.join(out, "masks"), exist_ok=True)
    with open(os.path.join(SPLITS, "ccp-person.txt")) as f:
        stems = [line.strip() for line in f if line.strip()]
    images = evaluate.stems_in(os.path.join(data, "ccp-person", "images"), evaluate.MASK_EXTS)
    count = 0
    for stem in stems:
        mask = Image.open(os.path.join(data, "ccp-person", "masks", stem + ".png")).convert("L")
        person = np.asarray(mask) > 127
        if not person.any():  # an empty label: nobody to crop
            continue
        ys = np.nonzero(person)[0]
        y0, y1 = ys.min(), ys.max()
        h = (y1 - y0) * frac
        top = max(0.0, y0 - 0.05 * h)
        # The head's centre: the mean column of the mask's top tenth.
        cx = np.nonzero(person[y0:int(y0 + 0.1 * (y1 - y0)) + 1])[1].mean()
        w = 0.8 * h
        photo = Image.open(images[stem]).convert("RGB")
        box = (max(0, int(cx - w / 2)), int(top), min(photo.width, int(cx + w / 2)), min(photo.height, int(top + h)))
        crop, truth = photo.crop(box), mask.crop(box)
        k = side / max(crop.size)
        size = (round(crop.width * k), round(crop.height * k))
        crop.resize(size, Image.BICUBIC).save(os.path.join(out, "images", stem + ".png"))
        truth.resize(size, Image.BILINEAR).point(lambda v: 255 if v > 127 else 0).save(
            os.path.join(out, "masks", stem + ".png"))
        count += 1
    print(f"close_ups: {count} photos in {out}")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5, 6) or sys.argv[1] != "make":
        sys.exit(__doc__)
    make(sys.argv[2], sys.argv[3], *(float(a) for a in sys.argv[4:5]), *(int(a) for a in sys.argv[5:6]))
