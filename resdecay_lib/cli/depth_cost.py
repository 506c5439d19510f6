"""The ``depth-cost`` command: store Chapter 9's measurement of a packaged model.

``python -m resdecay_lib depth-cost MODEL [--text NAME ...] [--out DIR]`` runs
:func:`resdecay_lib.analysis.pretrained_analysis.measure_model` on each of the book's texts and
writes one JSON record per text (atomically, with its provenance) under ``--out``
(default ``results/pretrained``); a finished file is skipped.
"""
from __future__ import annotations

import sys
import time

from ..analysis.pretrained_analysis import TEXTS, book_text, measure_model, store_path
from ..checks import check_out_dir, check_out_file, cli_int, one_line
from ..nn.device import manual_seed_all, pin_threads
from ..nn import pretrained
from ..training.data import CorpusUnavailable, cache_folder
from ..training.store import code_version, library_versions, machine, write_json_atomic

__all__ = ["SEED", "register_cli"]

#: the seed the depth-cost command gives Python's, NumPy's and torch's generators before it
#: measures (nothing it does draws a random number: recorded so a record says so)
SEED = 0


def _run(args) -> int:
    try:   # every option before any work: one line and exit code 2 on a bad one
        threads = cli_int("--threads", args.threads, 1, 1024)
        n_seq = cli_int("--n-seq", args.n_seq, 2, 100_000)
        n_tokens = cli_int("--n-tokens", args.n_tokens, 1, 1_000_000)
        texts = args.text or list(TEXTS)
        for t in texts:
            if t not in TEXTS:
                raise ValueError(f"--text must be one of {', '.join(TEXTS)}, got {t!r}")
        if args.prune_text not in TEXTS:
            raise ValueError(f"--prune-text must be one of {', '.join(TEXTS)}, got {args.prune_text!r}")
        if args.model not in pretrained.PACKAGED:
            raise ValueError(f"MODEL must be one of {', '.join(pretrained.PACKAGED)}, got {args.model!r}")
        out = check_out_dir("--out", args.out)
        todo = {}                      # the texts still to measure, read before the model is loaded
        for t in texts:
            path = store_path(out, args.model, t)
            if path.is_file():
                continue
            check_out_file("--out", path)       # a folder or a FIFO there fails after the measurement
            if t == "shakespeare":
                cache_folder()                   # the corpus is read from the cache: usable?
            try:
                todo[t] = book_text(t)
            except CorpusUnavailable as exc:
                raise ValueError(f"--text {t}: {one_line(exc)}") from None
        if todo and pretrained.PACKAGED[args.model].kind != "folder":
            pretrained.model_cache_dir()         # the model is converted into the cache: usable?
    except ValueError as exc:
        print(f"depth-cost: {one_line(exc)}", file=sys.stderr)
        return 2
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"depth-cost: --out {args.out!r} cannot be made: {one_line(exc)}", file=sys.stderr)
        return 2
    pin_threads(threads)
    pre = None
    for t in texts:
        path = store_path(out, args.model, t)
        if t not in todo:
            print(f"{path}: done already")
            continue
        if pre is None:
            pre = pretrained.load(args.model, progress=True)
        start = time.time()
        manual_seed_all(SEED)
        print(f"{args.model} on {t}: measuring (skip costs{', pruning curves' if t == args.prune_text else ''})",
              flush=True)
        try:
            rec = measure_model(pre, todo[t], n_seq, n_tokens, prune=(t == args.prune_text),
                                progress=True)
        except ValueError as exc:            # e.g. a text too short for --n-seq x --n-tokens
            print(f"depth-cost: {args.model} on {t}: {one_line(exc)}", file=sys.stderr)
            return 2
        rec.update(text=t, provenance={
            "code_version": code_version(), "wall_s": round(time.time() - start, 1), "threads": threads,
            "library_versions": library_versions(), **machine("cpu"),
            # the windows are equal segments of the text (pretrained.sample_inputs): no draw;
            # the bootstrap intervals are drawn later, by the analysis, from its own seeds
            "seeds": {"global_generators": SEED, "sampling": None, "bootstrap": None}})
        write_json_atomic(rec, path)
        print(f"wrote {path} ({rec['provenance']['wall_s']} s)", flush=True)
    return 0


def register_cli(subparsers) -> None:
    """Add ``depth-cost MODEL [--text NAME ...] [--out DIR]``."""
    p = subparsers.add_parser(
        "depth-cost", help="store Chapter 9's measurement of a packaged model (skip and pruning costs)",
        description="Measure a packaged model on the book's texts: layer metrics, the change "
                    "through its own norm, skip costs of every block and, on --prune-text, the "
                    "pruning curves of every ranking; one JSON per text under --out.")
    p.add_argument("model", metavar="MODEL")
    p.add_argument("--text", action="append", metavar="NAME", help=f"one of {', '.join(TEXTS)} (default both)")
    p.add_argument("--prune-text", default="shakespeare", metavar="NAME",
                   help=f"the text the pruning curves are measured on: one of {', '.join(TEXTS)} "
                        f"(default shakespeare)")
    p.add_argument("--n-seq", default="16", metavar="N")
    p.add_argument("--n-tokens", default="128", metavar="N")
    p.add_argument("--threads", default="1", metavar="N", help="torch threads (default 1)")
    p.add_argument("--out", default="results/pretrained", metavar="DIR",
                   help="folder of the records (created if absent; default results/pretrained)")
    p.set_defaults(func=_run)
