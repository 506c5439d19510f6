"""Which library function produces each piece of evidence: :data:`PRODUCERS`.

Every value a verdict reads is computed by one chapter's result, ``chapter(root)`` of
:mod:`resdecay_lib.analysis.chapters` ``.<name>``, and glued by that result's ``glues()``: the
chapter's function chooses the runs, records and parameters, calls the analysis and the
statistics, and its result class rounds the value it glues. So the producer of an evidence is
its chapter's ``chapter`` function (with the result class it constructs, whose ``glues()``
writes the value): the smallest function whose transitive closure holds every line that
computes the value. A finer function (``training_claims.exponent_evidence``,
``front.position``, ...) would leave out the arguments the chapter passes and the digits it
glues, so none is named here; each is inside its chapter's closure, which
:func:`resdecay_lib.book.preregistration.fingerprints` follows.

The book layer does not import the analysis layer (``tests/package/test_layers.py``): a producer
is named by its dotted path, ``"resdecay_lib.analysis.chapters.front.chapter"``, and
:func:`producer` imports it only to read its code (a fingerprint reads it; nothing here calls
it). Each evidence is named by its declaration in :mod:`resdecay_lib.book.evidence`, never by a
spelled-out name, so a search for the declaration (``FRONT_POSITION``) finds its producer.
``tests/book/test_producers.py`` checks that every declared evidence has a producer, that it
exists, and that it is the chapter whose stored notebook glues the name.
"""
from __future__ import annotations

import importlib

from ..checks import ArgumentTypeError, show
from . import evidence as E

__all__ = ["PRODUCERS", "producer", "producer_path"]

_CHAPTERS = "resdecay_lib.analysis.chapters."
STREAM = _CHAPTERS + "stream.chapter"                       # Chapter 1
THEOREM = _CHAPTERS + "theorem.chapter"                     # Chapter 2
COROLLARY_34 = _CHAPTERS + "corollary_34.chapter"           # Chapter 3
COROLLARY_35 = _CHAPTERS + "corollary_35.chapter"           # Chapter 4
BEYOND = _CHAPTERS + "beyond_independence.chapter"          # Chapter 5
INITIALISATION = _CHAPTERS + "initialisation.chapter"       # Chapter 6
TRAINING = _CHAPTERS + "training.chapter"                   # Chapter 7 (its statistics: analysis.training_claims)
FRONT = _CHAPTERS + "front.chapter"                         # Chapter 7b
COST = _CHAPTERS + "cost.chapter"                           # Chapter 8 (its statistics: analysis.training_claims)
PRETRAINED = _CHAPTERS + "pretrained.chapter"               # Chapter 9
INTERVENTION = _CHAPTERS + "intervention.chapter"           # Chapter 9b

