"""Chapter 10, the claims ledger, and the Preface: every verdict, table and sentence they show.

Both read only what the chapters STORED: the evidence (``ev_`` glues) of the notebooks of
``_toc.yml`` (:func:`resdecay_lib.book.ledger.read_evidence`), the registry of the rules
(``results/preregistration.json``), the recorded git history (``results/history.json``, from
which :func:`resdecay_lib.book.history.labels` labels each verdict confirmatory, exploratory or
derived), ``results/predictions/front.json``, ``results/verdicts_history.json`` and
``configs/train_long.toml``. :func:`chapter` evaluates
every claim once (``ledger.evaluate``), per seed set for the replication table
(``ledger.replication``), and writes each table row and sentence with a small wording function
of plain strings (``*_words``, ``*_row``); :func:`preface` writes the Preface's findings and its
headline table (``findings.findings_list``, ``findings.headline``).

A claim's one-line citation is :func:`resdecay_lib.book.citation.cite_line` (the book's Sphinx
extension ``_ext/citation.py`` writes the same line for its ``{cite-line}`` role).
"""
from __future__ import annotations

import json
import tomllib
from collections import Counter
from dataclasses import dataclass

from ...book import citation, findings, ledger, preregistration
from ...book import evidence as E
from ...book import history as book_history
from ...book.glues import Table, Words
from ...book.notebooks import book_root
from .. import training_claims

__all__ = ["ClaimEntry", "ReplicationEntry", "VerdictResult", "PrefaceResult", "chapter", "preface", "cite_line",
           "escape", "ledger_row", "replication_row", "claim_words", "cite_words", "replication_counts_words",
           "families_words", "change_words", "changelog_words", "headline_row", "labels_words", "heldout_words",
           "power_rows", "POWER_HEADER",
           "LEDGER_HEADER",
           "REPLICATION_HEADER", "HEADLINE_HEADER", "UNEXPLAINED_CHANGE"]

#: the ledger table's column titles
LEDGER_HEADER = ("claim", "verdict", "label", "why (the deciding numbers)")
#: the replication table's column titles
REPLICATION_HEADER = ("claim", "seeds 0-2", "seeds 3-4", "seeds 0-4 (exploratory: the ledger)",
                      "seeds 5-7, or the 1.5B on pydoc (its label)", "replicated")
#: the Preface's headline table's column titles
HEADLINE_HEADER = ("measured", "exponent of $\\omega_k^2$ [interval]", "theorem, same range and convention",
                   "claim", "verdict")
#: the changelog's reason for a verdict that moved when the history names none
UNEXPLAINED_CHANGE = "the evidence changed (seeds 0-4 read; see the claim's section)"


# ------------------------------------------------------------------------------ wording


def escape(text) -> str:
    """``text`` for a cell of a Markdown table: every ``|`` escaped as ``\\|``."""
    return str(text).replace("|", "\\|")


def _ref(title: str, claim_id: str) -> str:
    return f"{{ref}}`{escape(title)} <{claim_id}>`"


def ledger_row(title: str, claim_id: str, word: str, label: str, short: str, numbers: str) -> list[str]:
    """One row of the ledger table: the claim (a cross-reference to its section), its verdict
    in bold, its label (confirmatory, exploratory or derived: ``book.history.labels``), and its
    short reason with the deciding numbers in brackets ("-" when none)."""
    return [_ref(title, claim_id), f"**{word}**", f"*{label}*", f"{escape(short)} ({escape(numbers) or '-'})"]


def _n_are(n: int, word: str) -> str:
    return f"{n} {'is' if n == 1 else 'are'} {word}"


