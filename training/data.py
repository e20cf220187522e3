# SPDX-License-Identifier: Apache-2.0
"""Data sets, the validation split, and the training sample generator.

Every training sample is built from scratch by TrainSamples[i] with a generator seeded by
(seed, i), so a run is reproducible whatever the number of loader workers.
"""
import io
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image, ImageChops, ImageEnhance, ImageFilter

# name -> dict:
#   masks    the set has a masks/ folder (without one, the mask is empty everywhere)
#   weight   loss weight of its labels. LFW's masks come from a teacher model, so they count
#            half as much as hand-made ones; COCO's polygons are coarse on hair and fingers
#   by_clip  split by clip (the stem minus "-NNNNN"), so that validation frames are not
#            neighbours of training frames (DAVIS)
#   by_frames  the same for stems "<sequence>_<frame>": frames within this many of each other
#            share a key (CamVid: 300 frames, 10 s of driving)
#   val_mod  one key in val_mod goes to validation; 0: none
#   role     how the sample generator may use the labels:
#            "scene"     full-frame labels, every person labelled (an empty mask: a negative)
#            "negative"  nobody in frame
#            "cutouts"   exact masks of some people but not all: copy-paste cut-outs only, never a
#                        full-frame label (the unlabelled people would be taught as background)
#            "teacher"   no labels: used only with a teacher's labels (--teacher), as pseudo-labels
#   zoom     photos kept at up to twice the training side, so that training can crop close-ups
#   teacher  how a teacher's label (--teacher) is used (combine_teacher): "label" replaces the
#            set's own mask (LFW's older pseudo-labels; people-unlabelled has none), "check"
#            keeps the exact mask and lowers the weight where the teacher firmly disagrees
#            away from the edges (default for sets with masks)
# debian-negatives (fetch_negatives.py, not in the shared data sets) is small, so a quarter of it
# is held out to give its validation figure some weight. The second round's sets are small too:
# their val_mod keeps 20-50 photos of each in validation (training/README.md has the counts).
SETS = {
    "ccp-person": dict(masks=True, weight=1.0, by_clip=False, val_mod=10),
    "davis-people-train": dict(masks=True, weight=1.0, by_clip=True, val_mod=10),
    "lfw-portraits-pseudo": dict(masks=True, weight=0.5, by_clip=False, val_mod=10, teacher="label"),
    "davis-no-people": dict(masks=False, weight=1.0, by_clip=True, val_mod=10, role="negative"),
    "debian-negatives": dict(masks=False, weight=1.0, by_clip=False, val_mod=4, zoom=True, role="negative"),
    "pennfudan": dict(masks=True, weight=1.0, by_clip=False, val_mod=5),
    "pennfudan-cutouts": dict(masks=True, weight=1.0, by_clip=False, val_mod=0, role="cutouts"),
    "camvid-street": dict(masks=True, weight=1.0, by_clip=False, by_frames=300, val_mod=5),
    "coco128-person": dict(masks=True, weight=0.8, by_clip=False, val_mod=4),
    "scenes-no-people": dict(masks=False, weight=1.0, by_clip=False, val_mod=10, role="negative"),
    "people-unlabelled": dict(masks=False, weight=0.5, by_clip=False, val_mod=5, role="teacher", teacher="label"),
}
# Sets that a data root may lack without error: the Debian ones come from fetch_negatives.py,
# and the shipped model's recipe packs only the first four (training/reproduce.sh).
OPTIONAL_SETS = ("debian-negatives", "pennfudan", "pennfudan-cutouts", "camvid-street",
                 "coco128-person", "scenes-no-people", "people-unlabelled")
# The "hard web-like" validation split (issue 20): people in varied scenes, from the validation
# photos of these sets that show someone (hard_web()); evaluate.py reports it first.
HARD_WEB_SETS = ("pennfudan", "coco128-person", "camvid-street")
OBJECTS_DIR = os.path.join("debian-objects", "objects")
IMAGE_EXTS = (".webp", ".jpg", ".jpeg", ".png")


def role(set_name):
    return SETS[set_name].get("role", "scene")


def split_key(set_name, stem):
    spec = SETS[set_name]
    if spec["by_clip"]:
        return stem.rsplit("-", 1)[0]
    if spec.get("by_frames"):
        seq, frame = stem.rsplit("_", 1)
        return f"{seq}_{int(frame.lstrip('f')) // spec['by_frames']}"
    return stem


def is_val(set_name, stem):
    """One stem (or clip) in val_mod goes to validation, fixed by a hash of the name."""
    mod = SETS[set_name]["val_mod"]
    return mod > 0 and zlib.crc32(split_key(set_name, stem).encode()) % mod == 0


def list_stems(root, set_name):
    d = os.path.join(root, set_name, "images")
    if set_name in OPTIONAL_SETS and not os.path.isdir(d):
        return []
    return sorted(os.path.splitext(f)[0] for f in os.listdir(d) if f.lower().endswith(IMAGE_EXTS))


def find_file(folder, stem):
    for ext in IMAGE_EXTS:
        p = os.path.join(folder, stem + ext)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(folder, stem))


class Record:
    """One decoded photo (HxWx3 uint8) with its mask (HxW uint8, None = no person) and, where a
    teacher labelled it, the teacher's soft mask (HxW uint8, else None). A set of role "teacher"
    has no mask of its own: its mask is the teacher's."""

    def __init__(self, set_name, stem, image, mask, teacher=None, wmap=None):
        self.set_name, self.stem, self.image, self.mask = set_name, stem, image, mask
        self.teacher = teacher
        self.weight = SETS[set_name]["weight"]
        self.wmap = wmap  # per-pixel weight x 100 (uint8 HxW) from combine_teacher, or None
        self.bbox = None  # person box (x0, y0, x1, y1), for cut-outs and margins
        if mask is not None and (mask > 127).any():
            ys, xs = np.nonzero(mask > 127)
            self.bbox = (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1)


def teacher_path(teacher_dir, set_name, stem):
    """TEACHER/<set>/<stem>.png (training/teacher/label_onnxruntime.py's layout), or None."""
    p = os.path.join(teacher_dir, set_name, stem + ".png")
    return p if teacher_dir and os.path.exists(p) else None


