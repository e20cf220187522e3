#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The GStreamer element `backdrop` from the build folder (GST_PLUGIN_PATH), on the CPU:
gst-inspect-1.0 lists it, pipelines from videotestsrc in every input format and output, the
look-ahead keeps every frame, errors reach the bus, the output changed mid-stream renegotiates
frame by frame, lanes give the frames no lanes give, and a short clip made from DAVIS frames
gives masks that match the DAVIS labels. TAP output; a missing data set is a skip with its
reason."""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np

PLUGIN_DIR = os.environ["BACKDROP_GST_PLUGIN_DIR"]
MODEL = os.environ["BACKDROP_MODEL"]
DAVIS = os.path.join(os.environ.get("BACKDROP_SOURCE_ROOT", "."), "..", "shared", "datasets", "davis-people-train")
ENV = dict(os.environ, GST_PLUGIN_PATH=PLUGIN_DIR, GST_REGISTRY=os.path.join(tempfile.gettempdir(), "backdrop-test-registry-%d.bin" % os.getpid()))
results = []


def check(name, fn):
    try:
        skip = fn()
        results.append(("ok", name, " # SKIP " + skip if skip else ""))
    except AssertionError as e:
        results.append(("not ok", name, ""))
        print("# " + name + ": " + str(e).replace("\n", "\n# "))


def launch(pipeline, expect_ok=True, messages=False, verbose=False):
    flags = (["-m"] if messages else []) + (["-v"] if verbose else [])
    args = ["gst-launch-1.0"] + (flags or ["-q"]) + pipeline.split()
    p = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    if expect_ok:
        assert p.returncode == 0, "%s\nfailed (%d):\n%s" % (pipeline, p.returncode, out[-2000:])
    else:
        assert p.returncode != 0, "%s\nshould have failed:\n%s" % (pipeline, out[-2000:])
    return out


def inspect():
    p = subprocess.run(["gst-inspect-1.0", "backdrop"], env=ENV, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for prop in ("device", "output", "background", "threshold", "feather", "all-people", "latency",
                 "steadiness", "input-size", "model"):
        assert "\n  %s " % prop in p.stdout, "property %s not listed" % prop
    for fmt in ("RGBA", "RGBx", "BGRx", "I420", "NV12", "GRAY8"):
        assert fmt in p.stdout, fmt


def formats():
    """Every input format and output, 6 frames each; the raw output's size says each came."""
    w, h, n = 96, 64, 6
    with tempfile.TemporaryDirectory() as d:
        for fmt in ("RGBA", "RGBx", "BGRx", "I420", "NV12"):
            for output, bpp, stride in (("cutout", 4, w * 4), ("mask", 1, (w + 3) // 4 * 4),
                                        ("composite", 4, w * 4)):
                path = os.path.join(d, "out.raw")
                launch("videotestsrc num-buffers=%d pattern=ball ! video/x-raw,width=%d,height=%d,format=%s "
                       "! backdrop device=cpu output=%s background=#00ff00 model=%s ! filesink location=%s"
                       % (n, w, h, fmt, output, MODEL, path))
                size = os.path.getsize(path)
                assert size == n * stride * h, "%s -> %s: %d bytes, want %d" % (fmt, output, size, n * stride * h)
                if output == "composite":
                    px = np.fromfile(path, np.uint8).reshape(n, h, w, 4)
                    assert (px[..., 3] == 255).all(), "a composite is opaque"


def device_message():
    out = launch("videotestsrc num-buffers=2 ! video/x-raw,width=64,height=48 ! backdrop device=cpu model=%s "
                 "! fakesink" % MODEL, messages=True)
    assert 'backdrop, device=(string)"CPU' in out and "kind=(string)cpu" in out, out[-1500:]


def lookahead_keeps_frames():
    """latency=2 holds two frames back and gives them all at the end, timestamps in order."""
    out = launch("videotestsrc num-buffers=7 pattern=ball ! video/x-raw,width=64,height=48,framerate=10/1 "
                 "! backdrop device=cpu latency=2 model=%s ! fakesink silent=false" % MODEL, verbose=True)
    pts = [line.split("pts: ")[1].split(",")[0] for line in out.splitlines() if "chain" in line and "pts: " in line]
    assert len(pts) == 7, out[-1500:]
    assert pts == sorted(pts) and pts[0] == "0:00:00.000000000" and pts[-1] == "0:00:00.600000000", pts


def errors():
    out = launch("videotestsrc num-buffers=1 ! backdrop device=cpu model=/nonexistent.bdm ! fakesink", expect_ok=False)
    assert "Cannot use the model /nonexistent.bdm" in out, out
    out = launch("videotestsrc num-buffers=1 ! backdrop device=tpu model=%s ! fakesink" % MODEL, expect_ok=False)
    assert "is not auto, cpu, cuda or cuda:N" in out, out
    with tempfile.NamedTemporaryFile(suffix=".bdm") as bad:
        bad.write(b"not a model at all" * 10)
        bad.flush()
        out = launch("videotestsrc num-buffers=1 ! backdrop device=cpu model=%s ! fakesink" % bad.name, expect_ok=False)
        assert "Cannot use the model" in out, out
    p = subprocess.run(["nvidia-smi", "-L"], capture_output=True) if os.path.exists("/usr/bin/nvidia-smi") else None
    if p is None or p.returncode != 0:
        out = launch("videotestsrc num-buffers=1 ! backdrop device=cuda model=%s ! fakesink" % MODEL, expect_ok=False)
        assert "Cannot run on the device “cuda”" in out, out


def davis_frames(clip, count):
    """The first @count frames of a DAVIS clip, or why there are none to use."""
    frames = sorted(glob.glob(os.path.join(DAVIS, "images", clip + "-*.webp")))[:count]
    if not frames:
        return None, "no DAVIS frames at " + DAVIS
    import shutil
    if not shutil.which("ffmpeg"):
        return None, "no ffmpeg to make the clip"
    return frames, None


def make_clip(frames, d, *args):
    """@frames as a VP8 WebM at 15 frames/s in folder @d; @args go to ffmpeg's output."""
    for i, f in enumerate(frames):
        os.symlink(f, os.path.join(d, "f%03d.webp" % i))
    clip = os.path.join(d, "clip.webm")
    subprocess.run(["ffmpeg", "-v", "error", "-framerate", "15", "-i", os.path.join(d, "f%03d.webp")] + list(args)
                   + ["-c:v", "libvpx", "-pix_fmt", "yuv420p", clip], check=True)
    return clip


def davis_clip():
    frames, why = davis_frames("hike", 12)
    if not frames:
        return why
    from PIL import Image
    with tempfile.TemporaryDirectory() as d:
        clip = make_clip(frames, d, "-b:v", "4M")
        raw = os.path.join(d, "mask.raw")
        launch("filesrc location=%s ! matroskademux ! vp8dec ! videoconvert ! backdrop device=cpu output=mask "
               "latency=1 model=%s ! filesink location=%s" % (clip, MODEL, raw))
        w, h = Image.open(frames[0]).size
        stride = (w + 3) // 4 * 4
        masks = np.fromfile(raw, np.uint8)
        assert masks.size == len(frames) * stride * h, "%d bytes for %d frames" % (masks.size, len(frames))
        masks = masks.reshape(len(frames), h, stride)[:, :, :w] >= 128
        ious = []
        for i, f in enumerate(frames):
            label = np.array(Image.open(f.replace("/images/", "/masks/").replace(".webp", ".png")).convert("L")) >= 128
            ious.append((masks[i] & label).sum() / max(1, (masks[i] | label).sum()))
        print("# DAVIS hike, %d frames: mean IoU %.3f, lowest %.3f" % (len(ious), np.mean(ious), min(ious)))
        assert min(ious) > 0.6, ious


def lanes_same_frames():
    """lanes=3 (the networks of several frames at once, on CPU sessions here) gives every frame
    as lanes=0 does, in order, with the look-ahead and the filter on: from RGBA, which a lane
    copies, and from I420, which a lane converts while the next frame is made; and composed
    frames over a blur with an edited mask."""
    frames, why = davis_frames("lucia", 10)
    if not frames:
        return why
    with tempfile.TemporaryDirectory() as d:
        clip = make_clip(frames, d, "-vf", "scale=320:-2", "-b:v", "2M")
        for fmt in ("RGBA", "I420"):
            out = {}
            for lanes in (0, 3):
                raw = os.path.join(d, "mask%s%d.raw" % (fmt, lanes))
                launch("filesrc location=%s ! matroskademux ! vp8dec ! videoconvert ! video/x-raw,format=%s "
                       "! backdrop device=cpu output=mask latency=1 lanes=%d model=%s ! filesink location=%s"
                       % (clip, fmt, lanes, MODEL, raw))
                out[lanes] = open(raw, "rb").read()
            assert len(out[0]) > 0 and (np.frombuffer(out[0], np.uint8) > 128).mean() > 0.02, "no person in the masks"
            assert out[0] == out[3], "lanes=3 changed the %s frames (%d and %d bytes)" % (fmt, len(out[0]), len(out[3]))
        # Composed frames, with an edited mask.
        out = {}
        for lanes in (0, 3):
            raw = os.path.join(d, "blur%d.raw" % lanes)
            launch("filesrc location=%s ! matroskademux ! vp8dec ! videoconvert ! backdrop device=cpu output=composite "
                   "background=blur threshold=0.4 latency=1 lanes=%d model=%s ! filesink location=%s"
                   % (clip, lanes, MODEL, raw))
            out[lanes] = open(raw, "rb").read()
        assert len(out[0]) > 0 and out[0] == out[3], "lanes=3 changed the composed frames"


def output_changes_mid_stream():
    """The output property changed twice while frames flow, with lanes (frames at the lanes and
    held for look-ahead when the caps change) and without: every frame comes out, each one the
    size its caps say."""
    os.environ.update(GST_PLUGIN_PATH=ENV["GST_PLUGIN_PATH"], GST_REGISTRY=ENV["GST_REGISTRY"])
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
    Gst.init(None)
    n, w, h = 30, 162, 120
    for lanes in (0, 2):
        pipe = Gst.parse_launch(
            "videotestsrc num-buffers=%d pattern=ball ! video/x-raw,width=%d,height=%d,framerate=30/1 "
            "! backdrop name=b device=cpu input-size=128 latency=1 lanes=%d output=composite background=blur "
            "model=%s ! appsink name=sink sync=false" % (n, w, h, lanes, MODEL))
        element, sink, seen = pipe.get_by_name("b"), pipe.get_by_name("sink"), [0]

        def switch(pad, info):
            seen[0] += 1
            if seen[0] in (10, 20):
                Gst.util_set_object_arg(element, "output", "mask" if seen[0] == 10 else "cutout")
            return Gst.PadProbeReturn.OK
        element.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, switch)
        pipe.set_state(Gst.State.PLAYING)
        got = []
        while True:
            sample = sink.emit("try-pull-sample", 60 * Gst.SECOND)
            if sample is None:
                break
            caps = sample.get_caps().get_structure(0)
            got.append((caps.get_value("format"), sample.get_buffer().get_size()))
        message = pipe.get_bus().pop_filtered(Gst.MessageType.ERROR)
        pipe.set_state(Gst.State.NULL)
        assert message is None, "lanes=%d: %s" % (lanes, message.parse_error()[0].message)
        assert len(got) == n, "lanes=%d: %d frames of %d" % (lanes, len(got), n)
        size = {"GRAY8": (w + 3) // 4 * 4 * h, "RGBA": w * 4 * h}
        wrong = [(i, f, b) for i, (f, b) in enumerate(got) if size.get(f) != b]
        assert not wrong, "lanes=%d: frames whose size is not their caps': %s" % (lanes, wrong[:5])
        assert {f for f, _ in got} == {"GRAY8", "RGBA"}, "lanes=%d: formats %s" % (lanes, {f for f, _ in got})


def live_pipeline():
    """docs/VIDEO.md's camera pipeline with a live videotestsrc for the camera and fakesink for
    v4l2loopback's v4l2sink (absent in CI): every frame comes out, or is reported dropped (QoS)."""
    n = 20
    out = launch("videotestsrc is-live=true num-buffers=%d pattern=ball ! video/x-raw,width=320,height=180,framerate=15/1 "
                 "! videoconvert ! backdrop device=cpu input-size=256 output=composite background=blur model=%s "
                 "! videoconvert ! video/x-raw,format=YUY2 ! fakesink sync=true silent=false" % (n, MODEL),
                 messages=True, verbose=True)
    shown = sum(1 for line in out.splitlines() if "last-message = chain" in line)
    dropped = sum(1 for line in out.splitlines() if "(qos)" in line and "backdrop0" in line)
    assert "Got EOS" in out, out[-1500:]
    assert shown + dropped == n and shown > 0, "%d frames shown, %d reported dropped, of %d" % (shown, dropped, n)
    p = subprocess.run(["gst-inspect-1.0", "v4l2sink"], env=ENV, capture_output=True, text=True)
    assert p.returncode == 0, "no v4l2sink (gstreamer1.0-plugins-good) for the loopback camera"


check("inspect", inspect)
check("live-pipeline", live_pipeline)
check("formats-and-outputs", formats)
check("device-message", device_message)
check("lookahead-keeps-every-frame", lookahead_keeps_frames)
check("errors-on-the-bus", errors)
check("davis-clip", davis_clip)
check("lanes-same-frames", lanes_same_frames)
check("output-changes-mid-stream", output_changes_mid_stream)
print("1..%d" % len(results))
for i, (status, name, extra) in enumerate(results, 1):
    print("%s %d %s%s" % (status, i, name, extra))
sys.exit(0 if all(r[0] == "ok" for r in results) else 1)
