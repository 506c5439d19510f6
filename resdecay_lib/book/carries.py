"""Re-registrations that change no value: when a rule's registration may be carried back.

A claim's fingerprint (:mod:`resdecay_lib.book.preregistration`) covers the code that computes
its evidence, so a change of that code that computes the same numbers (a faster loop, a
renamed module, a record read through a typed field) moves the fingerprint as surely as a new
statistic would. Registering it afresh dates the rule from the change, after its data, and
turns a confirmatory verdict exploratory although nothing it decides from has moved.

A *carry* dates the new fingerprint from the old one's registration, under three conditions
that :func:`check_carry` decides and ``tools/preregister.py --carry WHY`` records (in
:data:`CARRIES`, ``results/reregistrations.json``, beside the registry):

1. what decides the verdict is the same: the rule and everything it reaches in the library
   (helpers of other modules such as ``stats.inference.within_margin``, the constants they
   read) with ``Claim.verdict`` (missing and NaN evidence) and the claim's needed and optional
   evidence names, fingerprinted by the old code and by the new
   (``preregistration.code_fingerprint(rule, Claim)`` and the names: the *decision*), and the
   rule's own registered fingerprint;
2. the evidence is the same: every value the claim reads, on every seed and every seed set,
   as the chapters glue it when executed with the new code, equals the value stored in the
   chapters (glued by the old code, which the last CI's nbval reproduced), as glued (the
   digits a chapter glues a value with: a change below them is not seen), a NaN equal only to
   a NaN, a name absent on one side a difference;
3. the verdicts are the same: the old code's rules on the stored evidence and the new code's
   on the new, word and reason (which quotes the numbers the rule used), on all seeds and on
   each seed set.

Then the verdict on every datum stored at the carry is the verdict the old registration gives,
and the datum's label is decided against the old registration's commit. A change that moves
one value, a verdict or what decides it cannot be carried: it is registered afresh, and what
its data then are is what :mod:`resdecay_lib.book.history` computes.

What a carry does not show: that the two codes agree on data not stored at the carry, or on a
path of the changed code that no chapter runs (carry 1 changed the metrics-only sums of
``nn.hooks.SumSink``, which no chapter measures through; that they equal the stacked
computation is the unit tests' to show, ``tests/nn/test_probe.py``). A datum stored later is
computed by the new code only, which is the code the chapters run; the registration it is
labelled against is the old one because the new code gave the old code's numbers and verdicts
on every datum there was.

``tools/history.py`` follows the carries from each claim's current fingerprint back (:func:`chain`),
trusts each link only as committed with the registry that first holds its new fingerprint over
a registry that held the old one, dates the rule from the earliest registration of the chain and
records the chain in ``results/history.json``. (Carry 1, ``acabc8c``, was checked before
conditions 1 and 3 and the comparison of all glued values were added: its record holds the
evidence comparison alone.)
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

from ..checks import ArgumentTypeError, show
from .evidence import SEED_SETS, Evidence

__all__ = ["CARRIES", "claim_keys", "decision_text", "evidence_differences", "check_carry", "chain", "read_carries"]

#: the recorded carries (relative to the repository root), written by ``tools/preregister.py --carry``
CARRIES = Path("results") / "reregistrations.json"


def claim_keys(claim) -> tuple[str, ...]:
    """Every glue name a claim's verdict can read: each of its needed and optional evidence's
    names (an interval's ends and standard error included), and for a seed-set evidence its
    names on each seed set of :data:`~resdecay_lib.book.evidence.SEED_SETS` too; sorted."""
    from .verdicts import Claim
    if not isinstance(claim, Claim):
        raise ArgumentTypeError(f"claim must be a Claim (book.claims.CLAIMS'), got {type(claim).__name__} {show(claim)}")
    keys = set()
    for ev in (*claim.needs, *claim.optional):
        if not isinstance(ev, Evidence):
            raise ValueError(f"{claim.id} reads an undeclared evidence name {ev!r}: declare it in book.evidence")
        keys.update(ev.keys())
        if ev.by_seed_set:
            for s in SEED_SETS:
                keys.update(ev.set_keys(s))
    return tuple(sorted(keys))


def decision_text(claim, code_fingerprint) -> str:
    """What decides ``claim``'s verdict from its evidence, as one text: ``code_fingerprint(rule,
    Claim)`` (``preregistration.code_fingerprint``, passed in so that an older checkout's own
    fingerprinting can be used) and its needed and optional evidence names. Equal texts: the
    same verdict on the same evidence. (``tools/preregister.py`` runs this function's source in
    the old checkout too, so it imports absolutely.)"""
    from resdecay_lib.book.verdicts import Claim
    return (f"decision {code_fingerprint(claim.rule, Claim)}; needs {', '.join(sorted(map(str, claim.needs)))}; "
            f"optional {', '.join(sorted(map(str, claim.optional)))}")


def _same(a, b) -> bool:
    """Equal glued values: both absent, both NaN, or equal numbers."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def evidence_differences(keys, before: Mapping, after: Mapping) -> dict[str, tuple]:
    """{name: (before, after)} for each of ``keys`` whose value differs between the two evidence
    dicts (``read_evidence``'s): a value that is not equal (a NaN is equal to a NaN only), or a
    name that one side glues and the other does not (None on the missing side)."""
    if isinstance(keys, (str, bytes)) or not hasattr(keys, "__iter__"):
        raise ArgumentTypeError(f"keys must be glue names (a list of str), got {type(keys).__name__} {show(keys)}")
    for name, d in (("before", before), ("after", after)):
        if not isinstance(d, Mapping):
            raise ArgumentTypeError(f"{name} must be an evidence dict {{name: number}}, got {type(d).__name__} {show(d)}")
    return {k: (before.get(k), after.get(k)) for k in keys if not _same(before.get(k), after.get(k))}


