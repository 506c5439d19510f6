"""The front intervention, predicted first: does a later block's change follow the arithmetic of the sum?

The card's mechanism, in its words: "So the inputs the later blocks see become increasingly
alike, and the capacity of those blocks is not that it is unusable but that there is
progressively less for it to act on." It is arithmetic: the stream a later block is added to
is the sum of everything before it, so its change to the normalised stream shrinks as the sum
grows. The deep runs could not separate "the mechanism holds but a large front masks it" from
"the mechanism is wrong"; an intervention can. With the front's sum F (blocks 1..m) scaled to
alpha F (:mod:`resdecay_lib.nn.intervention`):

* (a) *arithmetic*: the later blocks' outputs kept as recorded; omega_k^2 (k > m) moves only
  because the sum moved. Computed from the unpatched stream alone, so it is written down,
  with the shifted law's k0(alpha), before any patched forward runs
  (``results/predictions/intervention.json``, :func:`predict_model`).
* (b) *real*: blocks m+1..L run on the new stream (:func:`measure_model`).

**Primary statistic** (declared with the predictions, :data:`DECLARED`): the share of the
arithmetic's change that the real forward realises,

    T(alpha) = sum_{k in K} [log W^b_k(alpha) - log W_k(1)] / sum_{k in K} [log W^a_k(alpha) - log W_k(1)],

W_k the mean over sequences of the per-sequence omega_k^2 (:class:`~resdecay_lib.nn.metrics.LayerChange`'s
convention), K = m+1..L-T the later blocks without the tail (:data:`TAIL`), m = :data:`FRONT_M`.
T = 1: the later blocks write as before and their change follows the sum (the card's
mechanism); T = 0: their change does not depend on how large the front is (they write in
proportion to what they are added to, and the sum's size is not what sets their change);
T > 1: they write less when the front is larger, beyond the arithmetic. Its interval is a
percentile bootstrap over sequences (the three curves resampled together), at the family's
Bonferroni level. The margin is :data:`TRACKING_MARGIN` = 1/2: the midpoint between the
mechanism (T = 1) and its negation (T = 0).

The second front size (the sensitivity), by a rule stated first (:func:`second_front`): the
number of leading blocks, consecutive from block 1, whose output variance G_kk exceeds twice
the median over all L blocks, clipped to [1, L - T - 2].

The shifted law's prediction (Chapter 7b's front model, omega_k^2 ~ 1/(k + k0)):
k0(alpha) = V_front(alpha) / s^2 - m with V_front(alpha) = G_00 + 2 alpha sum_j G_0j +
alpha^2 sum_ij G_ij over the front blocks i, j = 1..m (the embedding is not scaled), s^2 the
mean output variance of blocks m+1..L-T (:func:`resdecay_lib.analysis.front.block_profile`);
measured on (b)'s Gram by the same function.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np
import torch

from ..book import evidence as E, rules
from ..checks import check_int, check_real
from ..nn import hooks
from ..nn.intervention import arithmetic_stream, front_scaled
from ..nn.metrics import layer_change
from ..stats.exponents import FRONT_BLOCKS, TAIL_BLOCKS
from ..training.store import measurement_provenance, write_json_atomic
from . import front as front_analysis

__all__ = ["FRONT_M", "ALPHAS", "PRIMARY_ALPHAS", "TAIL", "TRACKING_MARGIN", "N_BOOT", "BOOT_SEED",
           "RULE_MODELS", "CONTROLS", "MODELS", "FAMILY_LEVEL", "DECLARED", "v_front", "predicted_k0", "measured_k0",
           "second_front", "gram_per_sequence", "pooled_gram", "Tracking", "tracking", "k0_interval",
           "predict_model", "measure_model", "entry_sha256", "PREDICTIONS", "RECORDS", "departure"]

#: the front's size: Chapter 7b's three blocks
FRONT_M = FRONT_BLOCKS
#: the scales of the front's sum; 1 is the unpatched model
ALPHAS = (0.25, 0.5, 1.0, 2.0)
#: the scales the rule reads (a smaller and a larger front)
PRIMARY_ALPHAS = (0.25, 2.0)
#: the last block is kept apart, as everywhere past the front
TAIL = TAIL_BLOCKS
#: T's equivalence margin: holds when its interval lies in [1 - margin, 1 + margin] (the rule's)
TRACKING_MARGIN = rules.TRACKING_MARGIN
#: bootstrap draws over sequences, and their seed
N_BOOT = 2000
BOOT_SEED = 0
#: the inputs, as Chapter 9's records: the Shakespeare validation text, 16 sequences of 128 tokens
TEXT, N_SEQ, N_TOKENS, BATCH = "shakespeare", 16, 128, 8
#: every model measured (key: how it is loaded; "toy:" a stored run with its final weights)
MODELS = {
    "smollm2": "smollm2-135m",
    "qwen": "qwen2.5-coder-0.5b",
    "qwen15": "qwen2.5-coder-1.5b",
    "toy_s5": "toy:results/train_long/pre_ln_L24_s5",
    "toy_s6": "toy:results/train_long/pre_ln_L24_s6",
    "toy_s7": "toy:results/train_long/pre_ln_L24_s7",
    "gemma3": "gemma3-270m",
}
#: the Pre-LN models whose tests make the rule's family (the evidence's)
RULE_MODELS = {k: MODELS[k] for k in E.INTERVENTION_MODELS}
#: measured and reported beside the family, not read by the rule: the sandwich-norm control,
#: and the toy seed 5, whose patched forward ran once in development before the predictions
CONTROLS = {k: v for k, v in MODELS.items() if k not in RULE_MODELS}
#: the level of each of the family's intervals (Bonferroni over models x primary scales)
FAMILY_LEVEL = 1 - 0.05 / (len(RULE_MODELS) * len(PRIMARY_ALPHAS))
#: where the predictions and the measurements are stored (relative to the book's folder)
PREDICTIONS = "results/predictions/intervention.json"
RECORDS = "results/intervention"

DECLARED = {
    "front_m": FRONT_M, "alphas": list(ALPHAS), "primary_alphas": list(PRIMARY_ALPHAS), "tail": TAIL,
    "tracking_margin": TRACKING_MARGIN, "n_boot": N_BOOT, "boot_seed": BOOT_SEED,
    "inputs": {"text": TEXT, "n_seq": N_SEQ, "n_tokens": N_TOKENS,
               "toy": "the run's own measure windows of the validation split (eval_windows, measure_windows)"},
    "statistic": "T(alpha) = sum_K [log W^b_k(alpha) - log W_k(1)] / sum_K [log W^a_k(alpha) - log W_k(1)], "
                 "K = m+1..L-tail, W_k the mean over sequences of per-sequence omega_k^2",
    "interval": "percentile bootstrap over sequences (base, arithmetic and real resampled together), "
                "Bonferroni over the rule's family: len(RULE_MODELS) x len(PRIMARY_ALPHAS) tests, 0.05 in all",
    "family_level": FAMILY_LEVEL,
    "second_front": "leading blocks (consecutive from 1) with G_kk > 2 median_k G_kk, clipped to [1, L - tail - 2]",
    "k0": "V_front(alpha) / s^2 - m, V_front(alpha) = G_00 + 2 alpha sum_j G_0j + alpha^2 sum_ij G_ij, "
          "s^2 = mean G_kk over k = m+1..L-tail",
    "rule_models": RULE_MODELS, "controls": CONTROLS,
}


# ----------------------------------------------------------------------------- the Gram's arithmetic

def _gram(G) -> np.ndarray:
    g = np.asarray(G, dtype=np.float64)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] < 4 or not np.all(np.isfinite(g)):
        raise ValueError(f"G must be a finite square (L+1) x (L+1) Gram matrix with L >= 3, got shape {g.shape}")
    return g


def v_front(G, m: int, alpha: float) -> float:
    """Variance per coordinate of x_1 + alpha F: G_00 + 2 alpha sum_{j=1..m} G_0j + alpha^2 sum_{i,j=1..m} G_ij."""
    g = _gram(G)
    check_int("m", m, 1, g.shape[0] - 2)
    a = check_real("alpha", alpha, 0.0)
    return float(g[0, 0] + 2 * a * g[0, 1:m + 1].sum() + a * a * g[1:m + 1, 1:m + 1].sum())


def predicted_k0(G, m: int, alpha: float, tail: int = TAIL) -> float:
    """The shifted law's offset after the intervention, the later blocks unchanged:
    k0(alpha) = V_front(alpha) / s^2 - m, s^2 = mean G_kk over k = m+1..L-tail."""
    p = front_analysis.block_profile(_gram(G), m, tail)
    return v_front(G, m, alpha) / p.s2 - m


def measured_k0(G, m: int, tail: int = TAIL) -> float:
    """The same offset read from a (patched) stream's own Gram: V_front / s^2 - m."""
    return front_analysis.block_profile(_gram(G), m, tail).k0


