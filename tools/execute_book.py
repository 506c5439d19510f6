"""Execute every chapter on two cores, then build the book from those outputs: ``make book``.

jupyter-book executes a book's notebooks one after another, so ``make book`` took as long as all
the chapters together. This runs them ``--jobs`` at a time instead, in a copy of the book, and
then builds the HTML from the copy with execution off, strictly (``-W -n --keep-going``), into
``_build/html`` as before. The stored outputs in ``chapters/`` are never touched.

The copy (``_build/executed/``) holds fresh copies of the notebooks and links to everything
else (``results/``, ``configs/``, ``_toc.yml``, ...), so ``find_book_root()`` in a chapter finds
the copy, and what a chapter reads of the other chapters is what this build executed:

1. every chapter but the ledger, ``--jobs`` at a time, longest first (each notebook's duration as
   its stored outputs record it, so the longest start first and the two cores finish together);
2. then ``chapters/10_verdict.ipynb``, which reads the evidence the others glued;
3. then the Preface (``intro.ipynb``), which glues the ledger's findings;

the order ``make chapters`` uses. A chapter that fails stops the build with its name and its
exit code, after the chapters already running have finished.

Usage: python tools/execute_book.py [--jobs N]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import json
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "tools"))

#: what the copy does not link: git's and the build's own folders, and the notebooks it copies
SKIP = {".git", ".venv", "_build", "__pycache__", ".pytest_cache", ".hypothesis"}
#: run after every other chapter, in this order (each reads what the ones before it glued)
LAST = ("chapters/10_verdict.ipynb", "intro.ipynb")


def stored_seconds(path: pathlib.Path) -> float:
    """How long ``path`` took when its stored outputs were made: from its first cell's start to its
    last cell's reply, as nbclient records them (0 when a notebook records no timing)."""
    times = []
    for cell in json.loads(path.read_text(encoding="utf-8")).get("cells", []):
        e = cell.get("metadata", {}).get("execution", {})
        times += [dt.datetime.fromisoformat(e[k].replace("Z", "+00:00"))
                  for k in ("iopub.execute_input", "shell.execute_reply") if k in e]
    return (max(times) - min(times)).total_seconds() if times else 0.0


def notebooks(root: pathlib.Path) -> list[str]:
    """The book's notebooks (relative paths) in the order of its ``_toc.yml``."""
    from resdecay_lib.book import notebooks as nb
    return [str(p.relative_to(root)) for p in nb.book_notebooks(root)]


def schedule(names, seconds) -> list[str]:
    """The notebooks that run in parallel, longest first (``seconds``: {name: duration}), ties by
    name; the ones of :data:`LAST` are not among them."""
    return sorted((n for n in names if n not in LAST), key=lambda n: (-seconds.get(n, 0.0), n))


def mirror(root: pathlib.Path, dest: pathlib.Path, names) -> None:
    """A copy of the book at ``root`` in ``dest``: the notebooks ``names`` copied, every other
    entry of ``root`` and of the notebooks' folders linked."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    copied = {pathlib.PurePath(n) for n in names}
    folders = {p.parts[0] for p in copied if len(p.parts) > 1}
    for entry in sorted(root.iterdir()):
        if entry.name in SKIP or pathlib.PurePath(entry.name) in copied:
            continue
        if entry.name in folders:
            (dest / entry.name).mkdir()
            for inner in sorted(entry.iterdir()):
                rel = pathlib.PurePath(entry.name, inner.name)
                if rel not in copied and inner.name not in SKIP:
                    (dest / rel).symlink_to(inner)
        else:
            (dest / entry.name).symlink_to(entry)
    for name in copied:
        shutil.copy2(root / name, dest / name)


def execute(book: pathlib.Path, name: str) -> tuple[str, int, float, str]:
    """``jupyter execute --inplace`` of one notebook of the copy, from its own folder (so that the
    chapter's ``find_book_root()`` finds the copy): (name, exit code, seconds, its stderr's tail)."""
    path = book / name
    t0 = time.monotonic()
    run = subprocess.run([str(BIN / "jupyter"), "execute", "--inplace", path.name], cwd=path.parent,
                         capture_output=True, text=True)
    return name, run.returncode, time.monotonic() - t0, run.stderr[-3000:]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="chapters executed at once (default 2, one per core)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be an integer >= 1, got {args.jobs}")
    out = ROOT / "_build"
    book = out / "executed"
    names = notebooks(ROOT)
    missing = [n for n in LAST if n not in names]
    if missing:
        print(f"the table of contents lacks {', '.join(missing)}, which run last", file=sys.stderr)
        return 2
    mirror(ROOT, book, names)
    t_all = time.monotonic()
    order = schedule(names, {n: stored_seconds(ROOT / n) for n in names})
    failed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, rc, sec, err in pool.map(lambda n: execute(book, n), order):
            print(f"{name}: {sec:.0f} s" + ("" if rc == 0 else f", FAILED (exit {rc})"), flush=True)
            if rc:
                failed.append((name, rc, err))
    for name in LAST if not failed else ():
        name, rc, sec, err = execute(book, name)
        print(f"{name}: {sec:.0f} s" + ("" if rc == 0 else f", FAILED (exit {rc})"), flush=True)
        if rc:
            failed.append((name, rc, err))
            break
    if failed:
        for name, rc, err in failed:
            print(f"--- {name} (exit {rc}):\n{err}", file=sys.stderr)
        return 1
    print(f"executed {len(names)} notebooks in {time.monotonic() - t_all:.0f} s on {args.jobs} job(s)", flush=True)
    from stored_config import write_config
    config = out / "_config_executed.yml"
    write_config(ROOT / "_config.yml", config, execute="off")
    t0 = time.monotonic()
    rc = subprocess.run([str(BIN / "jupyter-book"), "build", "-W", "-n", "--keep-going", "--all",
                         "--config", str(config), "--path-output", str(ROOT), str(book)]).returncode
    print(f"built the HTML in {time.monotonic() - t0:.0f} s (exit {rc})", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