def labels_words(counts, confirmatory) -> Words:
    """The labels as a reader says them: ``counts`` {label: how many} (``book.history.label_counts``)
    and ``confirmatory`` the confirmatory claims, already formatted as links (in order).

    "Of the 17 verdicts, 1 is confirmatory (claim-front: ...), 10 are exploratory (...) and 6 are
    derived (...)": each label with its count and what it means, the confirmatory claims named."""
    counts = dict(counts)
    missing = [w for w in book_history.LABELS if not isinstance(counts.get(w), int)]
    if missing:
        raise ValueError(f"counts must give an int count for every label of {book_history.LABELS}, lacks {missing}")
    confirmatory = [str(c) for c in confirmatory]
    if len(confirmatory) != counts["confirmatory"]:
        raise ValueError(f"confirmatory names {len(confirmatory)} claims, counts['confirmatory'] is "
                         f"{counts['confirmatory']}")
    if confirmatory:
        verb = "it reads" if len(confirmatory) == 1 else "they read"
        first = (f"{_n_are(counts['confirmatory'], 'confirmatory')} ({', '.join(confirmatory)}: every stored run or "
                 f"record {verb} was committed after the registry first held its rule)")
    else:
        first = ("none is confirmatory (none reads only runs and records committed after the registry first held "
                 "its rule)")
    return Words(f"Of the {sum(counts[w] for w in book_history.LABELS)} verdicts, {first}, "
                 f"{_n_are(counts['exploratory'], 'exploratory')} (a run or record they read existed when their "
                 f"rule was registered) and {_n_are(counts['derived'], 'derived')} (SymPy derivations and live "
                 f"Monte Carlo checks, which read no stored data); the labels are computed from the git history "
                 f"recorded in `results/history.json`.")


def _seed_list(seeds) -> str:
    seeds = [str(s) for s in seeds]
    return seeds[0] if len(seeds) == 1 else ", ".join(seeds[:-1]) + " and " + seeds[-1]


def heldout_words(before, after, late=()) -> Words:
    """Which seeds are held out in the strict sense: ``before`` the seeds with a training run
    the rules read committed by the time the rules were registered, ``after`` those whose every
    such run came later (``book.history.seeds_held_out``); ``late``: the ids of claims left out
    of that count because their rule was registered again after every training run it reads."""
    words = _heldout(sorted(before), sorted(after))
    if late:
        s = len(late) > 1
        words = Words(f"{words} For {', '.join(f'{{ref}}`{c}`' for c in late)}, whose rule{'s were' if s else ' was'} "
                      f"registered again after every training run {'they read' if s else 'it reads'}, no seed is "
                      f"held out.")
    return words


def _heldout(before, after) -> Words:
    if not after:
        return Words("Every training run the rules read existed before they were registered, so no seed is held "
                     "out in the strict sense.")
    s = "s" if len(after) > 1 else ""
    if not before:
        return Words(f"Every training run the rules read was committed after they were registered, so seed{s} "
                     f"{_seed_list(after)} {'are' if s else 'is'} held out in the strict sense.")
    return Words(f"The rules were registered after training runs of seed{'s' if len(before) > 1 else ''} "
                 f"{_seed_list(before)} existed and before any run of seed{s} {_seed_list(after)} "
                 f"(below), so only seed{s} {_seed_list(after)} {'are' if s else 'is'} held out in the strict sense.")


def replication_row(title: str, claim_id: str, discovery: str, heldout: str, everything: str,
                    confirmatory: str, confirmatory_label: str, replicated: str) -> list[str]:
    """One row of the replication table: the claim, its verdict on seeds 0-2, on 3-4, on the
    exploratory seeds 0-4 (bold: the ledger's), on the confirmatory seeds 5-7 with that verdict's
    label (``book.history.labels`` on the seed set s567), and whether it replicated
    (``ledger.replication``: "yes" only where the exploratory and confirmatory verdicts agree)."""
    return [_ref(title, claim_id), discovery, heldout, f"**{everything}**", f"{confirmatory} (*{confirmatory_label}*)",
            replicated]


def claim_words(sentence: str, card: str, evidence: str, primary: str, margin: str, family: str) -> Words:
    """A claim's head in its section: the claim, the card's sentence (quoted), where its evidence
    is (MyST), and what was declared for it (primary statistic, margin, multiplicity)."""
    return Words(f"**Claim.** {sentence}\n\n**The card.** \"{card}\"\n\n**Evidence.** {evidence}\n\n"
                 f"**Declared.** Primary statistic: {primary}. Margin: {margin}. Multiplicity: {family}.")


def cite_words(line: str) -> Words:
    """A claim's one-line citation, as code (so a reader copies it whole)."""
    return Words(f"`{line}`")


