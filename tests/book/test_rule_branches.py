"""The rules read only the evidence of the branch they take, and the rules declared for the
confirmatory round decide as their docstrings say: claim-depth-cost's onset of Pre-LN's gap to
ResiDual, claim-compensation's flattening, claim-pretrained-idle with and without the last block."""
import math
import pathlib

import pytest

from resdecay_lib.book import evidence as E
from resdecay_lib.book import ledger, rules
from resdecay_lib.book.verdicts import NOT_COMPUTED, Claim, Verdict

NAN = math.nan
BY_ID = {c.id: c for c in ledger.CLAIMS}


def _iv(e, v, lo, hi):
    return {str(e): v, e.lo: lo, e.hi: hi}


def _gaps(gaps, growth=(NAN, NAN, NAN)):
    ev = {}
    for L, (lo, hi) in zip(sorted(E.GAP_BY_DEPTH), gaps):
        ev.update(_iv(E.GAP_BY_DEPTH[L], (lo + hi) / 2, lo, hi))
    ev.update(_iv(E.GAP_GROWTH, *growth))
    return ev


def test_a_nan_the_taken_branch_does_not_read_leaves_the_verdict_alone():
    def rule(ev):
        return Verdict("holds", "a") if ev["a"] > 0 else Verdict("does not hold", f"b {ev['b']}")
    claim = Claim("claim-x", "x", "x", (), ("a", "b"), rule)
    assert claim.verdict({"a": 1.0, "b": NAN}).word == "holds"
    v = claim.verdict({"a": -1.0, "b": NAN})
    assert v.word == "open" and v.reason == NOT_COMPUTED + "b)"
    assert ledger.NO_POWER == NOT_COMPUTED.rstrip(" ")


def test_depth_cost_names_the_onset_and_reads_the_growth_only_then():
    claim = BY_ID["claim-depth-cost"]
    # above the margin from depth 8 on, the growth not computed: the growth is read, so open
    ev = _gaps([(-0.01, 0.03), (0.02, 0.06), (0.03, 0.07), (0.02, 0.09)])
    assert claim.verdict(ev).reason.startswith(NOT_COMPUTED)
    v = claim.verdict({**ev, **_iv(E.GAP_GROWTH, 0.02, 0.005, 0.04)})
    assert v.word == "holds" and "from depth 8 on" in v.reason
    v = claim.verdict({**ev, **_iv(E.GAP_GROWTH, 0.02, -0.01, 0.04)})
    assert v.word == "holds with correction" and "from depth 8 on" in v.reason
    # every gap below the margin: no cost at any depth, the growth never read
    v = claim.verdict(_gaps([(-0.02, 0.005)] * 4))
    assert v.word == "does not hold"
    # the deepest depth undecided: no onset, open, naming it
    v = claim.verdict(_gaps([(0.02, 0.05), (0.02, 0.05), (0.02, 0.05), (-0.01, 0.05)]))
    assert v.word == "open" and "depth 24" in v.reason


def test_depth_cost_before_the_depth_24_runs_cannot_tell():
    v = BY_ID["claim-depth-cost"].verdict(_gaps([(0.01, 0.06), (0.035, 0.09), (0.005, 0.08), (NAN, NAN)]))
    assert v.word == "open" and v.reason.startswith(NOT_COMPUTED)


def _flat(toy, smol, qwen):
    ev = {}
    for e, x in ((E.FLATTENING_TOY, toy), (E.FLATTENING["smollm2"], smol), (E.FLATTENING["qwen"], qwen)):
        ev.update(_iv(e, sum(x) / 2, *x))
    return ev


def test_compensation_holds_when_one_model_flattens_the_decay_by_more_than_the_margin():
    claim = BY_ID["claim-compensation"]
    m = rules.EXP_MARGIN
    assert claim.verdict(_flat((m + 0.01, m + 0.2), (-0.05, 0.05), (-0.05, 0.05))).word == "holds"
    assert claim.verdict(_flat((-0.05, m - 0.01), (-0.05, 0.05), (0.0, m - 0.001))).word == "does not hold"
    # a positive flattening inside the margin is scaling up that does not compensate: not "holds"
    assert claim.verdict(_flat((0.02, m + 0.05), (0.01, 0.05), (0.0, 0.05))).word == "open"