def check_carry(claims, old_registry: Mapping, current: Mapping, rule_current: Mapping,
                before: Mapping, after: Mapping, old_decided: Mapping, new_decided: Mapping) -> dict:
    """Which claims whose fingerprint moved may be carried back, and why the others may not.

    ``claims``: the ledger's; ``old_registry``: the registry as committed (read_registry's);
    ``current`` and ``rule_current``: {claim id: fingerprint} and {claim id: rule fingerprint}
    of the code now; ``before``: the evidence stored in the chapters (the old code's);
    ``after``: the evidence the chapters glue executed with the code now; ``old_decided`` and
    ``new_decided``: {claim id: {"decision": :func:`decision_text`, "verdicts": {seed set or
    "all": [word, reason]}}} of the old code on ``before`` and of the new code on ``after``.

    Returns ``{"carry": {id: {"from", "to", "n_values"}}, "refused": {id: reason}}``: a claim
    whose fingerprint did not move is in neither; one that the old registry lacks, whose rule
    fingerprint or decision moved, whose evidence differs in any value (the first few named) or
    whose verdict differs on any seed set is refused."""
    claims = list(claims)
    reg = old_registry.get("claims") if isinstance(old_registry, Mapping) else None
    if not isinstance(reg, Mapping):
        raise ArgumentTypeError(f"old_registry must be a registry (read_registry's), got {show(old_registry)}")
    for name, d in (("old_decided", old_decided), ("new_decided", new_decided)):
        if not isinstance(d, Mapping):
            raise ArgumentTypeError(f"{name} must be a dict {{claim id: {{decision, verdicts}}}}, got {show(d)}")
    out = {"carry": {}, "refused": {}}
    for c in claims:
        old = reg.get(c.id)
        new = current.get(c.id)
        if isinstance(old, Mapping) and old.get("fingerprint") == new:
            continue
        if not isinstance(old, Mapping) or not isinstance(old.get("fingerprint"), str):
            out["refused"][c.id] = "the committed registry does not declare it: a new claim is registered, not carried"
            continue
        if old.get("rule_fingerprint") != rule_current.get(c.id):
            out["refused"][c.id] = (f"its rule changed (rule fingerprint {old.get('rule_fingerprint')} -> "
                                    f"{rule_current.get(c.id)}): a new rule is registered, not carried")
            continue
        was, now = old_decided.get(c.id, {}), new_decided.get(c.id, {})
        if not was.get("decision") or was.get("decision") != now.get("decision"):
            out["refused"][c.id] = (f"what decides its verdict changed ({was.get('decision')} -> "
                                    f"{now.get('decision')}): a new rule is registered, not carried")
            continue
        keys = claim_keys(c)
        diff = evidence_differences(keys, before, after)
        present = [k for k in keys if k in before or k in after]
        moved = sorted(s for s in set(was.get("verdicts", {})) | set(now.get("verdicts", {}))
                       if was.get("verdicts", {}).get(s) != now.get("verdicts", {}).get(s))
        if diff:
            shown = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in list(diff.items())[:3])
            out["refused"][c.id] = f"{len(diff)} of {len(present)} evidence values differ ({shown})"
        elif not present:
            out["refused"][c.id] = "no evidence value of it is glued: nothing shows the numbers unchanged"
        elif moved or not was.get("verdicts"):
            out["refused"][c.id] = f"its verdict differs on {', '.join(moved) or 'every seed set (none recorded)'}"
        else:
            out["carry"][c.id] = {"from": old["fingerprint"], "to": new, "n_values": len(present)}
    return out


