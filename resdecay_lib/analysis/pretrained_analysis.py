"""Chapter 9's measurement of a pretrained model on a text, stored, and the analysis of it.

:func:`measure_model` runs one packaged model on one of the book's texts and returns a
JSON-ready record: the per-sequence layer metrics (:func:`resdecay_lib.nn.probe.layer_change`),
the change seen through the model's own RMSNorm with and without its gains
(:func:`resdecay_lib.nn.probe.rms_change`), the Gram matrix of the summands (for rho), Gromov's
angular distances, the skip cost of every block and, when asked, the pruning curve of every
ranking (:mod:`resdecay_lib.analysis.depthcost`). ``python -m resdecay_lib depth-cost MODEL`` (:mod:`resdecay_lib.cli.depth_cost`) writes
it under ``results/pretrained/`` atomically, with its provenance, and skips a finished file.

The analysis functions read such a record (or a live :class:`~resdecay_lib.nn.probe.LayerChange`):
:func:`exponent_report` (the power-law exponent of the change with its fit-range
sensitivity, its curvature test over sequences and the theorem's exponent over the same range
in the convention rho picks) and :func:`norm_growth` (the stream's growth factor per block).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import depthcost
from ..stats import fit
from ..nn import pretrained
from ..nn import probe
from . import training_analysis as results
from ..stats import inference as stats
from ..checks import Name, PathArg, accepts, check_int
from ..stats.exponents import FRONT_BLOCKS, TAIL_BLOCKS
from ..stats.fit import loglog_slope

__all__ = ["TEXTS", "GPT2_XL_GROWTH", "book_text", "measure_model", "store_path", "load_record", "load_records",
           "exponent_report", "ExponentReport", "norm_growth", "K_MINS"]

#: the two texts of Chapter 9, by short name
TEXTS = {"shakespeare": "Shakespeare (validation)", "pydoc": "pydoc topics"}
#: fit starts of the sensitivity (the issue's k_min = 2, 3, 4)
K_MINS = (2, 3, 4)
#: the literature's figure beside :func:`norm_growth`: the residual stream's norm grows about
#: 1.045 times per layer in GPT-2 XL (Heimersheim & Turner 2023, averaged over prompts)
GPT2_XL_GROWTH = 1.045


def book_text(name: str) -> str:
    """The text ``name`` of :data:`TEXTS`: the validation split of the training corpus, or the
    standard library's pydoc topics."""
    from ..training import data
    if name == "shakespeare":
        corpus = data.shakespeare_text()
        return corpus[int(round(len(corpus) * (1 - data.VAL_FRACTION))):]
    if name == "pydoc":
        return data.pydoc_text()
    raise ValueError(f"text must be one of {sorted(TEXTS)}, got {name!r}")


def _per_seq(ch) -> dict:
    return {m: np.asarray(ch.per_sequence[m]).tolist() for m in probe.LayerChange.METRICS}


