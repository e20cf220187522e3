#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What any CUDA process pays to start and end, beside backdrop-cli on one photo, on the GPU
machine (docs/PERFORMANCE.md): a Python process that only loads ctypes, the same that also
calls the toolkit's cudaFree(0) (the driver's start and the context) and exits (the driver's
teardown), then the CLI of a bundle (tools/gpu-cli-bundle) making one mask on the CPU and on
the GPU. Each process timed by the wall clock from start to exit, medians of RUNS.

    python3 bench/cuda-process-floor.py BUNDLE MODEL PHOTO [RUNS]
"""
import glob
import statistics
import subprocess
import sys
import tempfile
import time


def cudart_path():
    paths = sorted(glob.glob("/usr/local/cuda*/lib64/libcudart.so*")) + ["libcudart.so"]
    return paths[0]


def timed(cmd, runs):
    seconds = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        seconds.append(time.perf_counter() - t0)
        if p.returncode:
            sys.exit(f"cuda-process-floor: {cmd[0]} failed: {p.stderr.strip()[:300]}")
    ms = sorted(1000 * s for s in seconds)
    return f"median {statistics.median(ms):5.0f} ms (min {ms[0]:.0f}, max {ms[-1]:.0f})"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bundle, model, photo = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    bare = "import ctypes"
    cuda = f"import ctypes; lib = ctypes.CDLL('{cudart_path()}'); assert lib.cudaFree(ctypes.c_void_p(0)) == 0"
    print(f"{'python, no CUDA':32} {timed([sys.executable, '-c', bare], runs)}")
    print(f"{'python, cudaFree(0) and exit':32} {timed([sys.executable, '-c', cuda], runs)}")
    with tempfile.TemporaryDirectory() as out:
        for device in ("cpu", "cuda"):
            cli = [f"{bundle}/run.sh", "-q", "--model", model, "--device", device, "--output", "mask", "--overwrite",
                   "--output-dir", out, photo]
            print(f"{'backdrop-cli, one mask, ' + device:32} {timed(cli, runs)}")


if __name__ == "__main__":
    main()
