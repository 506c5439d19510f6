"""Bad arguments to the book's readers and renderers, and the finite-width terms where their
expanded forms cancel: no dependency's traceback (pathlib, AttributeError,
a bare KeyError, "math domain error") reaches a user of a public function; each bad argument
gets one line naming the parameter."""
from __future__ import annotations

import copy
import json
import math
import pathlib

import pytest
import sympy as sp

from resdecay_lib.book import evidence
from resdecay_lib.book import notebooks, preregistration, render
from resdecay_lib.book.claims import CLAIMS
from resdecay_lib.book.verdicts import Verdict
from resdecay_lib.checks import ArgumentTypeError
from resdecay_lib.maths import finite_d as fd

ROOT = pathlib.Path(__file__).resolve().parents[2]


def one_line_error(exc_type, fn, *args, match):
    """``fn(*args)`` raises ``exc_type`` with a one-line message matching ``match``."""
    with pytest.raises(exc_type, match=match) as info:
        fn(*args)
    assert "\n" not in str(info.value), str(info.value)
    return info.value


@pytest.mark.parametrize("fn", [notebooks.toc_documents, notebooks.book_notebooks],
                         ids=["toc_documents", "book_notebooks"])
def test_toc_readers_refuse_a_root_that_is_not_a_book_folder(tmp_path, fn):
    for bad in (None, 7, 1.5, ["x"], {1: 2}):
        one_line_error(ArgumentTypeError, fn, bad, match="root must be")
    one_line_error(ValueError, fn, tmp_path / "missing", match=r"root must be.*folder.*missing")
    (tmp_path / "file").write_text("x")
    one_line_error(ValueError, fn, tmp_path / "file", match=r"root must be.*folder.*file")
    one_line_error(ValueError, fn, tmp_path, match=r"root .* no _toc\.yml")
    for text in ("root: [unclosed", "- a\n- b\n", "parts: []\n", "root: intro\nchapters:\n  - nofile: x\n"):
        (tmp_path / "_toc.yml").write_text(text)
        one_line_error(ValueError, fn, tmp_path, match=r"_toc\.yml")
    (tmp_path / "_toc.yml").write_text("root: intro\nchapters:\n  - file: chapters/a\n")
    assert notebooks.toc_documents(str(tmp_path)) == ["intro", "chapters/a"]
    assert notebooks.toc_documents(ROOT)[0] == "intro"     # the book's own table of contents reads as before


def test_renderers_refuse_what_is_not_a_claim_a_verdict_or_rows(tmp_path):
    claim = copy.copy(CLAIMS[0])
    for bad in (None, 7, "x", [[1, 2], [3]], {1: 2}):
        one_line_error(ArgumentTypeError, render.short_reason, bad, match="verdict must be a Verdict")
        one_line_error(ArgumentTypeError, render.deciding_numbers, bad, {}, match="claim must be a Claim")
        one_line_error(ArgumentTypeError, render.evidence_markdown, bad, ROOT, match="claim must be a Claim")
    one_line_error(ValueError, render.short_reason, Verdict("open", "x"), 0, match="limit")
    one_line_error(ArgumentTypeError, render.deciding_numbers, claim, [1, 2], match="evidence must be")
    one_line_error(ArgumentTypeError, render.evidence_markdown, claim, None, match="root must be")
    one_line_error(ValueError, render.evidence_markdown, claim, tmp_path, match=r"root .* no _toc\.yml")
    for bad in (None, 7, [[1, 2], [3]], [(claim,)], [(claim, "holds")], [("x", Verdict("open", ""))]):
        one_line_error(ArgumentTypeError, render.markdown_table, bad, match=r"rows")
    # what the chapters pass still renders as before
    assert render.short_reason(Verdict("open", "a: b")) == "a: b"
    assert "a \\| b" in render.markdown_table([(claim, Verdict("open", "a | b"))])


