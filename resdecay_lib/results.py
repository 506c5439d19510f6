"""Reading stored sweeps: runs, complete cells, curves, Gram matrices, losses, flags.

Chapters 7 and 8 read the training sweep only through this module.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .sweep import load_sweep, result_path, run_id, sweep_runs

__all__ = ["load_runs", "choose_lr"]


def load_runs(spec_or_path, root=".") -> tuple[dict, dict]:
    """(spec, {run name: result}) for every stored run of the sweep (missing ones absent)."""
    spec = load_sweep(spec_or_path)
    runs = {}
    for cfg in sweep_runs(spec):
        p = result_path(spec, cfg, root)
        if p.exists():
            runs[run_id(spec, cfg)] = json.loads(p.read_text())
    return spec, runs


def choose_lr(pilot_spec, root=".") -> dict:
    """Per placement, the pilot's learning rate with the lowest final validation loss.

    Runs that diverged (non-finite loss, or a final loss above the loss at step 0) are not
    candidates. Returns ``{arch: {"lr": best, "losses": {lr: final loss or None}}}``.
    """
    spec, runs = load_runs(pilot_spec, root)
    out = {}
    for a in spec["archs"]:
        losses = {}
        for r in runs.values():
            if r["config"]["arch"] != a:
                continue
            ok = r["status"] == "ok" and not r["convergence"]["diverged"]
            losses[r["config"]["lr"]] = r["final"]["val_loss"]["mean"] if ok else None
        cands = {lr: v for lr, v in losses.items() if v is not None and math.isfinite(v)}
        if not cands:
            raise ValueError(f"the pilot has no finished, non-diverged run of {a}")
        out[a] = {"lr": min(cands, key=cands.get), "losses": dict(sorted(losses.items()))}
    return out