def read_carries(root=".") -> list[dict]:
    """The carries recorded in ``root/results/reregistrations.json`` (a list, oldest first; an
    empty list when the file does not exist), each checked to hold ``claims`` ({id: {"from",
    "to", "n_values" > 0}}) and ``why``; ``ValueError`` naming the first bad entry."""
    fs = os.fspath(root) if isinstance(root, (str, os.PathLike)) else None
    if not isinstance(fs, str) or not fs.strip():
        raise ArgumentTypeError(f"root must be the repository's folder (a non-empty str or os.PathLike), got {show(root)}")
    path = Path(fs) / CARRIES
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{str(path)!r} cannot be read as JSON: {type(exc).__name__}") from None
    carries = data.get("carries") if isinstance(data, Mapping) else None
    if not isinstance(carries, list):
        raise ValueError(f"{str(path)!r} must hold a 'carries' list, got {show(carries)}")
    for i, c in enumerate(carries):
        ok = (isinstance(c, Mapping) and isinstance(c.get("why"), str) and c["why"].strip()
              and isinstance(c.get("claims"), Mapping) and c["claims"]
              and all(isinstance(v, Mapping) and isinstance(v.get("from"), str) and isinstance(v.get("to"), str)
                      and isinstance(v.get("n_values"), int) and v["n_values"] > 0 for v in c["claims"].values()))
        if not ok:
            raise ValueError(f"{str(path)!r}: carries[{i}] must hold 'why' (str) and 'claims' "
                             f"{{id: {{from, to, n_values > 0}}}}, got {show(c)}")
    return carries


def chain(claim_id: str, fingerprint: str, carries) -> tuple[str, ...]:
    """The fingerprints a claim's rule was registered under, from ``fingerprint`` back through
    each carry whose ``to`` it is (``carries``: :func:`read_carries`' list, oldest first; the
    latest carry to a fingerprint is followed): ``(fingerprint,)`` when none carries it, else
    ``(fingerprint, its from, that one's from, ...)``, each fingerprint once (a change carried
    and then carried back, A -> B -> A, stops where the chain meets a fingerprint it holds;
    the rule then dates from the earliest registration of any of them, ``tools/history.py``)."""
    if not isinstance(claim_id, str) or not isinstance(fingerprint, str):
        raise ArgumentTypeError(f"claim_id and fingerprint must be str, got {show(claim_id)}, {show(fingerprint)}")
    out = [fingerprint]
    while True:
        back = [c["claims"][claim_id]["from"] for c in carries
                if claim_id in c["claims"] and c["claims"][claim_id]["to"] == out[-1]]
        if not back or back[-1] in out:
            return tuple(out)
        out.append(back[-1])