def test_declared_names_an_unknown_name_and_suggests_close_ones():
    err = one_line_error(KeyError, evidence.declared, "ev_trained_exp_pre_lnn", match="not declared")
    assert isinstance(err, ValueError)
    assert "ev_trained_exp_pre_lnn" in str(err) and "ev_trained_exp_pre_ln" in str(err)   # did you mean
    one_line_error(KeyError, evidence.declared, "ev_nothing_like_any_name_at_all", match="not declared")
    one_line_error(KeyError, evidence.declared, "ev_trained_exp_pre_ln__s99", match="not declared")
    for bad in (None, 7, 1.5, ["ev_x"]):
        one_line_error(ArgumentTypeError, evidence.declared, bad, match="name must be")
    assert evidence.declared("ev_trained_exp_pre_ln_se") is evidence.TRAINED_EXP_PRE_LN    # valid names as before


def test_registry_readers_refuse_a_bad_registry_or_root(tmp_path):
    for bad in (None, 7, 1.5, "x", [[1, 2], [3]]):
        one_line_error(ArgumentTypeError, preregistration.mismatches, bad, match="registry must be")
    for bad in ({"claims": [1]}, {"claims": {"claim-x": 3}}, {"claims": {"claim-x": {"rule": "r"}}}):
        one_line_error(ValueError, preregistration.mismatches, bad, {}, match="registry")
    one_line_error(ArgumentTypeError, preregistration.mismatches, {"claims": {}}, [1], match="current must be")
    for bad in (None, 7, [1]):
        one_line_error(ArgumentTypeError, preregistration.read_registry, bad, match="root must be")
    one_line_error(ValueError, preregistration.read_registry, tmp_path, match=r"root.*no registry")
    (tmp_path / "results").mkdir()
    for text in ("{not json", "[1, 2]"):
        (tmp_path / preregistration.REGISTRY).write_text(text)
        one_line_error(ValueError, preregistration.read_registry, tmp_path, match="preregistration.json")
    (tmp_path / preregistration.REGISTRY).write_text(json.dumps({"claims": {"claim-x": {"fingerprint": "ab"}}}))
    assert preregistration.mismatches(preregistration.read_registry(tmp_path), {"claim-x": "ab"}) == {}
    assert preregistration.mismatches(preregistration.read_registry(ROOT)) == {}          # the book's registry as before


def test_finite_width_terms_do_not_cancel_when_f_is_along_x():
    # c = 1: x + f is along x, LN(x + f) = LN(x), the change is 0 at every r (the expanded
    # forms gave rounding noise there, negative from r ~ 1e14, and sqrt of it failed)
    for r in (0.0, 0.5, 1.0, 1e8, 1e14, 1e16, 1e17, 1e100):
        assert fd.change_sq_finite_d(r, 1.0, 64) == 0.0
        assert fd.mean_abs_finite_d(r, 1.0, 64) == 0.0
    # near c = 1 and at small r the change stays positive and accurate: F + m1/n ~ r^2 (1 - c^2)(1 + 1/n)
    r, n = 1e-7, 63
    assert fd.change_sq_finite_d(r, 0.0, n + 1) == pytest.approx(r**2 * (1 + 1 / n), rel=1e-12)
    assert fd.change_sq_finite_d(1e17, 1 - 2**-52, 64) >= 0.0
    assert math.isfinite(fd.mean_abs_finite_d(1e17, 1 - 2**-52, 64))
    # every input the book uses keeps the expanded forms' values, bit for bit
    F, m1, h1, rs, cs = fd.finite_d_terms()
    F, m1, h1 = (sp.lambdify((rs, cs), e, "math") for e in (F, m1, h1))
    inputs = [(1 / math.sqrt(k - 1), 0.0) for k in range(2, 2000)]
    inputs += [(rv, cv) for rv in (0.1, 0.5, 1.0, 2.0) for cv in (-0.8, -0.3, 0.0, 0.5, 0.9)]
    for rv, cv in inputs:
        for d in (16, 256, 1024):
            assert fd.change_sq_finite_d(rv, cv, d) == F(rv, cv) + m1(rv, cv) / (d - 1)
            n = d - 1
            gamma = math.exp(0.5 * math.log(n) + math.lgamma(n / 2) - math.lgamma((n + 1) / 2)) / math.sqrt(math.pi)
            assert fd.mean_abs_finite_d(rv, cv, d) == gamma * (math.sqrt(F(rv, cv)) + h1(rv, cv) / n)
    one_line_error(ArgumentTypeError, fd.change_sq_finite_d, [0.5, 0.6], 0.0, 64, match="r must be")
