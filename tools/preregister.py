"""Write results/preregistration.json: every ledger claim's declaration and its fingerprint.

A claim's fingerprint (resdecay_lib.book.preregistration.fingerprints) covers its rule, the
producer of every evidence it reads and everything they call in the library, transitively,
with the constants they read, and Claim.verdict; the registry also records the rule's own,
narrower fingerprint (preregistration.rule_fingerprints, what results/predictions/front.json
holds for claim-front).

Run at the commit that declares (or re-declares) the rules; a verdict is confirmatory only when
every datum it reads was committed after that commit (resdecay_lib.book.history computes it); the
verdict chapter asserts that every current fingerprint equals the registered one.

--carry WHY re-registers the claims whose fingerprint moved while neither what decides their
verdict nor any value they read nor any verdict did (resdecay_lib.book.carries): it executes every
chapter but the ledger and the Preface with the code now, in a copy of the book (_build/executed,
as make book does; the stored outputs are not touched), reads the evidence the chapters glue
there and the evidence committed at HEAD (the old code's), computes every claim's decision and
verdicts (all seeds and each seed set) with the library of the registry's recorded commit (a git
worktree) on the committed evidence and with the code now on the new, and records the carry in
results/reregistrations.json, with how many of all the chapters' code cells' outputs, compared
as nbval compares them (every glued value, words, tables and figures' data among them), differ
from the committed ones (a printed line that differs moves no verdict, but its chapter must be
re-executed before nbval passes). It refuses, writing nothing, when the
registry or the carries file differ from HEAD, or when any moved claim's rule, decision, evidence
value or verdict differs (register it afresh, without --carry).

Usage: python tools/preregister.py [--commit SHA] [--dry-run] [--carry WHY]
(--commit records the declaring commit, which a file cannot hold in the commit that adds it;
--dry-run prints the claims whose fingerprint differs from the registry's and writes nothing)
"""
import argparse
import concurrent.futures
import datetime
import inspect
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from resdecay_lib.book import carries as C, evidence as E, ledger, preregistration as P  # noqa: E402
from resdecay_lib.book.notebooks import read_evidence  # noqa: E402
from resdecay_lib.training.store import write_atomic  # noqa: E402


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def git(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def executed_evidence(jobs: int = 2) -> tuple[dict, list[str]]:
    """Every chapter but the ledger and the Preface executed with the code now, in a copy of the
    book (tools/execute_book.py's), and the evidence they glue there."""
    import execute_book as X
    book = ROOT / "_build" / "executed"
    names = X.notebooks(ROOT)
    X.mirror(ROOT, book, names)
    order = X.schedule(names, {n: X.stored_seconds(ROOT / n) for n in names})
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for name, rc, sec, err in pool.map(lambda n: X.execute(book, n), order):
            print(f"  {name}: {sec:.0f} s" + ("" if rc == 0 else f", FAILED (exit {rc})"), flush=True)
            if rc:
                raise SystemExit(f"{name} failed with the code now (exit {rc}):\n{err}")
    return read_evidence(book / "chapters"), order


#: run by the old checkout and by the new: every claim's decision (book.carries.decision_text,
#: whose source is pasted in) and its verdict, word and reason, on all seeds and each seed set,
#: from the evidence of the notebooks in the folder argv[1]; printed as JSON
DECIDED = """
import json, sys
from resdecay_lib.book import evidence as E, ledger, preregistration as P
from resdecay_lib.book.notebooks import read_evidence
{decision_text}
ev = read_evidence(sys.argv[1])
sets = {{"all": None, **{{s: s for s in E.SEED_SETS}}}}
verdicts = {{k: {{c.id: [v.word, v.reason] for c, v in ledger.evaluate(ev, seed_set=s)}} for k, s in sets.items()}}
print(json.dumps({{c.id: {{"decision": decision_text(c, P.code_fingerprint),
                          "verdicts": {{k: verdicts[k][c.id] for k in sets}}}} for c in ledger.CLAIMS}}))
"""


def decided(checkout: pathlib.Path, chapters: pathlib.Path) -> dict:
    """DECIDED run with the library of ``checkout`` on the notebooks in ``chapters``."""
    script = DECIDED.format(decision_text=textwrap.dedent(inspect.getsource(C.decision_text)))
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    run = subprocess.run([sys.executable, "-c", script, str(chapters)], cwd=checkout, env=env,
                         capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"the verdicts could not be computed with the library of {checkout}:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def committed_chapters(dest: pathlib.Path) -> pathlib.Path:
    """The book's notebooks as committed at HEAD (their stored outputs: the old code's), in ``dest``."""
    import execute_book as X
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in X.notebooks(ROOT):
        shown = git("show", f"HEAD:{name}")
        if shown.returncode:
            raise SystemExit(f"{name} is not committed at HEAD: commit the chapters first")
        (dest / pathlib.Path(name).name).write_text(shown.stdout, encoding="utf-8")
    return dest


def _outputs(path: pathlib.Path) -> list:
    """Each code cell's outputs as nbval compares them: stream text and every data item but images."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    out = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        seen = []
        for o in cell.get("outputs", []):
            text = o.get("text")
            data = {m: v for m, v in o.get("data", {}).items() if not m.startswith("image/") and "image/" not in m}
            seen.append((o.get("output_type"), "".join(text) if isinstance(text, list) else text,
                         json.dumps(data, sort_keys=True)))
        out.append(seen)
    return out


def all_output_differences(executed, committed: pathlib.Path) -> tuple[int, list[str]]:
    """Every code cell's outputs of the executed chapters (images aside, as nbval leaves them)
    against the committed chapters': how many cells, and which differ (the chapters to
    re-execute before nbval passes)."""
    book, n, differ = ROOT / "_build" / "executed", 0, []
    for name in executed:
        a, b = _outputs(committed / pathlib.Path(name).name), _outputs(book / name)
        n += max(len(a), len(b))
        differ += [f"{name}:cell {i}" for i in range(max(len(a), len(b)))
                   if (a[i] if i < len(a) else None) != (b[i] if i < len(b) else None)]
    return n, differ


def carry(old: dict, fps: dict, rule_fps: dict, why: str) -> dict | None:
    """The carry record of the claims whose fingerprint moved, or None (refused; printed)."""
    dirty = git("status", "--porcelain", "--", str(P.REGISTRY), str(C.CARRIES)).stdout.strip()
    if dirty or not old.get("commit"):
        print(f"--carry compares with the registry as committed at its recorded commit; "
              f"{dirty or 'the registry records no commit'}", file=sys.stderr)
        return None
    t0 = time.perf_counter()
    after, executed = executed_evidence()
    before_dir = committed_chapters(ROOT / "_build" / "committed" / "chapters")
    before = read_evidence(before_dir)
    worktree = ROOT / "_build" / f"registered-{old['commit']}"
    if worktree.exists():
        git("worktree", "remove", "--force", str(worktree))
    made = git("worktree", "add", "--detach", str(worktree), old["commit"])
    if made.returncode:
        raise SystemExit(f"cannot check out the registry's commit {old['commit']}: {made.stderr}")
    try:
        old_decided = decided(worktree, before_dir)
    finally:
        git("worktree", "remove", "--force", str(worktree))
    new_decided = decided(ROOT, ROOT / "_build" / "executed" / "chapters")
    found = C.check_carry(ledger.CLAIMS, old, fps, rule_fps, before, after, old_decided, new_decided)
    n_cells, cells_differ = all_output_differences(executed, before_dir)
    print(f"executed {len(executed)} chapters and read the verdicts of {old['commit']}'s code and of the code now in "
          f"{time.perf_counter() - t0:.0f} s; of {n_cells} code cells' outputs (every glued value among them), "
          f"{len(cells_differ)} differ from the committed ones {cells_differ[:5]} (re-execute those chapters)")
    for cid, why_not in found["refused"].items():
        print(f"  REFUSED {cid}: {why_not}", file=sys.stderr)
    for cid, v in found["carry"].items():
        print(f"  carried {cid}: {v['from']} -> {v['to']}, {v['n_values']} values, its decision and its verdicts "
              f"unchanged")
    if found["refused"] or not found["carry"]:
        return None
    head = git("rev-parse", "--short", "HEAD").stdout.strip()
    return {"why": why, "commit_before": old.get("commit"), "code": f"git:{head} and the working tree's changes",
            "checked_utc": now(), "executed": executed, "cells_compared": n_cells, "cells_differ": cells_differ,
            "verdicts_compared": sorted(next(iter(new_decided.values()))["verdicts"]),
            "claims": found["carry"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", help="the commit that declared the rules (recorded, not computed)")
    ap.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    ap.add_argument("--carry", metavar="WHY", help="re-register the moved fingerprints as a carry (see above)")
    args = ap.parse_args()
    if args.carry is not None and not args.carry.strip():
        ap.error("--carry needs a reason, e.g. --carry 'the metrics-only sums read each state once'")
    path = ROOT / P.REGISTRY
    old = json.loads(path.read_text()) if path.exists() else {}
    start = time.perf_counter()
    fps = P.fingerprints()
    seconds = time.perf_counter() - start
    rule_fps = P.rule_fingerprints()
    claims = {}
    for c in ledger.CLAIMS:
        claims[c.id] = {"card": c.card, "sentence": c.sentence, "primary": c.primary, "margin": c.margin,
                        "family": c.family, "rule": c.rule.__name__,
                        "rule_doc": inspect.cleandoc(c.rule.__doc__ or ""), "fingerprint": fps[c.id],
                        "rule_fingerprint": rule_fps[c.id], "seed_based": ledger.seed_based(c)}
        if c.id in ledger.CONFIRMATORY_NEEDS:      # the evidence its confirmatory reading decides from
            claims[c.id]["confirmatory_needs"] = [str(e) for e in ledger.CONFIRMATORY_NEEDS[c.id]]
    if args.dry_run:
        changed = P.mismatches(old, fps) if old else {k: (None, v) for k, v in fps.items()}
        print(f"{len(fps)} fingerprints in {seconds:.1f} s; {len(changed)} differ from {path.relative_to(ROOT)}")
        for k, (was, now_) in changed.items():
            print(f"  {k}: {was} -> {now_}")
        return 0
    record = None
    if args.carry is not None:
        if not P.mismatches(old, fps):
            print("no fingerprint moved: nothing to carry")
            return 0
        record = carry(old, fps, rule_fps, args.carry.strip())
        if record is None:
            print("nothing written", file=sys.stderr)
            return 1
    out = {"what": "the ledger's claims, each fingerprinted (its rule, the producers of its evidence, transitively, "
                   "and Claim.verdict) at the commit that registers it; resdecay_lib.book.preregistration",
           "declared_utc": old.get("declared_utc") if old.get("claims") == claims else now(),
           "commit": args.commit or (old.get("commit") if old.get("claims") == claims else None),
           "seed_sets": {k: list(v) for k, v in E.SEED_SETS.items()},
           "claims": claims}
    if record is not None:
        cpath = ROOT / C.CARRIES
        carried = json.loads(cpath.read_text()) if cpath.exists() else {
            "what": "re-registrations that changed no rule and no evidence value (resdecay_lib.book.carries), "
                    "written by tools/preregister.py --carry", "carries": []}
        carried["carries"].append(record)
        write_atomic(cpath, json.dumps(carried, indent=1, ensure_ascii=False) + "\n")
        print(f"{C.CARRIES}: carry {len(carried['carries'])} recorded")
    write_atomic(path, json.dumps(out, indent=1, ensure_ascii=False) + "\n")   # a reader sees the old registry or the new one
    print(f"{path.relative_to(ROOT)}: {len(claims)} claims, commit {out['commit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
