"""The ``anchors`` command: a packaged model's sublayer cosines and the identity's check, for Chapter 9b.

``resdecay anchors MODEL [--root DIR]`` loads MODEL (a key of
:data:`resdecay_lib.nn.pretrained.PACKAGED`), runs Chapter 9's inputs through it once at
sublayer granularity, and writes ``results/anchors/MODEL.json``
(:func:`resdecay_lib.analysis.anchors.write_record`): the token means of Hu et al.'s three
cosines per block, from which their effective depth is computed, and, per block, how far the
exact change in the raw r and c (:func:`resdecay_lib.maths.identity.change_sq_raw`) lies from
the measured change on every token, with the leading order's proven bound. ``--root`` is the
book's folder (default: the current one). Bad input exits 2 with one line before any model loads.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..checks import one_line
from . import model_and_book_error

__all__ = ["register_cli"]


def _run(args) -> int:
    from ..analysis import anchors
    from ..nn.pretrained import PACKAGED, MissingPackage
    root = Path(args.root)
    error = model_and_book_error("anchors", args.model, PACKAGED, root)
    if error:
        print(error, file=sys.stderr)
        return 2
    try:
        path = anchors.write_record(args.model, root)
    except (ValueError, MissingPackage) as exc:
        print(f"anchors: {one_line(exc)}", file=sys.stderr)
        return 2
    print(f"measured {args.model}: {path}")
    return 0


def register_cli(sub) -> None:
    p = sub.add_parser("anchors", help="a packaged model's sublayer cosines and the identity's check (Chapter 9b)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("model", metavar="MODEL", help="a key of resdecay_lib.nn.pretrained.PACKAGED")
    p.add_argument("--root", default=".", help="the book's folder (default: the current one)")
    p.set_defaults(func=_run)
