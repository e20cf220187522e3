#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build the library (core + CUDA), check CUDA against the
# CPU (tests/gpu-parity.py), run compute-sanitizer, and time the per-layer table and the seed
# U-Net (depth 5, widths 64..1024) against PyTorch. Logs go to OUT (default ./gpu-out); a table is printed last.
#
#   bench/gpu-bench.sh [OUT] [MODEL.bdm...]
set -uo pipefail
out=${1:-gpu-out}
shift || true
mkdir -p "$out"
build=build-gpu
export PYTHONUNBUFFERED=1

{ meson setup "$build" -Dgui=disabled -Dgimp=disabled -Dcuda=enabled --buildtype=release >/dev/null &&
  ninja -C "$build"; } >"$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 1; }

python3 tests/gpu-parity.py "$build" "$@" >"$out/parity.log" 2>&1
parity=$?
BACKDROP_GPU_SIMPLE_CONV=1 python3 tests/gpu-parity.py "$build" "$@" >"$out/parity-simple.log" 2>&1

# Widths 16..256 at 128x128 reach every kernel: the portable and the Hopper convolutions
# (all three tile shapes), pool, up-convolution, head.
small="$build/bench/bench-forward --device cuda --width 16 --size 128 --runs 2"
compute-sanitizer --tool memcheck --error-exitcode 9 $small >"$out/memcheck.log" 2>&1; memcheck=$?
compute-sanitizer --tool racecheck --error-exitcode 9 $small >"$out/racecheck.log" 2>&1; racecheck=$?

# ours: the whole call (float input up, probabilities down) and the network alone on the device.
ours() { "$@" 2>&1 | tee -a "$out/bench.log" | sed -n 's/.*median_ms=\([0-9.]*\).*network_ms=\([0-9.]*\).*/\1 \2/p'; }
torch() { "$@" 2>&1 | tee -a "$out/bench.log" | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'; }
fwd="$build/bench/bench-forward --device cuda"
"$build/bench/bench-conv-cuda" >"$out/conv.txt" 2>&1
python3 bench/torch_conv.py >"$out/torch-conv.txt" 2>&1
{
    printf '%-40s %10s %12s\n' "seed U-Net (w64, depth 5), batch 1" "call ms" "network ms"
    for size in 512 1024; do
        printf '%-40s %10s %12s\n' "backdrop fast ${size}" $(ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no wgmma ${size}" $(BACKDROP_GPU_NO_WGMMA=1 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop exact ${size}" $(ours $fwd --exact --width 64 --size $size --runs 20)
        for mode in fp32 tf32 fp16cl compile; do
            printf '%-40s %10s %12s\n' "pytorch $mode ${size}" "" "$(torch python3 bench/torch_unet.py --device cuda --mode $mode --width 64 --size $size --runs 50)"
        done
    done
    printf '%-40s %10s %12s\n' "backdrop fast (simple conv) 512" $(BACKDROP_GPU_SIMPLE_CONV=1 ours $fwd --width 64 --size 512 --runs 50)
    for w in 16 32; do
        for h in 512 352; do
            printf '%-40s %10s %12s\n' "backdrop fast w$w 512x$h" $(ours $fwd --width $w --size 512 --height $h --runs 50)
        done
        printf '%-40s %10s %12s\n' "pytorch compile w$w 512" "" "$(torch python3 bench/torch_unet.py --device cuda --mode compile --width $w --size 512 --runs 50)"
    done
} >"$out/table.txt"
tail -n 3 "$out/parity.log"; echo "simple conv kernel: $(tail -n 1 "$out/parity-simple.log")"
echo "memcheck exit $memcheck, racecheck exit $racecheck (0 = clean)"
grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/memcheck.log" "$out/racecheck.log"
cat "$out/conv.txt" "$out/torch-conv.txt" "$out/table.txt"
