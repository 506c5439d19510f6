"""What a chapter's typed result glues (resdecay_lib.book.glues): evidence through its
declaration, sentences and tables as Markdown, anything else as it is; a value that does not
fit its name is refused before anything is glued."""
import math
from dataclasses import dataclass

import pytest

from resdecay_lib.book.glues import EvidenceGlue, Table, Words, glue_all, glue_names


@dataclass(frozen=True)
class Result:
    items: dict

    def glues(self):
        return self.items


@pytest.fixture
def glued(monkeypatch):
    import myst_nb
    out = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: out.append((name, value, display)))
    return out


def test_evidence_goes_through_its_declaration_and_words_and_tables_become_markdown(glued):
    from IPython.display import Markdown
    glue_all(Result({"ev_share_corr": EvidenceGlue(0.123456, lo=0.1, hi=0.2, digits=3),
                     "front_words": Words("the decay resumes"),
                     "a_table": Table.of(["a", "b"], [["1", "2"]]),
                     "front_blocks": 3}))
    names = [n for n, _, _ in glued]
    assert names == ["ev_share_corr", "ev_share_corr_lo", "ev_share_corr_hi", "front_words", "a_table", "front_blocks"]
    assert [v for n, v, _ in glued[:3]] == [0.123, 0.1, 0.2]
    assert isinstance(glued[3][1], Markdown) and glued[3][1].data == "the decay resumes"
    assert glued[4][1].data == "| a | b |\n| --- | --- |\n| 1 | 2 |"
    assert glued[5][1] == 3 and type(glued[5][1]) is int
    assert not any(display for _, _, display in glued)


def test_a_seed_set_value_is_keyed_by_its_set_or_glued_alone_under_its_declared_name(glued):
    glue_all(Result({"ev_unigram_loss": EvidenceGlue(2.5),
                     "ev_pre_ln_worst_loss_deep__s012": EvidenceGlue(1.5, seed_set="s012")}))
    glue_all(Result({"ev_pre_ln_worst_loss_deep": EvidenceGlue(1.6, seed_set="s34")}))
    assert [(n, v) for n, v, _ in glued] == [("ev_unigram_loss", 2.5), ("ev_pre_ln_worst_loss_deep__s012", 1.5),
                                            ("ev_pre_ln_worst_loss_deep__s34", 1.6)]


@pytest.mark.parametrize("items, match", [
    ({"ev_share_corr": 0.1}, "an evidence name needs an EvidenceGlue"),
    ({"front_k0": EvidenceGlue(1.0)}, "needs a declared evidence name"),
    ({"ev_nothing": EvidenceGlue(1.0)}, "not declared"),
    ({"ev_pre_ln_worst_loss_deep__s34": EvidenceGlue(1.0, seed_set="s012")}, "keyed by its declared name"),
    ({"x": math.inf}, "infinite"),
    ({"": 1}, "a dict of glue names"),
])
def test_a_value_that_does_not_fit_its_name_is_refused_before_any_glue(glued, items, match):
    with pytest.raises((KeyError, ValueError), match=match):
        glue_all(Result({"first": 1, **items}))
    assert glued == []


def test_a_nan_evidence_has_every_part_its_kind_needs():
    e = EvidenceGlue.nan("interval_se")
    assert all(math.isnan(x) for x in (e.value, e.lo, e.hi, e.se))
    assert EvidenceGlue.nan().lo is None and EvidenceGlue.nan("interval").se is None


def test_a_table_row_of_the_wrong_width_is_refused_and_names_are_listed_in_order():
    with pytest.raises(ValueError, match=r"rows\[1\] has 1 cells, the header 2"):
        Table.of(["a", "b"], [["1", "2"], ["3"]])
    assert glue_names(Result({"b": 1, "a": 2})) == ["b", "a"]
    with pytest.raises(TypeError, match="a chapter's result"):
        glue_names(object())
