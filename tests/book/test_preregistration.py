"""The rules registered before seeds 3-4 were read are the rules the ledger runs, and a claim's
fingerprint follows the statistics it decides from."""
import math
import pathlib

import pytest

from resdecay_lib.analysis import front, training_analysis, training_claims
from resdecay_lib.book import ledger
from resdecay_lib.book import preregistration as P
from resdecay_lib.book.verdicts import Claim, Verdict
from resdecay_lib.stats import exponents, inference

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_registered_fingerprint_matches_the_ledgers_rule_today():
    assert P.mismatches(P.read_registry(ROOT)) == {}


def test_a_rule_keeps_its_fingerprint_when_the_module_it_imports_moves_into_a_layer():
    def before(ev):
        from .stats import t_quantile
        return ev["x"] > t_quantile(0.95, 2)

    def after(ev):
        from ..stats.inference import t_quantile
        return ev["x"] > t_quantile(0.95, 2)

    def another_function(ev):
        from ..stats.inference import t_interval
        return ev["x"] > t_interval(0.95, 2)

    assert P.fingerprint(before) == P.fingerprint(after)
    assert P.fingerprint(after) != P.fingerprint(another_function)


def test_a_changed_margin_changes_the_fingerprint():
    def rule(ev):
        return ev["x"] > 0.1

    def wider(ev):
        return ev["x"] > 0.2

    assert P.fingerprint(rule) != P.fingerprint(wider)


# ---------------------------------------------------------------------------------------------
# a claim's fingerprint follows the statistics it decides from (compared within this process
# only: other edits change the code the fingerprints hash)
# ---------------------------------------------------------------------------------------------
ALL_CLAIMS = {c.id for c in ledger.CLAIMS}

#: the claims that decide with ``stats.inference.within_margin``, read from the code: the rules
#: through ``rules._equivalent`` (rule_output, and _family_reading in rule_pretrained,
#: rule_two_families, rule_promote); Chapter 6's family (initialisation.chapter ->
#: inference.run_family -> margin_verdict) behind claim-fixes-escape, claim-gradients-undamped
#: and claim-output-rate's random transformer; Chapter 7b's settling test
#: (front.chapter -> training_analysis.settling) behind claim-front
WITHIN_MARGIN_CLAIMS = {"claim-output-rate", "claim-pretrained", "claim-two-families", "claim-promote",
                        "claim-fixes-escape", "claim-gradients-undamped", "claim-front"}
#: the claims whose producers read analysis.front: only Chapter 7b imports it
WINDOWS_CLAIMS = {"claim-front"}
#: the claims reading Chapter 7's or Chapter 8's evidence, whose producers (training.chapter ->
#: training_claims.exponent_evidence, cost.chapter -> training_claims.cost_evidence) read
#: TRAINED_L and DEPTH_MIN
TRAINING_CLAIMS = {"claim-independence", "claim-init-not-training", "claim-compensation", "claim-promote",
                   "claim-idle-blocks", "claim-depth-cost"}
#: LADDER_LR is read by training_claims.depth_points only, which Chapter 8 calls (cost.chapter
#: and cost_evidence)
LADDER_CLAIMS = {"claim-idle-blocks", "claim-depth-cost"}


@pytest.fixture(scope="module")
def before() -> dict:
    """Every claim's fingerprint as the code is now (each test compares within this process)."""
    return P.fingerprints()


def _changed(before: dict, after: dict) -> set:
    assert set(before) == set(after) == ALL_CLAIMS
    return {k for k in before if before[k] != after[k]}


def within_margin(lo: float, hi: float, ref: float, margin: float) -> bool:
    """The interval within twice ``margin`` of ``ref``: a changed statistic of the same name."""
    return ref - 2 * margin <= lo and hi <= ref + 2 * margin


def test_a_doubled_margin_in_within_margin_changes_exactly_the_claims_deciding_with_it(monkeypatch, before):
    # as if the library's function were edited in place: same name, same module
    monkeypatch.setattr(within_margin, "__module__", inference.__name__)
    monkeypatch.setattr(inference, "within_margin", within_margin)
    assert _changed(before, P.fingerprints()) == WITHIN_MARGIN_CLAIMS