def _idle(with_last, without, ref=0.4):
    ev = {}
    for m in rules.PRE_LN_FAMILIES:
        ev.update(_iv(E.HALF_RATIO[m], sum(with_last[m]) / 2, *with_last[m]))
        ev.update(_iv(E.HALF_RATIO_NO_LAST[m], sum(without[m]) / 2, *without[m]))
        ev[str(E.HALF_RATIO_REF[m])] = ref
        ev[str(E.HALF_RATIO_REF_NO_LAST[m])] = ref
    return ev


def test_pretrained_idle_says_when_its_verdict_depends_on_the_last_block():
    claim = BY_ID["claim-pretrained-idle"]
    above = {"smollm2": (1.1, 1.3), "qwen": (1.6, 2.9)}
    below = {"smollm2": (0.6, 0.8), "qwen": (0.5, 0.9)}
    v = claim.verdict(_idle(above, below))
    assert v.word == "open" and "depends on the last block" in v.reason
    assert "does not hold" in v.reason and "holds with correction" in v.reason
    assert claim.verdict(_idle(below, below)).word == "holds with correction"


def test_an_interval_wholly_above_the_theorems_ratio_is_named_in_an_open_reason():
    v = BY_ID["claim-idle-blocks"].verdict({**_iv(E.HALF_RATIO_TOY, 1.04, 0.82, 1.32), str(E.HALF_RATIO_REF_TOY): 0.386})
    assert v.word == "open" and "not at the theorem's rate" in v.reason
    v = BY_ID["claim-idle-blocks"].verdict({**_iv(E.HALF_RATIO_TOY, 0.6, 0.3, 1.1), str(E.HALF_RATIO_REF_TOY): 0.386})
    assert v.word == "open" and "not at the theorem's rate" not in v.reason


def test_replication_is_yes_only_where_the_confirmatory_verdict_is_the_exploratory_one():
    claim = BY_ID["claim-depth-cost"]
    below = _gaps([(-0.02, 0.005)] * 4)
    tagged = lambda ev, s: {f"{k}__{s}": v for k, v in ev.items()}  # noqa: E731
    base = {**below, **tagged(below, "s012"), **tagged(below, "s34")}
    same = ledger.replication({**base, **tagged(below, "s567")}, [claim])
    assert same[0]["replicated"] == "yes" and same[0]["confirmatory"].word == "does not hold"
    pending = ledger.replication({**base, **tagged(_gaps([(NAN, NAN)] * 4), "s567")}, [claim])
    assert pending[0]["replicated"] == "not yet"
    other = ledger.replication({**base, **tagged(_gaps([(0.02, 0.05)] * 4, (0.01, 0.005, 0.02)), "s567")}, [claim])
    assert other[0]["replicated"] == "no" and other[0]["confirmatory"].word == "holds"
    assert ledger.replication({**base, **tagged(below, "s567")}, [claim], derived={claim.id})[0]["replicated"] == "derived"


def _one_model(m, exp, ref, shift=0.01, drift=(-0.1, 0.1)):
    return {**_iv(E.PRETRAINED_EXP[m], sum(exp) / 2, *exp), str(E.PRETRAINED_REF[m]): ref,
            str(E.FITRANGE_SHIFT[m]): shift, **_iv(E.PRETRAINED_DRIFT[m], sum(drift) / 2, *drift)}


