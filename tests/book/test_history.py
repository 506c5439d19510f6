"""resdecay_lib.book.history: each label's branch on synthetic histories, its bad-input errors, and
results/history.json (written by tools/history.py) against git where the history is there."""
import pathlib
import subprocess

import pytest

from resdecay_lib.book import evidence as E
from resdecay_lib.book.carries import chain, read_carries
from resdecay_lib.book import history as H
from resdecay_lib.book import preregistration
from resdecay_lib.book.claims import CLAIMS
from resdecay_lib.book.verdicts import Claim, Verdict
from resdecay_lib.checks import ArgumentTypeError

ROOT = pathlib.Path(__file__).resolve().parents[2]
BY_ID = {c.id: c for c in CLAIMS}
RULE, PRED = "r" * 40, "p" * 40
SETS = {"s012": [0, 1, 2], "s34": [3, 4]}


def registry(*ids, fp="f0"):
    return {"seed_sets": SETS, "claims": {i: {"fingerprint": fp} for i in ids}}


def datum(commit, committed, after):
    return {"commit": commit, "committed": committed, "after": list(after)}


def history(ids, data, fp="f0"):
    return {"rules": {i: {"fingerprint": fp, "commit": RULE, "committed": "2026-12-02T03:56:16+00:00"} for i in ids},
            "data": data}


def toy_runs(before_seeds=()):
    """The five Pre-LN L = 24 runs claim-idle-blocks reads; ``before_seeds`` committed before the rule."""
    return {f"results/train_long/pre_ln_L24_s{s}.json":
            datum(f"{s}" * 40, f"2026-12-0{1 if s in before_seeds else 2}T0{s}:00:00+00:00",
                  () if s in before_seeds else (RULE,)) for s in range(5)}


def test_a_claim_that_reads_no_stored_data_is_derived():
    ids = ("claim-omega-formula", "claim-fixes-escape", "claim-gradients-undamped")
    got = H.labels(history(ids, {}), registry(*ids), [BY_ID[i] for i in ids])
    assert {k: (v.word, v.n_data, v.n_before, v.earliest) for k, v in got.items()} == \
        {i: ("derived", 0, 0, None) for i in ids}


def test_every_datum_after_the_rule_is_confirmatory():
    got = H.labels(history(["claim-idle-blocks"], toy_runs()), registry("claim-idle-blocks"), [BY_ID["claim-idle-blocks"]])
    lab = got["claim-idle-blocks"]
    assert (lab.word, lab.n_data, lab.n_before, lab.rule_commit) == ("confirmatory", 5, 0, RULE)
    assert lab.earliest == ("results/train_long/pre_ln_L24_s0.json", "0" * 40, "2026-12-02T00:00:00+00:00")


def test_one_datum_before_the_rule_makes_it_exploratory_and_is_the_earliest():
    lab = H.labels(history(["claim-idle-blocks"], toy_runs(before_seeds=(3,))), registry("claim-idle-blocks"),
                   [BY_ID["claim-idle-blocks"]])["claim-idle-blocks"]
    assert (lab.word, lab.n_data, lab.n_before) == ("exploratory", 5, 1)
    assert lab.earliest[0] == "results/train_long/pre_ln_L24_s3.json"


def test_a_seed_set_reads_only_its_seeds():
    h, reg, c = history(["claim-idle-blocks"], toy_runs(before_seeds=(0, 1, 2))), registry("claim-idle-blocks"), \
        [BY_ID["claim-idle-blocks"]]
    assert H.labels(h, reg, c)["claim-idle-blocks"].word == "exploratory"
    assert (H.labels(h, reg, c, "s012")["claim-idle-blocks"].n_data, H.labels(h, reg, c, "s012")["claim-idle-blocks"].word) \
        == (3, "exploratory")
    held = H.labels(h, reg, c, "s34")["claim-idle-blocks"]
    assert (held.word, held.n_data, held.seed_set) == ("confirmatory", 2, "s34")