def load_record(root, set_name, stem, max_side=None, teacher_dir=None):
    img = Image.open(find_file(os.path.join(root, set_name, "images"), stem)).convert("RGB")
    mask = teacher = None
    if SETS[set_name]["masks"]:
        mask = Image.open(find_file(os.path.join(root, set_name, "masks"), stem)).convert("L")
    tp = teacher_path(teacher_dir, set_name, stem) if teacher_dir else None
    if tp:
        # Labelled at the photo's original size: packed photos are smaller.
        teacher = Image.open(tp).convert("L")
        if teacher.size != img.size:
            teacher = teacher.resize(img.size, Image.BILINEAR)
    if max_side and max(img.size) > max_side:
        from preprocess import scaled_size, resize
        size = scaled_size(img.width, img.height, max_side)
        img = resize(img, size)
        mask = resize(mask, size) if mask is not None else None
        teacher = resize(teacher, size) if teacher is not None else None
    teacher = None if teacher is None else np.asarray(teacher)
    mask = None if mask is None else np.asarray(mask)
    wmap = None
    if teacher is not None and (mask is not None or role(set_name) == "teacher"):
        mask, wmap = combine_teacher(set_name, mask, teacher)
    return Record(set_name, stem, np.asarray(img), mask, teacher, wmap)


def dilate(b, r):
    """Binary dilation of a bool HxW array by a (2r+1)-square, as two separable max passes."""
    out = b.copy()
    for axis in (0, 1):
        src = out.copy()
        n = src.shape[axis]
        for d in range(1, min(r, n - 1) + 1):
            lo = [slice(None)] * 2
            hi = [slice(None)] * 2
            lo[axis], hi[axis] = slice(d, None), slice(None, n - d)
            out[tuple(lo)] |= src[tuple(hi)]
            out[tuple(hi)] |= src[tuple(lo)]
    return out


def edge_band(hard, r):
    """Pixels within r of the boundary of a bool mask (either side)."""
    return dilate(hard, r) & dilate(~hard, r)


def combine_teacher(set_name, mask, teacher):
    """The label and per-pixel weights (x 100, uint8) that a photo trains with, given the
    teacher's soft label (uint8). Undecided is 0.15 < alpha < 0.85, the edge band 1% of the
    diagonal either side of an edge, as evaluate.py's ghost share measures them.
      "label": the teacher's label; where it is undecided away from its edges it would teach
               ghosts, so those pixels count 0.2;
      "check": our exact label; where the teacher firmly disagrees (by more than 0.5) away from
               the label's edges, neither is trusted blindly: the pixel counts 0.3 (a passer-by
               that the set leaves out, a coarse polygon, a teacher's mistake)."""
    h, w = teacher.shape
    r = max(2, int(round(0.01 * np.hypot(h, w))))
    t = teacher.astype(np.float32) / 255.0
    if SETS[set_name].get("teacher", "check") == "label" or mask is None:
        sure = (t <= 0.15) | (t >= 0.85)
        wmap = np.where(sure | edge_band(t > 0.5, r), 100, 20).astype(np.uint8)
        return teacher, wmap
    m = mask.astype(np.float32) / 255.0
    firm = (np.abs(m - t) > 0.5) & ~edge_band(m > 0.5, r)
    return mask, np.where(firm, 30, 100).astype(np.uint8)


def load_set(root, set_name, split, max_side=None, threads=8, teacher_dir=None):
    """split: 'train', 'val' or 'all'. Decoding runs on threads (PIL releases the GIL).
    teacher_dir: folder of teacher labels, TEACHER/<set>/<stem>.png, read where present. A set of
    role "teacher" keeps only the photos the teacher labelled: without labels it is empty, as a
    photo of people without a label must not pass for a negative."""
    stems = [s for s in list_stems(root, set_name)
             if split == "all" or is_val(set_name, s) == (split == "val")]
    if role(set_name) == "teacher":
        stems = [s for s in stems if teacher_dir and teacher_path(teacher_dir, set_name, s)]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda s: load_record(root, set_name, s, max_side, teacher_dir), stems))


def hard_web(root):
    """The "hard web-like" validation split (issue 20): every validation photo of HARD_WEB_SETS
    whose mask shows someone (pedestrians, small street people, everyday COCO scenes), as
    (set, stem) pairs. Their empty frames stay in their own sets' rows, as negatives."""
    out = []
    for name in HARD_WEB_SETS:
        for stem in list_stems(root, name):
            if is_val(name, stem):
                m = Image.open(find_file(os.path.join(root, name, "masks"), stem)).convert("L")
                if m.getextrema()[1] >= 128:
                    out.append((name, stem))
    return out


def load_objects(root, max_side=None):
    """Cut-out objects that are not people (RGBA arrays), from fetch_negatives.py; [] if absent."""
    d = os.path.join(root, OBJECTS_DIR)
    if not os.path.isdir(d):
        return []
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".png"):
            img = Image.open(os.path.join(d, f)).convert("RGBA")
            if max_side:
                img.thumbnail((max_side, max_side), Image.LANCZOS)
            out.append(np.asarray(img))
    return out


# ---------------------------------------------------------------------------------------------
# Augmentation helpers (PIL + numpy only, so the same code runs here and on the GPU machine)


def affine(scale, angle_deg, flip, src_centre, dst_centre):
    """2x3 matrix mapping source pixels to canvas pixels."""
    a = np.deg2rad(angle_deg)
    c, s = np.cos(a) * scale, np.sin(a) * scale
    m = np.array([[c, -s], [s, c]]) @ np.diag([-1.0 if flip else 1.0, 1.0])
    t = np.asarray(dst_centre) - m @ np.asarray(src_centre)
    return np.hstack([m, t[:, None]])


def inverse(m):
    """Inverse of a 2x3 affine map, by hand: LAPACK's call overhead dominated here."""
    a, b, c, d = m[0, 0], m[0, 1], m[1, 0], m[1, 1]
    det = a * d - b * c
    ia, ib, ic, id_ = d / det, -b / det, -c / det, a / det
    return np.array([[ia, ib, -(ia * m[0, 2] + ib * m[1, 2])], [ic, id_, -(ic * m[0, 2] + id_ * m[1, 2])]])