def test_the_confirmatory_reading_decides_from_the_confirmatory_model_alone():
    """A pretrained claim's confirmatory reading reads the 1.5B's evidence and no exploratory
    family's: its verdict follows the 1.5B, its reason names it, and the quantisation bound it
    widens by is the registered constant (the reading holds no Q4_1 round-trip)."""
    (m,) = E.CONFIRMATORY_MODELS
    claim = ledger.confirmatory_reading(BY_ID["claim-two-families"])
    assert set(claim.needs) == {E.PRETRAINED_EXP[m], E.PRETRAINED_REF[m], E.FITRANGE_SHIFT[m], E.PRETRAINED_DRIFT[m]}
    ok = _one_model(m, (-1.02, -0.98), -1.0)
    v = claim.verdict(ok)
    assert v.word == "holds" and f"{m} " in v.reason and "smollm2" not in v.reason
    assert f"+/- {rules.QUANT_SHIFT_REGISTERED:.3g} quantisation" in v.reason
    # the registered bound widens the interval: an interval that ends within the margin by less than it is open
    edge = 1.0 - rules.EXP_MARGIN + rules.QUANT_SHIFT_REGISTERED / 2
    assert claim.verdict(_one_model(m, (-edge - 0.01, -edge), -1.0, shift=0.0)).word == "open"
    assert claim.verdict(_one_model(m, (-0.3, -0.2), -1.0)).word == "does not hold"
    # claim-pretrained reads the confirmatory model as its test, Gemma and MiniLM not there
    v = ledger.confirmatory_reading(BY_ID["claim-pretrained"]).verdict(_one_model(m, (-0.6, -0.5), -1.0))
    assert v.word == "holds with correction" and "Gemma" not in v.reason
    # the exploratory reading of the same claim never reads the 1.5B, whatever the book holds
    assert not any(m in k for k in BY_ID["claim-two-families"].keys)


def test_a_pretrained_rule_given_no_model_refuses_rather_than_decide():
    from resdecay_lib.book.verdicts import EvidenceMissing
    with pytest.raises(EvidenceMissing, match="ev_flattening_smollm2"):
        rules.rule_compensation({})


def test_the_confirmatory_compensation_reads_the_one_model():
    (m,) = E.CONFIRMATORY_MODELS
    claim = ledger.confirmatory_reading(BY_ID["claim-compensation"])
    up = rules.EXP_MARGIN + 0.05
    v = claim.verdict(_iv(E.FLATTENING[m], up + 0.01, up, up + 0.02))
    assert v.word == "holds" and m in v.reason and "toy" not in v.reason
    assert claim.verdict(_iv(E.FLATTENING[m], 0.0, -0.01, 0.01)).word == "does not hold"
    assert claim.verdict(_iv(E.FLATTENING[m], NAN, NAN, NAN)).reason.startswith(NOT_COMPUTED)


def test_the_registered_quantisation_bound_is_the_chapters_value():
    """QUANT_SHIFT_REGISTERED is Chapter 9's stored ev_quant_shift (the value it was registered
    from); a chapter that moves it has changed what the exploratory reading widens by."""
    from pathlib import Path
    stored = ledger.read_evidence(Path(__file__).resolve().parents[2] / "chapters")
    assert stored[str(E.QUANT_SHIFT)] == rules.QUANT_SHIFT_REGISTERED


def test_a_confirmatory_reading_without_its_glues_is_not_yet_replicated():
    """A confirmatory reading whose evidence the book lacks is 'not yet', never a 'yes' by an open
    that happens to match an open exploratory verdict."""
    book = ledger.read_evidence(pathlib.Path(__file__).resolve().parents[2] / "chapters")
    (m,) = E.CONFIRMATORY_MODELS
    lacking = {k: v for k, v in book.items() if not k.startswith(str(E.HALF_RATIO[m])) and
               not k.startswith(str(E.HALF_RATIO_NO_LAST[m]))}
    rows = {r["claim"].id: r for r in ledger.replication(lacking)}
    assert rows["claim-pretrained-idle"]["all"].word == "open"
    assert rows["claim-pretrained-idle"]["confirmatory"].reason.startswith(ledger.MISSING)
    assert rows["claim-pretrained-idle"]["replicated"] == "not yet"