def test_another_window_of_the_front_changes_exactly_claim_front(monkeypatch, before):
    monkeypatch.setattr(front, "WINDOWS", {**front.WINDOWS, "half_end": (0.4, 1.0)})
    assert _changed(before, P.fingerprints()) == WINDOWS_CLAIMS


@pytest.mark.parametrize("name, value, claims", [
    ("TRAINED_L", 12, TRAINING_CLAIMS), ("DEPTH_MIN", 4, TRAINING_CLAIMS), ("LADDER_LR", 0.003, LADDER_CLAIMS)])
def test_a_changed_training_constant_changes_exactly_the_claims_reading_it(monkeypatch, before, name, value, claims):
    monkeypatch.setattr(training_claims, name, value)
    assert _changed(before, P.fingerprints()) == claims


def test_a_changed_front_changes_the_half_ratio_claims_and_not_the_theorems(monkeypatch, before):
    """FRONT_BLOCKS as the half ratios read it (stats.exponents.halves, and the copy in
    training_analysis): the idle-block claims of Chapters 8 and 9 change; Chapters 2-4 read
    no run and do not."""
    monkeypatch.setattr(exponents, "FRONT_BLOCKS", exponents.FRONT_BLOCKS + 1)
    monkeypatch.setattr(training_analysis, "FRONT_BLOCKS", exponents.FRONT_BLOCKS)
    changed = _changed(before, P.fingerprints())
    assert {"claim-idle-blocks", "claim-pretrained-idle"} <= changed
    assert not changed & {"claim-omega-formula", "claim-mean-abs-rate", "claim-fifth-at-24"}


def test_a_changed_nan_rule_of_claim_verdict_changes_every_claim(monkeypatch, before):
    """Every claim is decided through Claim.verdict, so its NaN rule is in every fingerprint."""
    declared = Claim.verdict

    def verdict(self, evidence):
        """Infinite needed evidence read as 'the data cannot tell' too."""
        if any(isinstance(evidence.get(k), float) and math.isinf(evidence[k]) for k in self.keys):
            return Verdict("open", "the data cannot tell")
        return declared(self, evidence)

    verdict.__module__, verdict.__qualname__ = Claim.__module__, "Claim.verdict"
    monkeypatch.setattr(Claim, "verdict", verdict)
    assert _changed(before, P.fingerprints()) == ALL_CLAIMS