def second_front(G, tail: int = TAIL) -> int:
    """The sensitivity's front size, by the rule stated first: the count of leading blocks,
    consecutive from block 1, whose output variance G_kk exceeds twice the median of G_kk over
    the L blocks; clipped to [1, L - tail - 2] (a front, and a bulk of at least two blocks)."""
    g = _gram(G)
    L = g.shape[0] - 1
    d = np.diag(g)[1:]
    big = d > 2 * np.median(d)
    n = 0
    while n < L and big[n]:
        n += 1
    return int(min(max(n, 1), L - tail - 2))


# ----------------------------------------------------------------------------- per-sequence Grams

def gram_per_sequence(stream: torch.Tensor, mask) -> tuple[np.ndarray, np.ndarray, int]:
    """Token sums of the summands' Gram, per sequence: ``(S, n, D)`` with S [B, L+1, L+1] =
    sum over the kept tokens t of sequence b of <u_i, u_j> (summands u_0 = x_1, u_k = x_{k+1} - x_k,
    each centred over its D coordinates, float64), n [B] the kept tokens. The pooled Gram
    :func:`pooled_gram` is :func:`resdecay_lib.nn.metrics.gram` of the kept tokens."""
    x = torch.as_tensor(stream)
    if x.dim() != 4 or not x.is_floating_point():
        raise ValueError(f"stream must be a float tensor [L+1, B, T, D], got {tuple(x.shape)}")
    keep = torch.as_tensor(mask).bool()
    if tuple(keep.shape) != tuple(x.shape[1:3]):
        raise ValueError(f"mask must have the shape [B, T] = {tuple(x.shape[1:3])}, got {tuple(keep.shape)}")
    L1, B, T, D = x.shape
    S = np.zeros((B, L1, L1))
    for b in range(B):
        u = x[:, b][:, keep[b]].double()                        # [L+1, n_b, D]
        u = torch.cat([u[:1], u[1:] - u[:-1]], 0)
        u = u - u.mean(-1, keepdim=True)
        S[b] = torch.einsum("ind,jnd->ij", u, u).numpy()
    return S, keep.sum(1).numpy().astype(np.int64), int(D)