def replication_counts_words(counts) -> Words:
    """How many claims replicated how: ``counts`` {"yes": 3, "no power": 5, ...}, listed in
    alphabetical order of the answer ("5 no power, 3 yes")."""
    return Words(", ".join(f"{v} {k}" for k, v in sorted(dict(counts).items())))


def families_words(items) -> Words:
    """The multiplicity families as a Markdown list: ``items`` (title, claim id, family), one
    bullet each."""
    return Words("\n".join(f"* {_ref(title, cid)}: {family}." for title, cid, family in items))


def change_words(claim_id: str, before: str | None, now: str, why: str | None) -> Words | None:
    """One line of the changelog, or None when there is nothing to say.

    A verdict that moved (``before`` != ``now``; ``before`` None: the claim is new) names both
    and the reason (``why``, or :data:`UNEXPLAINED_CHANGE` when the history gives none); one that
    stayed is listed only when the history names a change to its rule (``why``)."""
    if before != now:
        return Words(f"* `{claim_id}`: {before or 'new'} → **{now}**. {why or UNEXPLAINED_CHANGE}.")
    if why:
        return Words(f"* `{claim_id}`: **{now}**, unchanged, though {why}.")
    return None


def carried_words(carried) -> Words:
    """What the registry's carries did: ``carried`` {claim id: ((commit, committed), ...)}, the
    later registrations its rule was carried through (``book.history.Label.carried``);
    the claims with none are left out (``book.carries``). The commits are named in the order
    they were committed."""
    carried = {k: tuple(v) for k, v in dict(carried).items() if v}
    if not carried:
        return Words("No rule was carried from an earlier registration.")
    commits = [c[:7] for c, _ in sorted({(c, t) for v in carried.values() for c, t in v}, key=lambda ct: (ct[1], ct[0]))]
    n = len(carried)
    return Words(f"{n} {'rule was' if n == 1 else 'rules were'} carried from an earlier "
                 f"registration (through {', '.join(f'`{c}`' for c in commits)}, in the order committed): a change "
                 f"of the code that computes {'its' if n == 1 else 'their'} evidence moved "
                 f"{'its fingerprint' if n == 1 else 'their fingerprints'}, while what decides "
                 f"{'its verdict, every value it reads and its verdict' if n == 1 else 'their verdicts, every value they read and their verdicts'} "
                 f"(each part, on every seed set, the code now against the registered code) stayed bit for bit "
                 f"the same (`results/reregistrations.json`). A carried rule keeps the commit of its first "
                 f"registration, which its label is computed against.")


def changelog_words(version: str, runs: str, lines) -> Words:
    """The changelog: against which version (and its runs), then the lines of
    :func:`change_words` that are not None."""
    return Words(f"Against {version} ({runs}):\n\n" + "\n".join(line for line in lines if line is not None))


def headline_row(what: str, value: float, lo: float, hi: float, reference: float, claim_id: str,
                 word: str) -> list[str]:
    """One row of the Preface's headline table: what was measured, its exponent [interval] and
    the theorem's over the same range (two decimals), the claim and its verdict."""
    return [what, f"{value:.2f} [{lo:.2f}, {hi:.2f}]", f"{reference:.2f}", f"{{ref}}`{claim_id}`", word]


def power_rows(evidence, n_exploratory: int, n_confirmatory: int, level: float, margin: float) -> list[list[str]]:
    """The confirmatory round's power for claim-depth-cost, one row per depth of
    ``evidence.GAP_BY_DEPTH``: the exploratory gap (Pre-LN minus ResiDual, its t interval at
    ``level`` over ``n_exploratory`` seeds), the seed-to-seed sd that interval implies,
    sd = (hi - lo) / 2 / t_{(1 + level)/2, n - 1} * sqrt(n), and the probability that the
    confirmatory round's interval at the same level over ``n_confirmatory`` seeds lies wholly
    above ``margin`` if the gap and sd are what the exploratory seeds estimate
    (``stats.inference.power_above``): a planning number, computed before the round is read.
    A depth without an exploratory interval (NaN) reads "no exploratory interval"."""
    import math
    from ...stats import inference as stats
    rows = []
    t = stats.t_quantile((1 + level) / 2, n_exploratory - 1)
    for L in sorted(E.GAP_BY_DEPTH):
        e = E.GAP_BY_DEPTH[L]
        v, lo, hi = evidence.get(str(e), math.nan), evidence.get(e.lo, math.nan), evidence.get(e.hi, math.nan)
        if not all(math.isfinite(x) for x in (v, lo, hi)) or hi <= lo:
            rows.append([str(L), "no exploratory interval", "-", "-"])
            continue
        sd = (hi - lo) / 2 / t * math.sqrt(n_exploratory)
        pw = stats.power_above(v, sd, n_confirmatory, level, margin)
        rows.append([str(L), f"{v:+.4f} [{lo:+.4f}, {hi:+.4f}]", f"{sd:.4f}", f"{pw:.2f}"])
    return rows


