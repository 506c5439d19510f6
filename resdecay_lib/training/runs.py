"""One training run, measured through training: what Chapters 7 and 8 read.

:func:`run_result` trains one :class:`~resdecay_lib.training.config.TrainConfig` and measures it at
the checkpoints of a :class:`RunPlan`: at each measured step (log-spaced from step 0 to
the end) the per-layer change metrics and the Gram matrix of the stream's summands
(:func:`resdecay_lib.nn.probe.measure_zoo`) and the validation loss; at each evaluated step
the validation loss alone (the loss curve); after the last step the losses on the
validation windows and on pydoc (out of domain), the loss with each block removed
(:func:`resdecay_lib.nn.evaluation.ablation_losses`) and the convergence criterion
(:func:`convergence`). It returns a JSON-ready dict with its provenance (:func:`provenance`:
code version, library versions, device, CPU model and torch's CPU capability, threads, seeds;
and the wall time).

Measurements are taken inside the training loop's callback and saved in its checkpoints,
so a run killed half-way resumes with everything it had measured.
"""
from __future__ import annotations

import math
import numbers
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from ..checks import Flag, Instance, Int, Ints, PathArg, Real, Text, accepts, check_fields, check_out_file, declare, check_int
from .data import eval_windows, load_corpus
from ..nn.device import manual_seed_all, pin_threads, resolve_device
from ..nn.evaluation import ablation_losses, evaluate, sig
from ..nn.probe import measure_zoo
from .config import RunPlan, TrainConfig
from .store import code_version, library_versions, machine, write_json_atomic
from .train import (CheckpointMismatch, CheckpointUnreadable, ForeignCheckpoint, NonFiniteLoss, discard_checkpoint,
                    prepare_checkpoint, train)

__all__ = ["RESULT_SCHEMA", "convergence", "flops_per_step", "provenance", "run_result",
           "CONVERGENCE_WINDOW", "CONVERGENCE_TOL"]

_CFG = Instance(TrainConfig, "a TrainConfig")

#: version of the result-file layout (2: measured through training)
RESULT_SCHEMA = 2
#: the convergence criterion: over the last CONVERGENCE_WINDOW of the steps the validation
#: loss improves by less than CONVERGENCE_TOL (relative)
CONVERGENCE_WINDOW = 0.2
CONVERGENCE_TOL = 0.03


@accepts(steps=Int(1), window=Real(0, 1, lo_open=True, hi_open=True), tol=Real(0, lo_open=True))
def convergence(curve: list[dict], steps: int, window: float = CONVERGENCE_WINDOW,
                tol: float = CONVERGENCE_TOL) -> dict:
    """Did the validation loss stop improving? ``curve``: [{"step", "mean"}, ...] in step order.

    improvement = (L(s_a) - L(steps)) / L(s_a), s_a the last evaluated step at or before
    (1 - window) * steps; the run *converged* when improvement < tol. A run whose final
    loss is not finite, or above its loss at step 0, *diverged*.
    """
    if isinstance(curve, (str, bytes, dict)) or not isinstance(curve, (list, tuple)) or not curve:
        raise ValueError(f"curve must be a non-empty list of {{'step', 'mean'}} records, got "
                         f"{type(curve).__name__} {curve!r}"[:200])
    for i, p in enumerate(curve):
        if not isinstance(p, dict) or "step" not in p or "mean" not in p:
            raise ValueError(f"curve[{i}] must be a {{'step', 'mean'}} record, got {p!r}"[:200])
        check_int(f"curve[{i}]['step']", p["step"], 0)
        m = p["mean"]
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Real)):
            raise ValueError(f"curve[{i}]['mean'] must be a loss (a number, or None where it was not "
                             f"finite), got {m!r}")
    by = {int(p["step"]): p["mean"] for p in curve}
    if steps not in by or 0 not in by:
        raise ValueError(f"curve must hold steps 0 and {steps}, got {sorted(by)}")
    cut = (1 - window) * steps
    s_a = max(s for s in by if s <= cut)
    end, start = by[steps], by[0]
    diverged = end is None or not math.isfinite(end) or end > start
    imp = float("nan") if diverged else (by[s_a] - end) / by[s_a]
    return {"criterion": f"the validation loss improves by less than {tol:.0%} over the last "
                         f"{window:.0%} of the steps (from step {s_a} to {steps})",
            "from_step": s_a, "improvement": sig(imp, 4), "diverged": bool(diverged),
            "met": bool(not diverged and imp < tol)}


