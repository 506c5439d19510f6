"""Write results/preregistration.json: every ledger claim's declaration and its fingerprint.

A claim's fingerprint (resdecay_lib.book.preregistration.fingerprints) covers its rule, the
producer of every evidence it reads and everything they call in the library, transitively,
with the constants they read, and Claim.verdict; the registry also records the rule's own,
narrower fingerprint (preregistration.rule_fingerprints, what results/predictions/front.json
holds for claim-front).

Run at the commit that declares (or re-declares) the rules; a verdict is confirmatory only when
every datum it reads was committed after that commit (resdecay_lib.book.history computes it); the
verdict chapter asserts that every current fingerprint equals the registered one.
Usage: python tools/preregister.py [--commit SHA] [--dry-run]   (--commit records the declaring
commit, which a file cannot hold in the commit that adds it; --dry-run prints the claims whose
fingerprint differs from the registry's and writes nothing)
"""
import argparse
import datetime
import inspect
import json
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from resdecay_lib.book import evidence as E, ledger, preregistration as P  # noqa: E402
from resdecay_lib.training.store import write_atomic  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commit", help="the commit that declared the rules (recorded, not computed)")
    ap.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    args = ap.parse_args()
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
    if args.dry_run:
        changed = P.mismatches(old, fps) if old else {k: (None, v) for k, v in fps.items()}
        print(f"{len(fps)} fingerprints in {seconds:.1f} s; {len(changed)} differ from {path.relative_to(ROOT)}")
        for k, (was, now) in changed.items():
            print(f"  {k}: {was} -> {now}")
        return 0
    out = {"what": "the ledger's claims, each fingerprinted (its rule, the producers of its evidence, transitively, "
                   "and Claim.verdict) at the commit that registers it; resdecay_lib.book.preregistration",
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
