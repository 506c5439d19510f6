"""Layer 7, the command line: one module per command, named after it, each defining
``register_cli(subparsers)``; ``python -m resdecay_lib`` (:mod:`resdecay_lib.__main__`) routes
them. Set-up: ``prepare_corpus`` (``prepare-corpus``), ``prepare_models``
(``prepare-models``); training: ``train``, ``sweep``; the pretrained models: ``measure``,
``record``; a stored run: ``analyse``; Chapter 9b's measurements:
``intervene``, ``anchors``. These modules parse options, print and choose exit codes; the work
is the library's (the layers below), and no module outside this package and ``__main__``
imports argparse."""
from pathlib import Path

__all__ = ["model_and_book_error"]


def model_and_book_error(command: str, model: str, models, root) -> str | None:
    """The one line a command that measures MODEL into the book's folder ``root`` prints before
    any work when MODEL is not one of ``models`` or ``root`` holds no ``results/`` folder; None
    when both are fine."""
    if model not in models:
        return f"{command}: MODEL must be one of {', '.join(models)}, got {model!r}"
    if not (Path(root) / "results").is_dir():
        return f"{command}: --root must be the book's folder (holding results/), got {str(root)!r}"
    return None
