#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where a CUDA session's start goes, on the GPU machine (docs/PERFORMANCE.md): opening the
model, CUDA's driver start (bd_device_count), the context alone (cudaFree(0) through the
toolkit's libcudart, which shares the device's primary context with the library), then
bd_session_new on that running context, a second session, and 1 MP photos through
bd_session_run with the host passes off (what a folder's lane runs).

    python3 bench/gpu-start.py BUILD MODEL [ROUNDS]     e.g. /tmp/bg data/backdrop-portrait.bdm 3
"""
import ctypes
import ctypes.util
import glob
import importlib.util
import os
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gpu_parity", os.path.join(here, "..", "tests", "gpu-parity.py"))
gp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gp)


def cudart():
    for path in [ctypes.util.find_library("cudart")] + sorted(glob.glob("/usr/local/cuda*/lib64/libcudart.so*")):
        if path:
            try:
                return ctypes.CDLL(path)
            except OSError:
                pass
    sys.exit("gpu-start: no libcudart to start the context with")


def one_round(build, model_path):
    now = time.perf_counter
    lib = gp.load(build)
    rt = cudart()
    err = gp.Error()
    model = ctypes.c_void_p()
    t0 = now()
    if lib.bd_model_open(model_path.encode(), ctypes.byref(model), ctypes.byref(err)):
        sys.exit(f"gpu-start: {err.message.decode()}")
    t1 = now()
    lib.bd_device_count(gp.CUDA)
    t2 = now()
    if rt.cudaFree(ctypes.c_void_p(0)) != 0:
        sys.exit("gpu-start: cudaFree(0) failed")
    t3 = now()
    s = gp.session(lib, model, gp.CUDA, gp.FAST)
    t4 = now()
    gp.session(lib, model, gp.CUDA, gp.FAST)
    t5 = now()
    px = np.random.default_rng(1).integers(0, 255, (750, 1333, 3)).astype(np.uint8)
    img = gp.Image(px.ctypes.data, 1333, 750, 1333 * 3, 0)
    alpha = np.zeros((750, 1333), np.uint8)
    ro = gp.RunOptions()
    lib.bd_run_options_init(ctypes.byref(ro))
    ro.main_subject_only = 0
    ro.decisive = 0
    times = []
    for _ in range(30):
        a = now()
        if lib.bd_session_run(s, ctypes.byref(img), ctypes.byref(ro), alpha.ctypes.data_as(ctypes.c_void_p),
                              ctypes.c_size_t(1333), ctypes.byref(err)):
            sys.exit(f"gpu-start: {err.message.decode()}")
        times.append(now() - a)
    ms = lambda x: 1e3 * x
    print(f"model open {ms(t1 - t0):.0f} ms, driver start {ms(t2 - t1):.0f} ms, context {ms(t3 - t2):.0f} ms, "
          f"session {ms(t4 - t3):.0f} ms, second session {ms(t5 - t4):.0f} ms, first 1 MP photo {ms(times[0]):.1f} ms, "
          f"then {ms(float(np.median(times[5:]))):.2f} ms (network alone)", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 1):
        # A new process each round, so that each starts CUDA afresh.
        if os.fork() == 0:
            one_round(sys.argv[1], sys.argv[2])
            os._exit(0)
        os.wait()
