"""When a re-registration may be carried back (resdecay_lib.book.carries): the rule and every
value the claim reads unchanged, checked name by name on every seed set; the chain of carries
tools/history.py follows; and the recorded carries' file."""
import math
import pathlib

import pytest

from resdecay_lib.book import carries as C
from resdecay_lib.book import evidence as E
from resdecay_lib.book.claims import CLAIMS
from resdecay_lib.checks import ArgumentTypeError

ROOT = pathlib.Path(__file__).resolve().parents[2]
BY_ID = {c.id: c for c in CLAIMS}
INDEP = BY_ID["claim-independence"]          # reads a seed-set evidence (the correlations' share)


def _old(ids, fp="old", rule_fp="rule"):
    return {"claims": {i: {"fingerprint": fp, "rule_fingerprint": rule_fp} for i in ids}}


def _evidence(claim, value=0.25):
    return {k: value for k in C.claim_keys(claim)}


def _decided(claim, decision="d0", word="holds"):
    return {claim.id: {"decision": decision, "verdicts": {s: [word, "because"] for s in ("all", *E.SEED_SETS)}}}


def _check(claim, old, current, rule, before, after, was=None, now=None):
    return C.check_carry([claim], old, current, rule, before, after,
                         _decided(claim) if was is None else was, _decided(claim) if now is None else now)


def test_claim_keys_hold_every_part_and_every_seed_set_of_a_seed_set_evidence():
    keys = C.claim_keys(INDEP)
    share = E.SPLIT_CORR_SHARE
    assert set(share.keys()) <= set(keys)
    for s in E.SEED_SETS:
        assert set(share.set_keys(s)) <= set(keys)
    assert list(keys) == sorted(keys)


def test_a_moved_fingerprint_with_the_same_rule_and_values_is_carried():
    ev = _evidence(INDEP)
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, ev, dict(ev))
    assert out == {"carry": {INDEP.id: {"from": "old", "to": "new", "n_values": len(ev)}}, "refused": {}}


def test_one_value_that_moves_refuses_the_carry_and_names_it():
    ev = _evidence(INDEP)
    after = dict(ev)
    key = E.SPLIT_CORR_SHARE.set_keys("s567")[0]          # a confirmatory seed set's value only
    after[key] = 0.25 + 1e-15
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, ev, after)
    assert out["carry"] == {} and key in out["refused"][INDEP.id] and "1 of" in out["refused"][INDEP.id]


def test_a_value_glued_on_one_side_only_refuses_the_carry():
    ev = _evidence(INDEP)
    after = dict(ev)
    after.pop(E.SPLIT_CORR_SHARE.name)
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, ev, after)
    assert INDEP.id in out["refused"]


def test_a_changed_rule_is_registered_afresh_not_carried():
    ev = _evidence(INDEP)
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule2"}, ev, dict(ev))
    assert out["carry"] == {} and "its rule changed" in out["refused"][INDEP.id]


def test_a_changed_decision_refuses_the_carry_though_the_rules_own_fingerprint_stayed():
    """A helper of another module (a stricter within_margin), Claim.verdict's NaN rule or an
    evidence moved between needed and optional changes what decides the verdict, which the
    rule's own fingerprint does not cover."""
    ev = _evidence(INDEP)
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, ev, dict(ev),
                 now=_decided(INDEP, decision="d1"))
    assert out["carry"] == {} and "what decides its verdict changed" in out["refused"][INDEP.id]


def test_a_verdict_that_moves_on_one_seed_set_refuses_the_carry():
    ev = _evidence(INDEP)
    now = _decided(INDEP)
    now[INDEP.id]["verdicts"]["s567"] = ["open", "because"]
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, ev, dict(ev), now=now)
    assert out["carry"] == {} and "its verdict differs on s567" in out["refused"][INDEP.id]
    reason = _decided(INDEP)
    reason[INDEP.id]["verdicts"]["all"] = ["holds", "because of other numbers"]      # the same word, other numbers
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, ev, dict(ev), now=reason)
    assert "its verdict differs on all" in out["refused"][INDEP.id]


def test_a_claim_whose_fingerprint_did_not_move_is_neither_carried_nor_refused():
    ev = _evidence(INDEP)
    assert _check(INDEP, _old([INDEP.id]), {INDEP.id: "old"}, {INDEP.id: "rule"}, ev, {}) == {
        "carry": {}, "refused": {}}


def test_a_new_claim_and_a_claim_with_no_glued_value_are_refused():
    out = _check(INDEP, _old([]), {INDEP.id: "new"}, {INDEP.id: "rule"}, {}, {})
    assert "does not declare it" in out["refused"][INDEP.id]
    out = _check(INDEP, _old([INDEP.id]), {INDEP.id: "new"}, {INDEP.id: "rule"}, {}, {})
    assert "nothing shows the numbers unchanged" in out["refused"][INDEP.id]


