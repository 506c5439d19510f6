"""Which verdicts are confirmatory, which exploratory and which derived: computed from the
history that ``tools/history.py`` records from git into ``results/history.json``.

A claim's rule was declared at the commit where the registry (``results/preregistration.json``)
first held the rule's CURRENT fingerprint (:mod:`resdecay_lib.book.preregistration`), or, where
that fingerprint was a carry (:mod:`resdecay_lib.book.carries`: a change of the code that left
the rule and every value it reads unchanged), the commit of the registration it was carried
from, back to the first. Its data
are the stored files its evidence is computed from: the runs, pretrained records and
predictions that :data:`DATA` and :data:`PREDICTIONS` name for each piece of evidence (by glob
pattern; ``{seed}`` stands for a seed of the seed set read). A datum counts from the commit that
first ADDED it (``git log --follow --diff-filter=A``): the data existed from then, whatever a
later commit changed in the file (backfilled provenance, a renamed key). The label of a claim's
verdict on a seed set (default: every seed, the ledger's) is

* ``derived`` when its evidence reads no stored data (the SymPy derivations and the live Monte
  Carlo checks of Chapters 1-6, :data:`NO_STORED_DATA`);
* ``confirmatory`` when every datum was committed after the rule's commit (the datum's commit
  descends from it and is not it) and so was every datum after the claim's predictions;
* ``exploratory`` when any datum existed at the rule's commit or before it.

A prediction file is part of what is declared, not a datum: it is what the data are tested
against (claim-front's ``results/predictions/front.json``, written from the depth-24 runs before
any deep run). It is recorded, and a confirmatory label also needs every datum to come after it.

The model weights and the text corpus lie outside the repository (pinned by hash in
``requirements-models.txt`` and ``requirements-corpus.txt``) and are not counted: what a claim
reads of them is what the stored records and runs hold, and those are counted.

:func:`labels` is a pure function of the recorded history, the claims and the registry (no git
at book time); :func:`stale` says what the recorded history lacks against the files stored now.
"""
from __future__ import annotations

import fnmatch
import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

from ..checks import ArgumentTypeError, show
from . import evidence as E
from .evidence import Evidence
from .verdicts import Claim

__all__ = ["LABELS", "NO_DATA", "HISTORY", "NO_STORED_DATA", "DATA", "PREDICTIONS", "Label", "patterns", "data_paths",
           "check_history", "labels", "label_counts", "seeds_held_out", "stored_paths", "stale", "read_history"]

#: the three labels
LABELS = ("confirmatory", "exploratory", "derived")
#: the label on a seed set none of whose data is recorded yet (a round still training): no label
NO_DATA = "no data yet"

#: the recorded history (relative to the repository root), written by ``tools/history.py``
HISTORY = pathlib.Path("results") / "history.json"

#: the chapters whose evidence reads nothing stored: each builds or simulates what it measures
#: (their ``chapter(root)`` docstrings say so: SymPy, Monte Carlo, freshly initialised models)
NO_STORED_DATA = frozenset({"01_stream", "02_theorem", "03_corollary_34", "04_corollary_35",
                            "05_beyond_independence", "06_initialisation"})

_TL = "results/train_long/"
_DEEP = "results/train_deep/"
_PT = "results/pretrained/"
#: the toy Pre-LN runs at L = 24 of the training sweep
_PRE24 = (_TL + "pre_ln_L24_s{seed}.json",)
#: every Pre-LN run at depth >= 8, the deeper rungs included (training_claims.depth_points)
_PRE_DEEP = tuple(f"{_TL}pre_ln_L{L}_s{{seed}}.json" for L in (8, 16, 24)) + tuple(
    f"{_DEEP}pre_ln_L{L}_s{{seed}}.json" for L in (48, 96))
