#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CUDA against CPU, through the library itself (ctypes), on a machine with a GPU.

    python3 tests/gpu-parity.py BUILD_DIR [MODEL.bdm ...] [--photos DIR] [--busy]

For random U-Nets of several shapes (odd widths included) and for any model files given:
the CUDA backend's probabilities in exact (fp32) and fast (fp16) precision against the CPU
backend's on random input, one input at a time and as a batch of three different ones. With --photos (and a model): whole photos through bd_session_run
(8-bit in, full-size 8-bit alpha out, letterbox and guided filter on the device), CUDA exact
against the CPU and fast against exact, within 1/255 for at least 99.9% of pixels, the same
photo as padded RGBA giving fast's mask byte for byte, the main-subject and decisive passes
made on the device giving the host's passes' bytes, and the time per photo at 1 and 12
megapixels. With --busy, all of it while another process keeps the
GPU busy (the times then mean little). Prints tables; exits non-zero when a check fails.
CI has no GPU and does not run this; the C test suites carry the CPU checks.
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
    _fields_ = [("struct_size", ctypes.c_size_t), ("device", ctypes.c_int), ("precision", ctypes.c_int),
                ("threads", ctypes.c_int),
                ("input_size", ctypes.c_uint32), ("device_index", ctypes.c_int)]


class Image(ctypes.Structure):
    _fields_ = [("pixels", ctypes.c_void_p), ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("stride", ctypes.c_size_t), ("format", ctypes.c_int)]


class RunOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("refine_edges", ctypes.c_int), ("progress", ctypes.c_void_p), ("user_data", ctypes.c_void_p),
                ("mirror_average", ctypes.c_int), ("main_subject_only", ctypes.c_int), ("decisive", ctypes.c_int),
                ("upright", ctypes.c_int), ("close_ups", ctypes.c_int)]


CPU, CUDA = 1, 2
FAST, EXACT = 0, 1


def load(build):
    lib = ctypes.CDLL(os.path.join(build, "libbackdrop.so"))
    lib.bd_session_device_description.restype = ctypes.c_char_p
    lib.bd_model_depth.restype = ctypes.c_uint32
    return lib