#: the power table's column titles
POWER_HEADER = ("depth", "Pre-LN minus ResiDual, seeds 0-4 (nats/char)", "seed-to-seed sd it implies",
                "P(a seeds 5-7 interval lies above the margin)")


# ------------------------------------------------------------------------------ results


def cite_line(claim_id: str, title: str, root) -> str:
    """The one-line citation of a claim's label, from the book at ``root``
    (:func:`resdecay_lib.book.citation.cite_line`)."""
    return citation.cite_line(claim_id, title, root=book_root(root))


@dataclass(frozen=True)
class ClaimEntry:
    """One claim of the ledger as the chapter shows it: its label and title, verdict word, full
    reason, short reason, deciding numbers, section head (:func:`claim_words`), citation line,
    multiplicity family, and ``label``: confirmatory, exploratory or derived
    (:func:`resdecay_lib.book.history.labels`, on every seed)."""
    id: str
    title: str
    word: str
    reason: str
    short: str
    numbers: str
    where: Words
    cite: str
    family: str
    label: str


@dataclass(frozen=True)
class ReplicationEntry:
    """One claim's verdict on the discovery seeds, the held-out seeds, the exploratory seeds 0-4,
    the confirmatory seeds 5-7 (with that verdict's label), and whether it replicated
    (``ledger.replication``)."""
    id: str
    title: str
    discovery: str
    heldout: str
    all: str
    confirmatory: str
    confirmatory_label: str
    replicated: str