def test_the_confirmatory_set_reads_a_pretrained_claims_confirmatory_record():
    """On the confirmatory set a pretrained claim is labelled from its confirmatory reading's record
    (the 1.5B on pydoc), not from the exploratory records: no data yet while it is not stored,
    confirmatory when it was committed after the rule, exploratory when before."""
    cid, large = "claim-two-families", "results/pretrained_large/qwen2.5-coder-1.5b__pydoc.json"
    reg = {"seed_sets": {**SETS, E.CONFIRMATORY_SET: [5, 6, 7]}, "claims": {cid: {"fingerprint": "f0"}}}
    old = {f"results/pretrained/{m}__shakespeare.json": datum("a" * 40, "2026-12-01T00:00:00+00:00", ())
           for m in ("smollm2-135m", "qwen2.5-coder-0.5b")}
    c = [BY_ID[cid]]
    assert H.labels(history([cid], old), reg, c)[cid].word == "exploratory"
    assert H.labels(history([cid], old), reg, c, E.CONFIRMATORY_SET)[cid].word == H.NO_DATA
    for after, word in (((RULE,), "confirmatory"), ((), "exploratory")):
        lab = H.labels(history([cid], {**old, large: datum("b" * 40, "2026-12-06T00:00:00+00:00", after)}), reg, c,
                       E.CONFIRMATORY_SET)[cid]
        assert (lab.word, lab.n_data, lab.earliest[0]) == (word, 1, large)
    assert set(old) <= set(H.patterns(BY_ID[cid], reg)) and large not in H.patterns(BY_ID[cid], reg)   # nor the other way


def front_history(after_prediction: bool):
    deep = {f"results/train_deep/pre_ln_L{L}_s{s}.json":
            datum(f"{L}{s}".ljust(40, "0"), "2026-12-02T06:00:00+00:00", (RULE, PRED) if after_prediction else (RULE,))
            for L in (48, 96) for s in range(3)}
    deep["results/predictions/front.json"] = datum(PRED, "2026-12-02T03:51:24+00:00", ())
    return history(["claim-front"], deep)


def test_a_prediction_file_is_declared_not_a_datum_and_must_come_before_the_data():
    c, reg = [BY_ID["claim-front"]], registry("claim-front")
    lab = H.labels(front_history(True), reg, c)["claim-front"]
    assert (lab.word, lab.n_data, lab.n_before, lab.predictions) == \
        ("confirmatory", 6, 0, ("results/predictions/front.json",))
    assert H.labels(front_history(False), reg, c)["claim-front"].word == "exploratory"


def test_label_counts_counts_every_label():
    ids = ("claim-omega-formula", "claim-idle-blocks")
    got = H.labels(history(ids, toy_runs()), registry(*ids), [BY_ID[i] for i in ids])
    assert H.label_counts(got) == {"confirmatory": 1, "exploratory": 0, "derived": 1}
    with pytest.raises(ArgumentTypeError, match="found must be labels"):
        H.label_counts({"claim-x": "derived"})


@pytest.mark.parametrize("bad, error, match", [
    ([], ArgumentTypeError, "history must be a dict"),
    ({"rules": {}}, ValueError, r"history\['data'\] must be a dict"),
    ({"rules": {"claim-idle-blocks": {"fingerprint": "f0"}}, "data": {}}, ValueError, "fingerprint, commit, committed"),
    ({"rules": {}, "data": {"a.json": {"commit": "c", "committed": "t", "after": "r"}}}, ValueError,
     r"\['after'\] must be a list"),
])
def test_a_malformed_history_is_refused_naming_the_entry(bad, error, match):
    with pytest.raises(error, match=match):
        H.labels(bad, registry("claim-idle-blocks"), [BY_ID["claim-idle-blocks"]])


def test_a_stale_history_says_to_rerun_the_tool():
    c = [BY_ID["claim-idle-blocks"]]
    with pytest.raises(ValueError, match="fingerprint f0, the registry holds 'f1'.*tools/history.py"):
        H.labels(history(["claim-idle-blocks"], toy_runs()), registry("claim-idle-blocks", fp="f1"), c)
    with pytest.raises(ValueError, match="no rule commit for claim-idle-blocks.*tools/history.py"):
        H.labels(history([], toy_runs()), registry("claim-idle-blocks"), c)
    with pytest.raises(ValueError, match="records none of it.*tools/history.py"):
        H.labels(history(["claim-idle-blocks"], {}), registry("claim-idle-blocks"), c)
    with pytest.raises(ValueError, match="no declaration of claim-idle-blocks"):
        H.labels(history(["claim-idle-blocks"], toy_runs()), registry(), c)


