#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The third round (issue 20): a short fine-tune of the shipped (second-round) model, weighted
# towards whole street-fashion photos, where the second round lost ground to the teacher
# (walls and posters beside the subject joined to her). Same data, teacher labels and penalty
# on undecided pixels as round2.sh; half its learning rate; CCP scenes and portraits drawn
# more often, whole web photos less.
#
#     training/round3.sh DATA TEACHER_ONNX WORK STEPS [INIT_BDM]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
LR=1e-4 SEED=4 MIX="scene=0.35,davis=0.3,portrait=0.12,web=0.2" \
    exec sh "$here/round2.sh" "$@"