@accepts(model=Instance("resdecay_lib.nn.models.GPT", "a model of resdecay_lib.nn.models (build's)"), cfg=_CFG)
def flops_per_step(model, cfg: TrainConfig) -> float:
    """Training FLOPs of one step, Kaplan et al.'s (2020) count: tokens x (6 N + 6 L T d).

    N is the number of non-embedding parameters (the blocks and the readout norm, without
    the token and position tables and the head), L the depth, T the context, d the width.
    """
    emb = {id(p) for m in (model.wte, getattr(model, "wpe", None), model.lm_head) if m is not None
           for p in m.parameters()}
    n = sum(p.numel() for p in model.parameters() if id(p) not in emb)
    per_token = 6 * n + 6 * cfg.n_layer * cfg.block_size * cfg.d_model
    return float(per_token * cfg.batch_size * cfg.block_size)


@accepts(cfg=_CFG, code=Text(none=True))
def provenance(cfg: TrainConfig, code: str | None = None) -> dict:
    """Code version (``code``, else :func:`code_version`), library versions, the machine
    (:func:`machine`: device, CPU model, torch's CPU capability, platform), threads and seeds
    (one seed, ``cfg.seed``, draws the initial weights, orders the batches and seeds Python's,
    NumPy's and torch's global generators; the evaluation windows are fixed, drawn by none)."""
    dev = resolve_device(cfg.device)
    return {"code_version": code or code_version(),
            "library_versions": library_versions(),
            **machine(str(dev)),
            "threads": cfg.threads if dev.type == "cpu" else None,
            "seeds": {"init": cfg.seed, "data_order": cfg.seed, "global_generators": cfg.seed}}


@accepts(cfg=_CFG, plan=Instance(RunPlan, "a RunPlan"), checkpoint=PathArg(none=True),
         progress=Flag(none=True), stop_at=Int(1, none=True), code=Text(none=True))
def run_result(cfg: TrainConfig, plan: RunPlan = RunPlan(), checkpoint: str | Path | None = None,
               progress: bool | None = None, stop_at: int | None = None,
               code: str | None = None) -> dict:
    """Train one run, measure it at ``plan``'s steps and return its JSON-ready result.

    ``stop_at``: stop after that many steps (one of the measured steps), returning the
    checkpoints measured so far and no final evaluation (``status`` "partial"): a short
    live re-run of a stored run's first checkpoint intervals. ``code``: the code version
    to record (a sweep computes it once, before any run starts).
    """
    measure_steps, eval_steps = plan.resolve(cfg.steps)
    if stop_at is not None and stop_at not in measure_steps[1:]:
        raise ValueError(f"stop_at must be one of the measured steps {measure_steps[1:]}, got {stop_at!r}")
    if checkpoint is not None:
        # before any work: a path that cannot be written fails, and anything at it but a
        # checkpoint the library wrote (a foreign file, a folder, a FIFO) is refused, untouched
        prepare_checkpoint(checkpoint)
    t0 = time.perf_counter()
    dev = resolve_device(cfg.device)
    if dev.type == "cpu":
        pin_threads(cfg.threads)
    prov = provenance(cfg, code)
    corpus = load_corpus(cfg.corpus)
    xv, yv = eval_windows(corpus.val, cfg.eval_windows, cfg.block_size)
    xm, _ = eval_windows(corpus.val, cfg.measure_windows, cfg.block_size)
    measured = set(measure_steps)

    def record(step, model, log):
        was = model.training
        model.eval()
        try:
            v = evaluate(model, xv, yv)
            rec = {"step": int(step), "val_loss": {"mean": sig(v["mean"]), "se": sig(v["se"])}}
            if step in measured:
                rec["measure"] = measure_zoo(model, xm)
        finally:
            model.train(was)
        log.append(rec)

    from ..nn.models import build
    manual_seed_all(cfg.seed)
    model = build(cfg.arch, cfg.n_layer, cfg.d_model, cfg.n_head, corpus.vocab.size,
                  cfg.block_size, seed=cfg.seed, device=dev)
    log: list = []
    record(0, model, log)
    head = {"schema": RESULT_SCHEMA, "name": cfg.run_name(), "config": asdict(cfg),
            "plan": {"measure_steps": list(measure_steps), "eval_every": plan.eval_every},
            "seed": cfg.seed, **prov, "n_params": sum(p.numel() for p in model.parameters()),
            "flops_per_step": flops_per_step(model, cfg)}
    try:
        state = train(cfg, checkpoint=checkpoint, checkpoint_every=100, progress=progress,
                      model=model, on_step=record, callback_steps=eval_steps[1:], log=log,
                      stop_after=stop_at)
    except NonFiniteLoss as exc:  # a diverged run is a result too: record where it failed
        return {**head, "status": "non_finite", "failed_step": exc.step,
                "checkpoints": [r for r in log if "measure" in r],
                "val_curve": [{"step": r["step"], **r["val_loss"]} for r in log],
                "wall_time_s": round(time.perf_counter() - t0, 1)}
    log = state.log
    out = {**head, "status": "ok" if stop_at is None else "partial",
           "checkpoints": [r for r in log if "measure" in r],
           "val_curve": [{"step": r["step"], **r["val_loss"]} for r in log],
           "train_loss": sig(state.train_loss, 5)}
    if stop_at is None:
        model = state.model
        pydoc = load_corpus("pydoc")
        xp, yp = eval_windows(pydoc.val, cfg.eval_windows, cfg.block_size)
        val = evaluate(model, xv, yv)
        out["final"] = {"val_loss": {"mean": val["mean"], "se": val["se"],
                                     "per_window": sig(val["per_window"], 6)},
                        "pydoc_loss": {k: v for k, v in evaluate(model, xp, yp).items()
                                       if k != "per_window"},
                        "ablation": ablation_losses(model, xv, yv)}
        out["convergence"] = convergence(out["val_curve"], cfg.steps)
    # a resumed run adds the time its earlier segments recorded in the checkpoint; an older
    # checkpoint that did not record it leaves only this segment's time, and says so
    segment = time.perf_counter() - t0
    out["wall_time_s"] = round(segment + (state.prior_wall_s or 0.0), 1)
    out["resumed_from_step"] = state.resumed_from
    out["wall_time_complete"] = state.prior_wall_s is not None
    return out