@dataclass(frozen=True)
class VerdictResult:
    """What Chapter 10 shows.

    claims: every claim with its verdict (:class:`ClaimEntry`, the ledger's order); n_evidence:
    how many ``ev_`` values the chapters glued; summary: the findings (``findings.findings_list``);
    promotion: the card's promotion sentence for claim-promote's verdict; replication: per claim
    (:class:`ReplicationEntry`); registry_commit / registry_time / n_registered: the registry
    commit of the rules, its time, how many rules it holds; rule_mismatches: the rules whose
    fingerprint differs from the registry's (``preregistration.mismatches``; empty: none);
    front_rule_committed / front_rule_now / front_written: claim-front's rule fingerprint as
    committed with its predictions, as it is today, and when the predictions were written;
    changelog: the verdicts that moved since the last version (:func:`changelog_words`),
    n_moved of them; lim_width: the trained models' width (``configs/train_long.toml``);
    seeds_before / seeds_after: the seeds whose training runs the rules read existed when the
    rules were registered, and those whose runs all came later (``book.history.seeds_held_out``);
    history_stale: what ``results/history.json`` lacks against the files and registry stored
    (``book.history.stale``; every list empty: current); power: the confirmatory round's power for
    claim-depth-cost (:func:`power_rows`), at ``power_level``; carried: {claim id: the later
    registrations its rule was carried through, (commit, committed) each} (:func:`carried_words`)."""
    claims: tuple
    n_evidence: int
    summary: Words
    promotion: str
    replication: tuple
    registry_commit: str
    registry_time: str
    n_registered: int
    rule_mismatches: dict
    front_rule_committed: str
    front_rule_now: str
    front_written: str
    changelog: Words
    n_moved: int
    lim_width: int
    seeds_before: tuple = ()
    seeds_after: tuple = ()
    history_stale: dict | None = None
    power: tuple = ()
    power_level: float = float("nan")
    carried: dict | None = None
    #: the claims left out of seeds_before / seeds_after: their rule was registered again after
    #: every training run it reads (so no seed is held out for them)
    late: tuple = ()

    def counts(self) -> Counter:
        """How many claims have each verdict word."""
        return Counter(c.word for c in self.claims)

    def label_counts(self) -> dict[str, int]:
        """How many claims have each label (every label of ``book.history.LABELS``)."""
        return {w: sum(c.label == w for c in self.claims) for w in book_history.LABELS}

    def glues(self) -> dict[str, object]:
        """Every name Chapter 10 glues: five per claim (``<id>-verdict``, ``-reason``, ``-short``,
        ``-where``, ``-cite``), the tables, counts and sentences."""
        out = {}
        for c in self.claims:
            out[f"{c.id}-verdict"] = c.word
            out[f"{c.id}-reason"] = c.reason
            out[f"{c.id}-short"] = Words(escape(c.short))
            out[f"{c.id}-where"] = c.where
            out[f"{c.id}-cite"] = cite_words(c.cite)
        out["ledger-table"] = Table.of(LEDGER_HEADER, [ledger_row(c.title, c.id, c.word, c.label, c.short, c.numbers)
                                                       for c in self.claims])
        out["labels-words"] = labels_words(self.label_counts(), [f"{{ref}}`{c.id}`" for c in self.claims
                                                                 if c.label == "confirmatory"])
        out["heldout-words"] = heldout_words(self.seeds_before, self.seeds_after, self.late)
        out["ledger-n-claims"] = len(self.claims)
        out["ledger-n-evidence"] = self.n_evidence
        counts = self.counts()
        for word in ledger.VERDICTS:
            out["ledger-n-" + word.replace(" ", "-")] = counts[word]
        out["ledger-summary"] = self.summary
        out["ledger-promotion"] = self.promotion
        out["replication-table"] = Table.of(REPLICATION_HEADER, [
            replication_row(r.title, r.id, r.discovery, r.heldout, r.all, r.confirmatory, r.confirmatory_label,
                            r.replicated) for r in self.replication])
        out["replication-counts"] = replication_counts_words(Counter(r.replicated for r in self.replication))
        out["prereg-commit"] = self.registry_commit[:7]
        out["prereg-time"] = self.registry_time
        out["prereg-carried"] = carried_words(self.carried or {})
        out["families"] = families_words([(c.title, c.id, c.family) for c in self.claims])
        out["changelog"] = self.changelog
        out["lim-width"] = self.lim_width
        out["power-table"] = Table.of(POWER_HEADER, [list(r) for r in self.power])
        out["power-level"] = round(self.power_level, 4)
        return out