def test_a_name_a_function_rebinds_is_read_as_state(tmp_path, monkeypatch):
    """A module-level name that a function rebinds (``global _POOL``: a pool made on first use)
    is state: its value depends on what ran before, so a fingerprint reads its name only (a CI
    run once found 17 fingerprints moved after the unit tests made such a pool)."""
    import importlib
    (tmp_path / "rebinds_state.py").write_text(
        "_POOL = None\nLIMIT = 3\n\ndef pool():\n    global _POOL\n    _POOL = _POOL or object()\n    return _POOL\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("rebinds_state")
    module.pool()
    assert P._is_state("rebinds_state", "_POOL") and not P._is_state("rebinds_state", "LIMIT")


def test_a_cache_filled_at_run_time_leaves_every_fingerprint(monkeypatch, before):
    """training.data._CORPUS_CACHE is written {} and filled by the first load_corpus: a fingerprint
    reads it as the source writes it (a CI run found 4 claims moved after a test loaded the corpus)."""
    from resdecay_lib.training import data
    monkeypatch.setitem(data._CORPUS_CACHE, "/somewhere", object())
    assert _changed(before, P.fingerprints()) == set()


def test_a_checkout_elsewhere_has_the_same_fingerprints(monkeypatch, before):
    """training.store reads its __file__: a clone in another folder must give the registry's fingerprints."""
    from resdecay_lib.training import store
    monkeypatch.setattr(store, "__file__", "/somewhere/else/resdecay_lib/training/store.py")
    assert _changed(before, P.fingerprints()) == set()


def test_a_release_leaves_every_fingerprint(monkeypatch, before):
    """The runs' provenance records the library's __version__; a new release decides alike."""
    import resdecay_lib
    monkeypatch.setattr(resdecay_lib, "__version__", "9.9.9")
    assert _changed(before, P.fingerprints()) == set()


def test_the_claims_closures_resolve_everything_they_name():
    assert P.unresolved() == []


def test_a_claims_text_holds_its_rule_its_producers_and_the_constants_they_read():
    claims = {c.id: c for c in ledger.CLAIMS}
    front_text = P.canonical_text(claims["claim-front"])
    assert f"rule {P.fingerprint(claims['claim-front'].rule)}" in front_text.splitlines()
    assert "WINDOWS={'half_end':(0.5,1.0),'quarter_half':(0.25,0.5)}" in front_text.splitlines()
    depth_text = P.canonical_text(claims["claim-depth-cost"]).splitlines()
    assert "LADDER_LR=0.006" in depth_text and "DEPTH_MIN=8" in depth_text and "TRAINED_L=24" in depth_text
    assert "FRONT_BLOCKS=3" in P.canonical_text(claims["claim-pretrained-idle"]).splitlines()


def test_the_closure_ignores_docstrings_comments_and_formatting_but_not_a_changed_constant():
    def helper(x):
        return x > 0.1

    def documented(x):
        """Docstrings do not count."""
        "nor does a bare string"
        return (x >
                0.1)   # nor formatting, nor comments

    def wider(x):
        return x > 0.2

    assert P.code_fingerprint(helper) == P.code_fingerprint(documented)
    assert P.code_fingerprint(helper) != P.code_fingerprint(wider)
    with pytest.raises(P.ArgumentTypeError, match="objs must be functions or classes"):
        P.code_fingerprint(0.1)


def test_bad_claims_are_refused_naming_the_parameter():
    for fn in (P.fingerprints, P.rule_fingerprints, P.unresolved):
        with pytest.raises(P.ArgumentTypeError, match="claims must be a list of Claim"):
            fn("claim-front")
        with pytest.raises(P.ArgumentTypeError, match=r"claims"):
            fn([ledger.CLAIMS[0], "claim-front"])
    with pytest.raises(P.ArgumentTypeError, match="claim must be a Claim"):
        P.claim_fingerprint("claim-front")


@pytest.mark.slow
def test_a_copy_of_the_library_in_another_folder_computes_the_registered_fingerprints(tmp_path):
    """What a fresh clone elsewhere computes, in its own process: the package copied to another
    folder (another absolute path, another working directory) gives the registry's fingerprints,
    so no fingerprint reads where the checkout lies or what this process has imported."""
    import json
    import shutil
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    shutil.copytree(root / "resdecay_lib", tmp_path / "resdecay_lib", ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import json, resdecay_lib; from resdecay_lib.book import preregistration as P; "
            "print(json.dumps({'file': resdecay_lib.__file__, 'fps': P.fingerprints()}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["file"].startswith(str(tmp_path))              # the copy ran, not this checkout
    registry = json.loads((root / "results" / "preregistration.json").read_text())
    assert got["fps"] == {cid: c["fingerprint"] for cid, c in registry["claims"].items()}


def test_the_registry_records_each_confirmatory_reading_and_a_changed_one_is_a_mismatch(monkeypatch):
    """The fingerprint does not say which names a confirmatory reading reads (the rule is the same
    function in both readings); the registry records them and reading_mismatches holds the code to it."""
    from resdecay_lib.book import claims, evidence as E
    registry = P.read_registry(ROOT)
    assert P.reading_mismatches(registry) == {}
    assert {k for k, v in registry["claims"].items() if "confirmatory_needs" in v} == set(claims.CONFIRMATORY_NEEDS)
    changed = {**claims.CONFIRMATORY_NEEDS, "claim-compensation": (E.FLATTENING["qwen"],)}
    monkeypatch.setattr(claims, "CONFIRMATORY_NEEDS", changed)
    got = P.reading_mismatches(registry)
    assert list(got) == ["claim-compensation"] and got["claim-compensation"][1] == ("ev_flattening_qwen",)
