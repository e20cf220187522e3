#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Score predicted masks against ground truth: IoU, boundary IoU and MAE per image and on
average, plus a contact sheet of the worst cases.

    evaluate.py --pred PRED_DIR --gt GT_DIR [--images IMG_DIR] [--sheet worst.png] [--csv out.csv]
    evaluate.py --pred PRED_DIR --images IMG_DIR            # negatives: no GT folder at all
    evaluate.py --table PRED_ROOT --data DATASETS [--table-b ROOT_B] [--names A,B] [--teacher T]

--table scores every validation split (training/splits) at once from PRED_ROOT/<set>/<stem>.png
(evaluate-cli.sh writes that layout) and prints one markdown table: the hard web-like split
first, then each set; with --table-b, a second root's figures beside the first's, on the
photos that both roots predicted. people-unlabelled has no labels: with --teacher (T/<set>/
<stem>.png) it is scored against the teacher's, which measures agreement, not accuracy.

Masks are matched by file stem and read as 8-bit (255 = person); a prediction of another size
is resized to the ground truth's. Without --gt every ground truth is empty (a folder of
negatives) and the score is the fraction of pixels called person (>= 128).

IoU has no meaning against an empty ground truth (it is 0 for a single stray pixel, 1 for none),
so a labelled image whose mask is empty everywhere is scored as a negative, by the fraction of
pixels called person, and left out of the IoU and boundary IoU means; the summary counts such
images and says which they are. In a set of photos of people an empty mask is a missing label
(ccp-person's ccp0536 shows a woman).

Ghost share (issue 20): the share of a photo's pixels whose alpha is undecided, 0.15 < alpha
< 0.85, and that lie farther than 1% of the diagonal (Euclidean) from the true edge: a
passer-by kept at 25%, haze around an arm, a wall at 60%. Soft alpha on the edge itself (hair)
is not a ghost. With an empty ground truth there is no edge and every soft pixel counts. Per
set: the mean share, and the share of photos with more than 1% of such pixels.

Boundary IoU follows Cheng et al. (2021): the band is the part of each mask within d pixels of
its contour, d = 1% of the image diagonal, distance by a square structuring element and with the
image border counted as contour, as the reference implementation does.
"""
import argparse
import csv
import json
import os
import sys

import numpy as np
from PIL import Image, ImageDraw

MASK_EXTS = (".png", ".webp", ".bmp", ".tif", ".tiff", ".jpg", ".jpeg")


def erode(mask, d):
    """Binary erosion by a (2d+1)^2 square, with everything outside the image counted as
    background. Separable: a running minimum along x, then along y."""
    if d <= 0:
        return mask.copy()
    p = np.pad(mask, d, constant_values=False)
    h, w = mask.shape
    out = np.ones((h + 2 * d, w), bool)
    for k in range(2 * d + 1):
        out &= p[:, k:k + w]
    res = np.ones((h, w), bool)
    for k in range(2 * d + 1):
        res &= out[k:k + h]
    return res


def band(mask, d):
    return mask & ~erode(mask, d)


def band_width(h, w, frac=0.01):
    return max(1, int(round(frac * np.hypot(h, w))))


def edge(mask):
    """Pixels of a binary mask with a 4-neighbour on the other side (the contour, both sides)."""
    e = np.zeros_like(mask)
    dy = mask[1:] != mask[:-1]
    dx = mask[:, 1:] != mask[:, :-1]
    e[1:] |= dy
    e[:-1] |= dy
    e[:, 1:] |= dx
    e[:, :-1] |= dx
    return e


def near(mask, r):
    """Pixels within Euclidean distance r (between pixel centres; r need not be whole) of a True
    pixel: a disk dilation, done as one shifted run of 1-D maxima per row offset dy, of
    half-width floor(sqrt(r^2 - dy^2)). r itself is not rounded: 1% of a 250x250 photo's
    diagonal is 3.54 pixels, and an offset (3, 1), 3.16 away, is near."""
    h, w = mask.shape
    R = int(np.floor(r))
    p = np.pad(mask, R, constant_values=False)
    # rows[k]: dilation along x by half-width k (rows[k - 1] and p shifted k either way)
    rows = [p]
    for k in range(1, R + 1):
        cur = rows[-1].copy()
        cur[:, k:] |= p[:, :-k]
        cur[:, :-k] |= p[:, k:]
        rows.append(cur)
    out = np.zeros((h, w), bool)
    for dy in range(-R, R + 1):
        k = int(np.floor(np.sqrt(r * r - dy * dy) + 1e-9))
        out |= rows[k][R + dy:R + dy + h, R:R + w]
    return out


def ghost_share(pred, gt):
    """Share of pixels with 0.15 < pred < 0.85 farther than 1% of the diagonal from gt's edge
    (module text); gt None or empty: every soft pixel."""
    soft = (pred > 0.15) & (pred < 0.85)
    if gt is not None:
        g = gt >= 0.5
        if g.any() and not g.all():
            soft &= ~near(edge(g), 0.01 * np.hypot(*g.shape))
    return float(soft.mean())


def score(pred, gt):
    """pred: float array in [0, 1]; gt: float array in [0, 1] or None (no person anywhere).
    Returns a dict: iou, biou, mae, person (fraction of pixels called person)."""
    p = pred >= 0.5
    out = {"person": float(p.mean()), "ghost": ghost_share(pred, gt)}
    if gt is None:
        out["mae"] = float(pred.mean())
        return out
    g = gt >= 0.5
    out["mae"] = float(np.abs(pred - gt).mean())
    if not g.any():
        out["empty_label"] = True  # nothing to overlap: scored by `person` alone (module text)
        return out
    out["iou"] = float((p & g).sum() / (p | g).sum())
    d = band_width(*g.shape)
    pb, gb = band(p, d), band(g, d)
    out["biou"] = float((pb & gb).sum() / (pb | gb).sum())
    return out


def summarise(rows):
    """Mean of each metric over the rows that have it; images with an empty ground truth are
    listed in `empty_labels`, and their mean person fraction is `empty_person`."""
    keys = ["iou", "biou", "mae", "person", "ghost"]
    out = {k: float(np.mean([r[k] for r in rows if k in r])) for k in keys if any(k in r for r in rows)}
    out["count"] = len(rows)
    out["ghost_photos"] = float(np.mean([r["ghost"] > 0.01 for r in rows]))
    empty = [r["stem"] for r in rows if r.get("empty_label")]
    if empty:
        out["empty_labels"] = empty
        out["empty_person"] = float(np.mean([r["person"] for r in rows if r.get("empty_label")]))
    return out


def read_mask(path, size=None):
    """A mask, or a cut-out's alpha (an image with transparency: RGBA, LA, or a palette
    with a transparent entry, as IMG.LY's remover writes its PNGs)."""
    m = Image.open(path)
    if m.mode in ("RGBA", "LA", "PA") or (m.mode == "P" and "transparency" in m.info):
        m = m.convert("RGBA").getchannel("A")
    m = m.convert("L")
    if size is not None and m.size != size:
        m = m.resize(size, Image.BILINEAR)
    return np.asarray(m, np.float32) / 255.0


def stems_in(folder, exts):
    return {os.path.splitext(f)[0]: os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.lower().endswith(exts)}


def score_files(stem, pred_path, gt_path=None):
    """One row: the prediction (resized to the ground truth's size) scored against gt_path, or
    as a negative when gt_path is None."""
    gt = read_mask(gt_path) if gt_path else None
    pred = read_mask(pred_path, None if gt is None else (gt.shape[1], gt.shape[0]))
    return {"stem": stem, **score(pred, gt)}


def evaluate_folders(pred_dir, gt_dir=None):
    preds = stems_in(pred_dir, MASK_EXTS)
    gts = stems_in(gt_dir, MASK_EXTS) if gt_dir else None
    rows = []
    for stem, ppath in preds.items():
        if gts is not None and stem not in gts:
            print(f"warning: no ground truth for {stem}", file=sys.stderr)
            continue
        rows.append(score_files(stem, ppath, gts[stem] if gts is not None else None))
    if gts is not None:
        missing = set(gts) - set(preds)
        if missing:  # normal when scoring a split; says so in case it was not meant
            print(f"note: {len(missing)} ground-truth masks have no prediction and are not scored", file=sys.stderr)
    return rows


# ---------------------------------------------------------------------------------------------
# --table: every validation split at once


def read_list(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def split_jobs(splits_dir, data_root, teacher_dir=None):
    """[(split name, [(set, stem, gt path or None)])]: hard-web first, then each set of
    data.SETS that has a split list. A set's gt is its mask, None for a set without masks
    (negatives), the teacher's label for people-unlabelled (only with teacher_dir)."""
    import data
    sets = []
    for name in data.SETS:
        path = os.path.join(splits_dir, name + ".txt")
        if not os.path.exists(path) or not os.path.isdir(os.path.join(data_root, name)):
            continue
        if data.role(name) == "teacher":
            if not teacher_dir:
                continue
            gts = stems_in(os.path.join(teacher_dir, name), MASK_EXTS)
        else:
            gts = stems_in(os.path.join(data_root, name, "masks"), MASK_EXTS) if data.SETS[name]["masks"] else None
        items = [(name, stem, None if gts is None else gts.get(stem, "")) for stem in read_list(path)]
        sets.append((name, [it for it in items if it[2] != ""]))  # "" no label: not scored
    jobs = []
    hard = os.path.join(splits_dir, "hard-web.txt")
    if os.path.exists(hard):
        by_set = {name: {it[1]: it for it in items} for name, items in sets}
        pairs = [line.split("/", 1) for line in read_list(hard)]
        jobs.append(("hard-web", [by_set[n][s] for n, s in pairs if s in by_set.get(n, {})]))
    return jobs + sets


def table_summaries(jobs, roots):
    """For each split, the summary of each root, on the photos that every root predicted."""
    cache = {}
    out = []
    for split, items in jobs:
        preds = [{} for _ in roots]
        for k, root in enumerate(roots):
            for name in {it[0] for it in items}:
                folder = os.path.join(root, name)
                preds[k][name] = stems_in(folder, MASK_EXTS) if os.path.isdir(folder) else {}
        have = [it for it in items if all(it[1] in p[it[0]] for p in preds)]
        sums = []
        for k, root in enumerate(roots):
            rows = []
            for name, stem, gt in have:
                key = (k, name, stem)
                if key not in cache:
                    cache[key] = score_files(stem, preds[k][name][stem], gt)
                rows.append(cache[key])
            sums.append(summarise(rows) if rows else None)
        out.append((split, len(have), len(items), sums))
    return out


def markdown_table(results, names):
    """One row per split: photos scored, IoU, boundary IoU, ghost share, share of photos with
    more than 1% ghost pixels, and the person fraction of empty frames (negatives)."""
    def cell(sums, key, fmt):
        vals = [s.get(key) if s else None for s in sums]
        if all(v is None for v in vals):
            return ""
        return " / ".join("–" if v is None else fmt.format(v) for v in vals)

    who = f" ({' / '.join(names)})" if len(names) > 1 else ""
    lines = [f"| split | photos | IoU{who} | boundary IoU | ghost share | photos > 1% ghost | "
             "person px on empty frames |", "|---|---|---|---|---|---|---|"]
    unscored = [split for split, n, _, _ in results if not n]
    for split, n, total, sums in results:
        if not n:
            continue
        empty = [s.get("empty_person", s["person"] if "iou" not in s else None) for s in sums]
        lines.append("| " + " | ".join([
            split, f"{n} of {total}" if n != total else str(n),
            cell(sums, "iou", "{:.3f}"), cell(sums, "biou", "{:.3f}"),
            cell(sums, "ghost", "{:.2%}"), cell(sums, "ghost_photos", "{:.0%}"),
            cell([{"e": e} for e in empty], "e", "{:.2%}")]) + " |")
    if unscored:
        lines.append(f"\nNo predictions for {', '.join(unscored)}.")
    return "\n".join(lines)


def badness(row):
    """Worst first: lowest IoU where there is a person, most person pixels where there is none."""
    return -row["iou"] if "iou" in row else row["person"]


def contact_sheet(rows, pred_dir, gt_dir, img_dir, out_path, n=12, tile=160, cols=2):
    """Each entry: the photo, and the photo greyed with errors painted in (red: called person
    but background, blue: person missed, green: right)."""
    worst = sorted(rows, key=badness, reverse=True)[:n]
    if not worst:
        return
    imgs = stems_in(img_dir, MASK_EXTS) if img_dir else {}
    preds = stems_in(pred_dir, MASK_EXTS)
    gts = stems_in(gt_dir, MASK_EXTS) if gt_dir else {}
    cells = []
    for r in worst:
        pred = read_mask(preds[r["stem"]])
        h, w = pred.shape
        photo = Image.open(imgs[r["stem"]]).convert("RGB").resize((w, h)) if r["stem"] in imgs \
            else Image.new("RGB", (w, h), (128, 128, 128))
        gt = read_mask(gts[r["stem"]], (w, h)) if r["stem"] in gts else np.zeros_like(pred)
        base = np.asarray(photo, np.float32)
        grey = base.mean(axis=2, keepdims=True) * 0.5 + 64
        err = np.repeat(grey, 3, axis=2)
        p, g = pred >= 0.5, gt >= 0.5
        for m, col in ((p & g, (40, 200, 40)), (p & ~g, (230, 30, 30)), (~p & g, (40, 80, 255))):
            err[m] = err[m] * 0.4 + np.array(col) * 0.6
        scale = tile / max(h, w)
        size = (max(1, int(w * scale)), max(1, int(h * scale)))
        pair = Image.new("RGB", (2 * size[0] + 4, size[1] + 14), (255, 255, 255))
        pair.paste(photo.resize(size, Image.BOX), (0, 14))
        pair.paste(Image.fromarray(err.astype(np.uint8)).resize(size, Image.BOX), (size[0] + 4, 14))
        label = r["stem"][:28] + (f"  IoU {r['iou']:.2f}" if "iou" in r else f"  person {r['person']:.1%}")
        ImageDraw.Draw(pair).text((2, 1), label, fill=(0, 0, 0))
        cells.append(pair)
    rows = [cells[k:k + cols] for k in range(0, len(cells), cols)]
    cw = max(c.size[0] for c in cells) + 6
    heights = [max(c.size[1] for c in row) + 6 for row in rows]
    sheet = Image.new("RGB", (cols * cw, sum(heights)), (255, 255, 255))
    y = 0
    for row, h in zip(rows, heights):
        for k, c in enumerate(row):
            sheet.paste(c, (k * cw, y))
        y += h
    sheet.save(out_path, optimize=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pred", help="folder of predicted masks (e.g. from backdrop-cli)")
    ap.add_argument("--gt", help="folder of ground-truth masks; omit for a folder of negatives")
    ap.add_argument("--images", help="folder of the photos, for the contact sheet")
    ap.add_argument("--sheet", help="write a contact sheet of the worst cases here (PNG)")
    ap.add_argument("--worst", type=int, default=12, help="how many cases on the sheet")
    ap.add_argument("--csv", help="write per-image scores here")
    ap.add_argument("--json", help="write the averages here")
    ap.add_argument("--table", metavar="PRED_ROOT", help="score every validation split: PRED_ROOT/<set>/<stem>.png")
    ap.add_argument("--table-b", metavar="ROOT_B", help="a second root of predictions (e.g. the teacher's), beside")
    ap.add_argument("--names", default="Backdrop,teacher", help="the two roots' names in the header")
    ap.add_argument("--data", help="with --table: the data sets' root (its masks are the ground truth)")
    ap.add_argument("--teacher", help="with --table: teacher labels T/<set>/<stem>.png, people-unlabelled's only labels")
    ap.add_argument("--splits", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "splits"))
    args = ap.parse_args()
    if args.table:
        if not args.data:
            ap.error("--table needs --data")
        roots = [args.table] + ([args.table_b] if args.table_b else [])
        results = table_summaries(split_jobs(args.splits, args.data, args.teacher), roots)
        print(markdown_table(results, args.names.split(",")[:len(roots)]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({split: sums for split, _, _, sums in results}, f, indent=1)
        return
    if not args.pred:
        ap.error("give --pred (one folder) or --table (every split)")

    rows = evaluate_folders(args.pred, args.gt)
    if not rows:
        sys.exit("no predictions matched")
    summary = summarise(rows)
    if args.csv:
        keys = ["stem", "iou", "biou", "mae", "person", "ghost"]
        with open(args.csv, "w", newline="") as f:
            wr = csv.DictWriter(f, keys)
            wr.writeheader()
            for r in rows:
                wr.writerow({k: (f"{r[k]:.5f}" if isinstance(r.get(k), float) else r.get(k, "")) for k in keys})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    if args.sheet:
        contact_sheet(rows, args.pred, args.gt, args.images, args.sheet, n=args.worst)
    for r in sorted(rows, key=badness, reverse=True)[:5]:
        print("worst:", r)
    if args.gt:
        empty = summary.get("empty_labels", [])
        if len(empty) < summary["count"]:
            print(f"{summary['count'] - len(empty)} images  IoU {summary['iou']:.4f}  "
                  f"boundary IoU {summary['biou']:.4f}  MAE {summary['mae']:.4f}")
        if empty:
            print(f"{len(empty)} with an empty mask, scored as negatives (no IoU): person pixels "
                  f"{summary['empty_person']:.4%}  ({' '.join(empty[:8])}{' ...' if len(empty) > 8 else ''})")
    else:
        print(f"{summary['count']} negatives  person pixels {summary['person']:.4%}  MAE {summary['mae']:.4f}")
    print(f"ghost share {summary['ghost']:.2%} of pixels, {summary['ghost_photos']:.0%} of photos over 1%")


if __name__ == "__main__":
    main()
