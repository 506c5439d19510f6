"""Write the book's findings into README.md, between its findings markers.

The block is resdecay_lib.book.findings.abstract(ROOT, links="readme"): the findings list written
from the stored evidence and the ledger's verdicts, nothing typed, its terms linked to the README's
Terms section and its claims to Chapter 10's notebook; then how many verdicts are confirmatory,
exploratory and derived (resdecay_lib.analysis.chapters.verdict.labels_words of the labels that
resdecay_lib.book.history computes from results/history.json). tests/book/test_findings.py fails
when the README's block is stale, as
tests/documents/test_labels.py does for the labels page. Run after `make chapters`:
    python tools/findings.py [--check]
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

import generated  # noqa: E402  (tools/generated.py: write, or --check)
from resdecay_lib.analysis.chapters import verdict  # noqa: E402
from resdecay_lib.book import findings  # noqa: E402

START, END = "<!-- findings:start -->", "<!-- findings:end -->"


def labels_line() -> str:
    """The verdicts' labels in words, the confirmatory claims linked to Chapter 10's notebook."""
    found = findings.book_labels(ROOT)
    counts = {w: sum(v == w for v in found.values()) for w in ("confirmatory", "exploratory", "derived")}
    return verdict.labels_words(counts, [f"[{c}](chapters/10_verdict.ipynb)" for c, v in found.items()
                                         if v == "confirmatory"])


def block() -> str:
    return f"{START}\n{findings.abstract(ROOT, links='readme')}\n\n{labels_line()}\n{END}"


def main(argv=None) -> int:
    check = generated.wants_check(argv, __doc__)
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"README.md has no {START} ... {END} block", file=sys.stderr)
        return 1
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return generated.write_or_check(path, head + block() + tail, check=check,
                                    wrote="README.md: findings written",
                                    stale="README.md's findings are stale: run python tools/findings.py")


if __name__ == "__main__":
    sys.exit(main())
