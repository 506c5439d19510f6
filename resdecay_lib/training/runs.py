"""One training run, measured through training: what Chapters 7 and 8 read.

:func:`run_result` trains one :class:`~resdecay_lib.training.plan.TrainConfig` and measures it at
the checkpoints of a :class:`RunPlan`: at each measured step (log-spaced from step 0 to
the end) the per-layer change metrics and the Gram matrix of the stream's summands
(:func:`resdecay_lib.nn.probe.measure_zoo`) and the validation loss; at each evaluated step
the validation loss alone (the loss curve); after the last step the losses on the
validation windows and on pydoc (out of domain), the loss with each block removed
(:func:`resdecay_lib.nn.evaluation.ablation_losses`) and the convergence criterion
(:func:`convergence`). It returns a JSON-ready dict with its provenance (:func:`provenance`:
code version, library versions, device, CPU model and torch's CPU capability, threads, seeds;
and the wall time). Asked to (``weights``), it also stores the finished run's final weights
(:mod:`resdecay_lib.training.weights`), leaving the result as it is.

:func:`stored_exponent` turns a stored result (the dict :func:`run_result` returns, or the
JSON a ``train`` or a sweep wrote) into the exponent of its per-layer change at one measured
step, beside the theorem's (an :class:`~resdecay_lib.stats.exponents.Exponent`, as Chapter 7 fits it:
k = 2..L, the stream the blocks read, the convention the stored Gram matrix's rho chooses);
:func:`exponent_lines` says one in words, as the ``train``, ``sweep`` and ``analyse``
commands print it.

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

from ..checks import Flag, Instance, Int, OneOf, PathArg, Real, Text, accepts, check_int, check_out_file, show
from ..nn.config import ARCH_NAMES
from .data import eval_windows, load_corpus
from ..nn.device import manual_seed_all, pin_threads, resolve_device
from ..nn.evaluation import ablation_losses, evaluate, sig
from ..nn.metrics import LayerChange
from ..nn.probe import exponent, measure_zoo
from ..stats.exponents import Exponent
from .plan import RunPlan, TrainConfig
from .records import RUN_SCHEMA, RunRecord, as_run
from .store import code_version, library_versions, machine
from .train import NonFiniteLoss, prepare_checkpoint, train
from .weights import save_weights

__all__ = ["convergence", "flops_per_step", "provenance", "run_result",
           "CONVERGENCE_WINDOW", "CONVERGENCE_TOL", "stored_exponent", "exponent_lines", "part_read",
           "K_MIN", "LEVEL"]

_CFG = Instance(TrainConfig, "a TrainConfig")

#: the convergence criterion: over the last CONVERGENCE_WINDOW of the steps the validation
#: loss improves by less than CONVERGENCE_TOL (relative)
CONVERGENCE_WINDOW = 0.2
CONVERGENCE_TOL = 0.03
#: the fit range's start and the interval's level ``train``, ``sweep`` and ``analyse`` report
#: (Chapter 7's: k = 2..L, 95%)
K_MIN, LEVEL = 2, 0.95


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
         progress=Flag(none=True), stop_at=Int(1, none=True), code=Text(none=True), weights=PathArg(none=True))
def run_result(cfg: TrainConfig, plan: RunPlan = RunPlan(), checkpoint: str | Path | None = None,
               progress: bool | None = None, stop_at: int | None = None,
               code: str | None = None, weights: str | Path | None = None) -> dict:
    """Train one run, measure it at ``plan``'s steps and return its JSON-ready result.

    ``stop_at``: stop after that many steps (one of the measured steps), returning the
    checkpoints measured so far and no final evaluation (``status`` "partial"): a short
    live re-run of a stored run's first checkpoint intervals. ``code``: the code version
    to record (a sweep computes it once, before any run starts). ``weights``: where to store
    the final weights of a finished run (:func:`resdecay_lib.training.weights.save_weights`,
    atomic; usually :func:`~resdecay_lib.training.weights.weights_path` of the result file),
    written before this returns; a run that does not finish writes none. The result is the
    same with or without them.
    """
    measure_steps, eval_steps = plan.resolve(cfg.steps)
    if stop_at is not None and stop_at not in measure_steps[1:]:
        raise ValueError(f"stop_at must be one of the measured steps {measure_steps[1:]}, got {stop_at!r}")
    if weights is not None:
        if stop_at is not None:
            raise ValueError(f"weights: a run stopped at step {stop_at} (stop_at) has no final weights to store; "
                             f"give weights=None or stop_at=None")
        check_out_file("weights", weights)
        if checkpoint is not None and Path(weights).resolve() == Path(checkpoint).resolve():
            raise ValueError(f"weights and checkpoint must be two files, got {str(weights)!r} for both")
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
    head = {"schema": RUN_SCHEMA, "name": cfg.run_name(), "config": asdict(cfg),
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
        if weights is not None:   # before the caller writes the result: a stored result has its weights
            save_weights(model, cfg, weights, cfg.steps, prov, head["name"])
    # a resumed run adds the time its earlier segments recorded in the checkpoint; an older
    # checkpoint that did not record it leaves only this segment's time, and says so
    segment = time.perf_counter() - t0
    out["wall_time_s"] = round(segment + (state.prior_wall_s or 0.0), 1)
    out["resumed_from_step"] = state.resumed_from
    out["wall_time_complete"] = state.prior_wall_s is not None
    return out


# ----------------------------------------------------------------------------- a stored run's exponent

@accepts(arch=OneOf(ARCH_NAMES))
def part_read(arch: str) -> str:
    """The part of a run's measurement (:func:`~resdecay_lib.nn.probe.measure_zoo`'s keys) that
    holds the stream the blocks read: ``"post_ln"`` (x_a) for a two-stream placement
    (ResiDual), ``"stream"`` for the others; what
    :func:`resdecay_lib.analysis.training_analysis.part_of` reads too."""
    from ..nn.models import ARCHS
    return "post_ln" if ARCHS[arch].stream_width == 2 else "stream"


def _stored_array(raw, where: str, shape_text: str, ndim: int) -> np.ndarray:
    try:
        a = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"result: {where} must be a rectangular array of numbers {shape_text}, got "
                         f"{show(raw)}") from None
    if a.ndim != ndim or a.size == 0:
        raise ValueError(f"result: {where} must be a non-empty array {shape_text}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"result: {where} holds NaN, an infinity or a null")
    return a


@accepts(result=Instance((RunRecord, dict), "a stored run result (a RunRecord, or a dict: run_result's, or a "
                                           "result JSON's)"),
         step=Int(0, none=True), k_min=Int(1), level=Real(0, 1, lo_open=True, hi_open=True))
def stored_exponent(result, step: int | None = None, k_min: int = K_MIN, level: float = LEVEL) -> Exponent:
    """The exponent of a stored run's per-layer change at ``step``, beside the theorem's: an
    :class:`~resdecay_lib.stats.exponents.Exponent` (its ``reading`` says how they stand).

    ``result``: a :class:`~resdecay_lib.training.records.RunRecord`
    (:func:`resdecay_lib.training.store.load_run`), or what :func:`run_result` returns or a result
    JSON ``train`` or a sweep wrote, parsed (read as one). ``step``: one of its measured steps
    (``result.measured_steps``), default the last one. The measurement read is the checkpoint's
    ``measure[part]``, ``part`` the stream the blocks read (:func:`part_read` of
    ``config.arch``): its per-sequence omega_k^2 curves (``omega_sq_per_sequence``,
    [sequences, L]) and the Gram matrix of its summands (``gram``, [L+1, L+1]). The fit is
    Chapter 7's and ``measure``'s: :func:`resdecay_lib.nn.probe.exponent` over k =
    ``k_min``..L, a percentile bootstrap over sequences at ``level`` (2000 replicates, seed 0),
    and the theorem's exponent over the same k in the convention the stored Gram's rho chooses
    (:func:`resdecay_lib.stats.exponents.convention`). Its point estimate is the least-squares
    slope of log of the mean curve on log k, Chapter 7's per-seed exponent
    (:func:`resdecay_lib.analysis.training_analysis.curve_exponent`).

    A result without these fields, or with a malformed one, raises ``ValueError`` in one line
    naming the field (``run pre_ln_L4_s0: config must hold ...``, ``result:
    checkpoints[step=400].measure.stream.gram ...``); a step that was not measured names
    ``step`` and the measured steps; a ``k_min`` that leaves fewer than three blocks to fit
    names ``k_min``.
    """
    r = as_run(result, "result")
    arch, L, name = r.arch, r.n_layer, r.name
    measured = {c.step: c for c in r.checkpoints if c.measure is not None}
    if not measured:
        raise ValueError(f"result: checkpoints holds no measured step (no record with a 'measure'): run {name} "
                         f"was not measured")
    if step is None:
        step = max(measured)
    elif step not in measured:
        raise ValueError(f"step must be one of the steps run {name} was measured at {sorted(measured)}, got {step}")
    part = part_read(arch)
    where = f"checkpoints[step={step}].measure"
    rec = measured[step].measure.get(part)
    if rec is None:
        raise ValueError(f"result: {where}.{part} must be the measurement of the stream the blocks read "
                         f"({part!r} of {arch}), got None")
    per = _stored_array(rec.omega_sq_per_sequence, f"{where}.{part}.omega_sq_per_sequence",
                        f"[sequences, L = {L}]", 2)
    if per.shape[1] != L:
        raise ValueError(f"result: {where}.{part}.omega_sq_per_sequence must have L = {L} columns (config.n_layer), "
                         f"got shape {per.shape}")
    G = _stored_array(rec.gram, f"{where}.{part}.gram", f"[L+1, L+1] = [{L + 1}, {L + 1}]", 2)
    if G.shape != (L + 1, L + 1):
        raise ValueError(f"result: {where}.{part}.gram must be [L+1, L+1] = [{L + 1}, {L + 1}] (config.n_layer "
                         f"{L}), got shape {G.shape}")
    if not np.all(np.diag(G) >= 0) or G[0, 0] < 0 or not np.any(np.diag(G)[1:] > 0):
        raise ValueError(f"result: {where}.{part}.gram must be a Gram matrix (a non-negative diagonal, some block "
                         f"variance > 0), got diagonal {show(np.diag(G).tolist())}")
    if L - k_min + 1 < 3:
        limit = (f"at most L - 2 = {L - 2}" if L >= 3 else
                 f"none can be: run {name} has {L} block{'s' if L != 1 else ''}, the fit needs L >= {K_MIN + 2}")
        raise ValueError(f"k_min must leave at least three blocks to fit over k = k_min..L (L = {L}): {limit}; "
                         f"got {k_min}")
    if np.any(per[:, k_min - 1:].mean(0) <= 0):
        raise ValueError(f"result: {where}.{part}.omega_sq_per_sequence must have a positive mean over the "
                         f"sequences at k = {k_min}..{L} (a power law is fitted on its log)")
    n = per.shape[0]
    nan = np.full(L, np.nan)
    means = {}
    for m in LayerChange.METRICS:
        for key in (m, m + "_se"):
            try:
                v = np.asarray(rec.metrics.get(key), dtype=np.float64)
            except (TypeError, ValueError):
                v = nan
            means[key] = v if v.shape == (L,) else nan
    means["omega_sq"] = per.mean(0)
    means["omega_sq_se"] = per.std(0, ddof=1) / np.sqrt(n) if n > 1 else nan
    change = LayerChange(k=np.arange(1, L + 1, dtype=np.int64), n_sequences=n, n_tokens=n * r.config.block_size,
                         per_sequence={"omega_sq": per}, **means)
    try:
        return exponent(change, k_min=k_min, level=level, gram=G)
    except ValueError as exc:   # what the fit itself refuses (its range, its bootstrap), in one line
        raise ValueError(f"result: the fit of {where}.{part} fails: {' '.join(str(exc).split())}") from None


@accepts(e=Instance(Exponent, "an Exponent (resdecay_lib.stats.exponents', e.g. nn.probe.exponent's)"))
def exponent_lines(e: Exponent) -> list[str]:
    """An :class:`~resdecay_lib.stats.exponents.Exponent` in words, as ``train``, ``analyse`` and
    ``measure`` print it: the fit with its interval and range, the theorem's exponent over the
    same k in its convention (and the rho that chose it), and the reading."""
    iv = (f" [{e.lo:.3f}, {e.hi:.3f}] ({e.how})"
          if e.lo is not None and e.hi is not None else " (one sequence: no interval)")
    theorem = f"theorem: k^{e.reference:.3f} over the same k, {e.convention} convention"
    if e.rho is not None:
        why = ("at least half a block output's: the embedding counts as a summand" if e.embedding_counted
               else "below half a block output's: the seed's convention")
        theorem += f" (rho = {e.rho:.2f}, the embedding's variance {why})"
    return [f"fit: change ~ k^{e.exponent:.3f}{iv}, k = {e.k_min}..{e.k_max}", theorem, f"reading: {e.reading}"]