# ----------------------------------------------------------------------------- command line

def _cmd_train(args) -> int:
    import dataclasses
    import json
    import sys
    kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
          if getattr(args, f.name, None) is not None}
    try:   # every option and path before any work: one line and exit code 2 on a bad one
        cfg = TrainConfig.from_dict(kw)
        resolve_device(cfg.device)
        out = check_out_file("--out", args.out) if args.out is not None else None
        ck = check_out_file("--checkpoint", args.checkpoint) if args.checkpoint is not None else None
        if out is not None and ck is not None and out.resolve() == ck.resolve():
            raise ValueError(f"--out and --checkpoint must be two files, got {args.out!r} for both")
    except ValueError as exc:
        print(f"train: {exc}", file=sys.stderr)
        return 2
    try:
        try:
            res = run_result(cfg, checkpoint=ck)
        except CheckpointUnreadable as exc:   # as the sweep does: start over, and say so
            if isinstance(exc, ForeignCheckpoint):
                raise                            # not the library's file: refused, left as it is
            print(f"train: {exc}; {discard_checkpoint(ck)}, restarting the run from step 0", file=sys.stderr)
            res = run_result(cfg, checkpoint=ck)
    except (CheckpointMismatch, ForeignCheckpoint) as exc:
        print(f"train: {' '.join(str(exc).split())}"[:500], file=sys.stderr)
        return 2
    if out is not None:
        try:
            write_json_atomic(res, out)
        except OSError as exc:               # keep the result: it cost a whole run
            print(f"train: cannot write --out {str(out)!r} ({exc}); the result follows on stdout",
                  file=sys.stderr)
            print(json.dumps(res))
            return 1
    if res["status"] != "ok":
        print(f"{cfg.run_name()}: non-finite loss at step {res['failed_step']}", file=sys.stderr)
        return 1
    print(f"{cfg.run_name()}: val loss {res['final']['val_loss']['mean']:.4f} "
          f"(step 0: {res['val_curve'][0]['mean']:.4f}), {res['wall_time_s']:.0f} s"
          + (f", written to {out}" if out is not None else ""))
    return 0


def register_cli(sub) -> None:
    """Add ``train`` to the ``python -m resdecay_lib`` parser."""
    import dataclasses
    p = sub.add_parser("train", help="train one model, measured through training; write its result JSON")
    for f in dataclasses.fields(TrainConfig):
        p.add_argument("--" + f.name.replace("_", "-"), dest=f.name, type=type(f.default),
                       default=None, help=f"default {f.default!r}")
    p.add_argument("--checkpoint", default=None, help="checkpoint file (resumes if it exists)")
    p.add_argument("--out", default=None, help="result JSON file")
    p.set_defaults(func=_cmd_train)
