"""The ``record`` command: store Chapter 9's measurement of a packaged model.

``python -m resdecay_lib record MODEL [--text NAME ...] [--out DIR]`` runs
:func:`resdecay_lib.analysis.pretrained_analysis.measure_model` and
:func:`~resdecay_lib.analysis.pretrained_analysis.measure_stream` on each of the book's texts and
writes one JSON record per text (atomically, with its provenance) under ``--out``
(default ``results/pretrained``); a finished file is skipped.

``--only stream`` adds just the record's ``stream`` section (the sublayer steps, the change of
a Post-LN stream itself, the 4-bit round-trip; minutes, not the hour of the skip and pruning
costs) to each finished record that lacks it, on the record's own inputs (its ``n_seq`` and
``n_tokens``), with the section's own provenance, rewriting the file atomically; with
``--replace`` it measures the section again where a record holds it already.
"""
from __future__ import annotations

import json
import sys
import time

from ..analysis.pretrained_analysis import (ROUND_TRIPS, STREAM_FIELDS, TEXTS, book_text, load_record, measure_model,
                                            measure_stream, store_path)
from ..checks import check_out_dir, check_out_file, cli_int, one_line
from ..nn.device import manual_seed_all, pin_threads
from ..nn import pretrained
from ..training.data import CorpusUnavailable, cache_folder
from ..training.store import measurement_provenance, write_json_atomic

__all__ = ["SEED", "SECTIONS", "register_cli"]

#: the seed the record command gives Python's, NumPy's and torch's generators before it
#: measures (nothing it does draws a random number: recorded so a record says so)
SEED = 0
#: what ``--only`` may add to a finished record
SECTIONS = ("stream",)


#: what a record says was drawn: the windows are equal segments of the text
#: (pretrained.sample_inputs), no draw; the bootstrap intervals are drawn later, by the analysis,
#: from its own seeds
SEEDS = {"global_generators": SEED, "sampling": None, "bootstrap": None}


def _stream_section(pre, model: str, text: str, n_seq: int, n_tokens: int) -> dict:
    """The record's ``stream`` section (:data:`STREAM_FIELDS` of ``measure_stream``) with its provenance."""
    start = time.time()
    manual_seed_all(SEED)
    st = measure_stream(pre, text, n_seq, n_tokens, round_trip=ROUND_TRIPS.get(model))
    return {**{k: st[k] for k in STREAM_FIELDS if k in st}, "provenance": measurement_provenance(start, SEEDS)}


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
        if args.only is not None and args.only not in SECTIONS:
            raise ValueError(f"--only must be one of {', '.join(SECTIONS)}, got {args.only!r}")
        if args.replace and args.only is None:
            raise ValueError("--replace needs --only SECTION: a whole record is never measured again over a finished one")
        if args.model not in pretrained.PACKAGED:
            raise ValueError(f"MODEL must be one of {', '.join(pretrained.PACKAGED)}, got {args.model!r}")
        out = check_out_dir("--out", args.out)
        todo, records = {}, {}         # the texts still to measure, read before the model is loaded
        for t in texts:
            path = store_path(out, args.model, t)
            if args.only is not None:  # a section of a finished record: the record must be there
                if not path.is_file():
                    raise ValueError(f"--only {args.only}: {path} holds no record; run record "
                                     f"{args.model} --text {t} first")
                load_record(path)                # usable, or a ValueError naming the field
                rec = json.loads(path.read_text(encoding="utf-8"))
                if args.only in rec and not args.replace:
                    continue
                for opt, key, v in (("--n-seq", "n_seq", n_seq), ("--n-tokens", "n_tokens", n_tokens)):
                    if rec.get(key) != v:
                        raise ValueError(f"{opt} {v} differs from the record's {key} {rec.get(key)!r} "
                                         f"({path}): the section is measured on the record's inputs")
                records[t] = rec
            elif path.is_file():
                continue
            else:
                check_out_file("--out", path)   # a folder or a FIFO there fails after the measurement
            if t == "shakespeare":
                cache_folder()                   # the corpus is read from the cache: usable?
            try:
                todo[t] = book_text(t)
            except CorpusUnavailable as exc:
                raise ValueError(f"--text {t}: {one_line(exc)}") from None
        if todo and pretrained.PACKAGED[args.model].kind != "folder":
            pretrained.model_cache_dir()         # the model is converted into the cache: usable?
    except ValueError as exc:
        print(f"record: {one_line(exc)}", file=sys.stderr)
        return 2
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"record: --out {args.out!r} cannot be made: {one_line(exc)}", file=sys.stderr)
        return 2
    pin_threads(threads)
    pre = None
    for t in texts:
        path = store_path(out, args.model, t)
        if t not in todo:
            print(f"{path}: done already" + (f" (it holds {args.only})" if args.only else ""))
            continue
        if pre is None:
            pre = pretrained.load(args.model, progress=True)
        try:
            if args.only is not None:
                print(f"{args.model} on {t}: measuring the {args.only} section", flush=True)
                rec = records[t]
                rec[args.only] = _stream_section(pre, args.model, todo[t], n_seq, n_tokens)
                wall = rec[args.only]["provenance"]["wall_s"]
            else:
                start = time.time()
                manual_seed_all(SEED)
                print(f"{args.model} on {t}: measuring (skip costs"
                      f"{', pruning curves' if t == args.prune_text else ''}, the stream section)", flush=True)
                rec = measure_model(pre, todo[t], n_seq, n_tokens, prune=(t == args.prune_text), progress=True)
                rec.update(text=t, provenance=measurement_provenance(start, SEEDS))
                rec["stream"] = _stream_section(pre, args.model, todo[t], n_seq, n_tokens)
                wall = rec["provenance"]["wall_s"] + rec["stream"]["provenance"]["wall_s"]
        except ValueError as exc:            # e.g. a text too short for --n-seq x --n-tokens
            print(f"record: {args.model} on {t}: {one_line(exc)}", file=sys.stderr)
            return 2
        write_json_atomic(rec, path)
        print(f"wrote {path} ({wall:.1f} s)", flush=True)
    return 0


def register_cli(subparsers) -> None:
    """Add ``record MODEL [--text NAME ...] [--only stream] [--out DIR]``."""
    p = subparsers.add_parser(
        "record", help="store Chapter 9's measurement of a packaged model (skip and pruning costs)",
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
    p.add_argument("--only", default=None, metavar="SECTION",
                   help=f"add only this section to each finished record that lacks it: one of {', '.join(SECTIONS)} "
                        f"(the sublayer steps, a Post-LN stream's own change, the 4-bit round-trip; minutes, not "
                        f"the hour of the skip and pruning costs)")
    p.add_argument("--replace", action="store_true",
                   help="with --only: measure the section again where a record holds it already (e.g. after the "
                        "code that made it was committed)")
    p.add_argument("--out", default="results/pretrained", metavar="DIR",
                   help="folder of the records (created if absent; default results/pretrained)")
    p.set_defaults(func=_run)
