# SPDX-License-Identifier: Apache-2.0
"""Inference pre-processing, exactly as docs/model-format.md and the C engine do it.

scale so the long side = input_size, never enlarging (a smaller photo keeps its size; area
average when shrinking) -> RGB / 255 -> (x - mean) / std -> pad evenly to a multiple of
2^(depth-1) with zeros.
"""
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from model import IMAGENET_MEAN, IMAGENET_STD


def scaled_size(w, h, long_side):
    """Size after scaling the long side to long_side; the short side rounds half up."""
    s = long_side / max(w, h)
    return max(1, int(w * s + 0.5)), max(1, int(h * s + 0.5))


def resize(img, size, mask=False):
    """PIL resize with the engine's filters: BOX is PIL's exact area average."""
    w, h = size
    shrink = w <= img.width and h <= img.height
    return img.resize(size, Image.BOX if shrink else Image.BILINEAR)


def pad_amounts(h, w, multiple):
    """(top, bottom, left, right): evenly, the odd pixel going to the bottom/right."""
    ph, pw = (-h) % multiple, (-w) % multiple
    return ph // 2, ph - ph // 2, pw // 2, pw - pw // 2


def normalise(rgb_u8):
    """HxWx3 uint8 -> 3xHxW float32 normalised tensor."""
    x = torch.from_numpy(np.array(rgb_u8, np.uint8)).permute(2, 0, 1).float() / 255.0
    mean = torch.tensor(IMAGENET_MEAN).view(3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(3, 1, 1)
    return (x - mean) / std


def preprocess(img, long_side=512, multiple=16, enlarge=False):
    """PIL image -> (1x3xHpxWp tensor, (top, left, h, w) of the photo inside it). A photo
    under long_side keeps its size, as in the engine; enlarge=True scales it up (to compare)."""
    img = img.convert("RGB")
    size = scaled_size(img.width, img.height, long_side if enlarge else min(long_side, max(img.size)))
    if size != img.size:
        img = resize(img, size)
    x = normalise(np.asarray(img))
    h, w = x.shape[1:]
    t, b, l, r = pad_amounts(h, w, multiple)
    x = F.pad(x, (l, r, t, b))  # zeros after normalisation
    return x[None], (t, l, h, w)


@torch.no_grad()
def predict(model, img, long_side=512, device="cpu", enlarge=False):
    """Probability map (float32 numpy) at the ORIGINAL photo size; the network output is cropped
    to the scaled photo and enlarged bilinearly (the engine upsamples edge-aware instead)."""
    x, (t, l, h, w) = preprocess(img, long_side, model.multiple, enlarge)
    p = torch.sigmoid(model(x.to(device)).float())[:, :, t:t + h, l:l + w]
    p = F.interpolate(p, size=(img.height, img.width), mode="bilinear", align_corners=False)
    return p[0, 0].clamp(0, 1).cpu().numpy()
