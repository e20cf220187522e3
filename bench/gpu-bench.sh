#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On a machine with an NVIDIA GPU: build the library (core + CUDA), check CUDA against the
# CPU (tests/gpu-parity.py), run compute-sanitizer, and time the per-layer table and the seed
# U-Net (depth 5, widths 64..1024, batch 1 and 4) against PyTorch, and the shipped model's
# shape by batch. Logs go to OUT (default ./gpu-out); a table is printed last.
#
#   bench/gpu-bench.sh [--no-sweeps] [OUT] [MODEL.bdm...] [--photos DIR]
#
# --no-sweeps leaves out the tile and split-K sweeps and the ncu profiles (about half the
# time).
set -uo pipefail
sweeps=1
if [[ ${1:-} == --no-sweeps ]]; then
    sweeps=0
    shift
fi
out=${1:-gpu-out}
shift || true
mkdir -p "$out"
build=build-gpu
export PYTHONUNBUFFERED=1

{ meson setup "$build" -Dgui=disabled -Dgimp=disabled -Dcuda=enabled --buildtype=release >/dev/null &&
  ninja -C "$build"; } >"$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 1; }

# Every check's exit status is kept: the script ends non-zero when any of them failed, after
# printing its tables (a failed parity must not hide behind good timings).
failures=()
check() { local name=$1; shift; "$@" || failures+=("$name (exit $?)"); }
check "parity" python3 tests/gpu-parity.py "$build" "$@" >"$out/parity.log" 2>&1
check "parity, simple conv" env BACKDROP_GPU_SIMPLE_CONV=1 python3 tests/gpu-parity.py "$build" "$@" \
    >"$out/parity-simple.log" 2>&1
check "parity, no wgmma" env BACKDROP_GPU_NO_WGMMA=1 python3 tests/gpu-parity.py "$build" "$@" \
    >"$out/parity-portable.log" 2>&1
check "parity, no TMA" env BACKDROP_GPU_NO_TMA=1 python3 tests/gpu-parity.py "$build" "$@" >"$out/parity-no-tma.log" 2>&1
check "parity, resident kernels as before" env BACKDROP_GPU_TURNS=0 BACKDROP_GPU_WIDE_BOXES=0 \
    python3 tests/gpu-parity.py "$build" "$@" >"$out/parity-resident-before.log" 2>&1
check "parity, split K by the reduce kernel" env BACKDROP_GPU_CLUSTER_SUMS=0 \
    python3 tests/gpu-parity.py "$build" "$@" >"$out/parity-reduce.log" 2>&1

# Widths 16..256 at 128x128 reach every kernel: the portable and the TMA convolutions (the
# TMA one with the pool fused), pool, head, up-convolution; widths 64..1024 at 64x64 the TMA
# kernel with the head fused, and both with level 4's split K summed in clusters of 8 blocks;
# at 128x128, batch 2, the resident-weights kernels loop over
# several tiles a block; depth 2 at 392x520, the resident kernel of 64 -> 128 channels, with
# tiles cut by both edges. synccheck holds the resident kernels' turns (an mbarrier phase that
# nobody waits for is its fault).
memcheck=0 racecheck=0 synccheck=0
for net in "--width 16 --size 128" "--width 64 --size 64" "--width 64 --size 128 --batch 2" \
    "--depth 2 --width 64 --size 392 --height 520"; do
    small="$build/bench/bench-forward --device cuda $net --runs 2"
    compute-sanitizer --tool memcheck --error-exitcode 9 $small >>"$out/memcheck.log" 2>&1 || memcheck=$?
    compute-sanitizer --tool racecheck --error-exitcode 9 $small >>"$out/racecheck.log" 2>&1 || racecheck=$?
    compute-sanitizer --tool synccheck --error-exitcode 9 $small >>"$out/synccheck.log" 2>&1 || synccheck=$?
