"""The cost of depth in a pretrained model: skip one block, remove several, rank them.

**Skipping** block k (k = 1..L) removes its residual update: the stream leaves it as it
entered, x_{k+1} := x_k, and blocks k+1..L run on that stream. **Removing** a set S of blocks
does the same for every k in S. The cost is measured on the model's own output:

* ``"next_token"`` (causal language models): the mean next-token loss (nats/token) of each
  sequence over its text tokens, minus the intact model's;
* ``"embedding"`` (an encoder without a language-model head, all-MiniLM): 1 - cos between
  the mean-pooled last hidden state with the blocks removed and the intact one's; the model
  exists to produce that vector.

Blocks before the first removed one see the intact stream, so they are not run again: one
intact forward per batch records every block's output, and the removed-block forwards replay
those outputs (``block.forward`` is replaced, for the length of one call, by a function that
returns the recorded output). Skipping block k therefore costs the blocks after k and the
head: about half a forward per block on average.

Rankings of the blocks, least important first (each a published redundancy metric, read
from the intact stream, :class:`resdecay_lib.nn.probe.LayerChange`):

==============  =============================================  =====================================
name            importance of block k                          source
==============  =============================================  =====================================
``change``      omega_k^2 = |LN0(x_{k+1}) - LN0(x_k)|^2 / D     this book (Theorem 3.3's quantity)
``influence``   1 - cos(x_k, x_{k+1})                          ShortGPT, Men et al. 2024 (2403.03853)
``angular``     arccos(cos(x_l, x_{l+n})) / pi, n blocks        Gromov et al. 2024 (2403.17887)
``relative``    |x_{k+1} - x_k| / |x_k|                        Csordas et al. 2025 (2505.13898)
``deepest``     -k (the deepest block goes first)              the baseline every paper beats
==============  =============================================  =====================================

Gromov et al. remove *contiguous* runs: for n blocks, the run l+1..l+n whose input x_{l+1}
and output x_{l+n+1} are closest in angular distance (:func:`gromov_sets`); the other
rankings remove the n least important blocks (:func:`nested_sets`).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import torch

from ..nn.hooks import batches, check_inputs, patched_blocks
from ..nn.progress import progress_bar
from ..stats import inference as stats
from ..stats.exponents import half_ratio, halves
from ..checks import ArgumentTypeError, Array, Flag, Instance, Int, OneOf, Real, Text, accepts, check_fields, check_int, check_real, declare, show

__all__ = ["COSTS", "RANKINGS", "NOISE_Z", "RemovalCost", "cost_kind", "removal_costs",
           "skip_costs", "ranking_scores", "nested_sets", "gromov_sets", "RankCorr",
           "predicts_cost", "skip_trend", "noise_band", "leaves_noise_band", "reader_gains"]

#: what a cost measures, by kind
COSTS = {"next_token": "next-token loss increase (nats/token)",
         "embedding": "1 - cos of the mean-pooled output"}
#: the rankings, in the order the book shows them
RANKINGS = ("change", "influence", "angular", "relative", "deepest")
#: a pruning curve leaves its noise band when its mean cost exceeds the intact model's by
#: more than NOISE_Z standard errors of the intact loss over sequences (the sampling
#: uncertainty of the loss value itself, as Gromov et al.'s accuracy has its own)
NOISE_Z = 2.0

#: the domains several functions here share, declared once
_PRE = Instance("resdecay_lib.nn.pretrained.Pretrained", "a Pretrained (pretrained.load(...))")
_COST = Instance("resdecay_lib.analysis.pruning.RemovalCost", "a RemovalCost (skip_costs' or removal_costs')")
_BATCH = Int(1, 100_000)
_N_BOOT = Int(100, 1_000_000)
_LEVEL = Real(0, 1, lo_open=True, hi_open=True)


@declare
@dataclass(frozen=True)
class RemovalCost:
    """Per-sequence cost of removing each set of blocks.

    ``sets``: tuple of tuples of 1-based block indices; ``base`` [B]: the intact model's
    per-sequence value (next-token loss; 0 for ``"embedding"``); ``value`` [n_sets, B]: the
    value with each set removed; ``increase`` = value - base.
    """
    kind: str
    sets: tuple
    base: np.ndarray
    value: np.ndarray

    DOMAINS = {"kind": OneOf(COSTS), "base": Array(1, 1), "value": Array(2, 1)}

    def __post_init__(self):
        check_fields(self, self.DOMAINS)
        if not isinstance(self.sets, (tuple, list)) or not all(
                isinstance(s, (tuple, list)) and s and all(isinstance(k, (int, np.integer)) and not isinstance(k, bool)
                                                           and k >= 1 for k in s) for s in self.sets):
            raise ValueError(f"sets must be a tuple of non-empty tuples of block indices >= 1, got {show(self.sets)}")
        shape = (len(self.sets), np.shape(self.base)[0])
        if np.shape(self.value) != shape:
            raise ValueError(f"value must have the shape [n_sets, B] = {shape}, got {np.shape(self.value)}")

    @property
    def increase(self) -> np.ndarray:
        return self.value - self.base[None]

    @property
    def mean(self) -> np.ndarray:
        return self.increase.mean(1)

    @property
    def se(self) -> np.ndarray:
        n = self.base.size
        return self.increase.std(1, ddof=1) / math.sqrt(n) if n > 1 else np.full(len(self.sets), np.nan)


@accepts(pre=_PRE)
def cost_kind(pre) -> str:
    """``"next_token"`` for a model with a language-model head, else ``"embedding"``."""
    return "next_token" if pre.model.get_output_embeddings() is not None else "embedding"


def _hidden(pre, batch):
    kw = {"use_cache": False} if cost_kind(pre) == "next_token" else {}
    return pre.body(**batch, **kw).last_hidden_state


def _values(pre, kind, h, batch, mask, ref=None):
    """Per-sequence value of a last hidden state h [b, T, D] (after the model's final norm)."""
    ids = batch["input_ids"]
    if kind == "embedding":
        am = batch["attention_mask"].to(h.dtype)[..., None]
        pooled = (h * am).sum(1) / am.sum(1)
        if ref is None:
            return pooled
        return 1.0 - torch.nn.functional.cosine_similarity(pooled.double(), ref.double(), dim=-1).numpy()
    head = pre.model.get_output_embeddings()
    cap = getattr(pre.model.config, "final_logit_softcapping", None)
    out = np.empty(h.shape[0])
    w = mask[:, 1:].to(torch.float64)
    for i in range(h.shape[0]):                 # one sequence of logits at a time: [T, V]
        logits = head(h[i, :-1])
        if cap:
            logits = torch.tanh(logits / cap) * cap
        nll = torch.nn.functional.cross_entropy(logits.double(), ids[i, 1:], reduction="none")
        out[i] = float((nll * w[i]).sum() / w[i].sum())
    return out


def _record(pre, batch):
    """One intact forward: every block's raw output, and the last hidden state."""
    outputs = {}
    handles = [b.register_forward_hook(lambda m, a, o, j=j: outputs.__setitem__(j, o))
               for j, b in enumerate(pre.blocks)]
    try:
        h = _hidden(pre, batch)
    finally:
        for hd in handles:
            hd.remove()
    if len(outputs) != len(pre.blocks):
        raise RuntimeError(f"only {len(outputs)} of the {len(pre.blocks)} blocks ran in the forward")
    return outputs, h


def _check_sets(sets, L):
    if not isinstance(sets, (list, tuple)) or not sets:
        raise ValueError("sets must be a non-empty list of sets of block indices")
    out = []
    for i, s in enumerate(sets):
        if isinstance(s, (str, bytes)) or not hasattr(s, "__iter__") or not all(
                isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in s):
            raise ArgumentTypeError(f"sets[{i}] must be a set of integer block indices from 1 to L = {L}, got {show(s)}")
        s = tuple(sorted(int(k) for k in s))
        if not s or s[0] < 1 or s[-1] > L or len(set(s)) != len(s):
            raise ValueError(f"sets[{i}] must hold distinct block indices from 1 to L = {L}, got {s}")
        if len(s) == L:
            raise ValueError(f"sets[{i}] removes every block; keep at least one")
        out.append(s)
    return tuple(out)


@accepts(pre=_PRE, batch_size=_BATCH, progress=Flag())
def removal_costs(pre, inputs: dict, mask, sets, batch_size: int = 8,
                  progress: bool = False) -> RemovalCost:
    """Per-sequence cost of removing each set of blocks (1-based indices) from ``pre``.

    ``inputs``, ``mask``: from :func:`resdecay_lib.nn.pretrained.sample_inputs` (the mask picks
    the text tokens whose loss is counted as targets). Blocks before the first removed one
    replay their recorded output (see the module docstring).
    """
    sets = _check_sets(sets, pre.n_layer)
    check_inputs(inputs)
    ids = inputs["input_ids"]
    mask = torch.as_tensor(mask)
    if mask.shape != ids.shape:
        raise ValueError(f"mask must have the shape of input_ids {tuple(ids.shape)}, got {tuple(mask.shape)}")
    kind = cost_kind(pre)
    base, value = [], []
    n_batches = -(-ids.shape[0] // batch_size)
    with torch.no_grad():
        for i, batch in enumerate(progress_bar(batches(inputs, batch_size), n_batches,
                                            f"{pre.name}: {len(sets)} removals", progress)):
            m = mask[i * batch_size:(i + 1) * batch_size]
            outputs, h = _record(pre, batch)
            formats = {j: (None if isinstance(o, torch.Tensor) else tuple(o[1:])) for j, o in outputs.items()}
            ref = _values(pre, kind, h, batch, m)
            base.append(np.zeros(h.shape[0]) if kind == "embedding" else ref)
            rows = []
            if progress:
                print(f"{pre.name}: batch {i + 1}/{n_batches}, {len(sets)} removals", file=sys.stderr, flush=True)
            for s in sets:
                first = s[0] - 1
                with patched_blocks(pre.blocks, removed={k - 1 for k in s},
                                    replay={j: outputs[j] for j in range(first)}, formats=formats):
                    hs = _hidden(pre, batch)
                rows.append(_values(pre, kind, hs, batch, m, ref if kind == "embedding" else None))
            value.append(np.stack(rows))
    return RemovalCost(kind, sets, np.concatenate(base), np.concatenate(value, axis=1))


@accepts(pre=_PRE, batch_size=_BATCH, progress=Flag())
def skip_costs(pre, inputs: dict, mask, batch_size: int = 8, progress: bool = False) -> RemovalCost:
    """:func:`removal_costs` of each single block: sets (1,), (2,), ..., (L,)."""
    return removal_costs(pre, inputs, mask, [(k,) for k in range(1, pre.n_layer + 1)],
                         batch_size, progress)


# ----------------------------------------------------------------------------- rankings

@accepts(change=Instance(("resdecay_lib.nn.probe.LayerChange", dict),
                         "a LayerChange (probe.layer_change's) or its per_sequence dict"))
def ranking_scores(change) -> dict:
    """Per-sequence importance [B, L] of each block under every ranking but Gromov's runs.

    ``change``: a :class:`resdecay_lib.nn.probe.LayerChange` of the intact stream, or its
    ``per_sequence`` dict (as a stored record holds it). ``angular`` here is the
    single-block (n = 1) distance; ``deepest`` is -k for every sequence.
    """
    ps = change if isinstance(change, dict) else change.per_sequence
    need = ("omega_sq", "influence", "angular", "rel_update")
    missing = [k for k in need if k not in ps]
    if missing:
        raise ValueError(f"change must hold the per-sequence metrics {list(need)}: it lacks {missing}")
    shapes = {np.shape(ps[k]) for k in need}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"change's per-sequence metrics must be [B, L] arrays of one shape, got {sorted(shapes)}")
    B, L = np.shape(ps["omega_sq"])
    return {"change": ps["omega_sq"], "influence": ps["influence"], "angular": ps["angular"],
            "relative": ps["rel_update"],
            "deepest": np.broadcast_to(-np.arange(1, L + 1, dtype=float), (B, L)).copy()}


@accepts(importance=Array(1, 2, what="a 1-D array of at least 2 finite scores (one per block)"),
         n_max=Int(1))
def nested_sets(importance, n_max: int) -> list[tuple]:
    """Remove the n least important blocks, n = 1..n_max; ``importance`` [L] (mean scores).
    Ties go deepest first."""
    imp = np.asarray(importance, float)
    L = imp.size
    check_int("n_max", n_max, 1, L - 1)
    order = sorted(range(L), key=lambda j: (imp[j], -j))
    return [tuple(sorted(j + 1 for j in order[:n])) for n in range(1, n_max + 1)]


@accepts(distances=Array(2, 3, what="a finite square [L+1, L+1] matrix with L >= 2"), n_max=Int(1))
def gromov_sets(distances, n_max: int) -> list[tuple]:
    """Gromov et al.'s runs: for n = 1..n_max the blocks l+1..l+n (1-based) with
    l = argmin_l d(x_{l+1}, x_{l+n+1}); ``distances`` [L+1, L+1] from
    :func:`resdecay_lib.nn.probe.angular_distances` (row i is the state entering block i+1)."""
    d = np.asarray(distances, float)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] < 3:
        raise ValueError(f"distances must be a square [L+1, L+1] matrix with L >= 2, got shape {d.shape}")
    L = d.shape[0] - 1
    check_int("n_max", n_max, 1, L - 1)
    out = []
    for n in range(1, n_max + 1):
        l = int(np.argmin([d[l, l + n] for l in range(L - n + 1)]))
        out.append(tuple(range(l + 1, l + n + 1)))
    return out


