"""Every evidence has a producer: the chapter function whose result glues it, as the stored
notebooks show."""
import inspect
import json
import pathlib
import re

import pytest

from notebook_fixtures import stored_glues
from resdecay_lib.book import evidence as E
from resdecay_lib.book import ledger, producers
from resdecay_lib.checks import ArgumentTypeError

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"


def _chapter_module(nb: pathlib.Path) -> str | None:
    """The module of ``resdecay_lib.analysis.chapters`` whose ``chapter`` the notebook calls."""
    code = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "code")
    found = re.findall(r"from resdecay_lib\.analysis\.chapters import (\w+)", code)
    called = [m for m in found if re.search(rf"\b{m}\.chapter\(", code)]
    assert len(called) <= 1, f"{nb.name} calls more than one chapter: {called}"
    return f"resdecay_lib.analysis.chapters.{called[0]}" if called else None


#: {glue name: module of the chapter whose notebook stores it}, from the stored outputs
GLUED_BY = {}
for _nb in sorted(CHAPTERS.glob("*.ipynb")):
    _mod = _chapter_module(_nb)
    for _name in stored_glues(_nb):
        if _name.startswith("ev_"):
            GLUED_BY.setdefault(_name, set()).add(_mod)


def test_every_declared_evidence_has_a_producer_and_nothing_else_has():
    assert set(producers.PRODUCERS) == set(E.DECLARED.values())


def test_every_name_a_claim_reads_maps_to_a_function_of_the_library():
    for claim in ledger.CLAIMS:
        for key in (*claim.keys, *claim.optional_keys):
            fn = producers.producer(key)
            assert inspect.isfunction(fn) and fn.__module__.startswith("resdecay_lib."), (claim.id, key, fn)
            assert fn.__name__ == "chapter" and fn.__module__.startswith("resdecay_lib.analysis.chapters."), key


def test_each_producer_is_the_chapter_whose_notebook_glues_the_name():
    assert len(GLUED_BY) > 100          # the stored notebooks were read
    for ev in E.DECLARED.values():
        fn = producers.producer(ev)
        names = [*ev.keys(), *(ev.set_keys("s012") if ev.by_seed_set else ())]
        for name in names:
            assert GLUED_BY.get(name) == {fn.__module__}, \
                f"{name}: produced by {fn.__module__}.chapter, glued by the notebook of {GLUED_BY.get(name)}"


def test_the_producer_of_a_part_is_its_evidence_producer():
    ev = E.FRONT_POSITION
    assert producers.producer_path(ev.se) == producers.producer_path(ev.lo) == producers.PRODUCERS[ev]
    assert producers.producer_path(E.TRAINED_EXP_PRE_LN.set_keys("s34")[2]) == producers.TRAINING


def test_a_name_without_a_producer_is_refused_by_name():
    with pytest.raises(E.UndeclaredEvidence, match="ev_no_such_thing"):
        producers.producer("ev_no_such_thing")
    with pytest.raises(ArgumentTypeError, match="name must be an evidence name"):
        producers.producer(3)


def test_a_declared_name_missing_from_the_map_is_refused(monkeypatch):
    monkeypatch.delitem(producers.PRODUCERS, E.QUANT_SHIFT)
    with pytest.raises(ValueError, match="ev_quant_shift.*has no producer"):
        producers.producer(E.QUANT_SHIFT)
