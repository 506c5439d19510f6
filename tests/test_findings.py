"""The findings the README states are the ones the stored evidence gives (tools/findings.py)."""
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import findings as tool  # noqa: E402  (tools/findings.py)

from resdecay_lib.book import findings, ledger  # noqa: E402


def test_readme_states_the_findings_the_stored_evidence_gives():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if tool.START not in text:
        pytest.fail("README.md has no findings block: run python tools/findings.py")
    assert tool.block() in text, "README.md's findings are stale: run python tools/findings.py"


def test_findings_cite_the_ledgers_verdicts_and_move_with_the_evidence():
    ev = ledger.read_evidence(ROOT / "chapters")
    text = findings.findings_markdown(ev)
    verdicts = {c.id: v.word for c, v in ledger.evaluate(ev)}
    assert f"claim-init-not-training: {verdicts['claim-init-not-training']}" in text
    moved = dict(ev)
    moved["ev_trained_exp_pre_ln"] = ev["ev_trained_exp_pre_ln"] - 0.5
    assert findings.findings_markdown(moved) != text


def test_headline_rows_carry_intervals_and_their_matched_references():
    ev = ledger.read_evidence(ROOT / "chapters")
    for r in findings.headline(ev):
        assert r["lo"] <= r["value"] <= r["hi"] or r["value"] != r["value"]
        assert r["verdict"] in ledger.VERDICTS


def test_the_front_finding_states_the_deep_runs_position_once_three_are_stored():
    ev = ledger.read_evidence(ROOT / "chapters")
    few = {**ev, "ev_front_n_runs": 2.0}
    assert "2 deep runs stored so far" in findings._front_sentence(few, "open")
    three = {**ev, "ev_front_n_runs": 3.0, "ev_front_position": 4.1, "ev_front_position_lo": 1.2,
             "ev_front_position_hi": 7.0}
    text = findings._front_sentence(three, "does not hold")
    assert "4.1 [1.2, 7.0]" in text and "it does not resume" in text and "3 runs" in text


def test_the_long_runs_finding_states_the_end_exponent_and_its_late_change_once_three_are_stored():
    few = {"ev_long_n_runs": 1.0}
    assert "1 of the three runs are stored" in findings._long_sentence(few)
    three = {"ev_long_n_runs": 3.0, "ev_long_exp_end": -0.21, "ev_long_exp_end_lo": -0.35,
             "ev_long_exp_end_hi": -0.07, "ev_long_exp_change": 0.03, "ev_long_exp_change_lo": 0.01,
             "ev_long_exp_change_hi": 0.05, "ev_long_settle_margin": 0.08}
    text = findings._long_sentence(three)
    assert "-0.21 [-0.35, -0.07]" in text and "0.03 [0.01, 0.05]" in text and "0.08" in text