@dataclass(frozen=True)
class RankCorr:
    """Spearman correlation of a block score with the skip cost over blocks, with a
    percentile bootstrap interval over sequences (``n_boot`` replicates at ``level``)."""
    rho: float
    lo: float
    hi: float
    level: float
    n_boot: int

    def __format__(self, spec):
        spec = spec or ".2f"
        return f"{self.rho:{spec}} [{self.lo:{spec}}, {self.hi:{spec}}]"


@accepts(skip=_COST, n_boot=_N_BOOT, level=_LEVEL, seed=Int(0), reference=Text())
def predicts_cost(scores: dict, skip: RemovalCost, n_boot: int = 2000, level: float = 0.95,
                  seed: int = 0, reference: str = "change") -> tuple[dict, dict]:
    """How well each score ranks the blocks by their skip cost.

    Returns ``(corr, diff)``: ``corr[name]`` the :class:`RankCorr` of the mean score with the
    mean skip cost over blocks k = 1..L; ``diff[name]`` the paired bootstrap interval of
    corr[reference] - corr[name], how much the reference beats ``name`` (the same resampled
    sequences for both). Sequences are
    resampled with replacement, jointly for scores and costs (they come from the same text).
    """
    if not isinstance(scores, dict) or not scores:
        raise ArgumentTypeError(f"scores must be a non-empty dict {{name: [B, L] scores}}, got {type(scores).__name__}")
    cost = skip.increase.T                                   # [B, L]
    if any(np.shape(v) != cost.shape for v in scores.values()):
        raise ValueError(f"every score must have the skip cost's shape [B, L] = {cost.shape}")
    if not all(np.all(np.isfinite(np.asarray(v, float))) for v in scores.values()):
        raise ValueError("scores must be finite (a NaN has no rank)")
    if reference not in scores:
        raise ValueError(f"reference must be one of {sorted(scores)}, got {reference!r}")
    rng = np.random.default_rng(seed)
    B = cost.shape[0]
    idx = rng.integers(0, B, size=(n_boot, B))
    boot = {name: np.empty(n_boot) for name in scores}
    for b in range(n_boot):
        c = cost[idx[b]].mean(0)
        for name, s in scores.items():
            boot[name][b] = stats.spearman(np.asarray(s)[idx[b]].mean(0), c)
    a = (1 - level) / 2
    corr, diff = {}, {}
    for name, s in scores.items():
        lo, hi = np.quantile(boot[name], [a, 1 - a])
        corr[name] = RankCorr(stats.spearman(np.asarray(s).mean(0), cost.mean(0)), float(lo), float(hi),
                              level, n_boot)
        d = boot[reference] - boot[name]
        dlo, dhi = np.quantile(d, [a, 1 - a])
        diff[name] = RankCorr(stats.spearman(np.asarray(scores[reference]).mean(0), cost.mean(0))
                              - corr[name].rho, float(dlo), float(dhi), level, n_boot)
    return corr, diff


