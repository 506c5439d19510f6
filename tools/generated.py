"""The one "write the generated file, or with --check fail when the stored one differs" of the
tools that generate a file of the book (``labels.py``: labels.md; ``findings.py``: README.md's
findings block; ``api_page.py``: api.md).

A tool imports it as its sibling (``sys.path`` holds ``tools/``, as it does for ``python
tools/X.py`` and for the tests), parses its command line with :func:`wants_check` and ends
with :func:`write_or_check`.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from resdecay_lib.training.store import write_atomic  # noqa: E402


def wants_check(argv=None, doc: str | None = None) -> bool:
    """Parse a generating tool's command line, ``[--check]`` (``argv``: sys.argv[1:] when
    None; ``doc``: the tool's docstring, shown by ``--help``); True when it asks for the check."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the stored file differs from what would be written")
    return parser.parse_args(argv).check


def write_or_check(path, text: str, *, check: bool, wrote: str, stale: str) -> int:
    """Bring ``path`` to ``text``, or with ``check`` only compare: the exit status of the tool.

    ``check``: write nothing; print ``stale`` (to stderr) and return 1 when the stored file is
    absent or differs from ``text``, return 0 when it is current. Otherwise write ``text``
    atomically when the file is absent or differs (an identical file is left untouched, mtime
    included), print ``wrote`` (or that the file was already current) and return 0.
    """
    path = pathlib.Path(path)
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if check:
        if current != text:
            print(stale, file=sys.stderr)
            return 1
        return 0
    if current == text:
        print(f"{path.name} is current: not rewritten")
        return 0
    write_atomic(path, text)
    print(wrote)
    return 0