def test_bad_seed_sets_claims_and_registries_are_refused():
    h, c = history(["claim-idle-blocks"], toy_runs()), [BY_ID["claim-idle-blocks"]]
    with pytest.raises(ValueError, match=r"seed_set must be None \(every seed\) or one of \['s012', 's34'\]"):
        H.labels(h, registry("claim-idle-blocks"), c, "s5")
    with pytest.raises(ValueError, match=r"registry\['seed_sets'\] must map"):
        H.labels(h, {"claims": registry("claim-idle-blocks")["claims"]}, c)
    with pytest.raises(ArgumentTypeError, match="registry must be a dict"):
        H.labels(h, None, c)
    with pytest.raises(ArgumentTypeError, match="claims must be a list of Claim"):
        H.labels(h, registry("claim-idle-blocks"), "claim-idle-blocks")
    with pytest.raises(ArgumentTypeError, match="claim must be a Claim"):
        H.labels(h, registry("claim-idle-blocks"), ["claim-idle-blocks"])


def test_data_paths_matches_the_seed_sets_files_and_refuses_bad_paths():
    c, reg = BY_ID["claim-idle-blocks"], registry()
    paths = [*toy_runs(), "results/train_long/pre_ln_L16_s0.json"]
    assert H.data_paths(c, reg, paths, "s34") == ("results/train_long/pre_ln_L24_s3.json",
                                                  "results/train_long/pre_ln_L24_s4.json")
    with pytest.raises(ArgumentTypeError, match="paths must be repository-relative file paths"):
        H.data_paths(c, reg, "results/train_long/pre_ln_L24_s3.json")
    with pytest.raises(ArgumentTypeError, match="paths must all be str"):
        H.data_paths(c, reg, [3])
    with pytest.raises(ArgumentTypeError, match="root must be the repository's folder"):
        H.read_history(None)


def test_evidence_of_a_stored_data_chapter_must_be_mapped_to_its_files():
    # Chapter 7's mean |correlation| is read by no claim, so DATA does not map it: a claim that read it
    # could not pass for derived by the omission
    c = Claim("claim-unmapped", "t", "s", (), (E.BLOCK_CORR_MEAN_ABS,), lambda ev: Verdict("open", "x"))
    with pytest.raises(ValueError, match="reads ev_block_corr_mean_abs \\(chapter 07_training\\), which "
                                         "book.history.DATA does not map"):
        H.patterns(c, registry())


def test_the_derived_claims_are_those_read_from_chapters_1_to_6_alone():
    # the SymPy and live Monte Carlo claims (Chapters 2-6 build or simulate what they measure);
    # every other claim maps to stored files under results/
    reg = registry()
    pats = {c.id: H.patterns(c, reg) for c in CLAIMS}
    assert {i for i, p in pats.items() if not p} == {
        "claim-omega-formula", "claim-mean-abs-rate", "claim-output-rate", "claim-fifth-at-24",
        "claim-fixes-escape", "claim-gradients-undamped"}
    assert all(q.startswith("results/") for p in pats.values() for q in p)


def test_stale_names_unrecorded_and_gone_files_and_changed_rules(tmp_path):
    (tmp_path / "results" / "train_long").mkdir(parents=True)
    for s in (0, 1):
        (tmp_path / "results" / "train_long" / f"pre_ln_L24_s{s}.json").write_text("{}")
    h = history(["claim-idle-blocks"], {"results/train_long/pre_ln_L24_s1.json": datum("c", "t", ()),
                                        "results/train_long/pre_ln_L24_s2.json": datum("c", "t", ())})
    assert H.stale(h, tmp_path, registry("claim-idle-blocks", fp="f1"), [BY_ID["claim-idle-blocks"]]) == \
        {"unrecorded": ["results/train_long/pre_ln_L24_s0.json"], "gone": ["results/train_long/pre_ln_L24_s2.json"],
         "rules": ["claim-idle-blocks"]}
    with pytest.raises(ValueError, match="not a folder"):
        H.stale(h, tmp_path / "nowhere", registry(), [])


def test_read_history_names_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="history.json' is not a file: run python tools/history.py"):
        H.read_history(tmp_path)


