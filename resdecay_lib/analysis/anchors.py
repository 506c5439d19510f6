r"""The book's four published anchors: what each paper measured, what it published, what
Theorem 3.3 predicts for the same metric, and what the book's stored records give.

Each anchor is an :class:`Anchor` (its paper, metric, definition and the figures it publishes,
each a :class:`Published` with its source). The published figures are constants read from the
papers and their code, never from the web at run time; where a figure could not be read from
anything reachable when this module was written, the entry says so (``value=None`` and a
``note``), and no number stands in for it.

The metrics, on the book's records (:func:`resdecay_lib.analysis.pretrained_analysis.load_records`:
per-sequence token means [n_seq, L] of ``rel_update`` r_k = |f_k|/|x_k|, ``alignment``
c_k = cos(x_k, f_k) and ``angular`` arccos(cos(x_k, x_{k+1}))/pi, f_k = x_{k+1} - x_k):

* **Csordas, Manning and Potts 2025** (arXiv:2505.13898): the relative contribution
  |f_k|/|x_k| of the second half of the layers is much smaller than of the first, with a phase
  transition at mid-depth. Statistic: :func:`contribution_half_ratio`, the later half's mean r_k
  over the earlier half's (:func:`resdecay_lib.stats.exponents.halves` with ``front=1``: block 1
  reads the bare embedding, where the seed convention's r_1 is infinite).
* **Liu, Kangaslahti, Liu and Gore 2026** (arXiv:2602.05970): the rotation
  :math:`\theta_l = \arccos\cos(h_l, h_{l+1})` (radians; pi times Gromov's angular distance, the
  book's ``angular``) is uniform and small on Qwen2.5-0.5B, Pythia-410m and OPT-125m.
  Statistics: :func:`rotation_half_ratio` (uniform: 1) and :func:`mean_rotation` (radians).
* **Hu, Zhou and Zhang 2025** (arXiv:2512.14064): the effective-depth ratio, stable across
  Qwen2.5 1.5B..32B. :func:`effective_depth_cosine` is their code's definition; it needs the
  cosines of the attention and MLP sublayers, which the records lack (see :data:`ANCHORS`).
* **Shibata et al. 2026** (arXiv:2601.18302): a jump of the angular distance at the final
  layer that grows through pretraining. Their metric's formula was not readable;
  :func:`final_jump` is the book's proxy, labelled as such.

Theorem 3.3's predictions for independent unit-variance blocks (:func:`theorem_rel_update`,
:func:`theorem_angular`, :func:`derive_theorem_angular`) use :mod:`resdecay_lib.maths`, in the
convention each record's rho picks (:func:`resdecay_lib.stats.exponents.convention`).
:func:`book_values` computes the book's figures, :func:`table` one row per (anchor, model)
and :func:`table_markdown` renders it.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..checks import ArgumentTypeError, check_int, show
from ..maths.beyond import rc_hetero
from ..maths.finite_d import correlation_rho
from ..stats import inference as stats
from ..stats.exponents import convention, halves, rho

__all__ = ["Published", "Anchor", "ANCHORS", "FRONT", "EffectiveDepth", "effective_depth_cosine",
           "contribution_half_ratio", "rotation_half_ratio", "mean_rotation", "final_jump",
           "derive_theorem_angular", "theorem_rel_update", "theorem_angular", "theorem_values",
           "book_values", "Row", "table", "table_markdown", "rotation_agreement", "RECORDS", "sublayer_cosine_sums",
           "identity_check_sums", "measure_model", "write_record", "read_records", "effective_depth"]

#: blocks kept out of the earlier half (and of every statistic here): block 1 reads the bare
#: embedding, which in the seed convention has zero variance (r_1 infinite), and which on the
#: Pre-LN models is 11 to 16 times smaller than block 1's output
FRONT = 1


# ----------------------------------------------------------------------------- the anchors

@dataclass(frozen=True)
class Published:
    """One published figure: ``model``, ``value`` (None where it could not be read), ``source``
    (arXiv id and place, or repository, path and commit), ``note`` (what the figure is, or why
    it is missing)."""
    model: str
    value: float | None
    source: str
    note: str = ""


@dataclass(frozen=True)
class Anchor:
    """A published anchor: ``paper``, ``arxiv`` id, ``metric`` (its name), ``definition`` (the
    paper's, in the book's notation), ``book_metric`` (how the book computes it from a record,
    or why it cannot), ``claim`` (what the paper says), ``published`` (a tuple of
    :class:`Published`), ``note``."""
    key: str
    paper: str
    arxiv: str
    metric: str
    definition: str
    book_metric: str
    claim: str
    published: tuple = ()
    note: str = ""


#: where Hu et al.'s effective depths were read: the stored outputs of their notebook
_HU_SOURCE = ("github:AheadOFpotato/what_affects_effective_depth exp3_universal_metric_simple.ipynb, "
              "output of calculate_all_metrics (column 'ED (cos)'), read at commit "
              "ea5402c8c35a4437618a30dbb7506e737db44342 (the notebook last changed in 21b36545a85b); the 14B "
              "and 32B rows are the base models (their Instruct rows print 27/32/30 and 43/46/43)")
#: Hu et al.'s effective depth by the cosine metric, as that notebook prints it: (model, layers
#: L, dataset, ED); the ratio is (ED + 1) / L (:func:`effective_depth_cosine`), printed there to 2 places
HU_COSINE_ED = (
    ("Qwen2.5-1.5B-Instruct", 28, "hellaswag", 16), ("Qwen2.5-1.5B-Instruct", 28, "gsm8k", 20),
    ("Qwen2.5-1.5B-Instruct", 28, "aime24", 19),
    ("Qwen2.5-7B-Instruct", 28, "hellaswag", 17), ("Qwen2.5-7B-Instruct", 28, "gsm8k", 20),
    ("Qwen2.5-7B-Instruct", 28, "aime24", 18),
    ("Qwen2.5-14B", 48, "hellaswag", 27), ("Qwen2.5-14B", 48, "gsm8k", 30), ("Qwen2.5-14B", 48, "aime24", 30),
    ("Qwen2.5-32B", 64, "hellaswag", 43), ("Qwen2.5-32B", 64, "gsm8k", 46), ("Qwen2.5-32B", 64, "aime24", 46),
)
#: the ratios that notebook prints beside each ED, to 2 places (a test recomputes them)
HU_COSINE_RATIO_PRINTED = (0.61, 0.75, 0.71, 0.64, 0.75, 0.68, 0.58, 0.65, 0.65, 0.69, 0.73, 0.73)

_LIU_CODE = ("github:liuyz0/DepthScaling LLMs/qwen-hid-2-2.py, LLMs/pythia-hid-2-2.py, LLMs/opt-hid-2-1.py "
             "(Theta), commit 07360e3decddf64d0e6b6322f5f82b79d0dd4596")
_NOT_READ = "not readable from anything reachable here (the repository stores no outputs; the paper's figure is a plot)"

ANCHORS = {
    "csordas": Anchor(
        key="csordas", paper="Csordas, Manning and Potts 2025, Do Language Models Use Their Depth Efficiently?",
        arxiv="2505.13898", metric="relative contribution |f_k| / |x_k|",
        definition="per token ||a_l + m_l|| / ||h_l|| (the layer's output over the residual entering it), "
                   "averaged over tokens; the book's rel_update",
        book_metric="contribution_half_ratio: mean r_k over the later half (L//2+1..L) over the mean over "
                    "the earlier half past block 1 (2..L//2), per sequence, t interval over sequences",
        claim="layers in the second half contribute much less than those in the first half, with a phase "
              "transition between the two halves (abstract; section 3, Fig. 2: Llama 3.1 70B and others)",
        published=(Published("Llama 3.1 / Qwen 3 / OLMo 2 family", None, "arXiv:2505.13898, abstract and Fig. 2",
                             "qualitative, not readable as a number: the per-layer values are only plotted; "
                             "their code stores no outputs (analysis/.gitignore excludes them); a third-party note reads Llama 3.1 70B's plot as "
                             "'first half >0.15, second half <0.05', which is not quoted as theirs"),),
        note="their code, read in the fork github:ShayanTalaei/llm_effective_depth at Csordas's own commit "
             "393e5c740e2a46d8b06d60129b1a3fb4b581a01a (analysis/analyze_norms.py, lines 98-150), takes the "
             "per-token ratio against the layer's input residual and averages it over the tokens of 20 GSM8K "
             "prompts, with local Qwen models loaded in 8 bits; the book's rel_update is the same token mean"),
    "liu": Anchor(
        key="liu", paper="Liu, Kangaslahti, Liu and Gore 2026, Inverse Depth Scaling From Most Layers Being Similar",
        arxiv="2602.05970", metric="rotation theta_l (radians)",
        definition="theta_l = arccos(cos(h_l, h_{l+1})) per token (HF hidden_states; the last one after the "
                   "model's final norm), i.e. pi times Gromov's angular distance, the book's pi * angular",
        book_metric="rotation_half_ratio (uniform: 1) and mean_rotation over k = 2..L, per sequence, "
                    "t intervals over sequences; blocks only (the book's last state is before the final norm)",
        claim="rotations are uniform and small across the layers (Fig. 2, hidden-state analysis)",
        published=tuple(Published(m, None, f"arXiv:2602.05970 Fig. 2; code {_LIU_CODE}",
                                  "qualitative ('uniform and small'): " + _NOT_READ)
                        for m in ("Qwen2.5-0.5B", "Pythia-410m", "OPT-125m"))),
    "hu": Anchor(
        key="hu", paper="Hu, Zhou and Zhang 2025, What Affects the Effective Depth of Large Language Models?",
        arxiv="2512.14064", metric="effective-depth ratio (cosine metric)",
        definition="m_l = mean of the token-mean cosines cos(a_l, h_l), cos(m_l, h_l + a_l) and "
                   "cos(a_l + m_l, h_l) (attention, MLP, layer); ED = the last l (0-based) with m_l < 0 <= m_{l+1}; "
                   "ratio = (ED + 1) / L (calc_ed_cosine_similarity and calculate_all_metrics in "
                   "exp3_universal_metric_simple.ipynb; cosines from plot_relative_contributions.py analyze_norms)",
        book_metric="not computable from the records: they hold the layer cosine (alignment) but not the "
                    "attention and MLP sublayer cosines; a measurement would have to add, per sublayer step, "
                    "the token mean of cos(sublayer output, the stream it is added to) (e.g. beside "
                    "stream.sublayer_omega_sq). The layer-only variant (alignment alone) is shown, labelled",
        claim="while the number of effective layers grows with model size, the effective depth ratio remains "
              "stable (abstract; Qwen2.5 1.5B..32B)",
        published=tuple(Published(f"{m} ({ds})", (ed + 1) / L, _HU_SOURCE, f"ED = {ed} of L = {L}")
                        for m, L, ds, ed in HU_COSINE_ED),
        note="the same notebook also prints effective depths by logit-lens KL and overlap, which need "
             "logit-lens outputs the records lack"),
    "shibata": Anchor(
        key="shibata", paper="Shibata, Yano, Takahashi, Lee, Ikeda and Suzuki 2026, Suppressing Final Layer "
                             "Hidden State Jumps in Transformer Pretraining",
        arxiv="2601.18302", metric="final-layer jump of the angular distance",
        definition="their jump-strength metric: " + _NOT_READ.replace("the repository stores no outputs; ", "")
                   + "; only its description (a disproportionately large jump in the angular distance between "
                     "input and output hidden states at or around the final layer) was read",
        book_metric="final_jump, the book's proxy (not their formula): the last block's angular distance over "
                    "the mean angular distance of blocks 2..L-1, per sequence, t interval over sequences",
        claim="the jump is prevalent across open-weight models and amplified through pre-training (abstract)",
        published=(Published("open-weight models and pre-training checkpoints", None, "arXiv:2601.18302, abstract",
                             "the metric's values: " + _NOT_READ.replace("the repository stores no outputs; ", "")),),
        note="a third-party summary (emergentmind) describes their regulariser with 1 - cos(h_{L-1}, h_L), "
             "the book's influence of block L; not verified against the paper"),
}


# ----------------------------------------------------------------------------- the statistics

def _per_sequence(name, value, min_L=2):
    """``value`` as a finite float array [n_seq, L] with n_seq >= 1 and L >= min_L, or ValueError naming ``name``."""
    if value is None or isinstance(value, (str, bytes, Mapping)):
        raise ArgumentTypeError(f"{name} must be a [n_seq, L] array of finite numbers, got {type(value).__name__}")
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be a [n_seq, L] array of finite numbers, got {show(value)}") from None
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < min_L:
        raise ValueError(f"{name} must be a [n_seq, L] array with L >= {min_L}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must hold finite numbers, got NaN or an infinity")
    return a


def _half_ratio_rows(a, name):
    late, early = halves(a.shape[1], front=FRONT)
    den = a[:, early - 1].mean(1)
    if not np.all(den > 0):
        raise ValueError(f"{name} must have a positive mean over the earlier half (blocks {early[0]}..{early[-1]})")
    return a[:, late - 1].mean(1) / den


def contribution_half_ratio(rel_update):
    r"""Csordas et al.'s contrast of the two halves: per sequence,

    .. math:: \frac{\operatorname{mean}_{k = L/2+1..L} r_k}{\operatorname{mean}_{k = 2..L/2} r_k},
              \qquad r_k = \lVert f_k\rVert / \lVert x_k\rVert,

    halves as :func:`resdecay_lib.stats.exponents.halves` (L//2 splits them; block 1 is left out,
    :data:`FRONT`). ``rel_update``: [n_seq, L] (or [L]) positive, L >= 4. Returns [n_seq]."""
    a = _per_sequence("rel_update", rel_update, min_L=2 * FRONT + 2)
    return _half_ratio_rows(a, "rel_update")


def rotation_half_ratio(angular):
    r"""Uniformity of the rotations (Liu et al.): per sequence the later half's mean of
    :math:`\theta_k = \pi\,\mathrm{angular}_k` over the earlier half's (blocks as
    :func:`contribution_half_ratio`); 1 for uniform rotations. ``angular``: [n_seq, L] or [L],
    L >= 4. Returns [n_seq]."""
    a = _per_sequence("angular", angular, min_L=2 * FRONT + 2)
    return _half_ratio_rows(a, "angular")


def mean_rotation(angular):
    r"""Mean rotation in radians over blocks 2..L, per sequence: :math:`\pi\,\operatorname{mean}_{k\ge2}\mathrm{angular}_k`
    (Liu et al.'s theta_l = pi x Gromov's angular distance). ``angular``: [n_seq, L] or [L]. Returns [n_seq]."""
    a = _per_sequence("angular", angular, min_L=FRONT + 1)
    return math.pi * a[:, FRONT:].mean(1)


def final_jump(angular):
    r"""The book's proxy for Shibata et al.'s final-layer jump (their formula was not readable):
    per sequence :math:`\mathrm{angular}_L / \operatorname{mean}_{k=2..L-1}\mathrm{angular}_k`.
    ``angular``: [n_seq, L] or [L], L >= 3. Returns [n_seq]."""
    a = _per_sequence("angular", angular, min_L=FRONT + 2)
    den = a[:, FRONT:-1].mean(1)
    if not np.all(den > 0):
        raise ValueError("angular must have a positive mean over blocks 2..L-1")
    return a[:, -1] / den


@dataclass(frozen=True)
class EffectiveDepth:
    """Hu et al.'s effective depth: ``ed`` (0-based layer index), ``ratio`` = (ed + 1) / L, ``L``."""
    ed: int
    ratio: float
    L: int


