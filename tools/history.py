"""Record, from git, when each claim's rule was registered and when each datum it reads was added.

Writes results/history.json, which resdecay_lib.book.history reads to label every verdict
confirmatory, exploratory or derived without git (a shallow clone, an unpacked archive):

* rules: per claim, the commit (sha, committer time) at which results/preregistration.json
  first held the claim's CURRENT fingerprint (the working tree's registry), found by walking
  the registry file's history (git log --format='%H %cI' -- results/preregistration.json, and
  git show <sha>:results/preregistration.json at each commit, oldest first); where a carry of
  results/reregistrations.json (resdecay_lib.book.carries: the rule and every value it reads
  unchanged) leads from that fingerprint to an older one, the first commit holding the oldest
  of the chain, with the registrations passed listed under 'carried';
* data: per stored file a claim's evidence is computed from (resdecay_lib.book.history.DATA and
  PREDICTIONS, on every seed), the commit that first ADDED it (git log --follow --diff-filter=A:
  renames followed), its time, the number of later commits that changed it and the last one
  (a later change, such as backfilled provenance, does not move the datum: it existed from its
  first add), and 'after': the rule and prediction commits its first commit descends from
  (git merge-base --is-ancestor), the commit itself excluded.

A file not yet committed, or a current fingerprint no commit of the registry holds, stops the
tool with a message (commit first). tests/book/test_history.py checks the file against git where
the history is there. Run it after any commit of the registry or of the data:
    python tools/history.py [--check]
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import generated  # noqa: E402  (tools/generated.py: write, or --check)
from resdecay_lib.book import carries as C  # noqa: E402
from resdecay_lib.book import history as H  # noqa: E402
from resdecay_lib.book import preregistration  # noqa: E402
from resdecay_lib.book.claims import CLAIMS  # noqa: E402

REGISTRY = str(preregistration.REGISTRY)


def git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def is_ancestor(a: str, b: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=ROOT).returncode == 0


class HistoryError(RuntimeError):
    """What stops the tool: a file or fingerprint no commit holds."""


def rule_commits(registry: dict, carries=()) -> dict:
    """{claim id: {fingerprint, commit, committed, carried}}: the first registry commit holding
    each claim's current fingerprint or, where ``carries`` (resdecay_lib.book.carries.read_carries'
    list) carry it back, the earliest of the first commits holding a fingerprint of its chain
    (each carry of the chain checked as committed: check_carry_provenance); ``carried`` lists the
    other registrations of the chain, newest first ({fingerprint, commit, committed})."""
    versions = [line.split() for line in git("log", "--format=%H %cI", "--", REGISTRY).splitlines()][::-1]
    current = {k: v["fingerprint"] for k, v in registry["claims"].items()}
    chains = {cid: C.chain(cid, fp, carries) for cid, fp in current.items()}
    first = {}                               # (claim id, fingerprint): (sha, when), the first holding it
    for sha, when in versions:
        try:
            held = json.loads(git("show", f"{sha}:{REGISTRY}")).get("claims", {})
        except (subprocess.CalledProcessError, json.JSONDecodeError):
            continue                        # a commit that deleted or broke the file holds nothing
        for cid, fps in chains.items():
            fp = held.get(cid, {}).get("fingerprint") if isinstance(held.get(cid), dict) else None
            if fp in fps and (cid, fp) not in first:
                first[cid, fp] = (sha, when)
    missing = sorted(f"{cid} ({fp})" for cid, fps in chains.items() for fp in fps if (cid, fp) not in first)
    if missing:
        raise HistoryError(f"no commit of {REGISTRY} holds the fingerprint of {', '.join(missing)}: "
                           f"commit the registry, then run python tools/history.py")
    order = {sha: i for i, (sha, _) in enumerate(versions)}
    for cid, fps in chains.items():
        for new, old in zip(fps, fps[1:]):
            check_carry_provenance(cid, old, new, first[cid, new][0], versions, order)
    out = {}
    for cid, fps in chains.items():
        sha, when = min((first[cid, fp] for fp in fps), key=lambda v: order[v[0]])   # the earliest registration
        out[cid] = {"fingerprint": fps[0], "commit": sha, "committed": when,
                    "carried": [{"fingerprint": fp, "commit": first[cid, fp][0], "committed": first[cid, fp][1]}
                                for fp in fps if first[cid, fp][0] != sha]}
    return dict(sorted(out.items()))


def check_carry_provenance(cid: str, old: str, new: str, sha: str, versions, order) -> None:
    """A carry old -> new of ``cid`` is trusted only as committed: the registry commit ``sha`` that
    first held ``new`` also holds the carry in results/reregistrations.json, and the registry's
    version before it held ``old``."""
    shown = git_or_none("show", f"{sha}:{C.CARRIES}")
    links = json.loads(shown).get("carries", []) if shown else []
    if not any(c.get("claims", {}).get(cid) and c["claims"][cid].get("from") == old and c["claims"][cid].get("to") == new
               for c in links):
        raise HistoryError(f"{cid}'s carry {old} -> {new} is not in {C.CARRIES} at {sha[:7]}, the commit that first "
                           f"held {new}: a carry is committed with the registry it writes")
    before = versions[order[sha] - 1][0] if order[sha] > 0 else None
    held = json.loads(git("show", f"{before}:{REGISTRY}")).get("claims", {}) if before else {}
    if not isinstance(held.get(cid), dict) or held[cid].get("fingerprint") != old:
        raise HistoryError(f"{cid}'s carry {old} -> {new}: the registry before {sha[:7]} does not hold {old}")


def git_or_none(*args) -> str | None:
    run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return run.stdout if run.returncode == 0 else None


def datum(path: str, marks) -> dict:
    """When ``path`` was first added, how often it changed since, and which of ``marks`` (rule
    and prediction commits) its first commit descends from."""
    log = git("log", "--follow", "--format=%H %cI", "--", path).splitlines()
    added = git("log", "--follow", "--diff-filter=A", "--format=%H %cI", "--", path).splitlines()
    if not added:
        raise HistoryError(f"{path} is not committed: commit it, then run python tools/history.py")
    sha, when = added[-1].split()
    later = [line.split() for line in log if line.split()[0] != sha]
    return {"commit": sha, "committed": when, "n_changed_since": len(later),
            "last_changed": later[0][0] if later else None,
            "after": sorted(m for m in marks if m != sha and is_ancestor(m, sha))}


def build() -> dict:
    registry = preregistration.read_registry(ROOT)
    rules = rule_commits(registry, C.read_carries(ROOT))
    paths = H.stored_paths(ROOT, registry)
    predictions = {p for c in CLAIMS for p in H.data_paths(c, registry, paths, None, H.PREDICTIONS)}
    marks = {v["commit"] for v in rules.values()}
    firsts = {p: git("log", "--follow", "--diff-filter=A", "--format=%H", "--", p).splitlines() for p in predictions}
    marks |= {f[-1] for f in firsts.values() if f}
    return {"what": "when each claim's rule was registered (the first commit of results/preregistration.json "
                    "holding its current fingerprint, or the oldest one its carries lead back to: "
                    "results/reregistrations.json) and when each stored datum its evidence reads was first "
                    "added; written by tools/history.py from git, read by resdecay_lib.book.history",
            "registry": REGISTRY, "rules": rules, "data": {p: datum(p, marks) for p in paths}}


def main(argv=None) -> int:
    check = generated.wants_check(argv, __doc__)
    try:
        out = build()
    except HistoryError as exc:
        print(exc, file=sys.stderr)
        return 1
    path = ROOT / H.HISTORY
    return generated.write_or_check(path, json.dumps(out, indent=1) + "\n", check=check,
                                    wrote=f"{H.HISTORY}: {len(out['rules'])} rules, {len(out['data'])} data",
                                    stale=f"{H.HISTORY} is stale: run python tools/history.py")


if __name__ == "__main__":
    sys.exit(main())