def test_the_stored_history_is_current_for_the_files_stored_and_the_registry():
    """results/history.json lacks no stored datum a claim reads and records every current
    fingerprint: a new run or a new registry without re-running tools/history.py fails here."""
    reg = preregistration.read_registry(ROOT)
    assert H.stale(H.read_history(ROOT), ROOT, reg) == {"unrecorded": [], "gone": [], "rules": []}


def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.slow
def test_the_recorded_history_matches_git_where_the_history_is_there():
    """results/history.json (written by tools/history.py) says what git says: each rule's commit is
    the first of the registry's commits to hold its current fingerprint, or the oldest fingerprint
    the recorded carries lead back to (each registration passed listed), each datum's the one that
    first added it (renames followed), and 'after' is git's ancestry."""
    import json
    if not (ROOT / ".git").exists() or _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("no full git history here (a shallow clone or an archive): the labels stand on results/history.json")
    h = H.read_history(ROOT)
    reg_file = str(preregistration.REGISTRY)
    versions = [line.split() for line in _git("log", "--format=%H %cI", "--", reg_file).stdout.split("\n") if line][::-1]
    held = {}
    for sha, when in versions:
        claims = json.loads(_git("show", f"{sha}:{reg_file}").stdout or "{}").get("claims", {})
        for cid, d in claims.items():
            held.setdefault((cid, d.get("fingerprint")), (sha, when))
    carries, order = read_carries(ROOT), {sha: i for i, (sha, _) in enumerate(versions)}
    for cid, rule in h["rules"].items():
        fps = chain(cid, rule["fingerprint"], carries)      # the current one, then each it carries back to
        earliest = min((held[cid, fp] for fp in fps), key=lambda v: order[v[0]])
        assert earliest == (rule["commit"], rule["committed"]), cid
        assert [(c["fingerprint"], c["commit"], c["committed"]) for c in rule["carried"]] == [
            (fp, *held[cid, fp]) for fp in fps if held[cid, fp] != earliest], cid
    marks = {r["commit"] for r in h["rules"].values()} | {
        h["data"][p]["commit"] for p in h["data"] if p.startswith("results/predictions/")}
    for path, d in h["data"].items():
        added = _git("log", "--follow", "--diff-filter=A", "--format=%H %cI", "--", path).stdout.split("\n")
        assert [x for x in added if x][-1].split() == [d["commit"], d["committed"]], path
        after = sorted(m for m in marks if m != d["commit"]
                       and _git("merge-base", "--is-ancestor", m, d["commit"]).returncode == 0)
        assert after == d["after"], path


def test_the_tool_refuses_a_carry_that_was_not_committed_with_its_registry():
    import sys
    if not (ROOT / ".git").exists() or _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("no full git history here: tools/history.py needs it")
    sys.path.insert(0, str(ROOT / "tools"))
    import history as tool          # tools/history.py
    reg = preregistration.read_registry(ROOT)
    cid = "claim-depth-cost"                    # never carried: a hand-made carry to its fingerprint is refused
    fp = reg["claims"][cid]["fingerprint"]
    older = "f0f9ba6819653438"                  # its fingerprint in the first registry, 775c00d
    forged = [{"why": "by hand", "claims": {cid: {"from": older, "to": fp, "n_values": 1}}}]
    with pytest.raises(tool.HistoryError, match="is not in results/reregistrations.json at"):
        tool.rule_commits({"claims": {cid: {"fingerprint": fp}}}, forged)


def test_the_tool_refuses_a_fingerprint_no_commit_holds_and_an_uncommitted_file():
    import sys
    if not (ROOT / ".git").exists():
        pytest.skip("no git here: tools/history.py needs the history")
    sys.path.insert(0, str(ROOT / "tools"))
    import history as tool          # tools/history.py
    with pytest.raises(tool.HistoryError, match=r"no commit of results/preregistration.json holds the "
                                                r"fingerprint of claim-x \(not-a-fingerprint\): commit the registry"):
        tool.rule_commits({"claims": {"claim-x": {"fingerprint": "not-a-fingerprint"}}})
    with pytest.raises(tool.HistoryError, match="results/train_long/never_s0.json is not committed: commit it"):
        tool.datum("results/train_long/never_s0.json", set())