def effective_depth_cosine(att_cos, mlp_cos, layer_cos) -> EffectiveDepth | None:
    r"""Hu et al.'s effective depth by the cosine metric (``calc_ed_cosine_similarity`` and the
    ratio of ``calculate_all_metrics`` in their ``exp3_universal_metric_simple.ipynb``):

    .. math:: m_l = \tfrac13(\overline{\cos}(a_l, h_l) + \overline{\cos}(m_l, h_l + a_l)
              + \overline{\cos}(a_l + m_l, h_l)),\qquad
              \mathrm{ED} = \max\{l : m_l < 0 \le m_{l+1}\},\qquad \text{ratio} = (\mathrm{ED}+1)/L,

    l = 0..L-1, each cosine a token mean. ``att_cos``, ``mlp_cos``, ``layer_cos``: [L] each.
    Returns an :class:`EffectiveDepth`, or None where m never crosses from below 0 to >= 0 (their
    code raises an IndexError there).
    """
    arrays = []
    for name, v in (("att_cos", att_cos), ("mlp_cos", mlp_cos), ("layer_cos", layer_cos)):
        a = _per_sequence(name, v, min_L=2)
        if a.shape[0] != 1:
            raise ValueError(f"{name} must be one curve [L], got shape {np.shape(v)}")
        if np.any(np.abs(a) > 1):
            raise ValueError(f"{name} must hold cosines in [-1, 1]")
        arrays.append(a[0])
    if len({len(a) for a in arrays}) != 1:
        raise ValueError(f"att_cos, mlp_cos and layer_cos must have one length L, got {[len(a) for a in arrays]}")
    m = np.mean(np.stack(arrays), axis=0)
    up = np.flatnonzero((m[:-1] < 0) & (m[1:] >= 0))
    if up.size == 0:
        return None
    ed = int(up[-1])
    return EffectiveDepth(ed, (ed + 1) / len(m), len(m))