def test_nan_equals_nan_only():
    nan = math.nan
    assert C.evidence_differences(["a", "b"], {"a": nan, "b": 1.0}, {"a": nan, "b": 1.0}) == {}
    assert set(C.evidence_differences(["a"], {"a": nan}, {"a": 1.0})) == {"a"}
    assert set(C.evidence_differences(["a"], {"a": 1.0}, {})) == {"a"}
    with pytest.raises(ArgumentTypeError, match="keys must be glue names"):
        C.evidence_differences("a", {}, {})
    with pytest.raises(ArgumentTypeError, match="after must be an evidence dict"):
        C.evidence_differences(["a"], {}, [])


def test_the_chain_follows_each_carry_back_and_stops_where_it_meets_itself():
    carries = [{"claims": {"c": {"from": "f0", "to": "f1", "n_values": 3}}, "why": "x"},
               {"claims": {"c": {"from": "f1", "to": "f2", "n_values": 3},
                           "d": {"from": "g0", "to": "g1", "n_values": 1}}, "why": "y"}]
    assert C.chain("c", "f2", carries) == ("f2", "f1", "f0")
    assert C.chain("c", "f1", carries) == ("f1", "f0")
    assert C.chain("d", "g1", carries) == ("g1", "g0")
    assert C.chain("e", "h0", carries) == ("h0",)
    back = carries + [{"claims": {"c": {"from": "f2", "to": "f0", "n_values": 1}}, "why": "z"}]   # carried back to f0
    assert C.chain("c", "f0", back) == ("f0", "f2", "f1")


def test_the_decision_text_reads_the_rule_claim_verdict_and_the_evidence_names():
    calls = []

    def fake(*objs):
        calls.append(objs)
        return "fp"
    text = C.decision_text(INDEP, fake)
    from resdecay_lib.book.verdicts import Claim
    assert calls == [(INDEP.rule, Claim)] and text.startswith("decision fp; needs ")
    assert all(str(n) in text for n in (*INDEP.needs, *INDEP.optional))


def test_the_recorded_carries_are_well_formed_and_name_ledger_claims(tmp_path):
    carries = C.read_carries(ROOT)
    for c in carries:
        assert set(c["claims"]) <= set(BY_ID), c["why"]
        assert all(v["from"] != v["to"] for v in c["claims"].values())
    assert C.read_carries(tmp_path) == []                    # no file: no carry
    (tmp_path / "results").mkdir()
    (tmp_path / C.CARRIES).write_text('{"carries": [{"why": "", "claims": {}}]}')
    with pytest.raises(ValueError, match=r"carries\[0\] must hold 'why'"):
        C.read_carries(tmp_path)


def test_the_carry_tools_verdict_script_gives_the_ledgers_verdicts_and_decisions():
    """tools/preregister.py runs one script in the registered commit's checkout and in this one:
    on the stored chapters it must give the ledger's verdicts, all seeds and each seed set, and
    each claim's decision_text."""
    import sys
    from resdecay_lib.book import ledger, preregistration
    from resdecay_lib.book.notebooks import read_evidence
    sys.path.insert(0, str(ROOT / "tools"))
    import preregister as tool          # tools/preregister.py
    got = tool.decided(ROOT, ROOT / "chapters")
    ev = read_evidence(ROOT / "chapters")
    for s in (None, *E.SEED_SETS):
        for c, v in ledger.evaluate(ev, seed_set=s):
            assert got[c.id]["verdicts"]["all" if s is None else s] == [v.word, v.reason], (c.id, s)
    assert {c.id: got[c.id]["decision"] for c in CLAIMS} == {
        c.id: C.decision_text(c, preregistration.code_fingerprint) for c in CLAIMS}


def test_the_carry_tool_compares_every_code_cells_outputs_but_images(tmp_path):
    import json
    import sys
    sys.path.insert(0, str(ROOT / "tools"))
    import preregister as tool
    cell = {"cell_type": "code", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": ["a line\n"]},
        {"output_type": "display_data", "data": {"text/plain": "x", "image/png": "AAAA"}, "metadata": {}}]}
    nb = tmp_path / "n.ipynb"
    nb.write_text(json.dumps({"cells": [cell, {"cell_type": "markdown", "source": "t"}]}))
    before = tool._outputs(nb)
    cell["outputs"][1]["data"]["image/png"] = "BBBB"          # an image: nbval leaves it out too
    nb.write_text(json.dumps({"cells": [cell]}))
    assert tool._outputs(nb) == before
    cell["outputs"][0]["text"] = ["another line\n"]
    nb.write_text(json.dumps({"cells": [cell]}))
    assert tool._outputs(nb) != before
