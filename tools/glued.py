"""Every value the chapters glue, read from their stored outputs: snapshot them, or compare
with a snapshot (the check that a rewrite of a chapter's code moved no number).

    python tools/glued.py snapshot OUT.json [NOTEBOOK ...]   (default: the book's notebooks)
    python tools/glued.py compare BASE.json [NOTEBOOK ...]

A glued value is a myst-nb glue record (an output whose metadata carries ``scrapbook``): its
``text/plain`` and, where present, ``text/markdown``. A figure is compared by the digest of
its data (``plots.glue_figure`` glues it as ``<name>-data``), never by its pixels. ``compare``
prints each name that changed, vanished or appeared, per notebook, and exits 1 if any did.
"""
from __future__ import annotations

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from resdecay_lib.book.notebooks import book_notebooks  # noqa: E402

KEEP = ("text/plain", "text/markdown")


def glued(path: pathlib.Path) -> dict[str, dict[str, str]]:
    """{name: {mime: text}} of every glue record stored in the notebook at ``path``."""
    out = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            sb = o.get("metadata", {}).get("scrapbook")
            if not sb:
                continue
            prefix = sb.get("mime_prefix", "")
            data = {m: o["data"][prefix + m] for m in KEEP if prefix + m in o.get("data", {})}
            out[sb["name"]] = {m: "".join(v) if isinstance(v, list) else v for m, v in data.items()}
    return out


def snapshot(paths) -> dict[str, dict]:
    return {str(p.relative_to(ROOT)): glued(p) for p in paths}


def main(argv) -> int:
    if len(argv) < 2 or argv[0] not in ("snapshot", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, file, names = argv[0], pathlib.Path(argv[1]), argv[2:]
    paths = [ROOT / n for n in names] if names else book_notebooks(ROOT)
    now = snapshot(paths)
    if mode == "snapshot":
        file.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{sum(map(len, now.values()))} glued values of {len(now)} notebooks -> {file}")
        return 0
    base = json.loads(file.read_text(encoding="utf-8"))
    bad = 0
    for nb, values in now.items():
        before = base.get(nb, {})
        for name in sorted(set(before) | set(values)):
            if name not in values:
                print(f"{nb}: {name} vanished (was {before[name]})")
            elif name not in before:
                print(f"{nb}: {name} is new ({values[name]})")
            elif values[name] != before[name]:
                print(f"{nb}: {name} changed: {before[name]} -> {values[name]}")
            else:
                continue
            bad += 1
    n = sum(len(v) for v in now.values())
    print(f"{n} glued values compared over {len(now)} notebooks: {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
