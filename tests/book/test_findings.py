"""The findings the README states are the ones the stored evidence gives (tools/findings.py), and
each sentence of them says what its numbers show, on every branch."""
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import findings as tool  # noqa: E402  (tools/findings.py)

from resdecay_lib.book import evidence as E, findings, ledger  # noqa: E402


@pytest.fixture(scope="module")
def ev():
    return findings.read_findings_evidence(ROOT / "chapters")


@pytest.fixture(scope="module")
def labels():
    return findings.book_labels(ROOT)


def _v(cid, word, label="exploratory", **more):
    """A finding's ``verdicts`` argument: {claim id: (word, label)}."""
    return {cid: (word, label), **more}


def _iv(name, value, lo, hi, **more):
    return {name: value, name + "_lo": lo, name + "_hi": hi, **{f"{name}_{k}": v for k, v in more.items()}}


def test_readme_states_the_findings_the_stored_evidence_gives():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    if tool.START not in text:
        pytest.fail("README.md has no findings block: run python tools/findings.py")
    assert tool.block() in text, "README.md's findings are stale: run python tools/findings.py"


def test_findings_are_a_short_list_citing_the_ledgers_verdicts_and_move_with_the_evidence(ev, labels):
    text = findings.findings_list(ev, labels, "plain")
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert 5 <= len(bullets) <= 7
    verdicts = {c.id: v.word for c, v in ledger.evaluate(ev)}
    assert f"claim-init-not-training: {verdicts['claim-init-not-training']}; {labels['claim-init-not-training']}" in text
    assert f"claim-front: {verdicts['claim-front']}; {labels['claim-front']}" in text
    moved = {**ev, "ev_trained_exp_pre_ln": ev["ev_trained_exp_pre_ln"] - 0.5}
    assert findings.findings_list(moved, labels, "plain") != text


def test_every_number_in_the_findings_comes_from_the_evidence(ev, labels):
    """Each decimal the findings print is a stored value (or a share, level or spread of one)."""
    text = findings.findings_list(ev, labels, "plain")
    shown = {f"{v:.{d}f}" for v in ev.values() if v == v for d in (1, 2)}
    shown |= {f"{findings.interval_level(ev, e) * 100:g}" for e in E.DECLARED.values()
              if e.kind != "value" and findings.interval_level(ev, e)}
    sd = ev["ev_front_position_se"] * ev["ev_front_n_runs"] ** 0.5
    shown |= {f"{sd:.1f}", f"{ledger.SPLIT_BOUNDARY}"}
    printed = set(re.findall(r"(?<![\w.])-?\d+\.\d+", text)) | set(re.findall(r"(\d+(?:\.\d+)?)%", text))
    assert printed - shown == set(), f"numbers not from the evidence: {sorted(printed - shown)}"


def test_each_verdict_the_findings_cite_carries_its_computed_label(ev, labels):
    text = findings.findings_list(ev, labels, "plain")
    cited = re.findall(r"\((claim-[a-z0-9-]+): ", text)
    assert "claim-front" in cited
    for cid in cited:
        note = re.search(rf"\({cid}: [^;]+; (\w+)\)", text).group(1)
        assert note == labels[cid], cid
    swapped = {c: "confirmatory" if w == "exploratory" else w for c, w in labels.items()}
    assert findings.findings_list(ev, swapped, "plain") != text


def test_the_links_point_where_each_reader_can_follow_them(ev, labels):
    book, readme, plain = (findings.findings_list(ev, labels, s) for s in ("book", "readme", "plain"))
    assert "[claim-front](chapters/10_verdict.ipynb)" in readme and "](#terms)" in readme
    assert "{ref}`claim-front <claim-front>`" in book and "{prf:ref}`" in book and "{doc}`" in book
    assert "](" not in plain and "{ref}" not in plain and "`" not in plain
    # the README's links are to its own Terms section or to notebooks that exist
    for target in re.findall(r"\]\(([^)]+)\)", readme):
        assert target == "#terms" or (ROOT / target).is_file(), target
    with pytest.raises(ValueError, match="links must be one of"):
        findings.findings_list(ev, labels, "html")


# ------------------------------------------------------------------------ the wording functions

def test_verdict_note_says_the_verdict_and_its_label():
    assert findings.verdict_note("plain", "claim-front", _v("claim-front", "open", "confirmatory")) == \
        "(claim-front: open; confirmatory)"
    assert findings.verdict_note("plain", "claim-pretrained", _v("claim-pretrained", "holds")) == \
        "(claim-pretrained: holds; exploratory)"
    assert findings.verdict_note("readme", "claim-front", _v("claim-front", "open")).startswith(
        "([claim-front](chapters/10_verdict.ipynb)")
    assert findings.verdict_note("book", "claim-promote", _v("claim-promote", "open", "derived")).startswith(
        "({ref}`claim-promote <claim-promote>`")
    with pytest.raises(ValueError, match="claim-front"):
        findings.verdict_note("plain", "claim-front", _v("claim-other", "open"))
    with pytest.raises(ValueError, match="label must be one of"):
        findings.verdict_note("plain", "claim-front", _v("claim-front", "open", "registered"))


