#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The second round of training (issue 20), on the GPU machine: the teacher labels every photo
# with people, then the shipped model is fine-tuned with those labels beside our exact ones.
#
#     training/round2.sh DATA TEACHER_ONNX WORK STEPS [INIT_BDM]
#
# DATA: the packed sets (pack_data.py, fetch_negatives.py); TEACHER_ONNX: isnet-medium.onnx
# (teacher/fetch-teacher.sh); WORK gets teacher/ (labels: never commit them), run/ (log,
# checkpoint, val.json) and last-f16.pt (the checkpoint in half precision, small enough to
# bring back; export.py reads it). STEPS: 13071 for the shipped model (its run was given 16
# minutes on an H100 and fixed that count; --minutes M instead of a number fits a budget
# again). INIT_BDM defaults to the shipped model. Resumable: labels already written are kept;
# a finished run is not repeated. LR, SEED, MIX and TEACHER_SETS (below) in the environment
# change the recipe (round3.sh uses them); unset, they are the second round's. WORKERS (loader
# processes, 15) and MAX_VAL (photos scored per set at the end; all) change only the speed,
# e.g. for two runs side by side. EMA (a decay, e.g. 0.999) also keeps the weights' moving
# average (train.py --ema), brought back as ema-f16.pt; TRAIN_EXTRA adds train.py options.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=$1 teacher=$2 work=$3 steps=$4
init=${5:-$here/../data/backdrop-portrait.bdm}
py=${PYTHON:-python3}
mkdir -p "$work"
cd "$here"

# Every set that shows people; the person-free sets need no label. TEACHER_SETS names fewer: a
# set left out keeps its own labels (round5.sh leaves LFW's pseudo-labels as the shipped model
# saw them).
sets=""
for s in ${TEACHER_SETS:-ccp-person davis-people-train lfw-portraits-pseudo pennfudan pennfudan-cutouts
         camvid-street coco128-person people-unlabelled}; do
    [ -d "$data/$s" ] && sets="$sets $data/$s"
done
# shellcheck disable=SC2086
$py teacher/label_torch.py --model "$teacher" --out "$work/teacher" $sets

if [ ! -f "$work/run/val.json" ]; then
    # From the shipped weights, batch norms re-inflated (train.py --init-bdm); teacher labels
    # as described in data.combine_teacher; whole web-like photos 30% of draws; the penalty
    # on undecided pixels away from edges against ghosts.
    $py train.py --data "$data" --teacher "$work/teacher" --out "$work/run" --init-bdm "$init" \
        --lr "${LR:-2e-4}" --warmup 200 $(case $steps in --minutes*) echo "$steps";; *) echo "--steps $steps";; esac) \
        --workers "${WORKERS:-15}" --max-val "${MAX_VAL:-0}" --seed "${SEED:-3}" --decisive 0.2 \
        --mix "${MIX:-web=0.3}" --ema "${EMA:-0}" ${TRAIN_EXTRA:-}
fi
# The checkpoints in half precision (weights; BN stats stay fp32), small enough to bring back;
# ema.pt exists where EMA asked for the weights' moving average.
$py - "$work/run" "$work" <<'PY'
import os, sys, torch
for name in ("last", "ema"):
    src = os.path.join(sys.argv[1], name + ".pt")
    if os.path.exists(src):
        ck = torch.load(src, map_location="cpu")
        ck["model"] = {k: v.half() if v.dim() > 1 else v for k, v in ck["model"].items()}
        torch.save(ck, os.path.join(sys.argv[2], name + "-f16.pt"))
PY
echo "round2: done"
