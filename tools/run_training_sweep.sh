#!/usr/bin/env bash
# The book's training evidence, end to end (resumable: run it again after a stop):
#   1. the learning-rate pilot (configs/lr_pilot.toml),
#   2. configs/train_sweep.toml's [arch.*] learning rates set from the pilot
#      (resdecay_lib.results.choose_lr) -- only where the file does not hold them yet,
#   3. the sweep itself.
# Usage: bash tools/run_training_sweep.sh [WORKERS]   (from the repository root)
set -euo pipefail
W=${1:-2}
PY=${PYTHON:-.venv/bin/python}
$PY -m resdecay_lib sweep configs/lr_pilot.toml --workers "$W"
$PY tools/set_pilot_lr.py configs/lr_pilot.toml configs/train_sweep.toml
$PY -m resdecay_lib sweep configs/train_sweep.toml --workers "$W"