@pytest.mark.parametrize("n, word, said", [(1, "holds", "1 holds"), (4, "holds", "4 hold"),
                                           (1, "holds with correction", "1 holds with a correction"),
                                           (2, "holds with correction", "2 hold with a correction"),
                                           (1, "does not hold", "1 does not hold"), (7, "does not hold", "7 do not hold"),
                                           (1, "open", "1 is open"), (2, "open", "2 are open")])
def test_count_phrase_agrees_with_its_number(n, word, said):
    assert findings.count_phrase(n, word) == said


@pytest.mark.parametrize("lo, hi, said", [(-1.1, -0.95, "the interval contains it"), (-0.34, 0.02, "above it"),
                                          (-1.5, -1.2, "below it")])
def test_an_exponent_says_where_its_interval_lies_against_the_theorems(lo, hi, said):
    assert findings._against(lo, hi, -1.0) == said


@pytest.mark.parametrize("lo, hi, said", [(1.1, 1.3, "more than 1"), (0.5, 0.9, "less than 1"),
                                          (0.8, 1.3, "an interval that contains 1")])
def test_a_cost_ratio_says_where_its_interval_lies_against_one(lo, hi, said):
    assert findings._against_one(lo, hi) == said


@pytest.mark.parametrize("lo, hi, said", [(-1.2, 8.7, "contains both"), (-1.5, 0.5, "contains only -1"),
                                          (0.5, 3.0, "contains only +1"), (1.5, 3.0, "contains neither")])
def test_the_front_position_says_which_prediction_it_contains(lo, hi, said):
    assert findings._position(lo, hi).endswith(said)


def test_interval_levels_come_from_the_declarations_the_t_interval_or_the_chapter(ev):
    assert findings.interval_level(ev, E.FRONT_POSITION) == 0.975          # declared: "97.5 %"
    assert findings.interval_level(ev, E.LONG_EXP_CHANGE) == 0.90          # declared: "90 %"
    assert findings.interval_level(ev, E.VAR_EXP_TOY) == pytest.approx(1 - 0.05 / 3)   # "1 - 0.05/3"
    assert findings.interval_level(ev, E.TRAINED_EXP_PRE_LN) == 0.95       # from its se and df
    assert findings.interval_level(ev, E.PRETRAINED_EXP["qwen"]) == ev["pt_level"]     # Chapter 9's glued level
    bare = {k: v for k, v in ev.items() if k != "pt_level"}
    assert findings.interval_level(bare, E.PRETRAINED_EXP["qwen"]) is None
    line = findings._intervals_line(bare)
    assert "95% t over seeds" in line and "percentile bootstrap" in line and "97.5%" not in line


def test_a_bracket_names_its_level_only_when_it_is_not_its_groups(ev):
    assert findings._bracket(ev, E.TRAINED_EXP_PRE_LN).endswith("]")
    assert findings._bracket(ev, E.PRETRAINED_EXP["smollm2"]).endswith("]")
    assert findings._bracket(ev, E.FRONT_POSITION, 1).endswith("(97.5%)")
    assert findings._bracket(ev, E.LONG_EXP_CHANGE).endswith("(90%)")


@pytest.mark.parametrize("word, said", [("holds", "describes initialisation, not training"),
                                        ("does not hold", "does not move the exponent away"),
                                        ("holds with correction", "with a correction"), ("open", "is not settled")])
def test_the_init_finding_says_its_verdict(ev, word, said):
    text = findings.init_finding(ev, _v("claim-init-not-training", word))
    assert said in text and f"(claim-init-not-training: {word}; exploratory)" in text
    assert "-0.88 [-0.92, -0.85] against -0.90 (the interval contains it)" in text


@pytest.mark.parametrize("share, said", [((0.07, 0.02, 0.13), "unequal size of the blocks' outputs"),
                                         ((0.8, 0.6, 0.9), "mostly from the correlations"),
                                         ((0.5, 0.2, 0.8), "the data cannot settle")])
def test_the_split_finding_reads_the_share_against_one_half(share, said):
    ev = _iv("ev_split_corr_share", *share)
    text = findings.split_finding(ev, _v("claim-independence", "open"))
    assert said in text and f"{share[0]:.2f} [{share[1]:.2f}, {share[2]:.2f}]" in text