#: the pretrained records (Shakespeare sample) by model key of the evidence
_RECORD = {"smollm2": _PT + "smollm2-135m__shakespeare.json", "qwen": _PT + "qwen2.5-coder-0.5b__shakespeare.json",
           "gemma3": _PT + "gemma3-270m__shakespeare.json", "minilm": _PT + "all-minilm-l6__shakespeare.json",
           # the confirmatory reading's record (evidence.CONFIRMATORY_MODELS)
           "qwen15": "results/pretrained_large/qwen2.5-coder-1.5b__pydoc.json"}


#: the front intervention's records (Chapter 9b), by model key of the evidence; a toy model's
#: record is also computed from its stored run and final weights
_INTERVENTION = {m: ("results/intervention/" + m + ".json",) + (
    (f"{_TL}pre_ln_L24_s{m[5:]}.json", f"{_TL}pre_ln_L24_s{m[5:]}.weights.pt") if m.startswith("toy_s") else ())
    for m in E.INTERVENTION_MODELS}

#: claim-depth-cost's gaps: Pre-LN's and ResiDual's runs at each depth of evidence.GAP_BY_DEPTH
_RESI_GAP = tuple(f"{_TL}{a}_L{L}_s{{seed}}.json" for a in ("resi_dual", "pre_ln") for L in sorted(E.GAP_BY_DEPTH))


def _fix_gap(arch: str) -> tuple[str, ...]:
    """A fix's final-loss gap to Pre-LN at equal depths >= 8: both placements' runs there."""
    return tuple(f"{_TL}{a}_L{L}_s{{seed}}.json" for a in (arch, "pre_ln") for L in (8, 16, 24))


#: the stored files each piece of evidence of Chapters 7-9 that a claim reads is computed from
#: (glob patterns relative to the repository root; ``{seed}``: a seed of the seed set read; a
#: pattern matching no recorded file reads nothing). An empty tuple: the evidence reads no stored
#: run or record (the trigram baseline is computed from the corpus, outside the repository).
DATA: dict[str, tuple[str, ...]] = {
    # Chapter 7: the training sweep's Pre-LN runs at L = 24 (the exponents, the split, the variances)
    **{e: _PRE24 for e in (E.TRAINED_EXP_PRE_LN, E.TRAINED_REF_PRE_LN, E.TRAINED_FITSTART_SHIFT_PRE_LN,
                           E.INIT_EXP_TRAINEDRUNS_PRE_LN, E.INIT_REF_PRE_LN, E.INIT_FITSTART_SHIFT_PRE_LN,
                           E.EXP_T_DF, E.EXP_N_SEEDS, E.SPLIT_CORR_SHARE, E.SPLIT_EXP_THEOREM, E.SPLIT_EXP_HETERO,
                           E.SPLIT_EXP_CORR, E.SPLIT_EXP_FULL, E.SPLIT_EXP_MEASURED, E.VAR_EXP_TOY, E.FLATTENING_TOY)},
    E.PRE_LN_WORST_LOSS_DEEP: _PRE_DEEP[:3],
    E.TRIGRAM_LOSS: (),
    # Chapter 7b: the deep runs (their positions between the predictions)
    E.FRONT_POSITION: (_DEEP + "pre_ln_L48_s*.json", _DEEP + "pre_ln_L96_s*.json"),
    E.FRONT_N_RUNS: (_DEEP + "pre_ln_L48_s*.json", _DEEP + "pre_ln_L96_s*.json"),
    E.FRONT_PRED_WIDTH: (),
    # Chapter 8: removals at L = 24, the depth slope (deeper rungs included), the fixes' gaps
    E.HALF_RATIO_TOY: _PRE24, E.HALF_RATIO_REF_TOY: _PRE24,
    E.DEPTH_SLOPE_PRE_LN: _PRE_DEEP, E.DEPTH_SLOPE_DF: _PRE_DEEP,
    **{E.VAL_LOSS_GAP[a]: _fix_gap(a) for a in E.VAL_LOSS_GAP},
    **{e: _RESI_GAP for e in (*E.GAP_BY_DEPTH.values(), E.GAP_GROWTH)},
    # Chapter 9: each model's record (the Q4_1 shift: MiniLM's and SmolLM2's)
    **{d[m]: (_RECORD[m],) for d in (E.PRETRAINED_EXP, E.PRETRAINED_REF, E.PRETRAINED_DRIFT, E.FITRANGE_SHIFT,
                                     E.VAR_EXP, E.HALF_RATIO, E.HALF_RATIO_REF, E.METRIC_RHO_CHANGE, E.FLATTENING,
                                     E.HALF_RATIO_NO_LAST, E.HALF_RATIO_REF_NO_LAST) for m in d},
    **{e: (_RECORD[m],) for (_, m), e in E.METRIC_DIFF.items()},
    E.QUANT_SHIFT: (_RECORD["minilm"], _RECORD["smollm2"]),
    # Chapter 9b: each model's measured intervention (a toy model's also its run and final weights)
    **{e: _INTERVENTION[m] for m in E.INTERVENTION_MODELS
       for e in (E.INTERVENTION_MEASURED[m], *(E.INTERVENTION_T[m, a] for a in E.INTERVENTION_ALPHAS))},
}