def measure_model(pre, text: str, n_seq: int = 16, n_tokens: int = 128, prune: bool = False,
                  batch_size: int = 8, progress: bool = False) -> dict:
    """Everything Chapter 9 reads about one model on one text (see the module docstring).

    Pruning curves (``prune``) remove n = 1..floor(L/2) blocks by each ranking, read from
    this text's intact stream.
    """
    check_int("n_seq", n_seq, 2, 100_000)
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, text, n_seq, n_tokens)
    stream, ch = probe.measure(pre.body, inputs, mask, blocks=pre.blocks, batch_size=batch_size,
                               progress=progress, desc=pre.name)
    keep = mask.bool()
    tokens = stream[:, keep]                                    # [L+1, N, D]: text tokens only
    rec = {"model": pre.name, "n_layer": pre.n_layer, "d_model": pre.d_model,
           "placement": pre.placement, "note": pre.note, "source": pre.source,
           "n_seq": int(ch.n_sequences), "n_tokens": int(n_tokens),
           "change": _per_seq(ch), "gram": probe.gram(tokens).tolist(),
           "angular_distances": probe.angular_distances(stream, mask).tolist()}
    try:
        gains = depthcost.reader_gains(pre)
    except ValueError:
        gains = None                      # Post-LN: the blocks read the stream itself
    if gains is not None:
        eps = float(getattr(pre.model.config, "rms_norm_eps", 1e-6))
        rec["rms_change"] = probe.rms_change(stream, None, mask, eps).per_sequence.tolist()
        rec["rms_change_gain"] = probe.rms_change(stream, gains, mask, eps).per_sequence.tolist()
    del stream, tokens
    kind = depthcost.cost_kind(pre)
    skip = depthcost.skip_costs(pre, inputs, mask, batch_size, progress)
    rec["cost_kind"] = kind
    rec["skip"] = {"base": skip.base.tolist(), "value": skip.value.tolist()}
    if prune:
        n_max = pre.n_layer // 2
        scores = depthcost.ranking_scores(ch)
        sets = {name: depthcost.nested_sets(s.mean(0), n_max) for name, s in scores.items()
                if name != "angular"}
        sets["angular"] = depthcost.gromov_sets(np.asarray(rec["angular_distances"]), n_max)
        rec["prune"] = {}
        for name in depthcost.RANKINGS:
            c = depthcost.removal_costs(pre, inputs, mask, sets[name], batch_size, progress)
            rec["prune"][name] = {"sets": [list(s) for s in c.sets], "value": c.value.tolist()}
    return rec


# ----------------------------------------------------------------------------- the store

#: a model's or a text's name in the store: a plain file name without "__" (which separates
#: the two in ``<model>__<text>.json``), so a record stays inside its root and reads back
_STORE_NAME = Name(forbid=("__",))


@accepts(root=PathArg(), model=_STORE_NAME, text=_STORE_NAME)
def store_path(root, model: str, text: str) -> Path:
    """``<root>/<model>__<text>.json``, the stored record of ``model`` on ``text``."""
    return Path(root) / f"{model}__{text}.json"


def load_record(path) -> dict:
    """One stored record, with its arrays as numpy arrays."""
    rec = json.loads(Path(path).read_text())
    for key in ("gram", "angular_distances", "rms_change", "rms_change_gain"):
        if key in rec:
            rec[key] = np.asarray(rec[key], float)
    rec["change"] = {m: np.asarray(v, float) for m, v in rec["change"].items()}
    rec["skip"] = depthcost.RemovalCost(rec["cost_kind"], tuple((k,) for k in range(1, rec["n_layer"] + 1)),
                                        np.asarray(rec["skip"]["base"]), np.asarray(rec["skip"]["value"]))
    if "prune" in rec:
        rec["prune"] = {name: depthcost.RemovalCost(rec["cost_kind"], tuple(tuple(s) for s in p["sets"]),
                                                    rec["skip"].base, np.asarray(p["value"]))
                        for name, p in rec["prune"].items()}
    return rec


def load_records(root) -> dict:
    """{(model, text): record} of every finished record under ``root``."""
    out = {}
    for path in sorted(Path(root).glob("*__*.json")):
        model, text = path.stem.split("__")
        out[model, text] = load_record(path)
    return out


# ----------------------------------------------------------------------------- analysis

@dataclass(frozen=True)
class ExponentReport:
    """The exponent of a per-sequence curve [B, L] over k = k_min..L for each k_min of
    :data:`K_MINS` (``fits``, percentile bootstrap over sequences at ``level``), its
    curvature test over sequences (:func:`resdecay_lib.analysis.training_analysis.curvature` with sequences as
    the replicates, fit range from ``K_MINS[0]``), rho and the convention it picks, and the
    theorem's exponent over each fit range in that convention (``reference``)."""
    fits: dict
    curvature: dict
    rho: float
    embedding_counted: bool
    reference: dict

    @property
    def main(self):
        return self.fits[K_MINS[0]]

    @property
    def range_shift(self) -> float:
        """Largest |exponent(k_min) - exponent(2)| over k_min = 3, 4."""
        return max(abs(f.exponent - self.main.exponent) for f in self.fits.values())


