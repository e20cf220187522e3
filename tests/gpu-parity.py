#!/usr/bin/env python3
"""CUDA against CPU, through the library itself (ctypes), on a machine with a GPU.

    python3 tests/gpu-parity.py BUILD_DIR [MODEL.bdm ...]

For random U-Nets of several shapes (odd widths included) and for any model files given:
the CUDA backend's probabilities in exact (fp32) and fast (fp16) precision against the CPU
backend's on random input. Prints a table; exits non-zero when a check fails. CI has no GPU
and does not run this; the C test suites carry the CPU checks.
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class Options(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("precision", ctypes.c_int), ("threads", ctypes.c_int),
                ("input_size", ctypes.c_uint32)]


CPU, CUDA = 1, 2
FAST, EXACT = 0, 1


def load(build):
    lib = ctypes.CDLL(os.path.join(build, "libbackdrop.so"))
    lib.bd_session_device_description.restype = ctypes.c_char_p
    lib.bd_model_depth.restype = ctypes.c_uint32
    return lib


def session(lib, model, device, precision):
    s = ctypes.c_void_p()
    err = Error()
    opts = Options(device, precision, 0, 0)
    if lib.bd_session_new(model, ctypes.byref(opts), ctypes.byref(s), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    return s


def forward(lib, s, x):
    _, h, w = x.shape
    out = np.full((h, w), np.nan, dtype=np.float32)
    err = Error()
    st = lib.bd_session_forward(s, x.ctypes.data_as(ctypes.c_void_p), h, w,
                                out.ctypes.data_as(ctypes.c_void_p), ctypes.byref(err))
    if st:
        raise RuntimeError(err.message.decode())
    return out


def check(lib, path, h, w, rng):
    model = ctypes.c_void_p()
    err = Error()
    if lib.bd_model_open(path.encode(), ctypes.byref(model), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    cpu = session(lib, model, CPU, EXACT)
    exact = session(lib, model, CUDA, EXACT)
    fast = session(lib, model, CUDA, FAST)
    rows = []
    for run in range(2):   # the second run replays the CUDA graph
        x = rng.uniform(-2, 2, (3, h, w)).astype(np.float32)
        ref = forward(lib, cpu, x)
        for name, s, tol in (("exact", exact, 1e-4), ("fast", fast, 2e-2)):
            got = forward(lib, s, x)
            ok = np.isfinite(got).all()
            rel = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-12)) if ok else float("inf")
            worst = float(np.abs(got - ref).max()) if ok else float("inf")
            within = float((np.abs(got - ref) <= 1 / 255).mean()) if ok else 0.0
            rows.append((os.path.basename(path), f"{w}x{h}", name, run, rel, worst, within, ok and rel <= tol))
    desc = lib.bd_session_device_description(fast).decode()
    for s in (cpu, exact, fast):
        lib.bd_session_free(s)
    lib.bd_model_free(model)
    return rows, desc


def main():
    build = sys.argv[1]
    lib = load(build)
    maker = os.path.join(build, "bench", "make-synthetic-model")
    rng = np.random.default_rng(1)
    rows, desc = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(2, 8, 32, 48), (3, 12, 64, 40), (4, 20, 96, 64), (5, 16, 512, 352), (5, 64, 256, 256)]
        for depth, width, h, w in cases:
            path = os.path.join(tmp, f"unet-d{depth}-w{width}.bdm")
            subprocess.run([maker, "--depth", str(depth), "--width", str(width), path], check=True)
            r, desc = check(lib, path, h, w, rng)
            rows += r
        for path in sys.argv[2:]:
            r, desc = check(lib, path, 512, 352, rng)
            rows += r
    print(f"device: {desc}")
    print(f"{'model':24} {'input':9} {'prec':6} {'run':3} {'rel.err':>9} {'max|d|':>9} {'<=1/255':>8} ok")
    failed = 0
    for m, size, prec, run, rel, worst, within, ok in rows:
        print(f"{m:24} {size:9} {prec:6} {run:3} {rel:9.2e} {worst:9.2e} {within:8.4%} {'yes' if ok else 'NO'}")
        failed += not ok
    print(f"{len(rows) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
