"""Speed benchmark: ``make book`` with the set-up done, against its 5-minute budget on 2 cores.

Runs what ``make book`` runs (``tools/execute_book.py --jobs 2``: every chapter executed two at
a time in a copy of the book, then the strict HTML build, into ``_build/``), with every process
on one thread as the Makefile sets, and prints the wall time against the budget, with each
notebook's time and the CPU it ran on. The stored outputs in ``chapters/`` are not touched.
Exits non-zero if the build fails or takes longer than the budget. Run it with nothing else on
the machine: two chapters share its two cores.

Heavy: it executes every chapter. ``--dry-run`` prints the command and runs nothing.

Usage: python benchmarks/bench_book_build.py [--dry-run]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BUDGET_S = 300.0   # make book within 5 minutes on 2 cores, the set-up done


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or the platform's word for it."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the command; run nothing")
    args = parser.parse_args(argv)
    cmd = [sys.executable, str(ROOT / "tools" / "execute_book.py"), "--jobs", "2"]
    print("command:", " ".join(cmd), f"(OMP_NUM_THREADS=1; {os.cpu_count()} cores, {cpu_name()})")
    if args.dry_run:
        return 0
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    elapsed = time.perf_counter() - start
    print(result.stdout[-4000:])
    if result.returncode != 0:
        print(result.stderr[-4000:], file=sys.stderr)
    print(f"make book: {elapsed:.0f} s of a {BUDGET_S:.0f} s budget ({elapsed / BUDGET_S:.0%}); "
          f"exit status {result.returncode}")
    return 0 if result.returncode == 0 and elapsed <= BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