def pooled_gram(S, n, D: int) -> np.ndarray:
    """G = sum_b S_b / (D sum_b n_b), the Gram of the pooled tokens."""
    S, n = np.asarray(S, float), np.asarray(n, float)
    return S.sum(0) / (D * n.sum())


# ----------------------------------------------------------------------------- the statistic

@dataclass(frozen=True)
class Tracking:
    """T(alpha) (see the module docstring) with its percentile bootstrap interval at ``level``;
    ``n_seq`` sequences; ``k``: the blocks summed over (1-based)."""
    value: float
    lo: float
    hi: float
    level: float
    n_seq: int
    k: tuple


def _later(L: int, m: int, tail: int) -> np.ndarray:
    k = np.arange(m + 1, L - tail + 1)
    if k.size < 2:
        raise ValueError(f"the later blocks m+1..L-tail must number at least 2: L = {L}, m = {m}, tail = {tail}")
    return k


def _t_of(base, arith, real, cols) -> np.ndarray:
    """T from mean curves [..., L] over the columns ``cols`` (0-based block indices)."""
    lb = np.log(base[..., cols])
    num = (np.log(real[..., cols]) - lb).sum(-1)
    den = (np.log(arith[..., cols]) - lb).sum(-1)
    return num / den


def tracking(base, arith, real, m: int, tail: int = TAIL, level: float = 0.95, n_boot: int = N_BOOT,
             seed: int = BOOT_SEED) -> Tracking:
    """T(alpha) of per-sequence omega_k^2 curves [B, L]: ``base`` (unpatched), ``arith`` ((a)),
    ``real`` ((b)), all over the same sequences; bootstrap over sequences, the three resampled
    together. A T whose denominator is 0 (alpha = 1) is NaN."""
    arrs = [np.asarray(a, dtype=np.float64) for a in (base, arith, real)]
    if len({a.shape for a in arrs}) != 1 or arrs[0].ndim != 2 or arrs[0].shape[0] < 2:
        raise ValueError(f"base, arith and real must be [B, L] arrays of one shape with B >= 2, got "
                         f"{[a.shape for a in arrs]}")
    if not all(np.all(np.isfinite(a)) and np.all(a > 0) for a in arrs):
        raise ValueError("base, arith and real must be positive and finite (omega_k^2 per sequence)")
    check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    check_int("n_boot", n_boot, 100, 10**7)
    B, L = arrs[0].shape
    k = _later(L, m, tail)
    cols = k - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(_t_of(*(a.mean(0) for a in arrs), cols))
        idx = np.random.default_rng(seed).integers(0, B, size=(n_boot, B))
        boot = _t_of(*(a[idx].mean(1) for a in arrs), cols)
    q = (1 - level) / 2
    lo, hi = (np.quantile(boot, [q, 1 - q]) if np.all(np.isfinite(boot)) else (math.nan, math.nan))
    return Tracking(value, float(lo), float(hi), float(level), int(B), tuple(int(x) for x in k))


