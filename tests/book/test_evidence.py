"""The evidence layer: every name declared once, glued by its chapter, read by the ledger.

What a reviewer does by hand -- search for an evidence name, find where it is declared and the
chapter line that computes it -- is checked here for every name, on the stored outputs.
"""
import ast
import json
import math
import pathlib
import re

import numpy as np
import pytest

from resdecay_lib.book import evidence
from resdecay_lib.book import ledger

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"


def _glued_by_notebook():
    """{glue name starting with ev_: notebook stem} from the stored outputs."""
    out = {}
    for nb in sorted(CHAPTERS.glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            for o in cell.get("outputs", []):
                name = o.get("metadata", {}).get("scrapbook", {}).get("name", "")
                if name.startswith("ev_"):
                    out[name] = nb.stem
    return out


GLUED = _glued_by_notebook()


def test_every_glued_evidence_name_is_declared_for_the_chapter_that_glues_it():
    for name, chapter in GLUED.items():
        decl = evidence.declared(name)
        assert decl.chapter == chapter, f"{name} is glued by {chapter} but declared for {decl.chapter}"


def test_every_declared_evidence_is_glued_whole_by_its_chapter():
    for decl in evidence.DECLARED.values():
        keys = decl.keys() + (tuple(k for s in evidence.SEED_SETS for k in decl.set_keys(s)) if decl.by_seed_set else ())
        for key in keys:
            assert GLUED.get(key) == decl.chapter, f"{key} ({decl.chapter}) is not in the stored outputs"


def _chapter_source(chapter: str) -> str:
    """The code of the notebook ``chapter`` and of each chapter result module it imports
    (``from resdecay_lib.analysis.chapters import <module>``): where its evidence is computed."""
    code = "".join("".join(c["source"]) for c in json.loads((CHAPTERS / f"{chapter}.ipynb").read_text())["cells"]
                   if c["cell_type"] == "code")
    modules = re.findall(r"from resdecay_lib\.analysis\.chapters import ([\w, ]+)", code)
    for names in modules:
        for m in names.split(","):
            code += (ROOT / "resdecay_lib" / "analysis" / "chapters" / f"{m.strip()}.py").read_text()
    return code


def test_every_declared_name_is_written_out_in_its_chapter_and_in_the_declarations():
    declarations = (ROOT / "resdecay_lib" / "book" / "evidence.py").read_text()
    for decl in evidence.DECLARED.values():
        assert f'"{decl.name}"' in declarations
        source = _chapter_source(decl.chapter)
        if decl.by_seed_set:
            # computed once for every seed set by resdecay_lib.analysis.training_claims, which refers to the
            # declaration by its Python name; the name itself is the declaration's and the prose's
            attr = next(a for a, v in vars(evidence).items() if a != "DECLARED" and a.isupper()
                        and (v is decl or (isinstance(v, dict) and any(x is decl for x in v.values()))))
            assert f"E.{attr}" in (ROOT / "resdecay_lib" / "analysis" / "training_claims.py").read_text(), decl.name
            continue
        assert re.search(rf'"{decl.name}(_lo|_hi|_se)?"', source), \
            f"{decl.name} is not written out in a code cell of {decl.chapter} or its result module"


@pytest.mark.parametrize("module", ["ledger", "verdicts", "rules", "claims", "render", "notebooks"])
def test_the_ledger_spells_no_evidence_name_in_its_code(module):
    """Names are written once, in evidence.py; the ledger's code (the face and every module it
    is split into) refers to the declarations (docstrings may name them for the reader)."""
    tree = ast.parse((ROOT / "resdecay_lib" / "book" / f"{module}.py").read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    spelled = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in docstrings and re.search(r"\bev_[a-z]", n.value)]
    assert spelled == []


def test_every_claim_needs_only_declared_evidence():
    for claim in ledger.CLAIMS:
        for e in claim.needs + claim.optional:
            assert isinstance(e, evidence.Evidence), f"{claim.id}: {e!r} is not a declaration"


def test_no_claim_of_the_book_lacks_its_evidence():
    """Open is for what the data cannot tell; a claim whose evidence is not glued is a bug."""
    ev = ledger.read_evidence(CHAPTERS)
    for claim, verdict in ledger.evaluate(ev):
        assert not claim.missing(ev), f"{claim.id}: {verdict.reason}"
        assert not verdict.reason.startswith(ledger.MISSING)


def test_a_rule_that_reads_an_undeclared_name_fails_loudly():
    claim = ledger.Claim("claim-x", "X", "s", (), (evidence.COR34_MAXZ,), lambda ev: ev[evidence.COR34_Z_CRIT])
    with pytest.raises(KeyError, match="claim-x's rule reads 'ev_cor34_z_crit'"):
        claim.verdict({evidence.COR34_MAXZ: 1.0, evidence.COR34_Z_CRIT: 3.0})


def test_missing_evidence_is_named_and_nan_is_the_data_cannot_tell():
    claim = ledger.Claim("claim-x", "X", "s", (), (evidence.SHARE_CORR,), lambda ev: ledger.Verdict("holds", ""))
    assert claim.verdict({}).reason == ledger.MISSING + "ev_share_corr(_lo, _hi)"
    # a NaN the rule never reads leaves its verdict; one it reads makes it open, named
    nan = {"ev_share_corr": 0.2, "ev_share_corr_lo": math.nan, "ev_share_corr_hi": 0.3}
    assert claim.verdict(nan).word == "holds"
    reads = ledger.Claim("claim-x", "X", "s", (), (evidence.SHARE_CORR,),
                         lambda ev: ledger.Verdict("holds" if ev["ev_share_corr_lo"] > 0 else "open", ""))
    v = reads.verdict(nan)
    assert v.word == "open" and v.reason == "the data cannot tell (the chapter could not compute ev_share_corr_lo)"


def test_evidence_is_its_name_with_named_parts():
    e = evidence.TRAINED_EXP_PRE_LN
    assert e == "ev_trained_exp_pre_ln" and {e: 1}["ev_trained_exp_pre_ln"] == 1
    assert e.keys() == ("ev_trained_exp_pre_ln", "ev_trained_exp_pre_ln_lo", "ev_trained_exp_pre_ln_hi",
                        "ev_trained_exp_pre_ln_se")
    assert evidence.declared("ev_trained_exp_pre_ln_se") is e
    with pytest.raises(AttributeError, match="has no _se part"):
        evidence.SHARE_CORR.se
    with pytest.raises(KeyError, match="not declared"):
        evidence.declared("ev_nothing")


def test_declaring_a_name_twice_is_refused():
    with pytest.raises(ValueError, match="declared twice"):
        evidence.value("ev_cor34_maxz", "03_corollary_34", "again")
    with pytest.raises(ValueError, match="clashes"):
        evidence.value("ev_share_corr_lo", "07_training", "a part of an interval")
    with pytest.raises(ValueError, match="identifier starting with 'ev_'"):
        evidence.Evidence("share", "07_training", "no prefix")


@pytest.fixture
def glued(monkeypatch):
    import myst_nb
    out = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: out.append((name, value)))
    return out


