"""Record, from git, when the deep runs' code was committed relative to the predictions they test.

Writes results/predictions/order.json: the commit that added results/predictions/front.json,
its time, and for each code version the deep runs record (``git:<sha>``), its commit time and
whether it descends from the predictions' commit. Chapter 7b asserts the order from this file
and the runs' own records, so the assert holds without git history (a shallow clone, an
unpacked archive); tests/analysis/test_front.py checks the file against git where the history is there.
Run it after new deep runs land: python tools/record_order.py
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from resdecay_lib.training.store import load_run  # noqa: E402  (the store reads every run)
PRED = "results/predictions/front.json"
RUN_DIRS = ("results/train_deep", "results/train_long3x", "results/train_wide")


def git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def main() -> int:
    first = git("log", "--diff-filter=A", "--format=%H %cI", "--", PRED).splitlines()[-1].split()
    pred_commit, pred_time = first[0], first[1]
    versions = set()
    for d in RUN_DIRS:
        for p in sorted((ROOT / d).glob("*.json")):
            v = load_run(p).code_version
            if v is None:
                raise SystemExit(f"{p}: the run records no code_version; the order cannot be read")
            versions.add(v)
    out = {"predictions": {"file": PRED, "commit": pred_commit, "committed": pred_time},
           "code_versions": {}}
    for v in sorted(versions):
        sha = v.removeprefix("git:").removesuffix("-dirty")
        full = git("rev-parse", sha)
        anc = subprocess.run(["git", "merge-base", "--is-ancestor", pred_commit, full], cwd=ROOT).returncode == 0
        out["code_versions"][v] = {"commit": full, "committed": git("show", "-s", "--format=%cI", full),
                                   "descends_from_predictions": anc}
    path = ROOT / "results" / "predictions" / "order.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{path.relative_to(ROOT)}: predictions at {pred_commit[:7]} ({pred_time}); "
          f"{len(out['code_versions'])} run code versions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