def k0_interval(S, n, D: int, m: int, alpha: float | None = None, tail: int = TAIL, level: float = 0.95,
                n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> tuple[float, float, float]:
    """(k0, lo, hi): :func:`predicted_k0` of the pooled Gram at ``alpha`` (None: :func:`measured_k0`
    of that Gram), with a percentile bootstrap over sequences of the per-sequence sums ``S``, ``n``."""
    S, n = np.asarray(S, float), np.asarray(n, float)
    f = (lambda G: measured_k0(G, m, tail)) if alpha is None else (lambda G: predicted_k0(G, m, alpha, tail))
    value = f(pooled_gram(S, n, D))
    idx = np.random.default_rng(seed).integers(0, len(n), size=(n_boot, len(n)))
    boot = np.array([f(pooled_gram(S[i], n[i], D)) for i in idx])
    q = (1 - level) / 2
    lo, hi = np.quantile(boot, [q, 1 - q])
    return float(value), float(lo), float(hi)


# ----------------------------------------------------------------------------- models and forwards

@dataclass
class _Subject:
    """What a forward of one model needs: the module called, its blocks, the inputs in
    batches, the mask of counted tokens, and how its per-sequence loss is read."""
    name: str
    key: str
    body: torch.nn.Module
    blocks: list
    batches: list          # of (inputs for body, mask [b, T], targets or None)
    loss: object           # callable(output of body, batch) -> np.ndarray [b]
    n_layer: int
    placement: str
    source: str
    inputs: dict


def _pretrained_subject(key: str, name: str) -> _Subject:
    from ..nn import pretrained
    from . import pretrained_analysis, pruning
    pre = pretrained.load(name)
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, pretrained_analysis.book_text(TEXT), N_SEQ, N_TOKENS)
    kind = pruning.cost_kind(pre)
    kw = {"use_cache": False} if kind == "next_token" else {}
    batches = [({**b, **kw}, mask[i * BATCH:(i + 1) * BATCH], None)
               for i, b in enumerate(hooks.batches(inputs, BATCH))]

    def loss(out, batch):
        inp, m, _ = batch
        return pruning._values(pre, kind, out.last_hidden_state, inp, m)
    return _Subject(pre.name, key, pre.body, list(pre.blocks), batches, loss, pre.n_layer, pre.placement,
                    pre.source, {"text": TEXT, "n_seq": N_SEQ, "n_tokens": N_TOKENS, "batch": BATCH})


def _toy_subject(key: str, spec: str, root: Path) -> _Subject:
    from ..nn.models import next_token_loss
    from ..training.data import eval_windows, load_corpus
    from ..training.store import load_run
    from ..training.weights import load_weights, weights_path
    run = root / (spec.removeprefix("toy:") + ".json")
    stored = load_run(run)
    w = load_weights(weights_path(run), stored)
    model = w.model("cpu")
    cfg = w.config
    corpus = load_corpus(cfg.corpus)
    x, y = eval_windows(corpus.val, cfg.measure_windows, cfg.block_size)
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    batches = [(x[i:i + BATCH], torch.ones(x[i:i + BATCH].shape, dtype=torch.long), y[i:i + BATCH])
               for i in range(0, x.shape[0], BATCH)]

    def loss(logits, batch):
        _, _, t = batch
        return np.array([float(next_token_loss(logits[i:i + 1], t[i:i + 1])) for i in range(logits.shape[0])])
    return _Subject(w.name, key, model, list(model.blocks), batches, loss, cfg.n_layer, cfg.arch,
                    str(weights_path(run).relative_to(root)),
                    {"windows": "measure windows of the validation split", "n_seq": int(x.shape[0]),
                     "block_size": cfg.block_size, "batch": BATCH})