# ----------------------------------------------------------------------------- the theorem

def derive_theorem_angular(embedding_counted: bool = False) -> tuple[sp.Expr, sp.Symbol]:
    r"""The angular distance of block k under Theorem 3.3's independent equal-variance blocks,
    in the limit D -> infinity:

    .. math:: \frac{1}{\pi}\arccos\cos(x_k, x_{k+1}) = \frac{1}{\pi}\arccos\rho_k,\qquad
              \rho_k = \sqrt{\mathrm{var}\,x_k/\mathrm{var}\,x_{k+1}} = \sqrt{(k-1)/k}

    (seed convention; :math:`\sqrt{k/(k+1)}` with the embedding counted:
    :func:`resdecay_lib.maths.finite_d.correlation_rho`), which is
    :math:`\frac1\pi\arccos(1 - \omega_k^2/2)` by the identity :math:`\omega_k^2 = 2(1-\rho_k)`.
    Returns ``(expr, k)``, k a positive integer symbol.
    """
    k = sp.Symbol("k", positive=True, integer=True)
    return sp.acos(correlation_rho(k, embedding_counted)) / sp.pi, k


def theorem_rel_update(L: int, embedding_counted: bool) -> np.ndarray:
    r"""r_k = |f_k|/|x_k| of independent unit-variance blocks, k = 1..L, D -> infinity:
    :math:`1/\sqrt{k-1}` (seed convention, NaN at k = 1: the stream block 1 reads is empty) or
    :math:`1/\sqrt{k}` (embedding counted), from :func:`resdecay_lib.maths.beyond.rc_hetero`.
    Returns [L]."""
    L = check_int("L", L, 2, 100_000)
    if not isinstance(embedding_counted, bool):
        raise ArgumentTypeError(f"embedding_counted must be True or False, got {show(embedding_counted)}")
    if embedding_counted:                          # the embedding is summand 1: block k is summand k + 1
        return rc_hetero(np.ones(L + 1))[0]
    return np.concatenate([[np.nan], rc_hetero(np.ones(L))[0]])


