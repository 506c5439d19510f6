#!/usr/bin/env bash
# The book's training evidence, end to end (resumable: run it again after a stop):
#   1. the learning-rate pilot (PILOT, default configs/lr_pilot.toml),
#   2. the sweep file's [arch.*] learning rates set from the pilot
#      (resdecay_lib.results.choose_lr) -- only where the file does not hold them yet,
#   3. the sweep itself (SWEEP, default configs/train_sweep.toml).
# Usage: bash tools/run_training_sweep.sh [WORKERS [PILOT SWEEP]]   (from the repository root)
set -euo pipefail
W=${1:-2}
PILOT=${2:-configs/lr_pilot.toml}
SWEEP=${3:-configs/train_sweep.toml}
PY=${PYTHON:-.venv/bin/python}
$PY -m resdecay_lib sweep "$PILOT" --workers "$W"
$PY tools/set_pilot_lr.py "$PILOT" "$SWEEP"
$PY -m resdecay_lib sweep "$SWEEP" --workers "$W"