@pytest.mark.parametrize("word, said", [("holds", "show the theorem's decay"), ("does not hold", "do not show"),
                                        ("holds with correction", "at another rate"), ("open", "are not shown")])
def test_the_pretrained_finding_says_its_verdict(ev, word, said):
    text = findings.pretrained_finding(ev, _v("claim-two-families", word))
    assert said in text and "SmolLM2-135M -0.03 [-0.04, -0.02] against -1.04" in text


@pytest.mark.parametrize("word", ["holds", "holds with correction", "does not hold", "open"])
def test_the_idle_finding_says_each_verdict(ev, word):
    text = findings.idle_finding(ev, _v("claim-pretrained-idle", word, **{"claim-idle-blocks": ("open", "exploratory")}))
    said = "Whether their later blocks idle is not settled" if word == "open" else findings._IDLE[word]
    assert said in text and "1.21 [1.11, 1.31] (SmolLM2)" in text
    assert "without the last block, 0.74 [0.68, 0.81] and 1.14 [0.92, 1.54]" in text
    assert "1.04 [0.82, 1.32], an interval that contains 1" in text


def test_the_front_finding_states_the_deep_runs_position_and_spread_once_three_are_stored(ev):
    few = {**ev, "ev_front_n_runs": 2.0}
    assert "2 deep runs are stored so far" in findings.front_finding(few, _v("claim-front", "open", "confirmatory"))
    assert "1 deep run is stored so far" in findings.front_finding({**ev, "ev_front_n_runs": 1.0},
                                                                   _v("claim-front", "open"))
    three = {**ev, **_iv("ev_front_position", -1.1, -1.6, -0.6, se=0.1), "ev_front_n_runs": 4.0,
             "ev_front_pred_width": 1.5}
    text = findings.front_finding(three, _v("claim-front", "holds", "confirmatory"))
    assert "-1.1 [-1.6, -0.6] (97.5%)" in text and "contains only -1" in text and "4 runs" in text
    assert "spread by 0.2 (standard deviation), less than the ±1.5" in text and "it resumes, at the predicted" in text
    text = findings.front_finding(ev, _v("claim-front", "open", "confirmatory"))
    assert "runs vary too much to tell the two committed predictions apart" in text
    assert "3.8 [-1.2, 8.7] (97.5%)" in text and "spread by 5.0 (standard deviation), more than the ±1.5" in text
    assert "(claim-front: open; confirmatory)" in text
    assert "it does not, the change stays flat" in findings.front_finding(ev, _v("claim-front", "does not hold"))
    assert "at another rate than predicted" in findings.front_finding(ev, _v("claim-front", "holds with correction"))


def test_the_verdicts_line_counts_the_ledger_and_says_the_promotion_rule_in_words(ev, labels):
    text = findings.verdicts_line(ev, labels)
    n = findings.verdict_counts(ev)
    assert f"Of the {sum(n.values())} claims" in text
    assert all(findings.count_phrase(n[w], w) in text for w in ledger.VERDICTS if n[w])
    word = {c.id: v.word for c, v in ledger.evaluate(ev)}["claim-promote"]
    assert "its test for promoting the theory from Proposed" in text and ledger.PROMOTION[word] in text
    assert f"(claim-promote: {word}; {labels['claim-promote']})" in text
    assert "confirmatory" not in text.replace(f"; {labels['claim-promote']})", "")   # the labels are said once, apart


def test_headline_rows_carry_intervals_and_their_matched_references(ev):
    for r in findings.headline(ev):
        assert r["lo"] <= r["value"] <= r["hi"] or r["value"] != r["value"]
        assert r["verdict"] in ledger.VERDICTS


def test_the_findings_chapter_10_glues_are_the_ones_its_stored_output_holds(ev, labels):
    """Chapter 10's stored ledger-summary is findings_list of the stored evidence: re-execute it when they part."""
    import json
    nb = json.loads((ROOT / "chapters" / "10_verdict.ipynb").read_text(encoding="utf-8"))
    stored = [o["data"]["application/papermill.record/text/markdown"] for c in nb["cells"] if c["cell_type"] == "code"
              for o in c.get("outputs", []) if o.get("metadata", {}).get("scrapbook", {}).get("name") == "ledger-summary"]
    assert stored == [findings.findings_list(ev, labels, "book", findings.book_labels(ROOT, confirmatory=True))]


@pytest.mark.parametrize("word, said", [("holds", "as the card's mechanism says"), ("holds with correction", "more steeply"),
                                        ("does not hold", "make up for the front's size"),
                                        ("open", "is not yet shown to follow")])