def _subject(key: str, root: Path) -> _Subject:
    if key not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {key!r}")
    spec = MODELS[key]
    return _toy_subject(key, spec, root) if spec.startswith("toy:") else _pretrained_subject(key, spec)


def _forward(sub: _Subject, m: int | None, alpha: float):
    """One pass over the inputs, front scaled (``m`` None: unpatched): the stream [L+1, B, T, D]
    (float32), the mask [B, T] and the per-sequence loss [B]."""
    streams, masks, losses = [], [], []
    out: dict = {}
    hd = sub.body.register_forward_hook(lambda mod, a, o: out.__setitem__("o", o))
    try:
        for batch in sub.batches:
            inp, mask, _ = batch
            if m is None:
                x = hooks.capture(sub.body, inp, sub.blocks, sub.blocks[-1])
            else:
                with front_scaled(sub.blocks, m, alpha):
                    x = hooks.capture(sub.body, inp, sub.blocks, sub.blocks[-1])
            streams.append(x)
            masks.append(torch.as_tensor(mask))
            losses.append(sub.loss(out.pop("o"), batch))
    finally:
        hd.remove()
    return torch.cat(streams, 1), torch.cat(masks, 0), np.concatenate(losses)


def _omega_seq(stream, mask) -> np.ndarray:
    return layer_change(stream, mask).per_sequence["omega_sq"]


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _provenance(start: float) -> dict:
    return measurement_provenance(start, {
        "sampling": None, "bootstrap": BOOT_SEED,
        "note": "the inputs are fixed segments or windows (no draw); the bootstrap is drawn by the analysis"})


def predict_model(key: str, root=".") -> dict:
    """(a) for model ``key`` of :data:`MODELS`, from its unpatched forward only: the
    per-sequence omega_k^2 unpatched and under the arithmetic for each front size (m =
    :data:`FRONT_M` and :func:`second_front`'s) and alpha of :data:`ALPHAS`, the per-sequence
    Gram sums, the predicted k0(alpha) and the unpatched loss. Nothing here runs a patched forward."""
    start = time.time()
    root = Path(root)
    sub = _subject(key, root)
    with torch.no_grad():
        X, mask, loss = _forward(sub, None, 1.0)
    S, n, D = gram_per_sequence(X, mask)
    G = pooled_gram(S, n, D)
    fronts = sorted({FRONT_M, second_front(G)})
    base = _omega_seq(X, mask)
    arith, k0 = {}, {}
    for m in fronts:
        arith[str(m)], k0[str(m)] = {}, {}
        for a in ALPHAS:
            arith[str(m)][str(a)] = _omega_seq(arithmetic_stream(X, m, a), mask).tolist()
            k0[str(m)][str(a)] = predicted_k0(G, m, a)
    return {"model": sub.name, "key": key, "n_layer": sub.n_layer, "d_model": D, "placement": sub.placement,
            "source": sub.source, "inputs": sub.inputs, "fronts": fronts, "second_front": second_front(G),
            "base": {"omega_sq": base.tolist(), "loss": loss.tolist(), "gram_sums": S.tolist(), "tokens": n.tolist()},
            "arithmetic": arith, "predicted_k0": k0, "predicted_utc": _now(), "provenance": _provenance(start)}


def entry_sha256(entry: Mapping) -> str:
    """SHA-256 of an entry's canonical JSON (sorted keys): what a measurement records of the
    prediction it was made after."""
    return hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()


def _committed_prediction(root: Path, key: str) -> tuple[dict, str, str]:
    """The prediction of ``key`` as committed: the file must be committed unchanged and hold
    the entry; returns (entry, commit, commit time)."""
    path = root / PREDICTIONS
    rel = PREDICTIONS
    st = subprocess.run(["git", "status", "--porcelain", "--", rel], cwd=root, capture_output=True, text=True)
    if st.returncode != 0 or st.stdout.strip():
        raise RuntimeError(f"{rel} must be committed, unchanged, before any measurement (git status: "
                           f"{st.stdout.strip() or st.stderr.strip()})")
    log = subprocess.run(["git", "log", "-1", "--format=%H %cI", "--", rel], cwd=root, capture_output=True, text=True)
    if log.returncode != 0 or not log.stdout.strip():
        raise RuntimeError(f"{rel} has no commit")
    commit, when = log.stdout.split()
    entry = json.loads(path.read_text())["models"].get(key)
    if entry is None:
        raise RuntimeError(f"{rel} holds no prediction for {key!r}: predict it, commit, then measure")
    return entry, commit, when