def theorem_angular(L: int, embedding_counted: bool) -> np.ndarray:
    """The angular distance of each block k = 1..L under the theorem (:func:`derive_theorem_angular`);
    NaN at k = 1 in the seed convention. Returns [L]."""
    L = check_int("L", L, 2, 100_000)
    expr, k = derive_theorem_angular(embedding_counted)
    f = sp.lambdify(k, expr, "math")
    first = 1 if embedding_counted else 2
    return np.array([f(j) if j >= first else np.nan for j in range(1, L + 1)])


def theorem_values(L: int, embedding_counted: bool) -> dict:
    """Each anchor's statistic under the theorem, at depth ``L``: the same functions as the book's
    figures applied to :func:`theorem_rel_update` and :func:`theorem_angular` (block 1, NaN in the
    seed convention, is outside every statistic). Keys as :func:`book_values`' ("hu": None, the
    theorem's cosines being 0 in expectation, so m_l never crosses 0 from below)."""
    r, ang = theorem_rel_update(L, embedding_counted), theorem_angular(L, embedding_counted)
    if not embedding_counted:
        # block 1 (NaN: it reads an empty stream) is outside every statistic, which check that
        # their arrays are finite: any finite stand-in leaves them unchanged
        r[0] = ang[0] = 1.0
    return {"csordas": float(contribution_half_ratio(r)[0]), "liu": float(rotation_half_ratio(ang)[0]),
            "liu_mean_theta": float(mean_rotation(ang)[0]), "hu": None, "shibata": float(final_jump(ang)[0])}