def test_the_mechanism_finding_says_its_verdict_and_the_models_still_to_measure(ev, word, said):
    v = {"claim-mechanism": (word, "confirmatory")}
    waiting = {**ev, **{E.INTERVENTION_MEASURED[m]: 0.0 for m in E.INTERVENTION_MODELS}}
    text = findings.mechanism_finding(waiting, v)
    assert said in text and text.endswith("(claim-mechanism: " + word + "; confirmatory).")
    assert "no model is measured yet" in text
    done = {**ev, **{E.INTERVENTION_MEASURED[m]: 16.0 for m in E.INTERVENTION_MODELS}}
    assert "not measured yet" not in findings.mechanism_finding(done, v)


def test_the_replication_finding_counts_what_repeats_names_what_does_not_and_what_waits(monkeypatch):
    from types import SimpleNamespace as NS
    rows = [{"claim": NS(id=f"claim-{i}"), "all": NS(word="holds"), "confirmatory": NS(word=w), "replicated": r}
            for i, (w, r) in enumerate([("holds", "yes"), ("open", "no"), ("open", "not yet"), ("holds", "derived"),
                                        ("holds", "no confirmatory data")])]
    seen = {}

    def fake(ev, derived, confirmatory):
        seen.update(derived=derived, confirmatory=confirmatory)
        return rows
    monkeypatch.setattr(findings.ledger, "replication", fake)
    text = findings.replication_finding({}, {"claim-3": "derived", "claim-4": "confirmatory"})
    assert "1 of the 3 claims read from the toy runs repeat their exploratory verdict;" in text
    assert "pretrained" not in text                 # no pretrained claim among the rows: no such sentence
    assert "1 does not: claim-1 holds on seeds 0-4, open on seeds 5-7" in text
    assert "1 cannot be read on seeds 5-7 yet (claim-2)" in text
    assert seen == {"derived": frozenset({"claim-3"}), "confirmatory": frozenset({"claim-4"})}
    rows[1]["replicated"] = rows[2]["replicated"] = "yes"
    assert "do not" not in findings.replication_finding({}, {}) and "yet" not in findings.replication_finding({}, {})
    # a pretrained claim is counted in the confirmatory reading's sentence, with the 1.5B's exponent once measured
    rows.append({"claim": NS(id="claim-two-families"), "all": NS(word="does not hold"),
                 "confirmatory": NS(word="open"), "replicated": "no"})
    text = findings.replication_finding({}, {})
    assert "3 of the 3 claims read from the toy runs" in text
    assert ("On the pretrained claims' confirmatory reading, Qwen2.5-Coder-1.5B on pydoc, measured after their rules, "
            "0 of the 1 claims read there repeat their exploratory verdict; 1 does not: claim-two-families "
            "does not hold on SmolLM2 and the 0.5B, open there.") in text
    # a toy claim labelled exploratory on the confirmatory set is named apart, not counted
    text = findings.replication_finding({}, {}, confirmatory_labels={"claim-0": "exploratory"})
    assert "2 of the 2 claims read from the toy runs" in text
    assert "Not counted: claim-0 (holds on seeds 5-7), whose rule was registered again after those runs." in text
    (m,) = E.CONFIRMATORY_MODELS
    e = E.PRETRAINED_EXP[m]
    text = findings.replication_finding({e: -0.4, e.lo: -0.42, e.hi: -0.37, E.PRETRAINED_REF[m]: -1.04}, {})
    assert "pydoc (its exponent -0.40 [-0.42, -0.37] against -1.04), measured" in text


def test_an_open_mechanism_with_every_model_measured_says_why_the_rule_cannot_decide(ev):
    done = {**ev, **{E.INTERVENTION_MEASURED[m]: 16.0 for m in E.INTERVENTION_MODELS}}
    for m in E.INTERVENTION_MODELS:
        for a in E.INTERVENTION_ALPHAS:
            t = E.INTERVENTION_T[m, a]
            done.update({t: 1.0, t.lo: 0.9, t.hi: 1.1})
    t = E.INTERVENTION_T["qwen", "quarter"]
    done.update({t: 1.5, t.lo: 1.4, t.hi: 1.6})
    text = findings.mechanism_finding(done, {"claim-mechanism": ("open", "confirmatory")})
    assert "in every model, not always within the margin" in text
    assert "runs from 1.00 to 1.50 at alpha 1/4 and from 1.00 to 1.00 at alpha 2 over 5 models, 9 of 10 tests " \
           "within the margin and 0 below it" in text
    done.update({t: 0.2, t.lo: 0.1, t.hi: 0.3})
    text = findings.mechanism_finding(done, {"claim-mechanism": ("open", "confirmatory")})
    assert "is not yet shown" in text and "9 of 10 tests within the margin and 1 below it" in text
