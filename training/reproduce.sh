#!/bin/sh
# Reproduces data/backdrop-portrait.bdm and tests/golden/portrait.bdg from the data sets:
#
#     training/reproduce.sh ../shared/datasets
#
# Needs numpy, Pillow and PyTorch with a CUDA GPU for the two training stages (about 14 and
# 16 minutes on one H200; on a CPU they run, but for days). Checkpoints go to .runs/ (ignored).
# Set PYTHON to pick the interpreter.
set -eu
DATA=$(cd "${1:?usage: training/reproduce.sh PATH/TO/datasets}" && pwd)
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
RUNS=../.runs

$PY pack_data.py --src "$DATA" --dst ../.data
# Stage 1: from scratch, the first sample mix (more negatives, fewer portraits).
$PY train.py --data ../.data --out $RUNS/w16-stage1 --base 16 --lr 2e-3 --warmup 400 --steps 12061 \
    --workers 7 --mix scene=0.27,lfw=0.15,portrait=0.08,composite=0.35,negative=0.15,davis=0.4
# Stage 2: continued from stage 1 with a fresh warm-up + cosine schedule and the default mix.
$PY train.py --data ../.data --out $RUNS/w16 --base 16 --lr 1e-3 --warmup 200 --steps 29057 \
    --workers 14 --init $RUNS/w16-stage1/last.pt
$PY export.py --ckpt $RUNS/w16/last.pt --out ../data/backdrop-portrait.bdm \
    --golden ../tests/golden/portrait.bdg --golden-image "$DATA/ccp-person/images/ccp0006.webp"