# ----------------------------------------------------------------------------- the book's figures

def _check_records(records) -> dict:
    from .pretrained_analysis import PretrainedRecord   # here: importing it imports torch, which anchors does not need
    if not isinstance(records, Mapping) or not records:
        raise ValueError(f"records must be a non-empty dict {{(model, text): record}} as load_records returns, "
                         f"got {show(records)}")
    for key, rec in records.items():
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(s, str) for s in key)):
            raise ValueError(f"records must be keyed by (model, text) pairs of str, got the key {show(key)}")
        if not isinstance(rec, PretrainedRecord):
            raise ValueError(f"records[{key!r}] must be a PretrainedRecord (load_record's), got {type(rec).__name__}")
    return dict(records)


def book_values(records) -> dict:
    """The book's figure for each anchor, per (model, text) of ``records`` (load_records' dict):

    {(model, text): {"csordas": TInterval, "liu": TInterval, "liu_mean_theta": TInterval (radians),
    "hu": None, "hu_layer_only": EffectiveDepth or None, "shibata": TInterval, "L": int,
    "embedding_counted": bool, "placement": str}}

    TIntervals (:func:`resdecay_lib.stats.inference.t_interval`, 95%) are over the sequences of
    the per-sequence statistics. ``hu`` is None: the records lack the sublayer cosines Hu et
    al.'s metric needs (:data:`ANCHORS`); ``hu_layer_only`` applies their rule to the layer cosine
    (``alignment``, mean over sequences; equal tokens per sequence make it the token mean) alone,
    a variant, not their metric. The convention is the one the record's rho picks."""
    out = {}
    for key, rec in _check_records(records).items():
        ch = rec.change
        r = _per_sequence("change.rel_update", ch["rel_update"])
        ang = _per_sequence("change.angular", ch["angular"])
        align = _per_sequence("change.alignment", ch["alignment"]).mean(0)
        out[key] = {
            "csordas": stats.t_interval(contribution_half_ratio(r)),
            "liu": stats.t_interval(rotation_half_ratio(ang)),
            "liu_mean_theta": stats.t_interval(mean_rotation(ang)),
            "hu": None,
            "hu_layer_only": effective_depth_cosine(align, align, align),
            "shibata": stats.t_interval(final_jump(ang)),
            "L": int(r.shape[1]), "embedding_counted": convention(rho(rec.gram)),
            "placement": "" if rec.placement is None else rec.placement,
        }
    return out


@dataclass(frozen=True)
class Row:
    """One (anchor, model) row of :func:`table`: ``book`` and ``theorem`` by text (the theorem's
    depends only on L and the convention, which may differ between texts)."""
    anchor: str
    model: str
    metric: str
    published: tuple
    theorem: dict = field(default_factory=dict)
    book: dict = field(default_factory=dict)
    comparison: str = ""