#: the prediction files a piece of evidence is tested against: declared, not data (module docstring)
PREDICTIONS: dict[str, tuple[str, ...]] = {
    E.FRONT_POSITION: ("results/predictions/front.json",),
    E.FRONT_PRED_WIDTH: ("results/predictions/front.json",),
    **{e: ("results/predictions/intervention.json",) for m in E.INTERVENTION_MODELS
       for e in (E.INTERVENTION_MEASURED[m], *(E.INTERVENTION_T[m, a] for a in E.INTERVENTION_ALPHAS))},
}


def _check_claim(claim) -> Claim:
    if not isinstance(claim, Claim):
        raise ArgumentTypeError(f"claim must be a Claim (book.claims.CLAIMS'), got {type(claim).__name__} {show(claim)}")
    return claim


def _seeds(seed_set, registry) -> tuple[int, ...]:
    """The seeds of ``seed_set`` (None: every seed of the registry's sets)."""
    sets = registry.get("seed_sets") if isinstance(registry, Mapping) else None
    if not isinstance(sets, Mapping) or not sets or not all(
            isinstance(v, (list, tuple)) and all(isinstance(s, int) and not isinstance(s, bool) for s in v)
            for v in sets.values()):
        raise ValueError(f"registry['seed_sets'] must map each seed set to its seeds (ints), got "
                         f"{show(sets if isinstance(registry, Mapping) else registry)}")
    if seed_set is None:
        return tuple(sorted({s for v in sets.values() for s in v}))
    if seed_set not in sets:
        raise ValueError(f"seed_set must be None (every seed) or one of {sorted(sets)}, got {show(seed_set)}")
    return tuple(sets[seed_set])


def _evidence(claim: Claim) -> tuple[Evidence, ...]:
    evs = tuple(n for n in (*claim.needs, *claim.optional) if isinstance(n, Evidence))
    plain = [n for n in (*claim.needs, *claim.optional) if not isinstance(n, Evidence)]
    if plain:
        raise ValueError(f"{claim.id} reads undeclared evidence names {plain}: declare them in book.evidence")
    return evs


def patterns(claim, registry, seed_set=None, table=None) -> tuple[str, ...]:
    """The glob patterns of the stored files ``claim``'s evidence reads on ``seed_set`` (None:
    every seed; else a key of ``registry['seed_sets']``), from ``table`` (default :data:`DATA`,
    or :data:`PREDICTIONS`). A seed-set evidence's ``{seed}`` becomes each seed of the set; any
    other evidence's becomes every seed. ``ValueError`` names evidence of a chapter outside
    :data:`NO_STORED_DATA` that the table does not declare (so no evidence passes for derived
    by omission)."""
    claim = _check_claim(claim)
    table = DATA if table is None else table
    every, chosen = _seeds(None, registry), _seeds(seed_set, registry)
    out = []
    for ev in _evidence(claim):
        if ev.chapter in NO_STORED_DATA:
            continue
        if table is DATA and ev not in DATA:
            raise ValueError(f"{claim.id} reads {ev.name} (chapter {ev.chapter}), which book.history.DATA does not "
                             f"map to the stored files it is computed from")
        for p in table.get(ev, ()):
            seeds = chosen if ev.by_seed_set else every
            if "{seed}" in p:
                out.extend(p.format(seed=s) for s in seeds)
            else:
                out.append(p)
    return tuple(dict.fromkeys(out))


