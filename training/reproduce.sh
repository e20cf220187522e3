#!/bin/sh
# Reproduces data/backdrop-portrait.bdm and tests/golden/portrait.bdg from the data sets:
#
#     training/reproduce.sh ../shared/datasets
#
# Needs numpy, Pillow and PyTorch with a CUDA GPU for the three training stages (about 15, 20
# and 10 minutes on one H200; on a CPU they run, but for days). Checkpoints go to .runs/ (ignored).
# Set PYTHON to pick the interpreter.
set -eu
DATA=$(cd "${1:?usage: training/reproduce.sh PATH/TO/datasets}" && pwd)
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
RUNS=../.runs

$PY pack_data.py --src "$DATA" --dst ../.data
# Stage 1: base width 32 from scratch, the first sample mix (more negatives, fewer portraits).
$PY train.py --data ../.data --out $RUNS/w32 --base 32 --lr 1.5e-3 --warmup 400 --steps 10693 --workers 7 \
    --mix scene=0.27,lfw=0.15,portrait=0.08,composite=0.35,negative=0.15,davis=0.4
# Stage 2: continued from stage 1 with a fresh warm-up + cosine schedule, the default mix
# with negatives raised from 12% to 18%.
$PY train.py --data ../.data --out $RUNS/w32c --base 32 --lr 1e-3 --warmup 200 --steps 27942 \
    --workers 15 --init $RUNS/w32/last.pt --mix negative=0.18
# Stage 3: a warm restart from stage 2 at a lower peak, same mix.
$PY train.py --data ../.data --out $RUNS/w32d --base 32 --lr 3e-4 --warmup 100 --steps 12406 \
    --workers 15 --init $RUNS/w32c/last.pt --mix negative=0.18
# Stored as IEEE half: 15.5 MB instead of 31 MB; the engine widens the weights to fp32 at load.
$PY export.py --ckpt $RUNS/w32d/last.pt --out ../data/backdrop-portrait.bdm --f16 \
    --golden ../tests/golden/portrait.bdg --golden-image "$DATA/ccp-person/images/ccp0006.webp"
