"""Tie a stored run to the code as it stands: re-run it, live, and compare.

* :func:`first_interval` re-trains a stored run from step 0 to its first measured step
  after 0 and returns how far the live measurement lies from the stored one, in the stored
  measurement's own standard errors: the per-layer change (over sequences) of every part
  of the stream, and the validation loss (over windows).
* :func:`whole_run_ablation` re-trains a stored run to the end and compares the loss
  increase from removing each block, in its standard errors over windows (a whole run:
  minutes on a CPU).
* :func:`stored_weights` evaluates, live, the final weights a run stored beside its result
  (:mod:`resdecay_lib.training.weights`) and compares what they give with the stored result:
  the loss increase from removing each block and the final validation loss, in their
  standard errors over windows, and the per-layer change at the last measured step, in its
  standard errors over sequences (seconds). It ties the stored numbers to the evaluation
  code as it stands and to weights that the training code produced when they were stored
  (their ``provenance`` names that code); the training code as it stands is what
  :func:`first_interval` re-runs.

With the thread count pinned (the stored config's), the same CPU family gives the same
bits and every deviation is 0; another CPU family may differ in the last bits of each step,
which a tolerance of a few standard errors absorbs.
"""
from __future__ import annotations

import numpy as np

from ..checks import Instance, PathArg, accepts
from .depth_analysis import ablation
from .training_analysis import at_step
from ..training.records import RunRecord, StreamMeasure, as_run
from ..training.runs import RunPlan, run_result

_PLAN = Instance(RunPlan, "a RunPlan (sweep.plan_of(spec))")
_STORED = Instance((RunRecord, dict), "a stored run's result (a RunRecord, or its dict)")

__all__ = ["first_interval", "whole_run_ablation", "stored_weights"]


@accepts(stored=_STORED, plan=_PLAN)
def first_interval(stored, plan: RunPlan) -> dict:
    """Re-run ``stored`` live up to its first measured step after 0 (the plan's).

    Returns ``{"name", "step", "max_z_change", "z_loss"}``: the largest |live - stored| /
    se over layers and stream parts of omega_k^2, and the same for the validation loss.
    """
    stored = as_run(stored, "stored")
    step = plan.resolve(stored.config.steps)[0][1]
    live = RunRecord.from_dict(run_result(stored.config, plan, stop_at=step))
    s, l_ = at_step(stored, step), at_step(live, step)
    z_loss = abs(l_.val_loss.mean - s.val_loss.mean) / s.val_loss.se
    return {"name": stored.name, "step": step, "max_z_change": _max_z_change(s.measure, l_.measure),
            "z_loss": float(z_loss)}


def _max_z_change(stored, live) -> float:
    """max over the stored measurement's parts and layers of |live - stored| / se of omega_k^2
    (``stored``, ``live``: {part: :class:`~resdecay_lib.training.records.StreamMeasure`})."""
    zs = []
    for part, rec in stored.items():
        a, b, se = (np.asarray(x, float) for x in (live[part].metrics["omega_sq"], rec.metrics["omega_sq"],
                                                   rec.metrics["omega_sq_se"]))
        zs.append(float(np.max(np.abs(a - b) / se)))
    return max(zs)


@accepts(stored=_STORED, plan=_PLAN)
def whole_run_ablation(stored, plan: RunPlan) -> dict:
    """Re-run ``stored`` whole; ``{"name", "max_z"}``: the largest |live - stored| / se of the
    loss increases from removing each block, and the live run's ``delta``."""
    stored = as_run(stored, "stored")
    live = run_result(stored.config, plan)
    d_s, se_s = ablation(stored)
    d_l, _ = ablation(live)
    return {"name": stored.name, "max_z": float(np.max(np.abs(d_l - d_s) / se_s)), "delta": d_l}


@accepts(stored=_STORED, weights=PathArg())
def stored_weights(stored, weights) -> dict:
    """Evaluate, live, the final weights stored for ``stored`` (a finished run's result) in
    the file ``weights`` (:func:`~resdecay_lib.training.weights.load_weights`, which checks that
    they are that run's: its name and configuration) on the run's own windows, with its thread
    count pinned, and compare with what ``stored`` holds.

    Returns ``{"name", "step", "max_z" (the largest |live - stored| / se of the loss increases
    delta_k from removing each block, se the stored delta_se over windows), "z_loss" (the same
    for the final validation loss), "max_z_change" (the largest |live - stored| / se of
    omega_k^2 at the last measured step, over parts and layers, as :func:`first_interval`),
    "max_abs_delta" (max_k |live - stored| of delta_k, nats/char), "delta" (the live delta_k),
    "provenance" (the weights': the code and machine that trained them)}``. Seconds on a CPU:
    one forward pass per block removed, over the run's evaluation windows.
    """
    stored = as_run(stored, "stored")
    if stored.status != "ok":
        raise ValueError(f"stored must be a finished run (status 'ok'), got status {stored.status!r}")
    from ..nn.device import pin_threads
    from ..nn.evaluation import ablation_losses, evaluate
    from ..nn.probe import measure_zoo
    from ..training.data import eval_windows, load_corpus
    from ..training.weights import load_weights
    w = load_weights(weights, stored)
    cfg = w.config
    pin_threads(cfg.threads)                  # the run's own: the last bits of a reduction depend on it
    model = w.model("cpu")
    corpus = load_corpus(cfg.corpus)
    xv, yv = eval_windows(corpus.val, cfg.eval_windows, cfg.block_size)
    xm, _ = eval_windows(corpus.val, cfg.measure_windows, cfg.block_size)
    d_s, se_s = ablation(stored)
    live = ablation_losses(model, xv, yv)
    d_l = np.asarray(live["delta"], float)
    val_s, val_l = stored.final.val_loss, evaluate(model, xv, yv)
    last = at_step(stored, max(stored.measured_steps))
    live = {part: StreamMeasure.from_dict(m, f"live.{part}") for part, m in measure_zoo(model, xm).items()}
    return {"name": stored.name, "step": last.step, "max_z": float(np.max(np.abs(d_l - d_s) / se_s)),
            "z_loss": float(abs(val_l["mean"] - val_s.mean) / val_s.se),
            "max_z_change": _max_z_change(last.measure, live),
            "max_abs_delta": float(np.max(np.abs(d_l - d_s))), "delta": d_l, "provenance": w.provenance}