def data_paths(claim, registry, paths, seed_set=None, table=None) -> tuple[str, ...]:
    """The files of ``paths`` (repository-relative str) that ``claim``'s :func:`patterns` match, sorted."""
    pats = patterns(claim, registry, seed_set, table)
    if isinstance(paths, (str, bytes)) or not hasattr(paths, "__iter__"):
        raise ArgumentTypeError(f"paths must be repository-relative file paths (a list of str), got "
                                f"{type(paths).__name__} {show(paths)}")
    paths = list(paths)
    if not all(isinstance(p, str) for p in paths):
        raise ArgumentTypeError(f"paths must all be str, got {show([p for p in paths if not isinstance(p, str)])}")
    return tuple(sorted(p for p in paths if any(fnmatch.fnmatchcase(p, q) for q in pats)))


@dataclass(frozen=True)
class Label:
    """A claim's label on one seed set (None: every seed): ``word`` (one of :data:`LABELS`, or :data:`NO_DATA` on a seed set with no datum recorded), the
    rule's commit and its committer time, how many data the claim reads (``n_data``) and how many
    of them existed at the rule's commit or before it (``n_before``), the earliest datum (path,
    commit, committed; None for a derived claim), the prediction files it is tested against, and
    the commits of the later registrations carried back to ``rule_commit`` (``carried``: each
    changed the code and no rule or value, :mod:`resdecay_lib.book.carries`)."""
    claim: str
    seed_set: str | None
    word: str
    rule_commit: str
    rule_committed: str
    n_data: int
    n_before: int
    earliest: tuple | None
    predictions: tuple
    #: the later registrations a carry dated from ``rule_commit`` (resdecay_lib.book.carries), newest
    #: first, each (commit, committed)
    carried: tuple = ()


def _entry(history, section, key, fields):
    v = history[section].get(key)
    if not isinstance(v, Mapping) or not all(isinstance(v.get(f), str) and v.get(f) for f in fields):
        raise ValueError(f"history[{section!r}][{key!r}] must be a record with {', '.join(fields)} (str), got {show(v)}")
    return v


def check_history(history) -> Mapping:
    """``history`` (``results/history.json`` as a dict) checked: a ``rules`` map {claim id:
    {fingerprint, commit, committed}} and a ``data`` map {path: {commit, committed, after: [the
    rule and prediction commits this datum's first commit descends from, itself excluded]}}.
    :class:`~resdecay_lib.checks.ArgumentTypeError` for a non-dict, ``ValueError`` naming the
    first bad entry."""
    if not isinstance(history, Mapping):
        raise ArgumentTypeError(f"history must be a dict (results/history.json's), got {type(history).__name__} {show(history)}")
    for section in ("rules", "data"):
        if not isinstance(history.get(section), Mapping):
            raise ValueError(f"history[{section!r}] must be a dict, got {show(history.get(section))}")
    for k in history["rules"]:
        v = _entry(history, "rules", k, ("fingerprint", "commit", "committed"))
        carried = v.get("carried", [])
        if not isinstance(carried, (list, tuple)) or not all(
                isinstance(c, Mapping) and all(isinstance(c.get(f), str) and c.get(f)
                                               for f in ("fingerprint", "commit", "committed")) for c in carried):
            raise ValueError(f"history['rules'][{k!r}]['carried'] must be a list of registrations "
                             f"{{fingerprint, commit, committed}}, got {show(carried)}")
    for k in history["data"]:
        v = _entry(history, "data", k, ("commit", "committed"))
        after = v.get("after")
        if not isinstance(after, (list, tuple)) or not all(isinstance(a, str) for a in after):
            raise ValueError(f"history['data'][{k!r}]['after'] must be a list of commits (str), got {show(after)}")
    return history


