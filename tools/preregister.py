"""Write results/preregistration.json: every ledger claim's declaration and its rule's fingerprint.

Run at the commit that declares (or re-declares) the rules, before the data that decide them
are read; the verdict chapter asserts that every current fingerprint equals the registered one.
Usage: python tools/preregister.py [--commit SHA]   (--commit records the declaring commit,
which a file cannot hold in the commit that adds it)
"""
import argparse
import datetime
import inspect
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from resdecay_lib.book import evidence as E, ledger, preregistration as P  # noqa: E402
from resdecay_lib.training.store import write_atomic  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", help="the commit that declared the rules (recorded, not computed)")
    args = ap.parse_args()
    path = ROOT / P.REGISTRY
    old = json.loads(path.read_text()) if path.exists() else {}
    fps = P.fingerprints()
    claims = {}
    for c in ledger.CLAIMS:
        claims[c.id] = {"card": c.card, "sentence": c.sentence, "primary": c.primary, "margin": c.margin,
                        "family": c.family, "rule": c.rule.__name__,
                        "rule_doc": inspect.cleandoc(c.rule.__doc__ or ""), "fingerprint": fps[c.id],
                        "seed_based": ledger.seed_based(c)}
    out = {"what": "the ledger's rules, each fingerprinted at the commit that registers it; "
                   "resdecay_lib.book.preregistration",
           "declared_utc": old.get("declared_utc") if old.get("claims") == claims else
           datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "commit": args.commit or (old.get("commit") if old.get("claims") == claims else None),
           "seed_sets": {k: list(v) for k, v in E.SEED_SETS.items()},
           "claims": claims}
    write_atomic(path, json.dumps(out, indent=1, ensure_ascii=False) + "\n")   # a reader sees the old registry or the new one
    print(f"{path.relative_to(ROOT)}: {len(claims)} claims, commit {out['commit']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
