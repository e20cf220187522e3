#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A 1 MP photo through bd_session_run on the GPU, fast precision, standing and turned a
quarter either way (core/upright.c turns it back), and turned without the main-subject and
decisive passes: the median of 50 runs after 10, each build in a process of its own, builds
in turns for ROUNDS rounds (docs/MODEL.md, "A photo lying down: its quick looks for a second
view").

    python3 bench/gpu-lying.py MODEL PHOTO ROUNDS BUILD...     e.g. data/backdrop-portrait.bdm ccp0006.webp 3 old new
"""
import ctypes
import importlib.util
import os
import subprocess
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def parity_module():
    spec = importlib.util.spec_from_file_location("gpu_parity", os.path.join(here, "..", "tests", "gpu-parity.py"))
    gp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gp)
    return gp


def one_build(build, model_path, photo):
    from PIL import Image as PILImage
    gp = parity_module()
    lib = gp.load(build)
    model, err = ctypes.c_void_p(), gp.Error()
    if lib.bd_model_open(model_path.encode(), ctypes.byref(model), ctypes.byref(err)):
        sys.exit(f"gpu-lying: {err.message.decode()}")
    session = gp.session(lib, model, gp.CUDA, gp.FAST)
    base = np.asarray(PILImage.open(photo).convert("RGB"))
    rgb = np.ascontiguousarray(np.asarray(PILImage.fromarray(base).resize((816, 1224), PILImage.BILINEAR)))
    right, left = np.ascontiguousarray(np.rot90(rgb, -1)), np.ascontiguousarray(np.rot90(rgb, 1))
    row = []
    for label, px, passes in (("standing", rgb, 1), ("lying", right, 1), ("left", left, 1), ("lying-raw", right, 0)):
        h, w = px.shape[:2]
        alpha = np.zeros((h, w), np.uint8)
        image = gp.Image(px.ctypes.data, w, h, w * 3, 0)
        opts = gp.RunOptions(ctypes.sizeof(gp.RunOptions), 1, None, None, 1, passes, passes, 1, 1)
        times = []
        for i in range(60):
            t0 = time.perf_counter()
            if lib.bd_session_run(session, ctypes.byref(image), ctypes.byref(opts), alpha.ctypes.data, w,
                                  ctypes.byref(err)):
                sys.exit(f"gpu-lying: {err.message.decode()}")
            if i >= 10:
                times.append((time.perf_counter() - t0) * 1e3)
        row.append(f"{label}_ms={np.median(times):.2f}")
    print(" ".join(row))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        one_build(*sys.argv[2:5])
        return
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    model, photo, rounds, builds = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    for r in range(rounds):
        for build in builds:
            out = subprocess.run([sys.executable, __file__, "--one", build, model, photo], capture_output=True, text=True)
            print(f"round {r + 1} {build}: {out.stdout.strip() or out.stderr.strip()}", flush=True)


if __name__ == "__main__":
    main()
