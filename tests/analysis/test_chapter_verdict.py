"""Chapter 10's and the Preface's results (resdecay_lib.analysis.chapters.verdict): each wording
function's branches, the glue names the notebooks read, and the result on the stored book against
values read here straight from the JSON and TOML files."""
from __future__ import annotations

import json
import pathlib
import tomllib

import pytest

from resdecay_lib.analysis.chapters import verdict as V
from resdecay_lib.book import ledger
from resdecay_lib.book.glues import Table, Words, glue_names

from notebook_fixtures import prose_glue_names

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "chapters" / "10_verdict.ipynb"
PREFACE = ROOT / "intro.ipynb"
COUNT_NAMES = {"ledger-n-claims", "ledger-n-evidence"} | {"ledger-n-" + w.replace(" ", "-") for w in ledger.VERDICTS}


def _entry(cid="claim-a", word="holds", short="x | y", numbers="", label="exploratory"):
    return V.ClaimEntry(id=cid, title="A | title", word=word, reason="r", short=short, numbers=numbers,
                        where=Words("w"), cite="cite line", family="its own", label=label)


def _tiny_result(claims) -> V.VerdictResult:
    return V.VerdictResult(
        claims=tuple(claims), n_evidence=3, summary=Words("s"), promotion="p",
        replication=(V.ReplicationEntry("claim-a", "A", "holds", "open", "holds", "open", "confirmatory", "not yet"),),
        registry_commit="0123456789abcdef", registry_time="t", n_registered=1, rule_mismatches={},
        front_rule_committed="f", front_rule_now="f", front_written="w", changelog=Words("c"), n_moved=0, lim_width=64,
        seeds_before=(0, 1, 2, 3), seeds_after=(4,), history_stale={"unrecorded": [], "gone": [], "rules": []})


# ------------------------------------------------------------------------------ wording


def test_escape_escapes_every_bar():
    assert V.escape("a | b | c") == "a \\| b \\| c" and V.escape(3) == "3"


def test_ledger_row_shows_the_label_and_the_numbers_or_a_dash():
    assert V.ledger_row("T|x", "claim-a", "holds", "derived", "ok", "1 [0, 2]") == \
        ["{ref}`T\\|x <claim-a>`", "**holds**", "*derived*", "ok (1 [0, 2])"]
    assert V.ledger_row("T", "claim-a", "open", "exploratory", "a|b", "")[3] == "a\\|b (-)"


def test_carried_words_say_how_many_rules_were_carried_and_through_which_commits():
    assert str(V.carried_words({})) == "No rule was carried from an earlier registration."
    assert str(V.carried_words({"claim-a": ()})) == "No rule was carried from an earlier registration."
    one = str(V.carried_words({"claim-a": (("acabc8c" + "0" * 33, "2026-12-05T14:00:00+00:00"),)}))
    assert one.startswith("1 rule was carried from an earlier registration (through `acabc8c`, in the order committed)")
    assert "its verdict, every value it reads and its verdict" in one
    late, early = ("b" * 40, "2026-12-05T15:00:00+00:00"), ("c" * 40, "2026-12-05T14:00:00+00:00")
    two = str(V.carried_words({"claim-a": (late,), "claim-b": (late, early)}))
    assert two.startswith("2 rules were carried from an earlier registration (through `ccccccc`, `bbbbbbb`, "
                          "in the order committed)")
    assert "their verdicts, every value they read and their verdicts" in two


def test_labels_words_counts_each_label_and_names_the_confirmatory():
    w = V.labels_words({"confirmatory": 1, "exploratory": 10, "derived": 6}, ["{ref}`claim-front`"])
    assert isinstance(w, Words)
    assert w.startswith("Of the 17 verdicts, 1 is confirmatory ({ref}`claim-front`: every stored run or record it "
                        "reads was committed after the registry first held its rule), 10 are exploratory (")
    assert "and 6 are derived (SymPy" in w
    none = V.labels_words({"confirmatory": 0, "exploratory": 1, "derived": 0}, [])
    assert none.startswith("Of the 1 verdicts, none is confirmatory (none reads only runs and records committed "
                           "after the registry first held its rule), 1 is exploratory") and "0 are derived" in none
    two = V.labels_words({"confirmatory": 2, "exploratory": 0, "derived": 0}, ["a", "b"])
    assert "2 are confirmatory (a, b: every stored run or record they read" in two
    with pytest.raises(ValueError, match="lacks \\['derived'\\]"):
        V.labels_words({"confirmatory": 0, "exploratory": 0}, [])
    with pytest.raises(ValueError, match="confirmatory names 0 claims, counts\\['confirmatory'\\] is 1"):
        V.labels_words({"confirmatory": 1, "exploratory": 0, "derived": 0}, [])