def exponent_report(per_sequence, gram, level: float = 0.95, n_boot: int = 2000,
                    seed: int = 0) -> ExponentReport:
    """:class:`ExponentReport` of ``per_sequence`` [B, L] with the summands' ``gram`` [L+1, L+1]."""
    y = np.asarray(per_sequence, float)
    if y.ndim != 2 or y.shape[1] < max(K_MINS) + 2:
        raise ValueError(f"per_sequence must be [B, L] with L >= {max(K_MINS) + 2}, got shape {y.shape}")
    L = y.shape[1]
    k = np.arange(1, L + 1)
    fits = {m: fit.power_law(k, y, k_min=m, n_boot=n_boot, level=level, seed=seed) for m in K_MINS}
    r = results.rho(gram)
    emb = results.convention(r)
    ref = {m: results.reference_exponent(m, L, emb) for m in K_MINS}
    return ExponentReport(fits, results.curvature(y, K_MINS[0], level), r, emb, ref)


def norm_growth(norm_per_sequence, k_min: int = 2, level: float = 0.95) -> stats.TInterval:
    """Growth factor of the stream norm per block: exp of the per-sequence least-squares
    slope of log |x_k| on k over k = k_min..L, a t interval over sequences (exponentiated).
    Heimersheim & Turner (2023) report about :data:`GPT2_XL_GROWTH` per layer for GPT-2 XL."""
    y = np.log(np.asarray(norm_per_sequence, float))
    if y.ndim != 2 or y.shape[1] - k_min < 1:
        raise ValueError(f"norm_per_sequence must be [B, L] with at least two blocks from k_min, got {y.shape}")
    k = np.arange(1, y.shape[1] + 1)[k_min - 1:]
    kc = k - k.mean()
    slopes = (y[:, k_min - 1:] - y[:, k_min - 1:].mean(1, keepdims=True)) @ kc / (kc @ kc)
    iv = stats.t_interval(slopes, level)
    return stats.TInterval(float(np.exp(iv.mean)), float(np.exp(iv.lo)), float(np.exp(iv.hi)),
                           iv.se, iv.t, iv.n, iv.level)


def output_variance_exponent(rel_update, norm, front: int | None = None, tail: int | None = None,
                             n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> tuple[float, float, float]:
    """Slope of log s_k^2 on log k, s_k^2 the mean over sequences of |f_k|^2 = (r_k |x_k|)^2 (block
    k's output), over k = front + 1..L - tail (:func:`resdecay_lib.analysis.training_analysis.block_variance_exponent`'s
    range), with a percentile bootstrap interval over sequences: (slope, lo, hi). ``rel_update``
    and ``norm``: per-sequence r_k and |x_k|, [B, L]."""
    front = FRONT_BLOCKS if front is None else front
    tail = TAIL_BLOCKS if tail is None else tail
    r = np.asarray(rel_update, float)
    x = np.asarray(norm, float)
    if r.ndim != 2 or r.shape != x.shape:
        raise ValueError(f"rel_update and norm must be [B, L] of one shape, got {r.shape} and {x.shape}")
    if not (np.all(np.isfinite(r)) and np.all(np.isfinite(x)) and np.all(r > 0) and np.all(x > 0)):
        raise ValueError("rel_update and norm must be positive and finite")
    B, L = r.shape
    if L - front - tail < 3:
        raise ValueError(f"the fit needs 3 blocks past the front and before the tail: L = {L}")
    f2 = (r * x) ** 2
    k = np.arange(front + 1, L - tail + 1)
    sel = slice(front, L - tail)
    slope = lambda rows: loglog_slope(k, f2[rows][:, sel].mean(0))[0]   # noqa: E731
    rng = np.random.default_rng(seed)
    boot = np.array([slope(rng.integers(0, B, size=B)) for _ in range(n_boot)])
    a = (1 - level) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return float(slope(np.arange(B))), float(lo), float(hi)