def rotation_agreement(book_ratio, book_theta, theorem_ratio: float, published=None) -> str:
    """The sentence comparing the book's rotations of a model with Liu et al.'s "uniform and
    small" (``published``: their figure for the matching model, a float or None when none was
    readable). ``book_ratio`` and ``book_theta``: TIntervals of :func:`rotation_half_ratio` and
    :func:`mean_rotation`; ``theorem_ratio`` the theorem's half ratio."""
    for name, iv in (("book_ratio", book_ratio), ("book_theta", book_theta)):
        if not isinstance(iv, stats.TInterval):
            raise ArgumentTypeError(f"{name} must be a TInterval, got {type(iv).__name__}")
    uniform = "consistent with uniform (1 inside)" if book_ratio.contains(1.0) else (
        "later blocks rotate less" if book_ratio.hi < 1 else "later blocks rotate more")
    pub = ("Liu et al. publish no number readable here, only 'uniform and small'" if published is None
           else f"Liu et al.: {published:.3g}")
    return (f"{pub}; the book: {book_theta:.3g} rad per block on average, later/earlier half ratio "
            f"{book_ratio:.3g}, {uniform}; independent blocks (the theorem) give {theorem_ratio:.3g}")


def _comparison(key, vals, theo, published) -> str:
    """The comparison note of one row, from the shakespeare values (the other text beside)."""
    iv, th = vals[key], theo[key]
    if key == "hu":
        lo = vals["hu_layer_only"]
        variant = "no up-crossing" if lo is None else f"ED {lo.ed}, ratio {lo.ratio:.3g}"
        return ("not computable from the records (sublayer cosines missing); the layer-only variant gives "
                f"{variant}; the theorem's cosines are 0, so its ratio is undefined")
    if key == "liu":
        return rotation_agreement(iv, vals["liu_mean_theta"], th, published)
    side = "inside" if iv.contains(th) else ("below" if iv.hi < th else "above")
    return f"book {iv:.3g} against the theorem's {th:.3g} (the theorem {side} the interval); published: none readable"


def table(records) -> list:
    """One :class:`Row` per (anchor, model) of ``records``: the metric, the published figures
    (:data:`ANCHORS`), the theorem's value and the book's by text, and a comparison note (from the
    Shakespeare text where the model has it, else the first text). Post-LN and sandwich models are
    listed too; the theorem's model is Pre-LN, which the note's reader must weigh."""
    values = book_values(records)
    models = sorted({m for m, _ in values})
    rows = []
    liu_match = {"qwen2.5-coder-0.5b": "Qwen2.5-0.5B"}   # same shape (24 x 896), another fine-tune
    for key, anchor in ANCHORS.items():
        for model in models:
            texts = sorted(t for m, t in values if m == model)
            theo = {t: theorem_values(values[model, t]["L"], values[model, t]["embedding_counted"]) for t in texts}
            book = {t: values[model, t][key] if key != "hu" else values[model, t]["hu_layer_only"] for t in texts}
            main = "shakespeare" if "shakespeare" in texts else texts[0]
            pub = None
            if key == "liu" and model in liu_match:
                pub = next((p.value for p in anchor.published if p.model == liu_match[model]), None)
            note = _comparison(key, values[model, main], theo[main], pub)
            placement = values[model, main]["placement"]
            if placement and placement != "pre_ln":
                note += f" [{placement}: outside the theorem's Pre-LN model]"
            rows.append(Row(key, model, anchor.metric, anchor.published,
                            {t: theo[t][key] for t in texts}, book, f"({main}) {note}"))
    return rows


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, EffectiveDepth):
        return f"{v.ratio:.3g} (ED {v.ed})"
    if isinstance(v, stats.TInterval):
        return f"{v:.3g}"
    return f"{v:.3g}"