def test_glue_writes_every_part_rounded(glued):
    evidence.glue("ev_share_corr", 0.123456, lo=0.1, hi=0.2, digits=3)
    assert glued == [("ev_share_corr", 0.123), ("ev_share_corr_lo", 0.1), ("ev_share_corr_hi", 0.2)]
    evidence.glue(evidence.COR34_MAXZ, math.nan)
    assert math.isnan(glued[-1][1])


@pytest.mark.parametrize("call, match", [
    (lambda: evidence.glue("ev_nothing", 1.0), "not declared"),
    (lambda: evidence.glue("ev_share_corr", 0.2), "glue it with hi=, lo="),
    (lambda: evidence.glue("ev_cor34_maxz", 1.0, lo=0.0, hi=2.0), "glue it with the value alone"),
    (lambda: evidence.glue("ev_share_corr_lo", 0.2), "the base name"),
    (lambda: evidence.glue("ev_share_corr", 0.5, lo=0.1, hi=0.2), "does not contain its value"),
    (lambda: evidence.glue("ev_cor34_maxz", "2"), "must be a real number"),
    (lambda: evidence.glue("ev_cor34_maxz", True), "must be a real number"),
])
def test_glue_refuses_what_the_declaration_does_not_allow(glued, call, match):
    with pytest.raises((KeyError, ValueError, TypeError), match=match):
        call()
    assert glued == []