@accepts(skip=_COST, k_min=Int(1), n_boot=_N_BOOT, level=_LEVEL, seed=Int(0))
def skip_trend(skip: RemovalCost, k_min: int = 2, n_boot: int = 2000, level: float = 0.95,
               seed: int = 0) -> RankCorr:
    """Rank correlation of the skip cost with the block index over k = k_min..L (block 1,
    which acts on the bare embedding, left out by default), with a percentile bootstrap
    interval over sequences: below 0 when later blocks cost less to skip."""
    L = len(skip.sets)
    check_int("k_min", k_min, 1, L - 2)
    sub = RemovalCost(skip.kind, skip.sets[k_min - 1:], skip.base, skip.value[k_min - 1:])
    B = skip.base.size
    k = np.broadcast_to(np.arange(k_min, L + 1, dtype=float), (B, L - k_min + 1))
    corr, _ = predicts_cost({"k": k}, sub, n_boot, level, seed, reference="k")
    return corr["k"]


@accepts(curve=_COST, z=Real(0))
def noise_band(curve: RemovalCost, z: float = NOISE_Z) -> float:
    """The cost a pruning curve must exceed to leave its noise band: z standard errors of the
    intact per-sequence loss; for ``"embedding"`` costs (intact value 0), z standard errors
    of the cost at the curve's first removal (a standard error needs two sequences)."""
    if curve.base.size < 2:
        raise ValueError(f"curve must hold at least 2 sequences (a standard error needs two), got {curve.base.size}")
    if curve.kind == "next_token":
        return z * curve.base.std(ddof=1) / math.sqrt(curve.base.size)
    return z * curve.se[0]