def table_markdown(rows) -> str:
    """The rows of :func:`table` as a markdown table: anchor, model, metric, published, theorem, book, comparison."""
    lines = ["| anchor | model | metric | published | theorem | book | comparison |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        if not isinstance(row, Row):
            raise ArgumentTypeError(f"rows must hold Rows (table's), got {type(row).__name__}")
        pubs = "; ".join(f"{p.model}: {_fmt(p.value)}" for p in row.published[:4])
        if len(row.published) > 4:
            pubs += f"; ... ({len(row.published)} figures)"
        theo = "; ".join(f"{t}: {_fmt(v)}" for t, v in row.theorem.items())
        book = "; ".join(f"{t}: {_fmt(v)}" for t, v in row.book.items())
        lines.append(f"| {row.anchor} | {row.model} | {row.metric} | {pubs} | {theo} | {book} | {row.comparison} |")
    return "\n".join(lines)



# ----------------------------------------------------------------------------- measured on the models

#: where :func:`write_record` stores each model's sublayer cosines and identity check
#: (relative to the book's folder): ``results/anchors/<model>.json``
RECORDS = "results/anchors"
#: the inputs, as Chapter 9's records: the Shakespeare validation text, 16 sequences of 128 tokens
TEXT, N_SEQ, N_TOKENS, BATCH = "shakespeare", 16, 128, 4


def _cos_token(u: "torch.Tensor", v: "torch.Tensor") -> "torch.Tensor":
    """cos(u, v) per token over the last axis, float64 ([..., D] -> [...]); 0 where either is 0."""
    import torch
    u, v = u.double(), v.double()
    n = u.norm(dim=-1) * v.norm(dim=-1)
    return torch.where(n > 0, (u * v).sum(-1) / torch.where(n > 0, n, torch.ones_like(n)), torch.zeros_like(n))


def sublayer_cosine_sums(tensor, mask) -> dict:
    r"""The three cosines of Hu et al.'s metric, summed over the kept tokens, per block:
    with :math:`h_l` the stream entering block l, :math:`a_l` its attention step and
    :math:`m_l` its MLP step (the residual additions; ``tensor`` [2L+1, B, T, D], a
    :class:`~resdecay_lib.nn.hooks.SublayerStream`'s: entry 2l = :math:`h_l`, 2l+1 = :math:`h_l + a_l`),

    * ``att``: :math:`\sum_t \cos(a_l, h_l)`,
    * ``mlp``: :math:`\sum_t \cos(m_l, h_l + a_l)`,
    * ``layer``: :math:`\sum_t \cos(a_l + m_l, h_l)` (the book's ``alignment``),

    each [L] float64, and ``n``, the kept tokens (``mask`` [B, T]). Sums, so batches add;
    :func:`effective_depth_cosine` reads the means."""
    import torch
    x = torch.as_tensor(tensor)
    keep = torch.as_tensor(mask).bool()
    if x.dim() != 4 or x.shape[0] < 3 or x.shape[0] % 2 == 0 or tuple(keep.shape) != tuple(x.shape[1:3]):
        raise ValueError(f"tensor must be [2L+1, B, T, D] and mask [B, T], got {tuple(x.shape)} and {tuple(keep.shape)}")
    from ..nn.hooks import SublayerStream
    stream = SublayerStream(x)
    h, mid, post = stream.block_inputs[:-1], stream.after_attention, stream.after_mlp
    out = {}
    for name, (u, v) in {"att": (mid - h, h), "mlp": (post - mid, mid), "layer": (post - h, h)}.items():
        out[name] = _cos_token(u, v)[:, keep].sum(-1).numpy()
    out["n"] = int(keep.sum())
    return out


def identity_check_sums(stream, mask, eps: float | None = None) -> dict:
    r"""The extended identity checked per token on a block-level stream ``stream`` [L+1, B, T, D]
    (``mask`` [B, T]), per block k with :math:`x = x_k`, :math:`f = x_{k+1} - x_k`:

    * ``max_rel_err`` [L]: the largest relative difference between the measured change
      :math:`\frac1D\lVert LN_0(x+f) - LN_0(x)\rVert^2` (computed from its definition, float64,
      LayerNorm's eps) and :func:`resdecay_lib.maths.identity.change_sq_raw` of the token's raw
      r = |f|/|x|, c = cos(x, f), |x| and coordinate means (what the records store, per token);
    * ``n_small`` [L]: tokens with the centred ratio :math:`\tilde r \le 1/2`
      (:data:`resdecay_lib.maths.identity.R_MAX_LEADING`), where the leading order
      :math:`\omega = \tilde r\,\lvert\sin\tilde\theta\rvert` has a proven remainder;
    * ``max_over_bound`` [L]: over those tokens, the largest
      :math:`\lvert g(\tilde r, \tilde c) - \tilde r^2(1-\tilde c^2)\rvert / (K\tilde r^3)`
      (:func:`~resdecay_lib.maths.identity.leading_order_bound`; <= 1 is the bound holding);
    * ``lead_rel_err_sum`` [L]: the sum over those tokens of the leading order's relative error
      against the measured change, and ``n`` the kept tokens.

    ``eps``: None for :data:`~resdecay_lib.maths.gaussian.LN_EPS` (the measurement's)."""
    import torch
    from ..maths import identity as I
    from ..maths.beyond import change_sq_rc
    from ..maths.gaussian import LN_EPS, layer_norm
    eps = LN_EPS if eps is None else float(eps)
    x_all = torch.as_tensor(stream)
    keep = torch.as_tensor(mask).bool()
    if x_all.dim() != 4 or x_all.shape[0] < 2 or tuple(keep.shape) != tuple(x_all.shape[1:3]):
        raise ValueError(f"stream must be [L+1, B, T, D] and mask [B, T], got {tuple(x_all.shape)} and {tuple(keep.shape)}")
    L, D = x_all.shape[0] - 1, x_all.shape[-1]

    out = {"max_rel_err": np.zeros(L), "n_small": np.zeros(L, dtype=np.int64), "max_over_bound": np.zeros(L),
           "lead_rel_err_sum": np.zeros(L), "n": int(keep.sum())}
    for k in range(L):
        x = x_all[k][keep].double()
        f = x_all[k + 1][keep].double() - x
        measured = ((layer_norm((x + f).numpy(), eps) - layer_norm(x.numpy(), eps)) ** 2).mean(-1)
        xn = x.norm(dim=-1)
        r = (f.norm(dim=-1) / xn).numpy()
        c = _cos_token(x, f).numpy()
        mx, mf = x.mean(-1).numpy(), f.mean(-1).numpy()
        exact = I.change_sq_raw(r, c, xn.numpy(), mx, mf, D, eps=eps)
        out["max_rel_err"][k] = float(np.max(np.abs(exact - measured) / np.maximum(measured, 1e-300)))
        rt, ct = I.centred_rc(r, c, xn.numpy(), mx, mf, D)
        small = rt <= I.R_MAX_LEADING
        out["n_small"][k] = int(small.sum())
        if small.any():
            g = change_sq_rc(rt[small], ct[small])
            lead = I.leading_order_change_sq(rt[small], ct[small])
            bound = I.leading_order_bound(rt[small])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(bound > 0, np.abs(g - lead) / bound, 0.0)
            out["max_over_bound"][k] = float(ratio.max())
            out["lead_rel_err_sum"][k] = float(np.sum(np.abs(lead - measured[small]) / measured[small]))
    return out


def measure_model(name: str) -> dict:
    """Hu et al.'s sublayer cosines and the identity check of packaged model ``name`` (a key of
    :data:`resdecay_lib.nn.pretrained.PACKAGED`) on Chapter 9's inputs (:data:`TEXT`,
    :data:`N_SEQ` sequences of :data:`N_TOKENS` tokens), in batches of :data:`BATCH`: a record
    with ``hu`` {att, mlp, layer: [L] token means} and ``identity`` (:func:`identity_check_sums`'
    fields, the error sum turned into ``lead_rel_err_mean``) and its provenance (code version,
    threads, CPU, library versions, wall time, peak memory)."""
    import time

    import torch

    from ..nn import hooks, pretrained
    from ..nn.probe import measure_sublayers
    from ..training.store import measurement_provenance
    from . import pretrained_analysis
    start = time.time()
    pre = pretrained.load(name)
    inputs, mask = pretrained.sample_inputs(pre.tokenizer, pretrained_analysis.book_text(TEXT), N_SEQ, N_TOKENS)
    points = [pretrained.sublayer_points(b) for b in pre.blocks]
    cos, ident = None, None
    for i, batch in enumerate(hooks.batches(inputs, BATCH)):
        m = torch.as_tensor(mask[i * BATCH:(i + 1) * BATCH])
        with torch.no_grad():
            s, _ = measure_sublayers(pre.body, batch, m, pre.blocks, points, batch_size=BATCH)
        c = sublayer_cosine_sums(s.tensor, m)
        d = identity_check_sums(s.block_inputs, m)
        if cos is None:
            cos, ident = c, d
            continue
        for key in ("att", "mlp", "layer", "n"):
            cos[key] = cos[key] + c[key]
        ident["max_rel_err"] = np.maximum(ident["max_rel_err"], d["max_rel_err"])
        ident["max_over_bound"] = np.maximum(ident["max_over_bound"], d["max_over_bound"])
        for key in ("n_small", "lead_rel_err_sum", "n"):
            ident[key] = ident[key] + d[key]
    n = cos["n"]
    with np.errstate(divide="ignore", invalid="ignore"):
        lead = np.where(ident["n_small"] > 0, ident["lead_rel_err_sum"] / np.maximum(ident["n_small"], 1), np.nan)
    return {"model": name, "n_layer": pre.n_layer, "d_model": pre.d_model, "placement": pre.placement,
            "inputs": {"text": TEXT, "n_seq": N_SEQ, "n_tokens": N_TOKENS, "n_kept_tokens": n},
            "hu": {k: (cos[k] / n).tolist() for k in ("att", "mlp", "layer")},
            "identity": {"max_rel_err": ident["max_rel_err"].tolist(), "n_small": ident["n_small"].tolist(),
                         "max_over_bound": ident["max_over_bound"].tolist(),
                         "lead_rel_err_mean": [None if not math.isfinite(v) else float(v) for v in lead],
                         "n_tokens": int(ident["n"])},
            "provenance": measurement_provenance(start, "none drawn: the inputs are fixed segments of the text")}


def write_record(name: str, root=".") -> "Path":
    """Measure ``name`` (:func:`measure_model`) and store it as ``<root>/results/anchors/<name>.json``,
    atomically; an existing record is replaced only by a new measurement of the same model."""
    from pathlib import Path

    from ..training.store import write_json_atomic
    path = Path(root) / RECORDS / f"{name}.json"
    write_json_atomic(measure_model(name), path)
    return path


def read_records(root) -> dict:
    """{model: record} of every ``<root>/results/anchors/*.json`` ({} when none)."""
    import json
    from pathlib import Path
    folder = Path(root) / RECORDS
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))} \
        if folder.is_dir() else {}


def effective_depth(record) -> "EffectiveDepth | None":
    """Hu et al.'s effective depth of a stored record (:func:`measure_model`'s ``hu`` cosines)."""
    hu = record["hu"]
    return effective_depth_cosine(hu["att"], hu["mlp"], hu["layer"])
