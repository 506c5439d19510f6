#!/usr/bin/env bash
# The deep Pre-LN runs, in their order: depth 96 (claim-front's deepest test), depth
# 48, depth 24 trained three times longer, then width 128. One worker per call: start this twice
# (two cores); the sweeps' run claims keep the two from running a configuration twice, and a
# call that finds a run claimed by the other moves on. Resumable: run it again after a stop.
# Run it from a clean work tree at a fixed commit (a descendant of the predictions' commit), so
# that every run records a clean code version:
#   git worktree add --detach ../deep_wt HEAD && cd ../deep_wt && bash tools/run_deep.sh /path/to/repo
set -euo pipefail
ROOT=${1:-.}
PY=${PYTHON:-python}
for cfg in configs/deep_L96.toml configs/deep_L48.toml configs/long_L24.toml configs/wide_L24.toml; do
  $PY -m resdecay_lib sweep "$cfg" --workers 1 --root "$ROOT" || true   # exit 1: runs held by the other worker
done