def covered(m, src_size, size):
    """uint8 map of the canvas pixels whose centre falls inside the source photo."""
    inv = inverse(m)
    w, h = size
    x, y = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    xs = inv[0, 0] * x + inv[0, 1] * y + inv[0, 2]
    ys = inv[1, 0] * x + inv[1, 1] * y + inv[1, 2]
    return ((xs >= 0) & (xs < src_size[0]) & (ys >= 0) & (ys < src_size[1])).astype(np.uint8)


def warp(arr, m, size, resample=Image.BILINEAR):
    """Warp an HxW(x3) uint8 array by the forward matrix m onto a size=(w, h) canvas, zeros
    outside. PIL wants the inverse map, canvas -> source."""
    inv = inverse(m)
    # PIL samples at pixel centres shifted by half a pixel; the shift cancels for these maps
    # up to sub-pixel error that images and masks share, which is all that matters here.
    img = Image.fromarray(arr)
    return np.asarray(img.transform(size, Image.AFFINE, inv.ravel().tolist(), resample=resample))


def resized(arr, size):
    img = Image.fromarray(arr)
    filt = Image.BOX if size[0] <= img.width else Image.BILINEAR
    return np.asarray(img.resize(size, filt))


def log_uniform(rng, lo, hi):
    return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def synthetic_background(rng, size):
    """Studio-like backdrops: a flat colour, a gradient, or blurred noise blobs."""
    w, h = size
    kind = rng.integers(3)
    c0, c1 = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    if kind == 0:
        bg = np.broadcast_to(c0, (h, w, 3)).copy()
    elif kind == 1:
        t = np.linspace(0, 1, h if rng.random() < 0.5 else w)
        t = t[:, None] if len(t) == h else t[None, :]
        bg = c0 + (c1 - c0) * np.broadcast_to(t, (h, w))[..., None]
    else:
        small = rng.uniform(0, 255, (rng.integers(2, 8), rng.integers(2, 8), 3)).astype(np.uint8)
        bg = np.asarray(Image.fromarray(small).resize(size, Image.BICUBIC)).astype(np.float64)
    bg = bg + rng.normal(0, rng.uniform(0, 6), bg.shape)
    return np.clip(bg, 0, 255).astype(np.uint8)


# How often each kind of sample is drawn, and DAVIS's share of the real-photo scenes. Composites
# and negatives fight the two failures the first calibration showed: walls/roads called person,
# small people missed. Stage 1 of the shipped model used STAGE1_MIX, stages 2 and 3 MIX
# with negative=0.18 (training/reproduce.sh). "web" draws whole photos of the second round's sets
# (pennfudan, camvid-street and coco128-person frames with people; people-unlabelled with the
# teacher's labels); it only exists where the data root holds them, so the shipped recipe, which
# packs the first four sets alone, draws the same samples as before. Its share is a first guess.
# "closewall" (round 4, training/round4.sh) and "closehead" (round 5, training/round5.sh) are off
# unless a mix names them, so every earlier recipe draws exactly what it drew.
MIX = {"scene": 0.25, "lfw": 0.20, "portrait": 0.08, "composite": 0.35, "negative": 0.12, "davis": 0.5,
       "web": 0.25, "closewall": 0.0, "closehead": 0.0}
STAGE1_MIX = {"scene": 0.27, "lfw": 0.15, "portrait": 0.08, "composite": 0.35, "negative": 0.15, "davis": 0.4}
MODES = ("scene", "lfw", "portrait", "composite", "negative", "web", "closewall", "closehead")


def parse_mix(text):
    """'scene=0.3,davis=0.4' -> {'scene': 0.3, 'davis': 0.4}"""
    out = {}
    for item in filter(None, (text or "").split(",")):
        key, value = item.split("=")
        if key not in MIX:
            raise ValueError(f"unknown mix key {key!r}; known: {', '.join(MIX)}")
        out[key] = float(value)
    return out