def _label(claim: Claim, history, registry, seed_set) -> Label:
    reg = registry.get("claims") if isinstance(registry, Mapping) else None
    if not isinstance(reg, Mapping) or not isinstance(reg.get(claim.id), Mapping):
        raise ValueError(f"registry['claims'] has no declaration of {claim.id}")
    rule = history["rules"].get(claim.id)
    if rule is None:
        raise ValueError(f"results/history.json has no rule commit for {claim.id}: re-run python tools/history.py")
    rule = _entry(history, "rules", claim.id, ("fingerprint", "commit", "committed"))
    if rule["fingerprint"] != reg[claim.id].get("fingerprint"):
        raise ValueError(f"results/history.json records {claim.id}'s rule at fingerprint {rule['fingerprint']}, the "
                         f"registry holds {show(reg[claim.id].get('fingerprint'))}: re-run python tools/history.py")
    data = history["data"]
    carried = tuple((c["commit"], c["committed"]) for c in rule.get("carried", ()))
    found = data_paths(claim, registry, data, seed_set)
    preds = data_paths(claim, registry, data, seed_set, PREDICTIONS)
    pats = patterns(claim, registry, seed_set)
    if not pats:
        return Label(claim.id, seed_set, "derived", rule["commit"], rule["committed"], 0, 0, None, preds, carried)
    if not found and seed_set is not None:     # a round whose runs are not stored yet (the confirmatory seeds)
        return Label(claim.id, seed_set, NO_DATA, rule["commit"], rule["committed"], 0, 0, None, preds, carried)
    if not found:
        raise ValueError(f"{claim.id} reads stored data ({', '.join(pats[:3])}, ...) and results/history.json records "
                         f"none of it: re-run python tools/history.py")
    before = [p for p in found if rule["commit"] not in data[p]["after"]]
    late = [p for p in found for q in preds if data[q]["commit"] not in data[p]["after"]]
    first = min(found, key=lambda p: (data[p]["committed"], p))
    word = "exploratory" if before or late else "confirmatory"
    return Label(claim.id, seed_set, word, rule["commit"], rule["committed"], len(found), len(before),
                 (first, data[first]["commit"], data[first]["committed"]), preds, carried)


def labels(history, registry, claims=None, seed_set=None) -> dict[str, Label]:
    """{claim id: :class:`Label`} of ``claims`` (default: the ledger's) on ``seed_set`` (None:
    every seed, the ledger's verdict; else a key of ``registry['seed_sets']``), from ``history``
    (``results/history.json``, :func:`read_history`) and ``registry`` (``read_registry``'s). A
    history that lacks a claim or the data it reads, or that records a fingerprint other than the
    registry's, raises ``ValueError`` saying to re-run ``tools/history.py``."""
    from .claims import CLAIMS, confirmatory_reading
    check_history(history)
    if not isinstance(registry, Mapping):
        raise ArgumentTypeError(f"registry must be a dict (read_registry's), got {type(registry).__name__} {show(registry)}")
    claims = CLAIMS if claims is None else claims
    if isinstance(claims, (str, bytes, Mapping)) or not hasattr(claims, "__iter__"):
        raise ArgumentTypeError(f"claims must be a list of Claim, got {type(claims).__name__} {show(claims)}")
    claims = [_check_claim(c) for c in claims]
    _seeds(seed_set, registry)
    # on the confirmatory set a pretrained claim reads its confirmatory reading's data
    reading = confirmatory_reading if seed_set == E.CONFIRMATORY_SET else (lambda c: c)
    return {c.id: _label(reading(c), history, registry, seed_set) for c in claims}


def label_counts(found: Mapping) -> dict[str, int]:
    """{label: how many} of :func:`labels`' result, every label of :data:`LABELS` (0 included)."""
    if not isinstance(found, Mapping) or not all(isinstance(v, Label) for v in found.values()):
        raise ArgumentTypeError(f"found must be labels()' dict {{claim id: Label}}, got {show(found)}")
    return {w: sum(v.word == w for v in found.values()) for w in LABELS}


