"""Command line: ``resdecay COMMAND ...`` (the console script) or ``python -m resdecay_lib COMMAND ...``.

Each command is one module of :mod:`resdecay_lib.cli`, named after it (``prepare-corpus`` is
``cli.prepare_corpus``); that module parses the command's options, prints and chooses the
exit code, and calls the library for the work (library modules define no command line and
never import argparse). It defines ``register_cli(subparsers)``, which adds its sub-command
with ``set_defaults(func=...)``. Modules are imported only when listed in
:data:`COMMAND_MODULES`, so adding a command is one module and one line here.
``--version`` prints the command's name, the library's version and its commit
(:func:`version_line`).
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from . import __version__

#: the modules of the sub-commands (each defines ``register_cli``), in the order ``--help`` lists them
COMMAND_MODULES: tuple[str, ...] = ("cli.prepare_corpus", "cli.train", "cli.sweep", "cli.prepare_models", "cli.measure",
                                     "cli.record", "cli.analyse", "cli.intervene", "cli.anchors")

#: the console script's name ([project.scripts] in pyproject.toml)
SCRIPT = "resdecay"

#: commands whose work reads the prepared corpus from the cache: the cache folder and the
#: corpus are checked before they start (one line and exit code 2, not a traceback from the
#: corpus loader); ``sweep`` checks them itself, for the engines that run here
NEEDS_CORPUS: tuple[str, ...] = ("train",)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line, ``COMMAND: message``, and exit code 2 (as
    every command's own validation errors), not the usage text."""

    def error(self, message):
        name = self.prog.split()[-1] if self.prog != "python -m resdecay_lib" else self.prog
        self.exit(2, f"{name}: {' '.join(message.split())}\n")


def version_line() -> str:
    """What ``--version`` prints: ``resdecay 0.4.0 (git:3541c71)``, the commit being ``git
    describe --always --dirty`` of the repository the library runs from
    (:func:`resdecay_lib.training.store.code_version`), or, where it runs from no repository
    (an installed copy), a note that no commit is known."""
    from .training.store import code_version
    code = code_version()
    commit = code if code.startswith("git:") else "no git commit: not run from a repository"
    return f"{SCRIPT} {__version__} ({commit})"


def main(argv: list[str] | None = None) -> int:
    prog = SCRIPT if Path(sys.argv[0]).name == SCRIPT else "python -m resdecay_lib"
    parser = _Parser(prog=prog, description="Measure and train for the resdecay book.")
    parser.add_argument("--version", action="store_true",
                        help="print the command's name, the library's version and its git commit, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"resdecay_lib.{name}").register_cli(sub)
    args = parser.parse_args(argv)
    if args.version:
        print(version_line())
        return 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.command in NEEDS_CORPUS:
        from .checks import one_line
        from .training.data import CorpusUnavailable, cache_folder, shakespeare_text
        try:
            cache_folder()
            shakespeare_text()
        except (ValueError, CorpusUnavailable) as exc:
            print(f"{args.command}: {one_line(exc)}", file=sys.stderr)
            return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