def chapter(root) -> VerdictResult:
    """Chapter 10's result from the book at ``root``: the stored evidence of the notebooks of
    its ``_toc.yml``, the rules' registry, the front predictions, the verdict history and the
    training configuration."""
    root = book_root(root)
    notebooks = ledger.book_notebooks(root)
    evidence = ledger.read_evidence(notebooks)
    rows = ledger.evaluate(evidence)
    registry = preregistration.read_registry(root)
    recorded = book_history.read_history(root)
    found = book_history.labels(recorded, registry, [c for c, _ in rows])
    claims = tuple(ClaimEntry(
        id=c.id, title=c.title, word=v.word, reason=v.reason, short=ledger.short_reason(v),
        numbers=ledger.deciding_numbers(c, evidence),
        where=claim_words(c.sentence, c.card, ledger.evidence_markdown(c, root), c.primary, c.margin, c.family),
        cite=cite_line(c.id, c.title, root), family=c.family, label=found[c.id].word) for c, v in rows)
    # the seeds held out from the rules whose confirmatory column reads the training runs; a
    # claim whose rule was registered again after every run it reads is named apart
    readers = [c for c, _ in rows if ledger.seed_based(ledger.confirmatory_reading(c))]
    late = tuple(c.id for c in readers if not book_history.seeds_held_out(recorded, registry, [c])[1])
    before, after = book_history.seeds_held_out(recorded, registry, [c for c in readers if c.id not in late])
    verdicts = {c.id: v.word for c, v in rows}
    confirm = book_history.labels(recorded, registry, [c for c, _ in rows], seed_set=E.CONFIRMATORY_SET)
    derived = frozenset(cid for cid, lab in found.items() if lab.word == "derived")
    replication = tuple(ReplicationEntry(r["claim"].id, r["claim"].title, r["discovery"].word, r["heldout"].word,
                                         r["all"].word, r["confirmatory"].word, confirm[r["claim"].id].word,
                                         r["replicated"])
                        for r in ledger.replication(evidence, derived=derived, confirmatory=frozenset(
                            cid for cid, lab in found.items() if lab.word == "confirmatory")))
    front = json.loads((root / "results" / "predictions" / "front.json").read_text(encoding="utf-8"))
    history = json.loads((root / "results" / "verdicts_history.json").read_text(encoding="utf-8"))
    last = history["versions"][-1]
    lines = [change_words(cid, last["verdicts"].get(cid), word, history["changes"].get(cid))
             for cid, word in verdicts.items()]
    spec = tomllib.loads((root / "configs" / "train_long.toml").read_text(encoding="utf-8"))
    return VerdictResult(
        claims=claims, n_evidence=len(evidence),
        summary=Words(findings.findings_list(findings.read_findings_evidence(notebooks),
                                             {k: v.word for k, v in found.items()}, links="book",
                                             confirmatory_labels={k: v.word for k, v in confirm.items()})),
        promotion=ledger.PROMOTION[verdicts["claim-promote"]], replication=replication,
        registry_commit=registry["commit"], registry_time=registry["declared_utc"],
        n_registered=len(registry["claims"]), rule_mismatches={
            **preregistration.mismatches(registry),
            **{f"{k} (confirmatory reading)": v for k, v in preregistration.reading_mismatches(registry).items()}},
        front_rule_committed=front["rule"]["fingerprint"],
        front_rule_now=preregistration.rule_fingerprints()["claim-front"], front_written=front["written_utc"],
        changelog=changelog_words(last["version"], last["runs"], lines),
        n_moved=sum(word != last["verdicts"].get(cid) for cid, word in verdicts.items()),
        lim_width=spec["base"]["d_model"], seeds_before=before, seeds_after=after, late=late,
        history_stale=book_history.stale(recorded, root, registry),
        power=tuple(tuple(r) for r in power_rows(evidence, len(E.EXPLORATORY_SEEDS),
                                                 len(E.SEED_SETS[E.CONFIRMATORY_SET]), training_claims.GAP_LEVEL,
                                                 ledger.DEPTH_GAP_MARGIN)),
        power_level=training_claims.GAP_LEVEL,
        carried={cid: lab.carried for cid, lab in found.items()})


@dataclass(frozen=True)
class PrefaceResult:
    """What the Preface shows: the findings (``findings.findings_list``, linked for the book), the
    headline table's rows (``findings.headline``: what, exponent [interval], theorem, claim,
    verdict) and ``labels`` ((claim id, label) pairs in the ledger's order:
    ``findings.book_labels``)."""
    findings: Words
    headline: tuple
    labels: tuple = ()

    def glues(self) -> dict[str, object]:
        """The Preface's glues: its findings, its headline table and the labels' counts in words."""
        found = dict(self.labels)
        return {"preface-findings": self.findings,
                "preface-headline": Table.of(HEADLINE_HEADER, [headline_row(*r) for r in self.headline]),
                "preface-labels": labels_words({w: sum(v == w for v in found.values()) for w in book_history.LABELS},
                                               [f"{{ref}}`{c}`" for c, v in self.labels if v == "confirmatory"])}


def preface(root) -> PrefaceResult:
    """The Preface's result from the stored evidence of the notebooks of ``root``'s ``_toc.yml``
    (the ``ev_`` values and the chapters' interval levels, ``findings.read_findings_evidence``)
    and the labels of ``findings.book_labels``."""
    evidence = findings.read_findings_evidence(ledger.book_notebooks(book_root(root)))
    found = findings.book_labels(book_root(root))
    return PrefaceResult(
        findings=Words(findings.findings_list(evidence, found, links="book",
                                              confirmatory_labels=findings.book_labels(book_root(root), True))),
        headline=tuple((r["what"], r["value"], r["lo"], r["hi"], r["reference"], r["claim"], r["verdict"])
                       for r in findings.headline(evidence)),
        labels=tuple(found.items()))
