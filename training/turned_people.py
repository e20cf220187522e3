#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""People turned sideways and upside down: a test of poses no labelled set shows.

Dance, parkour, dives and sport show people lying, tumbling and upside down; every labelled
set here shows them upright. This makes a test of that from held-out photos only: each
validation person of ccp-person (its exact mask, cropped to the person) turned by 45, 90,
135, 180 or 270 degrees (in turn) and pasted at 70% of the frame onto a validation photo of
scenes-no-people scaled to 512 pixels on its long side. Not real photos: a measure of one
ability, beside the real splits, never instead of them.

    turned_people.py make DATASETS OUT          # OUT/images/*.png, OUT/masks/*.png (97 photos)
    turned_people.py score PRED OUT             # IoU per angle and overall; PRED/<name>.png

training/evaluate-turned.sh runs both around backdrop-cli. The photos come from data sets
that may not be redistributed: keep OUT out of the repository.
"""
import os
import sys

from PIL import Image

import evaluate

ANGLES = (90, 180, 270, 45, 135)
SPLITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "splits")


def image_path(folder, stem):
    return evaluate.stems_in(folder, evaluate.MASK_EXTS)[stem]


def stems(name):
    with open(os.path.join(SPLITS, name + ".txt")) as f:
        return [line.strip() for line in f if line.strip()]


def make(data, out):
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    os.makedirs(os.path.join(out, "masks"), exist_ok=True)
    scenes = stems("scenes-no-people")
    count = 0
    for i, stem in enumerate(stems("ccp-person")):
        mask = Image.open(os.path.join(data, "ccp-person", "masks", stem + ".png")).convert("L")
        box = mask.point(lambda v: 255 if v > 127 else 0).getbbox()
        if box is None:  # an empty label: nobody to turn
            continue
        photo = Image.open(image_path(os.path.join(data, "ccp-person", "images"), stem)).convert("RGB")
        angle = ANGLES[i % len(ANGLES)]
        person = photo.crop(box).rotate(angle, Image.BILINEAR, expand=True)
        alpha = mask.crop(box).rotate(angle, Image.BILINEAR, expand=True)
        scene_stem = scenes[i % len(scenes)]
        scene = Image.open(image_path(os.path.join(data, "scenes-no-people", "images"), scene_stem))
        scene = scene.convert("RGB")
        s = 512 / max(scene.size)
        scene = scene.resize((round(scene.width * s), round(scene.height * s)), Image.BILINEAR)
        k = 0.7 * min(scene.width / person.width, scene.height / person.height)
        size = (max(1, round(person.width * k)), max(1, round(person.height * k)))
        person, alpha = person.resize(size, Image.BILINEAR), alpha.resize(size, Image.BILINEAR)
        # Off centre by a few pixels that vary from photo to photo, inside the frame.
        x = (scene.width - size[0]) // 2 + (i * 37) % 41 - 20
        y = (scene.height - size[1]) // 2 + (i * 53) % 31 - 15
        x, y = min(max(x, 0), scene.width - size[0]), min(max(y, 0), scene.height - size[1])
        truth = Image.new("L", scene.size, 0)
        truth.paste(alpha, (x, y))
        scene.paste(person, (x, y), alpha)
        name = f"t{angle:03d}-{stem}"
        scene.save(os.path.join(out, "images", name + ".png"))
        truth.save(os.path.join(out, "masks", name + ".png"))
        count += 1
    print(f"turned_people: {count} photos in {out}")


def score(pred, out):
    rows = evaluate.evaluate_folders(pred, os.path.join(out, "masks"))
    if not rows:
        sys.exit("turned_people: no predictions matched")
    by_angle = {}
    for r in rows:
        by_angle.setdefault(int(r["stem"][1:4]), []).append(r)
    print("| turned by | photos | IoU | ghost share |\n|---|---:|---:|---:|")
    for angle, rs in sorted(by_angle.items()) + [("all", rows)]:
        iou = sum(r["iou"] for r in rs) / len(rs)
        ghost = sum(r["ghost"] for r in rs) / len(rs)
        print(f"| {angle} | {len(rs)} | {iou:.3f} | {100 * ghost:.2f}% |")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("make", "score"):
        sys.exit(__doc__)
    (make if sys.argv[1] == "make" else score)(sys.argv[2], sys.argv[3])
