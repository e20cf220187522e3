#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The sixth round (issue 20): round 5's recipe from the shipped model, with people in any
# pose. Every person pasted so far stood upright and every photo was turned by a few degrees
# at most, while dance, parkour, dives and sport show people sideways and upside down: here
# three in ten pasted people (not passers-by) turn by any angle and one placed photo in ten
# by up to 40 degrees (train.py --tumble, --tilt). The weights' moving average (EMA 0.999)
# is kept beside the last step's.
#
#     training/round6.sh DATA TEACHER_ONNX WORK STEPS [INIT_BDM]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
EMA=${EMA:-0.999} TRAIN_EXTRA="--tumble ${TUMBLE:-0.3} --tilt ${TILT:-0.1}" exec sh "$here/round5.sh" "$@"