def seeds_held_out(history, registry, claims=None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(seeds before, seeds after): each seed of the registry's sets with a stored run that a
    claim's seed-set evidence reads, split by whether any such run of that seed existed at the
    claim's rule commit (before) or every one came later (after). A seed no such run reads is in
    neither. Same inputs and errors as :func:`labels`."""
    from .claims import CLAIMS
    check_history(history)
    claims = [_check_claim(c) for c in (CLAIMS if claims is None else claims)]
    labels(history, registry, claims)                   # every check of the inputs, once
    before, seen = set(), set()
    for c in claims:
        commit = history["rules"][c.id]["commit"]
        for s in _seeds(None, registry):
            pats = [p.format(seed=s) for ev in _evidence(c) if ev.by_seed_set and ev.chapter not in NO_STORED_DATA
                    for p in DATA.get(ev, ()) if "{seed}" in p]
            found = [p for p in history["data"] if any(fnmatch.fnmatchcase(p, q) for q in pats)]
            seen.update([s] if found else [])
            before.update([s] if any(commit not in history["data"][p]["after"] for p in found) else [])
    return tuple(sorted(before)), tuple(sorted(seen - before))


def _root(root) -> pathlib.Path:
    fs = os.fspath(root) if isinstance(root, (str, os.PathLike)) else None
    if not isinstance(fs, str) or not fs.strip() or "\x00" in fs:
        raise ArgumentTypeError(f"root must be the repository's folder (a non-empty str or os.PathLike), "
                                f"got {type(root).__name__} {show(root)}")
    path = pathlib.Path(fs)
    if not path.is_dir():
        raise ValueError(f"root must be the repository's folder, got {fs!r}, which is not a folder")
    return path


def stored_paths(root, registry, claims=None) -> tuple[str, ...]:
    """Every file under ``root`` that a claim's :data:`DATA` or :data:`PREDICTIONS` patterns match
    (on every seed, its confirmatory reading's included), repository-relative, sorted: what
    ``tools/history.py`` records."""
    from .claims import CLAIMS
    root = _root(root)
    out = set()
    from .claims import confirmatory_reading
    for c in (CLAIMS if claims is None else claims):
        for table in (DATA, PREDICTIONS):
            for p in patterns(c, registry, None, table) + patterns(confirmatory_reading(c), registry, None, table):
                out.update(str(f.relative_to(root)) for f in root.glob(p) if f.is_file())
    return tuple(sorted(out))


def stale(history, root, registry, claims=None) -> dict[str, list[str]]:
    """What ``history`` does not say of the book at ``root``: ``"unrecorded"`` (stored files the
    claims read that it lacks), ``"gone"`` (files it records that are no longer stored) and
    ``"rules"`` (claims whose registered fingerprint it records otherwise, or not at all). All
    empty: the recorded history is current."""
    from .claims import CLAIMS
    check_history(history)
    stored = set(stored_paths(root, registry, claims))
    reg = registry.get("claims", {}) if isinstance(registry, Mapping) else {}
    rules = history["rules"]
    return {"unrecorded": sorted(stored - set(history["data"])), "gone": sorted(set(history["data"]) - stored),
            "rules": sorted(c.id for c in (CLAIMS if claims is None else claims)
                            if c.id not in rules or rules[c.id].get("fingerprint") != reg.get(c.id, {}).get("fingerprint"))}


def read_history(root=".") -> dict:
    """``root/results/history.json`` as a dict (checked by :func:`check_history`); ``ValueError``
    naming the path when it is missing or not JSON."""
    import json
    path = _root(root) / HISTORY
    if not path.is_file():
        raise ValueError(f"{str(path)!r} is not a file: run python tools/history.py")
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{str(path)!r} cannot be read as JSON: {type(exc).__name__}") from None
    return dict(check_history(history))