#: {evidence (its declaration): dotted path of the function that produces it}
PRODUCERS: dict[E.Evidence, str] = {
    # Chapter 1
    E.LN_IDENTITY_MAX_ERR: STREAM,
    # Chapter 2
    E.THM33_SYMBOLIC_RESIDUAL: THEOREM,
    E.THM33_Z_CRIT: THEOREM,
    E.THM33_MAXZ_LARGE_D: THEOREM,
    E.THM33_MAXZ_RAW_SMALL_D: THEOREM,
    E.THM33_MAXZ_CORRECTED_SMALL_D: THEOREM,
    E.THM33_REL_BIAS_D16: THEOREM,
    # Chapter 3
    E.COR34_SQRTK_LIMIT: COROLLARY_34,
    E.COR34_REMAINDER_C: COROLLARY_34,
    E.COR34_MAXZ: COROLLARY_34,
    E.COR34_Z_CRIT: COROLLARY_34,
    E.FIFTH_RATIO_SEED: COROLLARY_34,
    E.FIFTH_RATIO_SEED_K2: COROLLARY_34,
    E.FIFTH_RATIO_EMBEDDING: COROLLARY_34,
    E.FIFTH_RATIO_APPROX: COROLLARY_34,
    E.FIFTH_RATIO_SEED_LN0: COROLLARY_34,
    # Chapter 4
    E.COR35_CONST: COROLLARY_35,
    E.COR35_MAXZ: COROLLARY_35,
    E.COR35_Z_CRIT: COROLLARY_35,
    # Chapter 5
    E.HETERO_BETA_CRIT: BEYOND,
    E.GEOMETRIC_LIMIT_Q2: BEYOND,
    E.HETERO_MAXZ: BEYOND,
    E.HETERO_Z_CRIT: BEYOND,
    E.RC_MAXZ: BEYOND,
    E.RC_Z_CRIT: BEYOND,
    # Chapter 6
    **{e: INITIALISATION for e in E.INIT_EXP.values()},
    E.INIT_EXP_THEORY: INITIALISATION,
    E.COR35_RANDOM_EXP: INITIALISATION,
    E.COR35_RANDOM_EXP_THEORY: INITIALISATION,
    **{e: INITIALISATION for e in E.GRAD_RATIO.values()},
    **{e: INITIALISATION for e in E.GRAD_RATIO2.values()},
    # Chapter 7
    E.UNIGRAM_LOSS: TRAINING,
    E.BIGRAM_LOSS: TRAINING,
    E.TRIGRAM_LOSS: TRAINING,
    E.FOURGRAM_LOSS: TRAINING,
    E.PRE_LN_WORST_LOSS_DEEP: TRAINING,
    E.TRAINED_EXP_PRE_LN: TRAINING,
    E.TRAINED_REF_PRE_LN: TRAINING,
    E.TRAINED_FITSTART_SHIFT_PRE_LN: TRAINING,
    E.TRAINED_BENT_PRE_LN: TRAINING,
    E.INIT_EXP_TRAINEDRUNS_PRE_LN: TRAINING,
    E.INIT_REF_PRE_LN: TRAINING,
    E.INIT_FITSTART_SHIFT_PRE_LN: TRAINING,
    E.EXP_N_SEEDS: TRAINING,
    E.EXP_T_DF: TRAINING,
    E.SPLIT_CORR_SHARE: TRAINING,
    E.SPLIT_EXP_THEOREM: TRAINING,
    E.SPLIT_EXP_HETERO: TRAINING,
    E.SPLIT_EXP_CORR: TRAINING,
    E.SPLIT_EXP_FULL: TRAINING,
    E.SPLIT_EXP_MEASURED: TRAINING,
    E.VAR_EXP_TOY: TRAINING,
    E.FLATTENING_TOY: TRAINING,
    E.BLOCK_CORR_MEAN_ABS: TRAINING,
    E.PRED_LOGERR_THEOREM: TRAINING,
    E.PRED_LOGERR_HETERO: TRAINING,
    E.PRED_LOGERR_RC: TRAINING,
    E.SHARE_VAR: TRAINING,
    E.SHARE_CORR: TRAINING,
    E.TRAINED_R_EXP_PRE_LN: TRAINING,
    E.TRAINED_C_MEAN_PRE_LN: TRAINING,
    E.TRAINED_FEEDBACK_PRE_LN: TRAINING,
    # Chapter 7b
    E.FRONT_POSITION: FRONT,
    E.FRONT_N_RUNS: FRONT,
    E.FRONT_PRED_WIDTH: FRONT,
    E.LONG_EXP_END: FRONT,
    E.LONG_EXP_CHANGE: FRONT,
    E.LONG_SETTLE_MARGIN: FRONT,
    E.LONG_N_RUNS: FRONT,
    # Chapter 8
    E.ABLATION_TREND_PRE_LN: COST,
    E.ABLATION_TREND_LEVEL: COST,
    E.ABLATION_BLOCK1_PRE_LN: COST,
    E.HALF_RATIO_TOY: COST,
    E.HALF_RATIO_REF_TOY: COST,
    E.DEPTH_SLOPE_PRE_LN: COST,
    E.DEPTH_SLOPE_DF: COST,
    E.ABLATION_LATE_PRE_LN: COST,
    E.DEPTH_STOPS_PAYING_PRE_LN: COST,
    E.DEPTH_BEST_AT_FLOPS_PRE_LN: COST,
    E.DEPTH_ALPHA_PRE_LN: COST,
    **{e: COST for e in E.VAL_LOSS_GAP.values()},
    **{e: COST for e in E.GAP_BY_DEPTH.values()},
    E.GAP_GROWTH: COST,
    # Chapter 9
    **{e: PRETRAINED for e in E.PRETRAINED_EXP.values()},
    **{e: PRETRAINED for e in E.PRETRAINED_REF.values()},
    **{e: PRETRAINED for e in E.PRETRAINED_DRIFT.values()},
    **{e: PRETRAINED for e in E.FITRANGE_SHIFT.values()},
    E.QUANT_SHIFT: PRETRAINED,
    **{e: PRETRAINED for e in E.NORM_GROWTH.values()},
    **{e: PRETRAINED for e in E.SKIP_TREND.values()},
    **{e: PRETRAINED for e in E.SKIP_BLOCK1.values()},
    **{e: PRETRAINED for e in E.METRIC_RHO_CHANGE.values()},
    **{e: PRETRAINED for e in E.METRIC_DIFF.values()},
    **{e: PRETRAINED for e in E.VAR_EXP.values()},
    **{e: PRETRAINED for e in E.HALF_RATIO.values()},
    **{e: PRETRAINED for e in E.HALF_RATIO_REF.values()},
    **{e: PRETRAINED for e in E.FLATTENING.values()},
    **{e: PRETRAINED for e in E.HALF_RATIO_NO_LAST.values()},
    **{e: PRETRAINED for e in E.HALF_RATIO_REF_NO_LAST.values()},
    E.INFLUENCE_IDENTITY_RESIDUAL: PRETRAINED,
    # Chapter 9b
    **{e: INTERVENTION for e in E.INTERVENTION_T.values()},
    **{e: INTERVENTION for e in E.INTERVENTION_MEASURED.values()},
}


def producer_path(name: str) -> str:
    """The dotted path of the function producing evidence ``name`` (a declared base name or one
    of its parts, ``_lo``/``_hi``/``_se``, ``__<seed set>``: the same producer). An undeclared
    name raises :class:`~resdecay_lib.book.evidence.UndeclaredEvidence`; a declared one without a
    producer, ``ValueError``."""
    ev = E.declared(name)
    if ev not in PRODUCERS:
        raise ValueError(f"evidence {ev.name!r} has no producer in resdecay_lib.book.producers.PRODUCERS")
    return PRODUCERS[ev]


def producer(name: str):
    """The function producing evidence ``name`` (see :func:`producer_path`), imported from its
    module (a ``chapter`` of :mod:`resdecay_lib.analysis.chapters`)."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"name must be an evidence name (a str), got {type(name).__name__} {show(name)}")
    path = producer_path(name)
    module, _, attr = path.rpartition(".")
    fn = getattr(importlib.import_module(module), attr, None)
    if not callable(fn):
        raise ValueError(f"the producer {path!r} of {name!r} is not a function of {module}")
    return fn
