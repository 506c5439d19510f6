"""Every verdict could have come out the other way.

For each claim of the ledger, starting from the evidence the book holds now: one perturbation
of that evidence, of a size the evidence itself makes plausible (an interval moved by about its
width, a standard error as small as more seeds would make it, a statistic across its critical
value), changes the verdict; another, smaller than the evidence's own uncertainty, does not.
A rule no perturbation can move would be a rule that cannot fail.
"""
import math
import pathlib

import pytest

from resdecay_lib.book import evidence
from resdecay_lib.book import ledger
from resdecay_lib.book import rules

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOOK = ledger.read_evidence(ROOT / "chapters")
BY_ID = {c.id: c for c in ledger.CLAIMS}


def _width(ev, e):
    return ev[e.hi] - ev[e.lo]


def _place(ev, e, centre, width=None):
    """``e``'s interval moved (and, with ``width``, resized) to ``centre``."""
    w = _width(ev, e) if width is None else width
    return {e: centre, e.lo: centre - w / 2, e.hi: centre + w / 2}


def _nudge(ev, e, thresholds=(), frac=0.1):
    """``e``'s interval shifted up by ``frac`` of its width (well inside its own
    uncertainty), and by at most half the distance from its ends to any of ``thresholds``
    (the lines its rule compares it with)."""
    d = frac * _width(ev, e) if math.isfinite(_width(ev, e)) else 0.0
    gaps = [abs(t - x) for t in thresholds for x in (ev[e.lo], ev[e.hi]) if t >= x]
    d = min([d] + [g / 2 for g in gaps])
    return {k: ev[k] + d for k in (e, e.lo, e.hi)}


def _across(ev, e, threshold, margin=0.0):
    """``e``'s interval moved, at its width (at most 0.2), wholly to the side of
    ``threshold +/- margin`` it is not on now (above it if it straddles)."""
    w = min(_width(ev, e), 0.2)
    below = ev[e.hi] < threshold - margin
    centre = threshold + margin + w / 2 + 0.01 if below or ev[e.lo] <= threshold + margin else \
        threshold - margin - w / 2 - 0.01
    return _place(ev, e, centre, w)


FAMILIES = ledger.PRE_LN_FAMILIES


def _family_at_reference(ev, width=0.04):
    """Both Pre-LN families measured at their references, narrowly, with straight curves and
    no fit-range sensitivity: what a confirming measurement would look like."""
    out = {evidence.QUANT_SHIFT: 0.01}
    for m in FAMILIES:
        out.update(_place(ev, evidence.PRETRAINED_EXP[m], ev[evidence.PRETRAINED_REF[m]], width))
        out.update({evidence.FITRANGE_SHIFT[m]: 0.01, **_place(ev, evidence.PRETRAINED_DRIFT[m], 0.0, 0.2)})
    return out


