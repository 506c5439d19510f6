"""Speed benchmark: a fresh execute-and-build of the whole book, against the 10-minute budget.

Runs ``jupyter-book build -W -n --keep-going --all`` with every notebook executed
(``execute_notebooks: force``, no execution cache) into a temporary output folder, so
neither ``_build/`` nor the stored outputs in ``chapters/`` are touched, and prints the
wall time against the budget of ``make book`` on 2 cores. Exits non-zero if the build
fails or takes longer than the budget.

Heavy: it executes every chapter. ``--dry-run`` prints the command and the config it
would use, and runs nothing.

Usage: python benchmarks/bench_book_build.py [--dry-run] [--keep]
"""
from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET_S = 600.0   # README: the whole book executed and rendered within 10 minutes on 2 cores


def forced_config(src: pathlib.Path, dest: pathlib.Path) -> None:
    """The book's config with execution forced (``tools/stored_config.write_config``)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from stored_config import write_config
    write_config(src, dest, execute="force")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the command; build nothing")
    parser.add_argument("--keep", action="store_true", help="keep the temporary output folder")
    args = parser.parse_args(argv)

    jb = pathlib.Path(sys.executable).with_name("jupyter-book")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="resdecay_book_"))
    config = tmp / "_config.yml"
    forced_config(ROOT / "_config.yml", config)
    cmd = [str(jb), "build", "-W", "-n", "--keep-going", "--all",
           "--config", str(config), "--path-output", str(tmp / "out"), str(ROOT)]
    print("command:", " ".join(cmd))
    if args.dry_run:
        print("execute:", yaml.safe_load(config.read_text())["execute"])
        shutil.rmtree(tmp)
        return 0

    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        print(result.stdout[-4000:], result.stderr[-4000:], sep="\n", file=sys.stderr)
    print(f"fresh execute-and-build: {elapsed:.0f} s of a {BUDGET_S:.0f} s budget "
          f"({elapsed / BUDGET_S:.0%}); build exit status {result.returncode}")
    if args.keep:
        print("output kept in", tmp / "out")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if result.returncode == 0 and elapsed <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