def test_glue_display_writes_a_shown_number_and_its_interval_rounded(glued):
    evidence.glue_display("pt_exp_smollm2", np.float64(-0.123456), -0.2, -0.05, digits=3)
    assert glued == [("pt_exp_smollm2", -0.123), ("pt_exp_smollm2_lo", -0.2), ("pt_exp_smollm2_hi", -0.05)]


def test_glue_display_refuses_evidence_names_which_must_be_declared(glued):
    with pytest.raises(ValueError, match="evidence.glue, declared"):
        evidence.glue_display("ev_share_corr", 0.1, 0.0, 0.2)
    assert glued == []


def test_the_pretrained_rules_read_every_family_whose_evidence_is_declared():
    """A Pre-LN model enters the pretrained rules by its evidence: the models with a theorem
    reference are the exploratory families and the confirmatory models, every per-family evidence
    declares each of them, each pretrained claim needs each exploratory family's evidence, and its
    confirmatory reading needs the confirmatory models' evidence and no exploratory family's."""
    from resdecay_lib.book import rules
    from resdecay_lib.book.claims import CLAIMS, CONFIRMATORY_NEEDS, confirmatory_reading
    models = evidence.PRE_LN_FAMILIES + evidence.CONFIRMATORY_MODELS
    assert models == tuple(evidence.PRETRAINED_REF) and rules.PRE_LN_FAMILIES is evidence.PRE_LN_FAMILIES
    per_family = (evidence.PRETRAINED_EXP, evidence.PRETRAINED_DRIFT, evidence.FITRANGE_SHIFT, evidence.FLATTENING, evidence.HALF_RATIO,
                  evidence.HALF_RATIO_REF, evidence.HALF_RATIO_NO_LAST, evidence.HALF_RATIO_REF_NO_LAST, evidence.METRIC_RHO_CHANGE)
    for table in per_family:
        assert set(models) <= set(table), table
    assert {(c, m) for c in rules.COMPETITORS for m in models} <= set(evidence.METRIC_DIFF)
    by_id = {c.id: c for c in CLAIMS}
    needs = {c.id: set(c.needs) | set(c.optional) for c in CLAIMS}
    conf = {cid: set(confirmatory_reading(by_id[cid]).needs) for cid in CONFIRMATORY_NEEDS}
    for m in evidence.PRE_LN_FAMILIES:
        assert {evidence.PRETRAINED_EXP[m], evidence.PRETRAINED_REF[m], evidence.PRETRAINED_DRIFT[m]} <= needs["claim-two-families"], m
        assert {evidence.HALF_RATIO[m], evidence.HALF_RATIO_NO_LAST[m]} <= needs["claim-pretrained-idle"], m
        assert evidence.FLATTENING[m] in needs["claim-compensation"], m
        assert evidence.METRIC_RHO_CHANGE[m] in needs["claim-redundancy-metric"], m
    for m in evidence.CONFIRMATORY_MODELS:
        assert {evidence.PRETRAINED_EXP[m], evidence.PRETRAINED_REF[m], evidence.PRETRAINED_DRIFT[m]} <= conf["claim-two-families"], m
        assert {evidence.HALF_RATIO[m], evidence.HALF_RATIO_NO_LAST[m]} <= conf["claim-pretrained-idle"], m
        assert conf["claim-compensation"] == {evidence.FLATTENING[m]}, m
        assert evidence.METRIC_RHO_CHANGE[m] in conf["claim-redundancy-metric"], m
        assert not any(m in e for cid in CONFIRMATORY_NEEDS for e in needs[cid]), "an exploratory reading reads a confirmatory model"
    read = {e for es in conf.values() for e in es}
    assert all(e.endswith(tuple("_" + m for m in evidence.CONFIRMATORY_MODELS)) for e in read), read
    assert set(CONFIRMATORY_NEEDS) <= set(by_id) and confirmatory_reading(by_id["claim-depth-cost"]) is by_id["claim-depth-cost"]