#: claim id -> (perturbation that changes the verdict, perturbation that keeps it)
PERTURBATIONS = {
    "claim-omega-formula": (
        lambda ev: {evidence.THM33_MAXZ_CORRECTED_SMALL_D: ev[evidence.THM33_Z_CRIT] + 1.0,
                    evidence.THM33_MAXZ_RAW_SMALL_D: max(ev[evidence.THM33_MAXZ_RAW_SMALL_D], ev[evidence.THM33_Z_CRIT] + 1.0)},
        lambda ev: {evidence.THM33_MAXZ_LARGE_D: 0.9 * ev[evidence.THM33_MAXZ_LARGE_D]}),
    "claim-mean-abs-rate": (
        lambda ev: {evidence.COR34_MAXZ: ev[evidence.COR34_Z_CRIT] + 0.5},
        lambda ev: {evidence.COR34_MAXZ: 0.9 * ev[evidence.COR34_MAXZ]}),
    "claim-output-rate": (
        lambda ev: _across(ev, evidence.COR35_RANDOM_EXP, ev[evidence.COR35_RANDOM_EXP_THEORY], ledger.EXP_MARGIN),
        lambda ev: _nudge(ev, evidence.COR35_RANDOM_EXP, [ev[evidence.COR35_RANDOM_EXP_THEORY] + s * ledger.EXP_MARGIN
                                                   for s in (-1, 1)])),
    "claim-fifth-at-24": (
        lambda ev: {evidence.FIFTH_RATIO_SEED_K2: 0.2},
        lambda ev: {evidence.FIFTH_RATIO_SEED_K2: ev[evidence.FIFTH_RATIO_SEED_K2] + 0.01}),
    "claim-independence": (
        lambda ev: _across(ev, evidence.SPLIT_CORR_SHARE, ledger.SPLIT_BOUNDARY),
        lambda ev: _nudge(ev, evidence.SPLIT_CORR_SHARE, [ledger.SPLIT_BOUNDARY])),
    "claim-init-not-training": (
        # training that keeps the predicted exponent (the trained one at its reference) or, if
        # the book's already lies within the margin, training that departs five margins from it
        lambda ev: {evidence.TRAINED_EXP_PRE_LN: ev[evidence.TRAINED_REF_PRE_LN]
                    if abs(ev[evidence.TRAINED_EXP_PRE_LN] - ev[evidence.TRAINED_REF_PRE_LN]) > ledger.EXP_MARGIN
                    else ev[evidence.TRAINED_REF_PRE_LN] + 5 * ledger.EXP_MARGIN},
        lambda ev: {evidence.TRAINED_EXP_PRE_LN: ev[evidence.TRAINED_EXP_PRE_LN] - 0.2 * ev[evidence.TRAINED_EXP_PRE_LN.se]}),
    "claim-compensation": (
        # every family's flattening placed at 0, narrowly (no family's scaling flattens the decay),
        # or, if that is the book's reading, the toy one moved wholly above the margin
        lambda ev: ({k: v for e in (evidence.FLATTENING_TOY, *(evidence.FLATTENING[m] for m in FAMILIES))
                     for k, v in _place(ev, e, 0.0, 0.1).items()}
                    if any(ev[e.lo] > ledger.EXP_MARGIN
                           for e in (evidence.FLATTENING_TOY, *(evidence.FLATTENING[m] for m in FAMILIES)))
                    else _place(ev, evidence.FLATTENING_TOY, 0.5, 0.2)),
        lambda ev: {k: v for m in FAMILIES
                    for k, v in _nudge(ev, evidence.FLATTENING[m], [ledger.EXP_MARGIN]).items()}),
    "claim-idle-blocks": (
        # the later half's ratio moved wholly below the theorem's, or (if it is) above 1
        lambda ev: _place(ev, evidence.HALF_RATIO_TOY, 0.5 * ev[evidence.HALF_RATIO_REF_TOY], 0.1)
        if ev[evidence.HALF_RATIO_TOY.hi] >= ev[evidence.HALF_RATIO_REF_TOY] else _place(ev, evidence.HALF_RATIO_TOY, 1.5, 0.2),
        lambda ev: _nudge(ev, evidence.HALF_RATIO_TOY, [ev[evidence.HALF_RATIO_REF_TOY], 1.0])),
    "claim-depth-cost": (
        # every gap to ResiDual placed within the margin, narrowly (no depth costs), with the growth
        # flat: "does not hold" where the book's gaps cannot yet tell
        lambda ev: {**{k: v for e in evidence.GAP_BY_DEPTH.values() for k, v in _place(ev, e, 0.0, 0.01).items()},
                    **_place(ev, evidence.GAP_GROWTH, 0.0, 0.01)},
        # the decided gaps shifted by a tenth of their width, the undecided ones left as they are
        lambda ev: {k: v for L, e in evidence.GAP_BY_DEPTH.items() if math.isfinite(ev[e.lo])
                    and (ev[e.lo] > ledger.DEPTH_GAP_MARGIN or ev[e.hi] < ledger.DEPTH_GAP_MARGIN)
                    for k, v in _nudge(ev, e, [ledger.DEPTH_GAP_MARGIN]).items()}),
    "claim-fixes-escape": (
        lambda ev: _place(ev, evidence.INIT_EXP["peri_ln"], ev[evidence.INIT_EXP["pre_ln"].hi] + _width(ev, evidence.INIT_EXP["peri_ln"]))
        if ev[evidence.INIT_EXP["peri_ln"].lo] <= ev[evidence.INIT_EXP["pre_ln"].hi]
        else _place(ev, evidence.INIT_EXP["peri_ln"], ev[evidence.INIT_EXP["pre_ln"]]),
        lambda ev: _nudge(ev, evidence.INIT_EXP["peri_ln"], [ev[evidence.INIT_EXP["pre_ln"].hi]])),
    "claim-gradients-undamped": (
        # Post-LN's second block damped: its interval moved below 1 (or, if it is, above)
        lambda ev: _place(ev, evidence.GRAD_RATIO2["post_ln"], 0.5, 0.2) if ev[evidence.GRAD_RATIO2["post_ln"].hi] >= 1
        else _place(ev, evidence.GRAD_RATIO2["post_ln"], 2.0, 0.2),
        lambda ev: _nudge(ev, evidence.GRAD_RATIO["pre_ln"], [1.0])),
    "claim-pretrained": (
        lambda ev: _family_at_reference(ev),
        lambda ev: _nudge(ev, evidence.PRETRAINED_EXP["smollm2"])),
    "claim-two-families": (
        lambda ev: _family_at_reference(ev),
        lambda ev: _nudge(ev, evidence.PRETRAINED_EXP["qwen"])),
    "claim-pretrained-idle": (
        # both readings, with the last block and without it, made to vanish (below the theorem's
        # ratio) for both families, or (if they do) one family's later half made to cost more
        lambda ev: ({k: v for d, r in ((evidence.HALF_RATIO, evidence.HALF_RATIO_REF),
                                       (evidence.HALF_RATIO_NO_LAST, evidence.HALF_RATIO_REF_NO_LAST))
                     for m in FAMILIES for k, v in _place(ev, d[m], 0.5 * ev[r[m]], 0.05).items()}
                    if not all(ev[evidence.HALF_RATIO[m].hi] < ev[evidence.HALF_RATIO_REF[m]] for m in FAMILIES)
                    else _place(ev, evidence.HALF_RATIO["qwen"], 1.5, 0.2)),
        lambda ev: {k: v for m in FAMILIES for k, v in _nudge(ev, evidence.HALF_RATIO[m], [1.0, ev[evidence.HALF_RATIO_REF[m]]]).items()}),
    "claim-front": (
        # the deep runs' mean position moved wholly to the other side of 0 (or, if it straddles, below)
        lambda ev: _place(ev, evidence.FRONT_POSITION, -1.0, 0.4) if ev[evidence.FRONT_POSITION.hi] >= 0
        else _place(ev, evidence.FRONT_POSITION, 1.0, 0.4),
        lambda ev: _nudge(ev, evidence.FRONT_POSITION, [0.0])),
    "claim-mechanism": (
        # one family model's later blocks make up for the front's size: its T wholly below 1 - margin
        lambda ev: _place(ev, evidence.INTERVENTION_T["qwen", "two"], 1 - rules.TRACKING_MARGIN - 0.2, 0.1),
        lambda ev: _nudge(ev, evidence.INTERVENTION_T["qwen", "two"],
                          [1 - rules.TRACKING_MARGIN, 1 + rules.TRACKING_MARGIN])),
    "claim-redundancy-metric": (
        lambda ev: {k: v for m in FAMILIES for c in ledger.COMPETITORS
                    for k, v in _place(ev, evidence.METRIC_DIFF[c, m], 0.0, 0.1).items()},
        lambda ev: {k: v for m in FAMILIES for k, v in _nudge(ev, evidence.METRIC_RHO_CHANGE[m], [0.0]).items()}),
    "claim-promote": (
        lambda ev: {**_family_at_reference(ev),
                    **_place(ev, evidence.TRAINED_EXP_PRE_LN, ev[evidence.TRAINED_REF_PRE_LN], 0.04),
                    evidence.TRAINED_EXP_PRE_LN.se: 0.005},
        lambda ev: _nudge(ev, evidence.PRETRAINED_EXP["smollm2"])),
}


def test_every_claim_has_its_perturbations():
    assert set(PERTURBATIONS) == {c.id for c in ledger.CLAIMS}


@pytest.mark.parametrize("cid", sorted(PERTURBATIONS))
def test_a_plausible_perturbation_changes_the_verdict_and_a_small_one_does_not(cid):
    claim = BY_ID[cid]
    before = claim.verdict(BOOK)
    assert not claim.missing(BOOK), before.reason
    flip, keep = PERTURBATIONS[cid]
    ev = dict(BOOK)
    nan = [k for k in claim.keys if isinstance(ev[k], float) and math.isnan(ev[k])]
    # evidence the chapter could not compute is first given the value a measurement could give
    for k in nan:
        ev[k] = 0.05 if not k.endswith(("_lo", "_hi")) else (0.01 if k.endswith("_lo") else 0.09)
    if nan:
        before = claim.verdict(ev)
    changed = claim.verdict({**ev, **flip(ev)})
    kept = claim.verdict({**ev, **keep(ev)})
    assert changed.word != before.word, f"{cid}: {before.word} both times; {changed.reason}"
    assert kept.word == before.word, f"{cid}: {before.word} -> {kept.word}: {kept.reason}"