def test_heldout_words_branches():
    assert V.heldout_words((0, 1, 2, 3), (4,)) == (
        "The rules were registered after training runs of seeds 0, 1, 2 and 3 existed and before any run of "
        "seed 4 (below), so only seed 4 is held out in the strict sense.")
    assert V.heldout_words((0,), (3, 4)).endswith("of seed 0 existed and before any run of seeds 3 and 4 (below), "
                                                  "so only seeds 3 and 4 are held out in the strict sense.")
    assert V.heldout_words((0, 1), ()).startswith("Every training run the rules read existed before")
    assert V.heldout_words((), (0, 1)) == ("Every training run the rules read was committed after they were "
                                           "registered, so seeds 0 and 1 are held out in the strict sense.")
    # a claim whose rule was registered again after its runs is named apart, not counted
    assert V.heldout_words((0,), (5,), ("claim-promote",)).endswith(
        "so only seed 5 is held out in the strict sense. For {ref}`claim-promote`, whose rule was registered again "
        "after every training run it reads, no seed is held out.")
    assert "rules were registered again after every training run they read" in V.heldout_words((0,), (5,), ("a", "b"))


def test_the_stored_book_holds_out_seeds_5_to_7_from_every_rule_but_the_late_ones():
    """From the recorded history: seeds 5-7 were trained after the rules whose confirmatory column
    reads the toy runs, but for claim-promote, registered again (1f263f1) after them."""
    r = V.chapter(ROOT)
    assert (r.seeds_before, r.seeds_after, r.late) == ((0, 1, 2, 3, 4), (5, 6, 7), ("claim-promote",))
    assert not r.rule_mismatches


def test_replication_row_bolds_the_ledgers_verdict_and_labels_the_confirmatory_one():
    assert V.replication_row("T", "claim-a", "holds", "open", "holds", "holds", "confirmatory", "yes") == \
        ["{ref}`T <claim-a>`", "holds", "open", "**holds**", "holds (*confirmatory*)", "yes"]


def test_claim_words_and_cite_words():
    w = V.claim_words("S.", "card", "ev", "prim", "0.1", "fam")
    assert isinstance(w, Words)
    assert w == ('**Claim.** S.\n\n**The card.** "card"\n\n**Evidence.** ev\n\n'
                 '**Declared.** Primary statistic: prim. Margin: 0.1. Multiplicity: fam.')
    assert V.cite_words("A (2026). x.") == "`A (2026). x.`"


def test_replication_counts_are_listed_alphabetically():
    assert V.replication_counts_words({"yes": 2, "no power": 5, "no": 1}) == "1 no, 5 no power, 2 yes"
    assert V.replication_counts_words({}) == ""


def test_families_words_is_one_bullet_per_claim():
    assert V.families_words([("A", "claim-a", "f1"), ("B|b", "claim-b", "f2")]) == \
        "* {ref}`A <claim-a>`: f1.\n* {ref}`B\\|b <claim-b>`: f2."


def test_change_words_branches():
    assert V.change_words("claim-a", "open", "holds", "rule replaced") == "* `claim-a`: open → **holds**. rule replaced."
    assert V.change_words("claim-a", "open", "holds", None) == \
        f"* `claim-a`: open → **holds**. {V.UNEXPLAINED_CHANGE}."
    assert V.change_words("claim-a", None, "holds", None).startswith("* `claim-a`: new → **holds**.")
    assert V.change_words("claim-a", "holds", "holds", "margin widened") == \
        "* `claim-a`: **holds**, unchanged, though margin widened."
    assert V.change_words("claim-a", "holds", "holds", None) is None


def test_changelog_words_drops_the_unchanged():
    lines = [V.change_words("claim-a", "open", "holds", "x"), None]
    assert V.changelog_words("v1", "12 runs", lines) == "Against v1 (12 runs):\n\n* `claim-a`: open → **holds**. x."


def test_headline_row_rounds_to_two_decimals():
    assert V.headline_row("toy", -0.8823, -0.91, -0.855, -0.9049, "claim-a", "holds") == \
        ["toy", "-0.88 [-0.91, -0.85]", "-0.90", "{ref}`claim-a`", "holds"]


# ------------------------------------------------------------------------------ glues