def measure_model(key: str, root=".") -> dict:
    """(b) for model ``key``, after its committed prediction: for each front size and alpha the
    per-sequence omega_k^2 and Gram sums of the patched forward and its per-sequence loss; the
    unpatched forward re-run through the patch at alpha = 1 must reproduce the prediction's
    base curve exactly (else RuntimeError, nothing written)."""
    start = time.time()
    root = Path(root)
    pred, commit, when = _committed_prediction(root, key)
    sub = _subject(key, root)
    out = {}
    with torch.no_grad():
        for m in pred["fronts"]:
            out[str(m)] = {}
            for a in ALPHAS:
                X, mask, loss = _forward(sub, m, a)
                S, n, D = gram_per_sequence(X, mask)
                om = _omega_seq(X, mask)
                if a == 1.0 and not np.array_equal(om, np.asarray(pred["base"]["omega_sq"])):
                    raise RuntimeError(f"{key}: alpha = 1 does not reproduce the predicted base curve "
                                       f"(largest difference {np.abs(om - np.asarray(pred['base']['omega_sq'])).max():.3g})")
                out[str(m)][str(a)] = {"omega_sq": om.tolist(), "loss": loss.tolist(), "gram_sums": S.tolist(),
                                       "tokens": n.tolist()}
    return {"model": sub.name, "key": key, "n_layer": sub.n_layer, "d_model": D, "real": out,
            "prediction": {"commit": commit, "committed": when, "sha256": entry_sha256(pred)},
            "measured_utc": _now(), "provenance": _provenance(start)}


def write_prediction(key: str, root=".") -> dict:
    """Add model ``key``'s prediction to :data:`PREDICTIONS` (atomically; an entry already there
    is never replaced, since a measurement may have been made after it)."""
    root = Path(root)
    path = root / PREDICTIONS
    doc = json.loads(path.read_text()) if path.exists() else {
        "what": "the front intervention's arithmetic (a) and predicted k0(alpha), written before any "
                "patched forward; resdecay_lib.analysis.intervention",
        "declared": DECLARED, "models": {}}
    if key in doc["models"]:
        raise ValueError(f"{PREDICTIONS} already holds {key!r}; a prediction is never rewritten")
    doc["models"][key] = predict_model(key, root)
    write_json_atomic(doc, path)
    return doc["models"][key]


def write_record(key: str, root=".") -> Path:
    """Measure (b) for ``key`` and store it as ``results/intervention/<key>.json`` (atomically)."""
    root = Path(root)
    path = root / RECORDS / f"{key}.json"
    if path.exists():
        raise ValueError(f"{path} exists; a measurement is never rewritten")
    write_json_atomic(measure_model(key, root), path)
    return path


def departure(arith, real, level: float = 0.95, n_boot: int = N_BOOT, seed: int = BOOT_SEED):
    """How far the real forward departs from the arithmetic, block by block:
    d_k = log(W^b_k / W^a_k), W the mean over sequences of the per-sequence omega_k^2 (``arith``
    and ``real``: [B, L] over the same sequences), with a percentile bootstrap interval over
    sequences at ``level`` (the two resampled together). d_k > 0: block k's change is larger
    than the arithmetic of the sum says; < 0: smaller; 0: as the arithmetic. Returns
    ``(d, lo, hi)``, each [L]."""
    a, b = (np.asarray(x, dtype=np.float64) for x in (arith, real))
    if a.shape != b.shape or a.ndim != 2 or a.shape[0] < 2:
        raise ValueError(f"arith and real must be [B, L] arrays of one shape with B >= 2, got {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all(a > 0) and np.all(b > 0)):
        raise ValueError("arith and real must be positive and finite (omega_k^2 per sequence)")
    check_real("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    check_int("n_boot", n_boot, 100, 10**7)
    d = np.log(b.mean(0) / a.mean(0))
    idx = np.random.default_rng(seed).integers(0, a.shape[0], size=(n_boot, a.shape[0]))
    boot = np.log(b[idx].mean(1) / a[idx].mean(1))
    q = (1 - level) / 2
    lo, hi = np.quantile(boot, [q, 1 - q], axis=0)
    return d, lo, hi