@accepts(curve=_COST, z=Real(0))
def leaves_noise_band(curve: RemovalCost, z: float = NOISE_Z):
    """The first number of removed blocks at which the mean cost exceeds :func:`noise_band`
    (``curve.sets`` must be nested or sized 1, 2, ...); None if it never does."""
    band = noise_band(curve, z)
    for s, m in zip(curve.sets, curve.mean):
        if m > band:
            return len(s)
    return None


@accepts(pre=_PRE)
def reader_gains(pre) -> np.ndarray:
    """[L, D]: the gain of the RMSNorm that reads x_{k+1}, k = 1..L (block k+1's input norm,
    the final norm for k = L), read by applying each norm to a vector of ones (an RMSNorm
    maps it to its gain, up to sqrt(1 + eps)). Raises ``ValueError`` for a model whose
    blocks do not start with such a norm (Post-LN BERT reads the stream itself)."""
    readers = []
    for b in pre.blocks[1:]:
        norm = getattr(b, "input_layernorm", None)
        if norm is None:
            raise ValueError(f"{pre.name}: its blocks have no input_layernorm (a {type(b).__name__}); "
                             f"the blocks read the stream itself")
        readers.append(norm)
    final = getattr(pre.body, "norm", None)
    if final is None:
        raise ValueError(f"{pre.name}: no final norm (body.norm) reads the last block's output")
    readers.append(final)
    d = pre.d_model
    with torch.no_grad():
        ones = torch.ones(1, d)
        gains = [n(ones)[0] for n in readers]
    return torch.stack(gains).double().numpy()


