"""The ``intervene`` command: the front intervention of Chapter 9b, predicted first, then measured.

``resdecay intervene predict MODEL [--root DIR]`` runs MODEL's unpatched forward and adds to
``results/predictions/intervention.json`` the arithmetic (a) of the front's sum scaled by each
alpha and the predicted offset k0(alpha) (:func:`resdecay_lib.analysis.intervention.write_prediction`).
An entry already there is never replaced.

``resdecay intervene measure MODEL [--root DIR]`` runs the patched forward (b) and writes
``results/intervention/MODEL.json`` (:func:`~resdecay_lib.analysis.intervention.write_record`).
It refuses to run unless the predictions file is committed unchanged and holds MODEL, and
never rewrites a record. The order the book asserts is: predict, commit, measure, commit.

MODEL is a key of :data:`resdecay_lib.analysis.intervention.MODELS`; ``--root`` is the book's
folder (default: the current one). Bad input exits 2 with one line before any model is loaded.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..checks import one_line
from . import model_and_book_error

__all__ = ["register_cli"]

#: the two steps, in the order they must run
STEPS = ("predict", "measure")


def _run(args) -> int:
    from ..analysis import intervention as I
    root = Path(args.root)
    error = model_and_book_error("intervene", args.model, I.MODELS, root)
    if error:
        print(error, file=sys.stderr)
        return 2
    try:
        if args.step == "predict":
            entry = I.write_prediction(args.model, root)
            print(f"predicted {entry['model']}: fronts {entry['fronts']}, written to {root / I.PREDICTIONS} "
                  f"({entry['provenance']['wall_s']:.0f} s); commit it before measuring")
        else:
            path = I.write_record(args.model, root)
            print(f"measured {args.model}: {path}")
    except (ValueError, RuntimeError) as exc:
        print(f"intervene: {one_line(exc)}", file=sys.stderr)
        return 2
    return 0


def register_cli(sub) -> None:
    p = sub.add_parser("intervene", help="the front intervention (Chapter 9b): predict, then measure",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=STEPS, help="predict (a) from the unpatched forward, or measure (b) after the "
                                              "prediction is committed")
    p.add_argument("model", metavar="MODEL", help="a key of resdecay_lib.analysis.intervention.MODELS")
    p.add_argument("--root", default=".", help="the book's folder (default: the current one)")
    p.set_defaults(func=_run)
