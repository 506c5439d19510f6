"""The ledger's rules refuse evidence they cannot decide on: called directly,
a rule given a missing, None, non-number, NaN or infinite value it reads raises a one-line
ValueError naming the evidence, not a verdict; through the ledger every verdict is unchanged,
and every rule keeps its registered fingerprint."""
import inspect
import json
import math
import pathlib

import pytest

from resdecay_lib.book import ledger, preregistration, rules
from resdecay_lib.book.verdicts import EvidenceMissing, FiniteEvidence, _Allowed
from resdecay_lib.checks import ArgumentTypeError

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOOK = ledger.read_evidence(ROOT / "chapters")
BY_ID = {c.id: c for c in ledger.CLAIMS}


def _valid(claim):
    """The book's evidence for ``claim``, NaN given a value a measurement could give."""
    ev = {}
    for k in (*claim.keys, *claim.optional_keys):
        if k in BOOK:
            v = BOOK[k]
            ev[k] = v if math.isfinite(v) else (0.01 if k.endswith("_lo") else 0.09 if k.endswith("_hi") else 0.05)
    return ev


class _Reading(dict):
    def __init__(self, data):
        super().__init__(data)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def _read_keys(claim, ev):
    rec = _Reading(ev)
    inspect.unwrap(claim.rule)(rec)
    return sorted(rec.read)


CASES = [(c.id, k) for c in ledger.CLAIMS for k in _read_keys(c, _valid(c))]


def test_every_claim_has_keys_its_rule_reads():
    assert {cid for cid, _ in CASES} == set(BY_ID)


@pytest.mark.parametrize("cid,key", CASES)
@pytest.mark.parametrize("bad,kind", [(math.nan, ValueError), (math.inf, ValueError), (-math.inf, ValueError),
                                      (None, ArgumentTypeError), ("0.2", ArgumentTypeError), (True, ArgumentTypeError)])
def test_a_rule_called_directly_refuses_a_value_it_reads_that_is_not_a_finite_number(cid, key, bad, kind):
    claim = BY_ID[cid]
    ev = {**_valid(claim), key: bad}
    with pytest.raises(kind) as info:
        claim.rule(ev)
    msg = str(info.value)
    assert "\n" not in msg and key in msg and claim.rule.__name__ in msg


def _needed_read(cid, key):
    """Whether the rule reads ``key`` whatever the mapping holds (not only ``if key in ev``)."""
    ev = _valid(BY_ID[cid])
    del ev[key]
    try:
        inspect.unwrap(BY_ID[cid].rule)(ev)
    except KeyError:
        return True
    return False


@pytest.mark.parametrize("cid,key", [(cid, k) for cid, k in CASES if _needed_read(cid, k)])
def test_a_rule_called_directly_names_a_needed_key_it_lacks(cid, key):
    claim = BY_ID[cid]
    ev = _valid(claim)
    del ev[key]
    with pytest.raises(ValueError, match=key) as info:
        claim.rule(ev)
    assert isinstance(info.value, KeyError) and "\n" not in str(info.value)


def test_a_rule_needs_a_mapping_and_reads_valid_evidence_as_before():
    with pytest.raises(ArgumentTypeError, match="rule_fifth: ev must be a mapping"):
        rules.rule_fifth([1, 2])
    for c in ledger.CLAIMS:
        ev = _valid(c)
        assert c.rule(ev) == inspect.unwrap(c.rule)(ev), c.id


def test_optional_evidence_stays_optional_on_a_direct_call():
    claim = BY_ID["claim-fifth-at-24"]
    ev = {k: v for k, v in _valid(claim).items() if k not in claim.optional_keys}
    assert claim.rule(ev).word in ledger.VERDICTS
    checked = FiniteEvidence({"a": 1.0, "b": math.nan}, "r")
    assert "b" in checked and "c" not in checked and checked.get("c") is None and len(checked) == 2
    with pytest.raises(ValueError, match="'b'"):
        checked["b"]


def test_the_ledger_keeps_every_verdict_and_makes_a_nan_the_rule_reads_open():
    claim = BY_ID["claim-fifth-at-24"]
    # an optional value the chapter could not compute: the rule reads it on its branch, so open
    ev = {**_valid(claim), "ev_fifth_ratio_seed_ln0": math.nan}
    v = claim.verdict(ev)
    assert v.word == "open" and v.reason == "the data cannot tell (the chapter could not compute ev_fifth_ratio_seed_ln0)"
    for seed_set in (None, "s012", "s34", "s567"):
        for c, v in ledger.evaluate(BOOK, seed_set=seed_set):
            e = BOOK if seed_set is None else ledger.on_seed_set(BOOK, seed_set)
            c = ledger.confirmatory_reading(c) if seed_set == "s567" else c    # the pretrained claims' reading there
            if not c.missing(e) and not any(math.isnan(e[k]) for k in c.keys):
                allowed = set(c.keys) | set(c.optional_keys)
                assert v == inspect.unwrap(c.rule)({k: x for k, x in e.items() if k in allowed}), c.id


def test_the_ledger_refuses_a_value_that_is_not_a_number():
    claim = BY_ID["claim-fifth-at-24"]
    with pytest.raises(ArgumentTypeError, match="ev_fifth_ratio_seed'"):
        claim.verdict({**_valid(claim), "ev_fifth_ratio_seed": None})


def test_an_undeclared_read_is_a_one_line_key_and_value_error():
    claim = ledger.Claim("claim-x", "X", "s", (), ("ev_a",), lambda ev: ev["ev_b"])
    with pytest.raises(EvidenceMissing) as info:
        claim.verdict({"ev_a": 1.0, "ev_b": 2.0})
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert str(info.value).startswith("claim-x's rule reads 'ev_b'")


def test_every_decorated_rule_keeps_its_registered_fingerprint():
    registry = preregistration.read_registry(ROOT)["claims"]
    for c in ledger.CLAIMS:
        assert hasattr(c.rule, "__wrapped__"), c.id
        assert preregistration.fingerprint(c.rule) == preregistration.fingerprint(inspect.unwrap(c.rule)) \
            == registry[c.id]["rule_fingerprint"], c.id
    assert preregistration.mismatches(preregistration.read_registry(ROOT)) == {}
