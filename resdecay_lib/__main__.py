"""Command line: ``python -m resdecay_lib COMMAND ...``.

Each command lives in the module that does the work; that module defines
``register_cli(subparsers)``, which adds its sub-commands with ``set_defaults(func=...)``.
Modules are imported only when listed here, so adding a command is one line.
"""
from __future__ import annotations

import argparse
import importlib
import sys

#: modules that contribute sub-commands (each defines ``register_cli``)
COMMAND_MODULES: tuple[str, ...] = ("data", "runs", "sweep", "measure_cli", "realmodels")


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line, ``COMMAND: message``, and exit code 2 (as
    every command's own validation errors), not the usage text."""

    def error(self, message):
        name = self.prog.split()[-1] if self.prog != "python -m resdecay_lib" else self.prog
        self.exit(2, f"{name}: {' '.join(message.split())}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m resdecay_lib",
                     description="Measure and train for the resdecay book.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"resdecay_lib.{name}").register_cli(sub)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