class TrainSamples:
    """Map-style data set of size `length`; sample i is a (image, target, weight, valid) tuple
    of a size x size canvas:
      image  uint8 HxWx3   the photo after augmentation (padding pixels arbitrary)
      target uint8 HxW     person coverage, 0..255
      weight uint8 HxW     loss weight x 100 (exact 1.0, pseudo 0.5, padding 0.1)
      valid  uint8 HxW     1 where the canvas shows photo; 0 where it is padding, which the
                           trainer sets to zero after normalisation, as the engine does.
    """

    def __init__(self, sets, size=384, length=10**7, seed=0, infer_side=512, mix=None, objects=(),
                 subjects=False, engine_scale=False, tumble=0.0, tilt=0.0):
        """sets: dict set name -> list of Record (training split); mix: overrides of MIX;
        objects: RGBA arrays of things that are not people, pasted as distractors; subjects:
        label pasted people as the labelled sets do, only the subjects (off: every person);
        engine_scale: photos at the engine's scale, in padding (_scene_scale); tumble: the
        share of pasted people (not passers-by) turned by any angle, as in a flip, a dive or
        a breakdance freeze; tilt: the share of placed photos turned by up to 40 degrees, a
        camera held askew. Both 0 draw nothing extra, so earlier recipes stay exact."""
        self.size, self.length, self.seed, self.infer_side = size, length, seed, infer_side
        self.subjects, self.engine_scale = subjects, engine_scale
        self.tumble, self.tilt = tumble, tilt
        self.mix = dict(MIX, **(mix or {}))
        self.exact = sets.get("ccp-person", []) + sets.get("davis-people-train", [])
        self.exact = [r for r in self.exact if r.bbox is not None]
        self.ccp = [r for r in sets.get("ccp-person", []) if r.bbox is not None]
        self.davis = [r for r in sets.get("davis-people-train", []) if r.bbox is not None]
        self.lfw = sets.get("lfw-portraits-pseudo", [])
        self.empty = sets.get("davis-no-people", [])
        self.stills = sets.get("debian-negatives", [])  # close-ups, animals, cities, nature
        self.objects = list(objects)
        # The second round's sets (empty where the data root lacks them). Whole photos with
        # everyone labelled: pennfudan, camvid-street, coco128-person, and people-unlabelled
        # where the teacher labelled it (load_set). Their person-free frames, and the
        # person-free scenes, are negatives and copy-paste backgrounds.
        first = ("ccp-person", "davis-people-train", "lfw-portraits-pseudo", "davis-no-people", "debian-negatives")
        second = [r for n in SETS if n not in first for r in sets.get(n, [])]
        self.web = [r for r in second if role(r.set_name) in ("scene", "teacher") and r.bbox is not None]
        self.web_empty = [r for r in second if role(r.set_name) == "negative"
                          or (role(r.set_name) == "scene" and r.bbox is None)]
        # Cut-outs for copy-paste: the exact sets, Penn-Fudan's people (pennfudan-cutouts'
        # masks are exact where drawn: the unlabelled people have alpha 0 and are not pasted) and
        # COCO's. Not CamVid's: its people are a few dozen pixels tall. Not the teacher's labels.
        self.cutouts = self.exact + [r for n in ("pennfudan", "pennfudan-cutouts", "coco128-person")
                                     for r in sets.get(n, []) if r.bbox is not None]
        # Person-free margins of CCP photos: columns left/right of the person, kept if wide.
        self.margins = []
        for r in self.ccp:
            x0, _, x1, _ = r.bbox
            w = r.image.shape[1]
            for a, b in ((0, x0 - 6), (x1 + 6, w)):
                if b - a >= 48:
                    self.margins.append(r.image[:, a:b])
        # closewall: person-free photos to see up close, and standing subjects with exact masks
        # (CCP's, and any other exact set's whose box is tall: one person, not a group), none
        # cut at the photo's left or right edge, which would show as a straight cut.
        self.walls = [r for n in ("scenes-no-people", "davis-no-people", "debian-negatives")
                      for r in sets.get(n, [])]

        def standing(r, tall):
            x0, y0, x1, y1 = r.bbox
            return x0 > 0 and x1 < r.image.shape[1] and (not tall or (y1 - y0 >= 1.8 * (x1 - x0)
                                                                      and y1 - y0 >= 160))
        self.standing_ccp = [r for r in self.ccp if standing(r, False)]
        self.standing = [r for n in ("davis-people-train", "pennfudan", "pennfudan-cutouts")
                         for r in sets.get(n, []) if r.bbox is not None and standing(r, True)]
        noise = np.random.default_rng(seed).normal(128, 16, (max(size, 512) + 64, max(size, 512) + 64, 3))
        self.noise_bank = Image.fromarray(np.clip(noise, 0, 255).astype(np.uint8))
        names = [m for m in MODES if self._mode_ok(m)]
        p = np.array([self.mix[m] for m in names])
        self.mode_names, self.mode_p = names, p / p.sum()

    def _mode_ok(self, mode):
        return {"scene": self.exact, "lfw": self.lfw, "portrait": self.ccp, "composite": self.exact,
                "negative": self.empty or self.margins or self.stills or self.web_empty,
                "web": self.web, "closewall": self.walls and self.standing_ccp,
                "closehead": self.walls and self.standing_ccp and self.objects}[mode]

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        rng = np.random.default_rng((self.seed, i))
        mode = self.mode_names[rng.choice(len(self.mode_names), p=self.mode_p)]
        img, target, weight, valid = getattr(self, "_" + mode)(rng)
        img = self._photometric(rng, img)
        weight = np.where(valid > 0, weight, 0.1)
        return (img, target, np.round(weight * 100).astype(np.uint8), valid)

    # --- one photo placed on the canvas -------------------------------------------------------

    def _place(self, rng, rec_img, rec_mask, weight, scale, centre=None, angle=None, wmap=None):
        """Warps a photo (and mask) onto the canvas with scale, rotation, flip; the point
        `centre` of the photo (default: random) lands at a random spot near the canvas centre.
        wmap: per-pixel weights x 100 (Record.wmap), warped with the photo, times `weight`."""
        S = self.size
        h, w = rec_img.shape[:2]
        if centre is None:
            centre = (rng.uniform(0, w), rng.uniform(0, h))
        if angle is None:
            angle = rng.normal(0, 8) if rng.random() < 0.4 else 0.0
            if self.tilt and rng.random() < self.tilt:
                angle = rng.uniform(-40, 40)
        flip = rng.random() < 0.5
        cx, cy = centre
        if flip:
            cx = w - cx
        dst = np.array([S / 2, S / 2]) + rng.uniform(-0.25, 0.25, 2) * S
        # Keep the canvas covered where the scaled photo is large enough (no needless padding).
        sw, sh = w * scale, h * scale
        for k, (sd, c) in enumerate(((sw, cx), (sh, cy))):
            lo, hi = S - (sd - c * scale), c * scale  # dst range that keeps photo over canvas
            dst[k] = np.clip(dst[k], lo, hi) if sd >= S else (S - sd) / 2 + c * scale + rng.uniform(-0.5, 0.5) * (S - sd)
        m = affine(scale, angle, False, (cx, cy), dst)
        if flip:
            m = m @ np.array([[-1, 0, w], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
        img = warp(rec_img, m, (S, S))
        valid = covered(m, (w, h), (S, S))
        target = warp(rec_mask, m, (S, S)) if rec_mask is not None else np.zeros((S, S), np.uint8)
        if wmap is not None:
            weight_map = warp(wmap, m, (S, S)).astype(np.float32) * (weight / 100.0)
        else:
            weight_map = np.full((S, S), weight, np.float32)
        return img, target, weight_map, valid

    def _scene_scale(self, rng, h, w):
        """Around the inference scale (long side -> 512), or letterboxed whole into the canvas.
        engine_scale: around the scale the engine runs the photo at (a photo under 512 pixels
        keeps its size), and the canvas mostly not filled: the photo sits in padding, as it
        does in the engine, instead of being enlarged to cover the canvas."""
        if rng.random() < 0.08:
            return self.size / max(h, w) * rng.uniform(0.6, 1.0)
        side = min(self.infer_side, max(h, w)) if self.engine_scale else self.infer_side
        s = side / max(h, w) * log_uniform(rng, 0.55, 1.5)
        if rng.random() < (0.2 if self.engine_scale else 0.7):  # fill the canvas
            s = max(s, self.size / min(h, w))
        return s

    def _scene(self, rng):
        pool = self.ccp if (rng.random() < 1 - self.mix["davis"] or not self.davis) else self.davis
        r = pool[rng.integers(len(pool))]
        h, w = r.image.shape[:2]
        x0, y0, x1, y1 = r.bbox
        # Centre mostly on the person so that most crops contain some of them.
        centre = (rng.uniform(x0, x1), rng.uniform(y0, y1)) if rng.random() < 0.8 else None
        out = self._place(rng, r.image, r.mask, r.weight, self._scene_scale(rng, h, w), centre, wmap=r.wmap)
        if rng.random() < 0.3:
            out = self._paste_people(rng, *out, count=rng.integers(1, 3))
        if self.objects and rng.random() < 0.1:
            out = self._paste_objects(rng, *out, count=1)
        return out

    def _web(self, rng):
        """A whole photo of the second round's sets, scaled as scenes are, centred on someone
        most of the time; sometimes with more people pasted in."""
        r = self.web[rng.integers(len(self.web))]
        h, w = r.image.shape[:2]
        x0, y0, x1, y1 = r.bbox
        centre = (rng.uniform(x0, x1), rng.uniform(y0, y1)) if rng.random() < 0.7 else None
        out = self._place(rng, r.image, r.mask, r.weight, self._scene_scale(rng, h, w), centre, wmap=r.wmap)
        if rng.random() < 0.2:
            out = self._paste_people(rng, *out, count=rng.integers(1, 3))
        return out

    def _lfw(self, rng):
        r = self.lfw[rng.integers(len(self.lfw))]
        h, w = r.image.shape[:2]
        centre = (w / 2 + rng.normal(0, w / 8), h / 2 + rng.normal(0, h / 8))
        return self._place(rng, r.image, r.mask, r.weight, self._scene_scale(rng, h, w), centre, wmap=r.wmap)

    def _portrait(self, rng):
        """Head-and-shoulders or half-body crop of a standing CCP person, on its own background."""
        r = self.ccp[rng.integers(len(self.ccp))]
        x0, y0, x1, y1 = r.bbox
        frac = rng.uniform(0.18, 0.55)  # share of the body height kept, from the top
        box_h = (y1 - y0) * frac
        scale = self.size * rng.uniform(0.5, 1.1) / box_h
        centre = ((x0 + x1) / 2 + rng.normal(0, (x1 - x0) / 10), y0 + box_h * rng.uniform(0.45, 0.65))
        return self._place(rng, r.image, r.mask, r.weight, scale, centre, wmap=r.wmap)

    def _negative(self, rng):
        out = self._negative_photo(rng)
        if self.objects and rng.random() < 0.3:  # a salient thing that is not a person
            out = self._paste_objects(rng, *out, count=rng.integers(1, 4))
        return out

    def _closehead(self, rng):
        """closewall with a thing right behind her head (round 5): ccp0073's traffic sign, which
        no round-4 draw moved, stands there; a distractor at her side does not teach it."""
        return self._closewall(rng, head=True)

    def _closewall(self, rng, head=False):
        """One standing subject at CCP's framing (55-95% of the canvas height, roughly centred)
        in front of a person-free photo seen up close: a facade, graffiti, a shop window, an
        interior. Round 4 (issue 20): the CCP photos where the teacher beats us are of this
        kind, background texture touching the subject called person (graffiti on a shutter
        behind her, a traffic sign behind the head, dark shop windows and a poster, a container
        wall). Label: the subject only. The paste's cues are hidden: her colours move part of
        the way to the background's, the edge is feathered by about a pixel, her sharpness
        sometimes drops to the enlarged background's; sometimes a thing touches her from behind."""
        S = self.size
        bg = self.walls[rng.integers(len(self.walls))].image
        # A quarter to a half of the scene (by area) fills the canvas: the texture is big.
        scale = S / (min(bg.shape[:2]) * np.sqrt(rng.uniform(0.25, 0.5)))
        img, target, weight, valid = self._place(rng, bg, None, 1.0, scale)
        img, target = img.astype(np.float32), target.astype(np.float32) / 255.0

        pool = self.standing_ccp if not self.standing or rng.random() < 0.75 else self.standing
        r = pool[rng.integers(len(pool))]
        h, w = r.image.shape[:2]
        x0, y0, x1, y1 = r.bbox
        at_bottom, at_top = y1 >= h, y0 <= 0  # cut by the photo's edge: keep that edge on the canvas's
        x0, y0, x1, y1 = max(0, x0 - 4), max(0, y0 - 4), min(w, x1 + 4), min(h, y1 + 4)
        s = rng.uniform(0.55, 0.95) * S / (y1 - y0)
        nw, nh = max(2, int((x1 - x0) * s + 0.5)), max(2, int((y1 - y0) * s + 0.5))
        cut = Image.fromarray(r.image[y0:y1, x0:x1]).resize((nw, nh), Image.BOX)
        if rng.random() < 0.5 * min(1.0, scale - 1.0):  # as soft as an enlarged background
            cut = cut.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.3 + 0.4 * scale)))
        alpha = Image.fromarray(r.mask[y0:y1, x0:x1]).resize((nw, nh), Image.BOX)
        alpha = np.asarray(alpha.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 1.2)))) / 255.0
        cut = np.asarray(cut).astype(np.float32)
        if rng.random() < 0.5:
            cut, alpha = cut[:, ::-1], alpha[:, ::-1]
        px = int(S / 2 - nw / 2 + rng.normal(0, 0.06 * S))
        if at_bottom:
            py = S - nh + int(rng.uniform(0, 0.05 * nh))
        elif at_top:
            py = -int(rng.uniform(0, 0.05 * nh))
        else:
            py = int(np.clip((S - nh) / 2 + rng.normal(0, 0.05 * S), -0.05 * nh, S - 0.95 * nh))

        # Her mean and spread part of the way to the background's around her.
        inside = alpha > 0.5
        box = img[max(py, 0):max(py + nh, 1), max(px, 0):max(px + nw, 1)].reshape(-1, 3)
        if inside.any() and len(box):
            t = rng.uniform(0.15, 0.5)
            mp, sp = cut[inside].mean(0), cut[inside].std(0) + 1.0
            mb, sb = box.mean(0), box.std(0) + 1.0
            cut = (cut - mp) * (1 + 0.5 * t * (sb / sp - 1)) + mp + t * (mb - mp)
        cut = cut * rng.uniform(0.9, 1.1) + rng.uniform(-10, 10, 3)

        # A thing touching her side (a bicycle, a plant, an animal), behind her: never in front,
        # where it reads as something she carries, which CCP labels person (the first try put
        # half of them in front and lost ccp0271's handbag).
        if self.objects and rng.random() < 0.3:
            o_img, o_a = self._object(rng, 0.15, 0.5)
            oh, ow = o_a.shape
            edge = px + (nw * rng.uniform(0.1, 0.3) if rng.random() < 0.5 else nw * rng.uniform(0.7, 0.9))
            self._blend_cutout(img, target, weight, valid, o_img, o_a, int(edge - ow / 2),
                               int(py + nh * rng.uniform(0.2, 0.9) - oh / 2), person=False, cut_weight=1.0)
        if head and inside.any():
            ys, xs = np.nonzero(inside)
            # One to two head widths, centred near the head (the top tenth of her mask).
            top = ys < ys.min() + 0.1 * nh
            hx, hy = xs[top].mean(), ys.min() + 0.06 * nh
            o_img, o_a = self._object(rng, 0.12 * nh / S, 0.3 * nh / S)
            oh, ow = o_a.shape
            self._blend_cutout(img, target, weight, valid, o_img, o_a,
                               int(px + hx - ow / 2 + rng.normal(0, 0.2 * ow)),
                               int(py + hy - oh / 2 + rng.normal(0, 0.2 * oh)), person=False, cut_weight=1.0)
        self._blend_cutout(img, target, weight, valid, cut, alpha, px, py, person=True, cut_weight=r.weight)
        return (np.clip(img, 0, 255).astype(np.uint8), np.round(target * 255).astype(np.uint8), weight, valid)

    def _still_scale(self, rng, h, w):
        """From the whole photo down to a close-up of a third of it."""
        return max(self.size / w, self.size / h) * log_uniform(rng, 1.0, 3.0) if rng.random() < 0.7 \
            else self._scene_scale(rng, h, w)

    def _negative_photo(self, rng):
        # No draw at all without the second round's negatives: the old recipes' samples stay.
        if self.web_empty and (rng.random() < 0.5 or not (self.stills or self.empty or self.margins)):
            r = self.web_empty[rng.integers(len(self.web_empty))]
            h, w = r.image.shape[:2]
            return self._place(rng, r.image, None, 1.0, self._still_scale(rng, h, w))
        if self.stills and (rng.random() < 0.3 or not (self.empty or self.margins)):
            r = self.stills[rng.integers(len(self.stills))]
            h, w = r.image.shape[:2]
            return self._place(rng, r.image, None, 1.0, self._still_scale(rng, h, w))
        if self.margins and (rng.random() < 0.3 or not self.empty):
            strip = self.margins[rng.integers(len(self.margins))]
            h, w = strip.shape[:2]
            scale = max(self.size / w, self.size / h) * rng.uniform(1.0, 1.3) if rng.random() < 0.5 \
                else self._scene_scale(rng, h, w)
            return self._place(rng, strip, None, 1.0, scale)
        r = self.empty[rng.integers(len(self.empty))]
        h, w = r.image.shape[:2]
        return self._place(rng, r.image, None, 1.0, self._scene_scale(rng, h, w))

    # --- copy-paste compositing ---------------------------------------------------------------

    def _background(self, rng):
        S = self.size
        u = rng.random()
        if u < 0.15:
            img = synthetic_background(rng, (S, S))
            return img, np.zeros((S, S), np.uint8), np.ones((S, S), np.float32), np.ones((S, S), np.uint8)
        if u < 0.45 and (self.empty or self.stills or self.web_empty):
            # Half of these from the still photos: people pasted into meadows, gardens and
            # cities, so that such scenes do not become "never a person". With the second
            # round's person-free scenes, half from those (no draw without them).
            if self.web_empty and (rng.random() < 0.5 or not (self.empty or self.stills)):
                pool = self.web_empty
            else:
                pool = self.stills if self.stills and (rng.random() < 0.5 or not self.empty) else self.empty
            r = pool[rng.integers(len(pool))]
            src, mask, wgt, wmap = r.image, None, 1.0, None
        elif u < 0.58 and self.margins:
            src, mask, wgt, wmap = self.margins[rng.integers(len(self.margins))], None, 1.0, None
        else:  # a photo that already has people in it: a crowd with occlusions
            r = self.exact[rng.integers(len(self.exact))]
            src, mask, wgt, wmap = r.image, r.mask, r.weight, r.wmap
        h, w = src.shape[:2]
        scale = max(S / w, S / h) * log_uniform(rng, 1.0, 1.6)
        out = self._place(rng, src, mask, wgt, scale, wmap=wmap if mask is not None else None)
        if rng.random() < 0.25:  # shallow depth of field, as in many portraits
            blurred = Image.fromarray(out[0]).filter(ImageFilter.GaussianBlur(rng.uniform(2, 8)))
            out = (np.asarray(blurred),) + out[1:]
        return out

    def _composite(self, rng):
        n = rng.choice([1, 2, 3, 4, 5], p=[0.4, 0.25, 0.15, 0.12, 0.08])
        out = self._background(rng)
        # Objects behind the people, in front of them, or both: a person beside a dog, behind
        # a bicycle, holding flowers in front of them; the mask follows what is in front.
        k = rng.integers(1, 3) if self.objects and rng.random() < 0.25 else 0
        behind = rng.integers(0, k + 1) if k else 0
        if behind:
            out = self._paste_objects(rng, *out, count=behind)
        # Half the groups (subjects on) stand at one scale; otherwise sizes are independent and
        # the small ones become passers-by.
        group = self.subjects and n >= 2 and rng.random() < 0.5
        out = self._paste_people(rng, *out, count=n, group=group)
        if k - behind:
            out = self._paste_objects(rng, *out, count=k - behind)
        return out

    def _paste_objects(self, rng, img, target, weight, valid, count):
        """Pastes cut-out things that are not people; where they cover a person, the mask drops."""
        S = self.size
        img = img.astype(np.float32)
        target = target.astype(np.float32) / 255.0
        for _ in range(count):
            o_img, o_a = self._object(rng, 0.08, 0.9)
            nh, nw = o_a.shape
            px, py = int(rng.uniform(-nw / 3, S - 2 * nw / 3)), int(rng.uniform(-nh / 3, S - 2 * nh / 3))
            self._blend_cutout(img, target, weight, valid, o_img, o_a, px, py, person=False, cut_weight=1.0)
        return (np.clip(img, 0, 255).astype(np.uint8), np.round(target * 255).astype(np.uint8), weight, valid)

    def _object(self, rng, lo, hi):
        """A random thing that is not a person, its long side lo..hi of the canvas (log-uniform),
        maybe mirrored, its colours nudged: (float HxWx3 image, alpha 0..1)."""
        obj = self.objects[rng.integers(len(self.objects))]
        oh, ow = obj.shape[:2]
        scale = log_uniform(rng, lo, hi) * self.size / max(oh, ow)
        nw, nh = max(2, int(ow * scale + 0.5)), max(2, int(oh * scale + 0.5))
        o = resized(obj, (nw, nh)).astype(np.float32)
        if rng.random() < 0.5:
            o = o[:, ::-1]
        return o[..., :3] * rng.uniform(0.85, 1.15) + rng.uniform(-15, 15, 3), o[..., 3] / 255.0

    def _blend_cutout(self, img, target, weight, valid, cut, alpha, px, py, person, cut_weight, behind=False):
        """Alpha-blends a cut-out (float HxWx3, alpha 0..1) with its corner at (px, py), clipped
        to the canvas, in place. Under a person the target rises to 1; under anything else it
        drops, as the thing hides whoever is behind it. behind: it goes behind the target."""
        S = self.size
        h, w = alpha.shape
        cx0, cy0, cx1, cy1 = max(px, 0), max(py, 0), min(px + w, S), min(py + h, S)
        if cx1 <= cx0 or cy1 <= cy0:
            return
        sl = (slice(cy0, cy1), slice(cx0, cx1))
        csl = (slice(cy0 - py, cy1 - py), slice(cx0 - px, cx1 - px))
        a = alpha[csl] * (1 - target[sl]) if behind else alpha[csl]
        img[sl] = img[sl] * (1 - a[..., None]) + cut[csl] * a[..., None]
        target[sl] = target[sl] * (1 - a) + (a if person else 0.0)
        weight[sl] = np.where(a > 0.01, np.maximum(weight[sl], cut_weight), weight[sl])
        valid[sl] = np.maximum(valid[sl], (a > 0.5).astype(np.uint8))

    def _paste_people(self, rng, img, target, weight, valid, count, group=False):
        # Height of the people already labelled on the canvas (subjects on): a paste under half
        # of the tallest one is a passer-by.
        rows = np.nonzero((target > 127).any(axis=1))[0] if self.subjects else ()
        on_canvas = rows[-1] + 1 - rows[0] if len(rows) else 0
        img = img.astype(np.float32)
        target = target.astype(np.float32) / 255.0
        # Paste far-away people first so that nearer (larger) ones occlude them.
        if group:  # one group at one distance: sizes within a factor 1.5, all of them subjects
            base = log_uniform(rng, 0.06, 1.1 / 1.5)
            sizes = sorted(base * log_uniform(rng, 1.0, 1.5) for _ in range(count))
        else:
            sizes = sorted(log_uniform(rng, 0.06, 1.1) for _ in range(count))
        if not self.subjects:  # every pasted person is a person (draws in the original order)
            for rel in sizes:
                cut = self._cut_person(rng, rel, group)
                if cut:
                    self._paste_person(rng, img, target, weight, valid, cut, bystander=False)
        else:
            # The labelled sets mark only a photo's subjects, so passers-by are background.
            cuts = [c for c in (self._cut_person(rng, rel, group) for rel in sizes) if c]
            tallest = max([c[-1] for c in cuts] + [on_canvas])
            for cut in sorted(cuts, key=lambda c: c[-1]):  # by apparent height: far ones first
                self._paste_person(rng, img, target, weight, valid, cut, bystander=cut[-1] < 0.5 * tallest)
        return (np.clip(img, 0, 255).astype(np.uint8), np.round(target * 255).astype(np.uint8),
                weight, valid)

    def _cut_person(self, rng, rel, group):
        """Picks a person and the scale to paste them at (rel: full-body height / canvas side);
        None when too large. The last item is the whole body's height on the canvas, even for
        a head-and-shoulders cut: the size that tells a subject from a passer-by."""
        S = self.size
        r = self.cutouts[rng.integers(len(self.cutouts))]
        x0, y0, x1, y1 = r.bbox
        x0, y0 = max(0, x0 - 4), max(0, y0 - 4)
        x1, y1 = min(r.image.shape[1], x1 + 4), min(r.image.shape[0], y1 + 4)
        full_h = y1 - y0
        portrait = not group and r.set_name == "ccp-person" and rng.random() < 0.25
        if portrait:  # head-and-shoulders cut, standing at the bottom edge
            y1 = y0 + int((y1 - y0) * rng.uniform(0.2, 0.5))
        crop, cmask = r.image[y0:y1, x0:x1], r.mask[y0:y1, x0:x1]
        ch, cw = crop.shape[:2]
        scale = (rng.uniform(0.5, 1.0) * S / cw) if portrait else rel * S / ch
        nw, nh = max(2, int(cw * scale + 0.5)), max(2, int(ch * scale + 0.5))
        if nw > 2 * S or nh > 2 * S:
            return None
        return r, crop, cmask, nw, nh, portrait, full_h * scale

    def _paste_person(self, rng, img, target, weight, valid, cut, bystander):
        """Pastes one person from _cut_person in place (img, target float). A bystander shows
        but is labelled background, and goes behind the people already labelled."""
        S = self.size
        r, crop, cmask, nw, nh, portrait, _ = cut
        p_img, p_a = resized(crop, (nw, nh)), resized(cmask, (nw, nh))
        if self.tumble and not bystander and not portrait and rng.random() < self.tumble:
            angle = rng.uniform(-180, 180)  # corners fill with alpha 0
            p_img = np.asarray(Image.fromarray(p_img).rotate(angle, Image.BILINEAR, expand=True))
            p_a = np.asarray(Image.fromarray(p_a).rotate(angle, Image.BILINEAR, expand=True))
            nh, nw = p_a.shape
        if bystander and rng.random() < 0.5:  # out of focus, as passers-by in portraits often are
            blur = ImageFilter.GaussianBlur(rng.uniform(0.5, 2.5))
            p_img = np.asarray(Image.fromarray(p_img).filter(blur))
            p_a = np.asarray(Image.fromarray(p_a).filter(blur))
        p_img, p_a = p_img.astype(np.float32), p_a.astype(np.float32) / 255.0
        if rng.random() < 0.5:
            p_img, p_a = p_img[:, ::-1], p_a[:, ::-1]
        # Nudge the person's colours so their light does not give the paste away.
        p_img = p_img * rng.uniform(0.85, 1.15) + rng.uniform(-15, 15, 3)
        px = int(rng.uniform(-nw / 3, S - 2 * nw / 3))
        py = S - nh + int(rng.uniform(0, nh * 0.1)) if portrait else int(rng.uniform(-nh / 4, S - 2 * nh / 3))
        self._blend_cutout(img, target, weight, valid, p_img, p_a, px, py, person=not bystander,
                           cut_weight=r.weight, behind=bystander)

    # --- photometric ---------------------------------------------------------------------------

    def _photometric(self, rng, img):
        """Colour, low resolution, blur, noise, JPEG. Colour goes through one lookup table per
        channel and the rest through PIL's C filters: numpy float maths was the bottleneck."""
        out = Image.fromarray(img)
        mean = float(np.asarray(out.resize((16, 16), Image.BOX)).mean())
        gains = rng.uniform(0.85, 1.15, 3)                            # white balance
        contrast, bright = rng.uniform(0.7, 1.3), rng.uniform(-25, 25)
        gamma = rng.uniform(0.7, 1.4) if rng.random() < 0.3 else 1.0
        v = np.arange(256, dtype=np.float64)
        lut = []
        for g in gains:
            y = np.clip((v * g - mean) * contrast + mean + bright, 0, 255)
            lut += np.round(255.0 * (y / 255.0) ** gamma).astype(int).tolist()
        out = out.point(lut)
        sat = 0.0 if rng.random() < 0.05 else rng.uniform(0.6, 1.4)
        out = ImageEnhance.Color(out).enhance(sat)
        S = self.size
        if rng.random() < 0.15:  # low-resolution source, enlarged
            f = rng.uniform(0.3, 0.7)
            out = out.resize((max(8, int(S * f)), max(8, int(S * f))), Image.BOX).resize((S, S), Image.BILINEAR)
        u = rng.random()
        if u < 0.2:
            out = out.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 2.0)))
        elif u < 0.3:  # motion blur along a random axis
            k = np.zeros((5, 5))
            if rng.random() < 0.5:
                k[2, :] = 1
            else:
                k[:, 2] = 1
            out = out.filter(ImageFilter.Kernel((5, 5), k.ravel().tolist(), scale=5))
        if rng.random() < 0.25:
            # A random window of a fixed noise bank, rescaled by a lookup table: reproducible
            # and far cheaper than drawing fresh normals for every pixel.
            sigma = rng.uniform(2, 10)
            bank = self.noise_bank if rng.random() < 0.5 else self.noise_bank.convert("L").convert("RGB")
            x0, y0 = rng.integers(0, bank.width - S + 1), rng.integers(0, bank.height - S + 1)
            lut = np.clip(np.round((np.arange(256) - 128) * sigma / 16 + 128), 0, 255).astype(int).tolist()
            noise = bank.crop((x0, y0, x0 + S, y0 + S)).point(lut * 3)
            out = ImageChops.add(out, noise, 1.0, -128)
        if rng.random() < 0.4:
            buf = io.BytesIO()
            out.save(buf, "JPEG", quality=int(rng.uniform(25, 95)))
            out = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
        return np.asarray(out)