done

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
        printf '%-40s %10s %12s\n' "backdrop fast, no PDL ${size}" $(BACKDROP_GPU_NO_PDL=1 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no 256x128 ${size}" $(BACKDROP_GPU_WIDE_PIXELS=0 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, wide split ${size}" $(BACKDROP_GPU_WIDE_SPLIT=128 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, swapped up-conv ${size}" $(BACKDROP_GPU_SWAPPED_UP=1 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no resident 64->128 ${size}" $(BACKDROP_GPU_RESIDENT_128=0 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no turns ${size}" $(BACKDROP_GPU_TURNS=0 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no wide boxes ${size}" $(BACKDROP_GPU_WIDE_BOXES=0 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no cluster sums ${size}" $(BACKDROP_GPU_CLUSTER_SUMS=0 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no TMA ${size}" $(BACKDROP_GPU_NO_TMA=1 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop fast, no wgmma ${size}" $(BACKDROP_GPU_NO_WGMMA=1 ours $fwd --width 64 --size $size --runs 50)
        printf '%-40s %10s %12s\n' "backdrop exact ${size}" $(ours $fwd --exact --width 64 --size $size --runs 20)
        for mode in fp32 tf32 fp16cl compile; do
            printf '%-40s %10s %12s\n' "pytorch $mode ${size}" "" "$(torch python3 bench/torch_unet.py --device cuda --mode $mode --width 64 --size $size --runs 50)"
        done
    done
    printf '%-40s %10s %12s\n' "seed U-Net (w64, depth 5), batch 4" "call ms" "network ms"
    printf '%-40s %10s %12s\n' "backdrop fast 512 b4" $(ours $fwd --width 64 --size 512 --batch 4 --runs 50)
    printf '%-40s %10s %12s\n' "backdrop exact 512 b4" $(ours $fwd --exact --width 64 --size 512 --batch 4 --runs 20)
    for mode in fp32 tf32 fp16cl compile; do
        printf '%-40s %10s %12s\n' "pytorch $mode 512 b4" "" "$(torch python3 bench/torch_unet.py --device cuda --mode $mode --width 64 --size 512 --batch 4 --runs 50)"
    done
    printf '%-40s %10s %12s\n' "backdrop fast (simple conv) 512" $(BACKDROP_GPU_SIMPLE_CONV=1 ours $fwd --width 64 --size 512 --runs 50)
    for w in 16 32; do
        for h in 512 352; do
            printf '%-40s %10s %12s\n' "backdrop fast w$w 512x$h" $(ours $fwd --width $w --size 512 --height $h --runs 50)
            printf '%-40s %10s %12s\n' "backdrop fast w$w 512x$h, no cluster sums" $(BACKDROP_GPU_CLUSTER_SUMS=0 ours $fwd --width $w --size 512 --height $h --runs 50)
        done
        printf '%-40s %10s %12s\n' "pytorch compile w$w 512" "" "$(torch python3 bench/torch_unet.py --device cuda --mode compile --width $w --size 512 --runs 50)"
    done
} >"$out/table.txt"
# The shipped model's shape (widths 32..512) on a 2:3 portrait canvas: images per second by batch.
{
    printf '%-40s %10s %12s %10s\n' "w32 512x352 fast, batch" "call ms" "network ms" "images/s"
    for b in 1 2 4 8 16; do
        $fwd --width 32 --size 352 --height 512 --batch $b --runs 30 2>&1 | tee -a "$out/bench.log" |
            sed -n "s/.*median_ms=\([0-9.]*\).*network_ms=\([0-9.]*\).*network_images_per_s=\([0-9.]*\).*/$b \1 \2 \3/p" |
            { read -r b c n i && printf '%-40s %10s %12s %10s\n' "batch $b" "$c" "$n" "$i"; }
    done
} >"$out/batch.txt"
# Every fast tile on every layer (BACKDROP_GPU_TILE forces one), for the rules in
# conv2d-tma.cu (ws...) and conv2d-hopper.cu (the others), and the same for the whole seed
# U-Net at batch 1.
tiles="ws128x128 ws128x256 ws128x128x2 ws128x64x2 ws128x64x3 ws256x64 ws256x128 wshalo wshalox2 wsresident 128x128 128x256 128x128x2 128x64x3"
(( sweeps )) && for t in $tiles; do
    BACKDROP_GPU_TILE=$t "$build/bench/bench-conv-cuda" >"$out/conv-$t.txt" 2>&1
    echo "$t $(BACKDROP_GPU_TILE=$t ours $fwd --width 64 --size 512 --runs 50)" >>"$out/unet-tiles.txt"
done
# Split K for layers with few tiles (BACKDROP_GPU_SPLITK=N splits layers of at most N tiles of
# 128 x 128; 0 never; the default is 66): the seed U-Net at batch 1, the shipped shape at 1 and 2.
(( sweeps )) && for n in 0 66 132; do
    echo "splitk $n seed-512-b1 $(BACKDROP_GPU_SPLITK=$n ours $fwd --width 64 --size 512 --runs 50)" >>"$out/splitk.txt"
    for b in 1 2; do
        echo "splitk $n w32-512x352-b$b $(BACKDROP_GPU_SPLITK=$n ours $fwd --width 32 --size 352 --height 512 --batch $b --runs 50)" >>"$out/splitk.txt"
    done
done
# Where the batch-1 seed U-Net's time goes, kernel by kernel (Nsight Compute, clocks and
# caches left alone) in its first, eager pass; ncu_summary.py keeps that pass.
if (( sweeps )) && command -v ncu >/dev/null; then
    ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --launch-count 40 --csv \
        $fwd --width 64 --size 512 --runs 1 >"$out/ncu-unet.csv" 2>"$out/ncu-unet.err"
    python3 bench/ncu_summary.py "$out/ncu-unet.csv" >"$out/ncu-unet.txt" 2>&1
    # The shipped model's shape (widths 32..512 at 512x352), one image.
    ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --launch-count 40 --csv \
        $fwd --width 32 --size 352 --height 512 --runs 1 >"$out/ncu-w32.csv" 2>"$out/ncu-w32.err"
    python3 bench/ncu_summary.py "$out/ncu-w32.csv" >"$out/ncu-w32.txt" 2>&1
fi
tail -n 3 "$out/parity.log"; echo "simple conv kernel: $(tail -n 1 "$out/parity-simple.log")"
echo "portable kernels (no wgmma): $(tail -n 1 "$out/parity-portable.log")"
echo "cp.async Hopper kernels (no TMA): $(tail -n 1 "$out/parity-no-tma.log")"
echo "resident kernels without turns or wide boxes: $(tail -n 1 "$out/parity-resident-before.log")"
echo "split K by the reduce kernel (no cluster sums): $(tail -n 1 "$out/parity-reduce.log")"
echo "memcheck exit $memcheck, racecheck exit $racecheck, synccheck exit $synccheck (0 = clean)"
grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/memcheck.log" "$out/racecheck.log" "$out/synccheck.log"
(( memcheck == 0 )) || failures+=("compute-sanitizer memcheck (exit $memcheck)")
(( racecheck == 0 )) || failures+=("compute-sanitizer racecheck (exit $racecheck)")
(( synccheck == 0 )) || failures+=("compute-sanitizer synccheck (exit $synccheck)")
cat "$out/conv.txt" "$out/torch-conv.txt" "$out/table.txt" "$out/batch.txt"
finish() {
    if (( ${#failures[@]} )); then
        printf 'gpu-bench: FAILED: %s\n' "${failures[@]}"
        exit 1
    fi
    echo "gpu-bench: every check passed"
    exit 0
}
(( sweeps )) || finish
printf '%-16s' "fast ms, tile:"; for t in $tiles; do printf ' %10s' "$t"; done; echo
awk '/@/ {print $1}' "$out/conv.txt" | while read -r layer; do
    printf '%-16s' "$layer"
    for t in $tiles; do printf ' %10s' "$(awk -v l="$layer" '$1 == l {print $2}' "$out/conv-$t.txt")"; done
    echo
done
echo "seed U-Net 512 b1 by tile (call ms, network ms):"; cat "$out/unet-tiles.txt"
echo "split K by tile-count limit (call ms, network ms):"; cat "$out/splitk.txt"
[[ -f $out/ncu-unet.txt ]] && cat "$out/ncu-unet.txt" "$out/ncu-w32.txt"
finish