def test_glues_of_a_tiny_result():
    g = _tiny_result([_entry(), _entry("claim-b", "open", numbers="2")]).glues()
    assert g["claim-a-short"] == "x \\| y" and isinstance(g["claim-a-short"], Words)
    assert g["claim-a-cite"] == "`cite line`" and g["claim-b-verdict"] == "open"
    assert isinstance(g["ledger-table"], Table)
    assert g["ledger-table"].splitlines()[0] == "| claim | verdict | label | why (the deciding numbers) |"
    assert g["ledger-table"].splitlines()[3] == "| {ref}`A \\| title <claim-b>` | **open** | *exploratory* | x \\| y (2) |"
    assert g["labels-words"].startswith("Of the 2 verdicts, none is confirmatory") and "2 are exploratory" in g["labels-words"]
    assert g["heldout-words"].endswith("so only seed 4 is held out in the strict sense.")
    assert (g["ledger-n-claims"], g["ledger-n-holds"], g["ledger-n-open"], g["ledger-n-does-not-hold"]) == (2, 1, 1, 0)
    assert g["prereg-commit"] == "0123456" and g["replication-counts"] == "1 not yet"


def test_glue_names_are_the_names_the_chapter_reads_and_its_counts():
    from resdecay_lib.book.claims import CLAIMS
    names = set(glue_names(_tiny_result([_entry(c.id) for c in CLAIMS])))
    assert names == prose_glue_names(CHAPTER) | COUNT_NAMES


def test_preface_glue_names_are_the_names_the_preface_reads():
    result = V.PrefaceResult(findings=Words("f"), headline=(("toy", -0.9, -1.0, -0.8, -0.9, "claim-a", "holds"),))
    assert set(glue_names(result)) == prose_glue_names(PREFACE)
    assert result.glues()["preface-headline"].splitlines()[2] == "| toy | -0.90 [-1.00, -0.80] | -0.90 | {ref}`claim-a` | holds |"


# ------------------------------------------------------------------------------ the stored book


def _stored_evidence_names() -> set[str]:
    names = set()
    for path in ledger.book_notebooks(ROOT):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for o in cell.get("outputs", []):
                name = o.get("metadata", {}).get("scrapbook", {}).get("name", "")
                if name.startswith("ev_"):
                    names.add(name)
    return names


@pytest.mark.slow
def test_chapter_on_the_stored_book_agrees_with_its_files():
    r = V.chapter(ROOT)
    from resdecay_lib.book.claims import CLAIMS
    assert [c.id for c in r.claims] == [c.id for c in CLAIMS]
    assert all(c.word in ledger.VERDICTS for c in r.claims)
    assert r.n_evidence == len(_stored_evidence_names())
    registry = json.loads((ROOT / "results" / "preregistration.json").read_text())
    assert (r.registry_commit, r.registry_time) == (registry["commit"], registry["declared_utc"])
    front = json.loads((ROOT / "results" / "predictions" / "front.json").read_text())
    assert r.front_rule_committed == front["rule"]["fingerprint"] == r.front_rule_now
    assert not r.rule_mismatches
    spec = tomllib.loads((ROOT / "configs" / "train_long.toml").read_text())
    assert r.lim_width == spec["base"]["d_model"]
    history = json.loads((ROOT / "results" / "verdicts_history.json").read_text())
    last = history["versions"][-1]["verdicts"]
    assert r.n_moved == sum(last.get(c.id) != c.word for c in r.claims)
    assert all(f'{c.id} ("{c.title}").' in c.cite for c in r.claims)
    from resdecay_lib.book import history as book_history
    found = book_history.labels(json.loads((ROOT / "results" / "history.json").read_text()), registry)
    assert {c.id: c.label for c in r.claims} == {k: v.word for k, v in found.items()}
    assert r.history_stale == {"unrecorded": [], "gone": [], "rules": []}
    assert set(r.seeds_before) | set(r.seeds_after) <= {s for v in registry["seed_sets"].values() for s in v}
    p = V.preface(ROOT)
    assert dict(p.labels) == {c.id: c.label for c in r.claims}
    assert p.findings == r.summary
    assert len(p.headline) == 4


def test_power_rows_recover_the_sd_from_the_interval_and_read_nan_as_no_interval():
    from resdecay_lib.stats import inference as stats
    from resdecay_lib.book import evidence as E
    t = stats.t_quantile(0.995, 4)
    sd = 0.02
    half = t * sd / 5 ** 0.5
    e = E.GAP_BY_DEPTH[8]
    rows = V.power_rows({str(e): 0.06, e.lo: 0.06 - half, e.hi: 0.06 + half}, 5, 3, 0.99, 0.01)
    by = {r[0]: r for r in rows}
    assert by["8"][2] == f"{sd:.4f}"
    assert by["8"][3] == f"{stats.power_above(0.06, sd, 3, 0.99, 0.01):.2f}"
    assert by["4"][1] == "no exploratory interval" and len(rows) == len(E.GAP_BY_DEPTH)