def skip_half_ratio(skip: RemovalCost, front: int | None = None, n_boot: int = 2000, level: float = 0.95,
                    seed: int = 0, last: bool = True) -> RankCorr:
    """The later half's mean skip cost over the earlier half's past the front
    (:func:`resdecay_lib.stats.exponents.half_ratio`, the last block included in the later half;
    ``last=False``: apart), with
    a percentile bootstrap interval over sequences (resampled with replacement, all blocks
    together). Below 1 when later blocks cost less to skip. Returned as a
    :class:`RankCorr` (``rho`` holds the ratio)."""
    if not isinstance(skip, RemovalCost):
        raise ArgumentTypeError(f"skip must be a RemovalCost (skip_costs'), got {type(skip).__name__}")
    check_int("n_boot", n_boot, 100, 1_000_000)
    check_real("level", level, 0, 1, lo_open=True, hi_open=True)
    L = len(skip.sets)
    halves(L, front, last)                 # checks L against the front
    cost = skip.increase.T                 # [B, L]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, cost.shape[0], size=(n_boot, cost.shape[0]))
    boot = np.array([half_ratio(cost[i].mean(0), front, last) for i in idx])
    a = (1 - level) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return RankCorr(half_ratio(cost.mean(0), front, last), float(lo), float(hi), float(level), n_boot)