def write_splits(root, folder):
    """Writes the validation stems of every set to folder/<set>.txt (names only), and the hard
    web-like split to folder/hard-web.txt as <set>/<stem> lines."""
    os.makedirs(folder, exist_ok=True)
    for name in SETS:
        if name in OPTIONAL_SETS and not os.path.isdir(os.path.join(root, name)):
            print(f"{name}: not in {root}, list left as it is")
            continue
        if SETS[name]["val_mod"] == 0:
            print(f"{name}: no validation split ({role(name)} only)")
            continue
        stems = [s for s in list_stems(root, name) if is_val(name, s)]
        with open(os.path.join(folder, name + ".txt"), "w") as f:
            f.write("".join(s + "\n" for s in stems))
        print(f"{name}: {len(stems)} validation stems of {len(list_stems(root, name))}")
    if all(os.path.isdir(os.path.join(root, n)) for n in HARD_WEB_SETS):
        pairs = hard_web(root)
        with open(os.path.join(folder, "hard-web.txt"), "w") as f:
            f.write("".join(f"{n}/{s}\n" for n, s in pairs))
        counts = ", ".join(f"{n} {sum(p[0] == n for p in pairs)}" for n in HARD_WEB_SETS)
        print(f"hard-web: {len(pairs)} validation photos with people ({counts})")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Write the validation stem lists (training/splits).")
    ap.add_argument("--data", required=True)
    ap.add_argument("--splits", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "splits"))
    a = ap.parse_args()
    write_splits(a.data, a.splits)
