"""Tie a stored run to the code as it stands: re-run it, live, and compare.

* :func:`first_interval` re-trains a stored run from step 0 to its first measured step
  after 0 and returns how far the live measurement lies from the stored one, in the stored
  measurement's own standard errors: the per-layer change (over sequences) of every part
  of the stream, and the validation loss (over windows).
* :func:`whole_run_ablation` re-trains a stored run to the end and compares the loss
  increase from removing each block, in its standard errors over windows.

With the thread count pinned (the stored config's), the same CPU family gives the same
bits and every deviation is 0; another CPU family may differ in the last bits of each step,
which a tolerance of a few standard errors absorbs.
"""
from __future__ import annotations

import numpy as np

from ..checks import Instance, accepts
from .depth_analysis import ablation
from .training_analysis import at_step
from ..training.runs import RunPlan, run_result
from ..training.train import TrainConfig

_PLAN = Instance(RunPlan, "a RunPlan (sweep.plan_of(spec))")

__all__ = ["first_interval", "whole_run_ablation"]


def _check(stored):
    if not isinstance(stored, dict) or "config" not in stored or "checkpoints" not in stored:
        raise ValueError("stored must be a stored run's result dict (with 'config' and 'checkpoints')")


@accepts(stored=Instance(dict, "a stored run's result dict"), plan=_PLAN)
def first_interval(stored: dict, plan: RunPlan) -> dict:
    """Re-run ``stored`` live up to its first measured step after 0 (the plan's).

    Returns ``{"name", "step", "max_z_change", "z_loss"}``: the largest |live - stored| /
    se over layers and stream parts of omega_k^2, and the same for the validation loss.
    """
    _check(stored)
    cfg = TrainConfig.from_dict(stored["config"])
    step = plan.resolve(cfg.steps)[0][1]
    live = run_result(cfg, plan, stop_at=step)
    s, l_ = at_step(stored, step), at_step(live, step)
    zs = []
    for part, rec in s["measure"].items():
        a, b, se = (np.asarray(x, float) for x in (l_["measure"][part]["omega_sq"], rec["omega_sq"],
                                                   rec["omega_sq_se"]))
        zs.append(float(np.max(np.abs(a - b) / se)))
    z_loss = abs(l_["val_loss"]["mean"] - s["val_loss"]["mean"]) / s["val_loss"]["se"]
    return {"name": stored["name"], "step": step, "max_z_change": max(zs), "z_loss": float(z_loss)}


@accepts(stored=Instance(dict, "a stored run's result dict"), plan=_PLAN)
def whole_run_ablation(stored: dict, plan: RunPlan) -> dict:
    """Re-run ``stored`` whole; ``{"name", "max_z"}``: the largest |live - stored| / se of the
    loss increases from removing each block, and the live run's ``delta``."""
    _check(stored)
    live = run_result(TrainConfig.from_dict(stored["config"]), plan)
    d_s, se_s = ablation(stored)
    d_l, _ = ablation(live)
    return {"name": stored["name"], "max_z": float(np.max(np.abs(d_l - d_s) / se_s)), "delta": d_l}
