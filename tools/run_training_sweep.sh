#!/usr/bin/env bash
# The book's training evidence, end to end (resumable: run it again after a stop):
#   1. the learning-rate pilot (PILOT, default configs/train_long_pilot.toml: 300 steps) and the
#      horizon-matched pilot (LONG, default configs/train_long_pilot_peri.toml: the sweep's budget),
#   2. the sweep file's [arch.*] learning rates set from them, only where the file does not hold
#      them yet: the short pilot's choice, except that a placement whose choice is the top rate of
#      its grid takes the long pilot's (resdecay_lib.analysis.training_analysis.choose_lr_two_stage),
#   3. the sweep itself (SWEEP, default configs/train_long.toml).
# Usage: bash tools/run_training_sweep.sh [WORKERS [PILOT SWEEP [LONG]]]   (from the repository root)
set -euo pipefail
W=${1:-2}
PILOT=${2:-configs/train_long_pilot.toml}
SWEEP=${3:-configs/train_long.toml}
LONG=${4-configs/train_long_pilot_peri.toml}   # an empty 4th argument: no second pilot
PY=${PYTHON:-.venv/bin/python}
$PY -m resdecay_lib sweep "$PILOT" --workers "$W"
if [ -n "$LONG" ]; then
  $PY -m resdecay_lib sweep "$LONG" --workers "$W"
  $PY tools/set_pilot_lr.py "$PILOT" "$SWEEP" --long "$LONG"
else
  $PY tools/set_pilot_lr.py "$PILOT" "$SWEEP"
fi
$PY -m resdecay_lib sweep "$SWEEP" --workers "$W"