def session(lib, model, device, precision, index=0):
    s = ctypes.c_void_p()
    err = Error()
    opts = Options(ctypes.sizeof(Options), device, precision, 0, 0, index)
    if lib.bd_session_new(model, ctypes.byref(opts), ctypes.byref(s), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    return s


def check_device_index(lib, path):
    """GPUs by number (device_index): 0.. open and run, the first past the last is refused with
    a message that says how many there are. Returns (GPUs, ok)."""
    model = ctypes.c_void_p()
    err = Error()
    if lib.bd_model_open(path.encode(), ctypes.byref(model), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    count, ok = 0, False
    x = np.random.default_rng(3).standard_normal((3, 64, 64)).astype(np.float32)
    while count < 64:
        try:
            s = session(lib, model, CUDA, FAST, count)
        except RuntimeError as e:
            ok = count >= 1 and "there is no GPU" in str(e)
            print(f"device index {count}: refused: {e}")
            break
        ok = np.isfinite(forward(lib, s, x)).all()
        lib.bd_session_free(s)
        if not ok:
            break
        count += 1
    lib.bd_model_free(model)
    return count, bool(ok)


def forward(lib, s, x):
    """x: CHW (one input) or NCHW (a batch)."""
    *n, _, h, w = x.shape
    out = np.full((*n, h, w), np.nan, dtype=np.float32)
    err = Error()
    st = lib.bd_session_forward_batch(s, x.ctypes.data_as(ctypes.c_void_p), n[0] if n else 1, h, w,
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
    # The second run replays the CUDA graph; the third is a batch of three different inputs
    # against the CPU one at a time (each image's borders are its own).
    for run in range(3):
        x = rng.uniform(-2, 2, (3, 3, h, w) if run == 2 else (3, h, w)).astype(np.float32)
        ref = np.stack([forward(lib, cpu, xi) for xi in x]) if run == 2 else forward(lib, cpu, x)
        for name, s, tol in (("exact", exact, 1e-4), ("fast", fast, 2e-2)):
            got = forward(lib, s, x)
            name += " b3" if run == 2 else ""
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


def run_photo(lib, s, rgb, main_subject_only=1, decisive=1, upright=1, rgba_padded=False, close_ups=1):
    h, w, _ = rgb.shape
    img = Image(rgb.ctypes.data, w, h, w * 3, 0)
    if rgba_padded:
        # RGBA with 12 bytes more a row: the device's reads at another pixel size and pitch.
        padded = np.zeros((h, w * 4 + 12), np.uint8)
        padded[:, :w * 4].reshape(h, w, 4)[:, :, :3] = rgb
        padded[:, :w * 4].reshape(h, w, 4)[:, :, 3] = 255
        img = Image(padded.ctypes.data, w, h, w * 4 + 12, 1)
    alpha = np.zeros((h, w), dtype=np.uint8)
    err = Error()
    if lib.bd_session_run(s, ctypes.byref(img), ctypes.byref(RunOptions(ctypes.sizeof(RunOptions), 1, None, None, 1, main_subject_only, decisive, upright,
                                                                      close_ups)),
                          alpha.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(w), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    return alpha


class Background(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("color", ctypes.c_uint8 * 4), ("blur_radius", ctypes.c_float),
                ("image", ctypes.c_void_p)]


def composite(lib, s, px, alpha, kind, colour=(0, 0, 0, 0), radius=0.0):
    h, w, ch = px.shape
    img = Image(px.ctypes.data, w, h, w * ch, 0 if ch == 3 else 1)
    bg = Background(kind, (ctypes.c_uint8 * 4)(*colour), radius, None)
    out = np.zeros((h, w, 4), dtype=np.uint8)
    err = Error()
    if lib.bd_session_composite(s, ctypes.byref(img), alpha.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(w),
                                ctypes.byref(bg), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(w * 4),
                                ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    return out


def check_composites(lib, cpu, gpu, rgb, alpha):
    """The cut-out, a colour and a blurred background composed on the GPU (gpu/composite.cu)
    against the host's: the same float steps in the same order, so the same bytes. Also a
    photo with an alpha channel of its own, a half-transparent colour, and blurs whose grid is
    the photo's own size (radius 4) or coarse (100)."""
    h, w, _ = rgb.shape
    rgba = np.ascontiguousarray(np.dstack([rgb, (np.arange(w)[None, :] * 255 // max(w - 1, 1) * np.ones((h, 1))).astype(np.uint8)]))
    worst = 1.0
    for px, kind, colour, radius in ((rgb, 0, (0, 0, 0, 0), 0), (rgb, 1, (30, 140, 90, 255), 0),
                                     (rgb, 1, (200, 10, 10, 128), 0), (rgba, 0, (0, 0, 0, 0), 0),
                                     (rgb, 2, (0, 0, 0, 0), 30), (rgb, 2, (0, 0, 0, 0), 4), (rgba, 2, (0, 0, 0, 0), 100)):
        a = composite(lib, cpu, px, alpha, kind, colour, radius)
        b = composite(lib, gpu, px, alpha, kind, colour, radius)
        worst = min(worst, float((a == b).mean()))
    return worst


def make_decisive(lib, s, mask, stride):
    """bd_session_make_decisive on a copy of @mask (h x w) held in rows @stride bytes apart."""
    h, w = mask.shape
    buf = np.full((h, stride), 0xEE, dtype=np.uint8)
    buf[:, :w] = mask
    err = Error()
    if lib.bd_session_make_decisive(s, buf.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint32(w), ctypes.c_uint32(h),
                                    ctypes.c_size_t(stride), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    return buf


def check_decisive(lib, cpu, gpu, masks):
    """The decisive pass on the GPU (gpu/decide-alpha.cu) against the host's, on the photos'
    soft masks and on random ones of odd sizes in padded rows (the padding left alone): whole
    numbers, so the same bytes. Returns (checks, failed)."""
    rng = np.random.default_rng(7)
    cases = [(m, m.shape[1]) for m in masks]
    for h, w in ((1, 1), (1, 37), (29, 1), (7, 5), (200, 333), (1080, 1920), (3000, 4000)):
        # Blocks of person and background (most pixels far from an edge, so decided) with 2%
        # of soft noise (near it, so kept).
        cells = rng.integers(0, 2, (h // 23 + 1, w // 17 + 1)).astype(np.uint8) * 255
        blocks = np.kron(cells, np.ones((23, 17), np.uint8))[:h, :w]
        soft = rng.integers(0, 256, (h, w), dtype=np.uint8)
        cases.append((np.where(rng.random((h, w)) < 0.02, soft, blocks).astype(np.uint8), w + 3))
    failed = 0
    for mask, stride in cases:
        a, b = make_decisive(lib, cpu, mask, stride), make_decisive(lib, gpu, mask, stride)
        same = np.array_equal(a, b)
        failed += not same
        if not same:
            print(f"decisive pass {mask.shape[1]}x{mask.shape[0]} stride {stride}: DIFFERS in {(a != b).sum()} bytes")
    print(f"decisive pass on the GPU: {len(cases) - failed} of {len(cases)} masks the same as the host's")
    return len(cases), failed


def host_passes(lib, cpu, mask, subject, decisive):
    """The main-subject and decisive passes on the host, as bd_session_run makes them on a CPU
    session, on a copy of @mask."""
    h, w = mask.shape
    out = np.ascontiguousarray(mask.copy())
    err = Error()
    if subject and lib.bd_mask_drop_passers_by(out.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint32(w),
                                               ctypes.c_uint32(h), ctypes.c_size_t(w), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    return make_decisive(lib, cpu, out, w) if decisive else out


def check_passes_on_device(lib, cpu, gpu, photos):
    """The main-subject and decisive passes a GPU session makes on its device before the mask
    comes down (gpu/keep-subject.cu, bd_gpu_decide_on_device) against the host's passes on
    the same session's mask without them: the same bytes. Each photo as it stands (the
    photo's own run, or a close-up's), lying down (the run turned) and at 1 MP, each pass
    alone and both. Returns (checks, failed)."""
    from PIL import Image as PILImage
    failed = checks = dropped = 0
    for rgb in photos:
        big = np.asarray(PILImage.fromarray(rgb).resize((816, 1224), PILImage.BILINEAR))
        for px in (rgb, np.ascontiguousarray(np.rot90(rgb, -1)), np.ascontiguousarray(big)):
            raw = run_photo(lib, gpu, px, 0, 0)
            dropped += not np.array_equal(host_passes(lib, cpu, raw, 1, 0), raw)
            for subject, decisive in ((1, 1), (1, 0), (0, 1)):
                a = run_photo(lib, gpu, px, subject, decisive)
                b = host_passes(lib, cpu, raw, subject, decisive)
                checks += 1
                if not np.array_equal(a, b):
                    failed += 1
                    print(f"passes on the device {px.shape[1]}x{px.shape[0]} subject={subject} decisive={decisive}: "
                          f"DIFFERS in {(a != b).sum()} bytes")
    print(f"passes on the device: {checks - failed} of {checks} masks the same as the host's passes "
          f"({dropped} of {checks // 3} masks lost someone to the main-subject pass)")
    return checks, failed


def check_photos(lib, model_path, photo_dir):
    from PIL import Image as PILImage
    model = ctypes.c_void_p()
    err = Error()
    if lib.bd_model_open(model_path.encode(), ctypes.byref(model), ctypes.byref(err)):
        raise RuntimeError(err.message.decode())
    cpu, exact, fast = (session(lib, model, CPU, EXACT), session(lib, model, CUDA, EXACT),
                        session(lib, model, CUDA, FAST))
    rows, failed, soft, photos = [], 0, [], []
    for name in sorted(os.listdir(photo_dir)):
        rgb = np.ascontiguousarray(np.asarray(PILImage.open(os.path.join(photo_dir, name)).convert("RGB")))
        photos.append(rgb)
        a_cpu, a_exact, a_fast = (run_photo(lib, s, rgb) for s in (cpu, exact, fast))
        soft.append(run_photo(lib, cpu, rgb, decisive=0))
        ex = float((np.abs(a_exact.astype(int) - a_cpu) <= 1).mean())
        fa = float((np.abs(a_fast.astype(int) - a_exact) <= 1).mean())
        co = check_composites(lib, cpu, fast, rgb, a_cpu)
        ra = float((run_photo(lib, fast, rgb, rgba_padded=True) == a_fast).mean())
        ok = ex >= 0.999 and fa >= 0.999 and co == 1.0 and ra == 1.0
        failed += not ok
        rows.append(f"{name:28} {rgb.shape[1]}x{rgb.shape[0]:<6} {ex:10.4%} {fa:10.4%} {co:10.4%} {ra:10.4%} "
                    f"{'yes' if ok else 'NO'}")
    # A photo wider than a block's shared memory holds as a line of colour means (1,117 cells
    # on a Hopper GPU): with a blur of radius 4 (a cell a pixel) its rows take the kernel a
    # thread a line, its columns (640 cells, more than 48 KB with their changes) the one a
    # block a line.
    rng = np.random.default_rng(11)
    wide = rng.integers(0, 256, (640, 1300, 3), dtype=np.uint8)
    wide_alpha = np.kron(rng.integers(0, 2, (40, 100), dtype=np.uint8) * 255, np.ones((16, 13), np.uint8))
    co = check_composites(lib, cpu, fast, wide, np.ascontiguousarray(wide_alpha))
    failed += co != 1.0
    rows.append(f"{'(random, wide)':28} {'1300x640':11} {'':>10} {'':>10} {co:10.4%} {'':>10} "
                f"{'yes' if co == 1.0 else 'NO'}")
    print(f"{'photo':28} {'size':11} {'exact~cpu':>10} {'fast~exact':>10} {'composite':>10} {'rgba~rgb':>10} ok   "
          "(share of pixels within 1/255; of composite bytes equal to the host's, worst of seven backgrounds; "
          "of mask bytes of the photo as padded RGBA equal to its RGB one's, fast)")
    print("\n".join(rows))
    n, decisive_failed = check_decisive(lib, cpu, fast, soft)
    failed += decisive_failed
    n_passes, passes_failed = check_passes_on_device(lib, cpu, fast, photos)
    n += n_passes
    failed += passes_failed
    # Time per photo, 8-bit in to 8-bit alpha out, after a warm-up, median of 20.
    import time
    base = np.asarray(PILImage.open(os.path.join(photo_dir, sorted(os.listdir(photo_dir))[0])).convert("RGB"))
    for mp, size in (("1 MP", (816, 1224)), ("12 MP", (2832, 4248))):
        rgb = np.ascontiguousarray(np.asarray(PILImage.fromarray(base).resize(size, PILImage.BILINEAR)))
        # "all people": without the main-subject pass, "soft": without the decisive pass (their
        # costs are the differences).
        # "as it stands": without the quick looks at the photo turned (core/upright.c); "lying
        # down": the photo turned a quarter to the right, which they turn back, and "to the
        # left", turned the other way.
        lying = np.ascontiguousarray(np.rot90(rgb, -1))
        lying_left = np.ascontiguousarray(np.rot90(rgb, 1))
        for label, s, subject, decisive, upright, px in (
                ("cuda fast", fast, 1, 1, 1, rgb), ("all people", fast, 0, 1, 1, rgb), ("soft", fast, 1, 0, 1, rgb),
                ("as it stands", fast, 1, 1, 0, rgb), ("lying down", fast, 1, 1, 1, lying),
                ("to the left", fast, 1, 1, 1, lying_left),
                ("cuda exact", exact, 1, 1, 1, rgb), ("cpu", cpu, 1, 1, 1, rgb)):
            run_photo(lib, s, px, subject, decisive, upright)
            times = []
            for _ in range(20 if label != "cpu" else 3):
                t0 = time.perf_counter()
                run_photo(lib, s, px, subject, decisive, upright)
                times.append((time.perf_counter() - t0) * 1e3)
            print(f"bd_session_run {mp:6} {px.shape[1]}x{px.shape[0]} {label:12} median_ms={np.median(times):.2f}")
        alpha = run_photo(lib, fast, rgb)
        for label, s in (("cuda", fast), ("cpu", cpu)):
            for what, kind, radius in (("cut-out", 0, 0), ("blur 30", 2, 30)):
                composite(lib, s, rgb, alpha, kind, radius=radius)
                times = []
                for _ in range(20 if label != "cpu" else 3):
                    t0 = time.perf_counter()
                    composite(lib, s, rgb, alpha, kind, radius=radius)
                    times.append((time.perf_counter() - t0) * 1e3)
                print(f"bd_session_composite {mp:6} {size[0]}x{size[1]} {label:10} {what} median_ms={np.median(times):.2f}")
    # The decisive pass alone, as a video stream calls it on its frames (1080p).
    mask = soft[0] if soft else np.zeros((1, 1), np.uint8)
    mask = np.ascontiguousarray(np.asarray(PILImage.fromarray(mask).resize((1920, 1080), PILImage.BILINEAR)))
    for label, s in (("cuda", fast), ("cpu", cpu)):
        make_decisive(lib, s, mask, 1920)
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            make_decisive(lib, s, mask, 1920)
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"bd_session_make_decisive 1920x1080 {label:10} median_ms={np.median(times):.2f}")
    for s in (cpu, exact, fast):
        lib.bd_session_free(s)
    lib.bd_model_free(model)
    return len(rows) + n, failed


def keep_gpu_busy():
    """Another process that keeps the GPU busy (PyTorch), so that the checks run while the GPU
    switches between two programs: an operation that our stream does not wait for (one left on
    the legacy stream) then lands late and shows as a wrong result. None without PyTorch."""
    code = ("import torch\na = torch.randn(8192, 8192, device='cuda')\n"
            "print('busy', flush=True)\nwhile True:\n    a = (a @ a).tanh()\n")
    try:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    if proc.stdout.readline().strip() != b"busy":
        proc.kill()
        return None
    return proc


def main():
    photo_dir = None
    if "--photos" in sys.argv:
        i = sys.argv.index("--photos")
        photo_dir = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    busy = None
    if "--busy" in sys.argv:
        sys.argv.remove("--busy")
        busy = keep_gpu_busy()
        print("another process keeps the GPU busy" if busy else "--busy: no PyTorch with CUDA here; the GPU is idle")
    try:
        run_checks(sys.argv[1], photo_dir)
    finally:
        if busy:
            busy.kill()


def run_checks(build, photo_dir):
    lib = load(build)
    maker = os.path.join(build, "bench", "make-synthetic-model")
    rng = np.random.default_rng(1)
    rows, desc = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        # (4, 128, ...): 512 channels at 64x64, one wave of 128 x 128 tiles with a long K (the
        # split into 128 x 256 tiles of conv2d-tma.cu). (2, 64, ...): 64 -> 128 channels at
        # 260x196, resident weights with 128 outputs, tiles cut by both edges.
        cases = [(2, 8, 32, 48), (3, 12, 64, 40), (4, 20, 96, 64), (5, 16, 512, 352), (5, 64, 256, 256),
                 (4, 128, 256, 256), (2, 64, 520, 392)]
        for depth, width, h, w in cases:
            path = os.path.join(tmp, f"unet-d{depth}-w{width}.bdm")
            subprocess.run([maker, "--depth", str(depth), "--width", str(width), path], check=True)
            r, desc = check(lib, path, h, w, rng)
            rows += r
        for path in sys.argv[2:]:
            r, desc = check(lib, path, 512, 352, rng)
            rows += r
        gpus, index_ok = check_device_index(lib, os.path.join(tmp, "unet-d2-w8.bdm"))
    print(f"device: {desc}")
    print(f"{'model':24} {'input':9} {'prec':8} {'run':3} {'rel.err':>9} {'max|d|':>9} {'<=1/255':>8} ok")
    failed = 0
    for m, size, prec, run, rel, worst, within, ok in rows:
        print(f"{m:24} {size:9} {prec:8} {run:3} {rel:9.2e} {worst:9.2e} {within:8.4%} {'yes' if ok else 'NO'}")
        failed += not ok
    print(f"device_index: {gpus} GPU(s) opened by number, the next refused: {'yes' if index_ok else 'NO'}")
    failed += not index_ok
    checks = len(rows) + 1
    if photo_dir and len(sys.argv) > 2:
        n, photo_failed = check_photos(lib, sys.argv[2], photo_dir)
        checks += n
        failed += photo_failed
    print(f"{checks - failed} passed, {failed} failed")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
