"""Fold away the code a reader does not learn from: set each code cell's ``hide-input`` tag.

Usage: python tools/hide_cells.py [--check] [NOTEBOOK ...]     (default: the chapters of _toc.yml)

A code cell stays visible when a reader learns from it (:func:`visible`):

* it states a claim: every code line belongs to ``assert`` statements, or the cell is short
  (at most :data:`MAX_ASSERT_CELL` code lines) and holds an ``assert``;
* or it shows the API: a short cell (at most :data:`MAX_API_CELL` code lines, no loop, no
  comprehension, no import, no function or class) that calls the library, i.e. a name the
  notebook imports from ``resdecay_lib`` (``probe.layer_change(stream)``), and glues nothing
  (a cell that draws and glues a figure, or glues a number, is analysis: its result is shown
  where the prose places it).

Every other code cell (imports, set-up, analysis, figure drawing, gluing) gets ``hide-input``:
the book folds its source behind a toggle and still shows its outputs. Cells tagged
``remove-input`` or ``remove-cell`` are left as they are. The tool rewrites tags only, never a
source or an output; the notebook's JSON is written as nbformat writes it (one-space indent,
sorted keys), so the diff is the tags alone. Running it twice changes nothing the second time.
It prints, per notebook, the visible code lines before and after. ``--check`` writes nothing
and exits 1 when a notebook's tags differ from the rules'.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

HIDE = "hide-input"
#: tags under which a cell's source is not shown at all: the tool leaves those cells alone
REMOVED = ("remove-input", "remove-cell")
#: a cell holding an assert is a claim when it has at most this many code lines
MAX_ASSERT_CELL = 6
#: a call that shows the API has at most this many code lines
MAX_API_CELL = 4
#: calls that show no API of the library: they only print or convert
NOT_API = frozenset({"print", "display", "Markdown", "round", "float", "int", "len", "str"})
#: calls that make a cell a gluing (analysis) cell, never an API demonstration
GLUES = frozenset({"glue", "glue_figure", "glue_display"})

_MAGIC = re.compile(r"^\s*[%!]")


def code_lines(source: str) -> list[str]:
    """The lines of ``source`` that hold code: not blank, not only a comment, not a magic."""
    return [line for line in source.splitlines()
            if line.strip() and not line.lstrip().startswith("#") and not _MAGIC.match(line)]


def _tree(source: str):
    text = "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _lines_of(node) -> set[int]:
    return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))


def _code_line_numbers(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1)
            if line.strip() and not line.lstrip().startswith("#") and not _MAGIC.match(line)}


def is_claim(source: str) -> bool:
    """A cell that states a claim: every code line is part of an ``assert`` statement, or the
    cell is short (<= MAX_ASSERT_CELL code lines) and holds an ``assert``.

    >>> is_claim("# the bound holds\\nassert abs(x - y) < 3 * se, (x, y)")
    True
    >>> is_claim("z = (x - y) / se\\nassert abs(z) < z_crit")
    True
    >>> is_claim("x = 1")
    False
    """
    tree = _tree(source)
    if tree is None:
        return False
    asserts = [n for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    if not asserts:
        return False
    covered = set().union(*(_lines_of(n) for n in tree.body if isinstance(n, ast.Assert)))
    if _code_line_numbers(source) <= covered:
        return True
    return len(code_lines(source)) <= MAX_ASSERT_CELL


def _root_name(func) -> str | None:
    while isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
        func = func.value if not isinstance(func, ast.Call) else func.func
    return func.id if isinstance(func, ast.Name) else None


_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SETUP = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With)


def shows_api(source: str, api: frozenset | set = frozenset()) -> bool:
    """A short call that shows the library's API: at most MAX_API_CELL code lines, no loop or
    comprehension, no import or definition, no glue (:data:`GLUES`), and at least one call
    whose root name is in ``api`` (the names the notebook imports from ``resdecay_lib``) other
    than those that only print (:data:`NOT_API`).

    >>> shows_api("stream = probe.residual_stream(model, inputs, blocks)\\nprobe.layer_change(stream)", {"probe"})
    True
    >>> shows_api("for k in ks:\\n    probe.layer_change(k)", {"probe"})
    False
    >>> shows_api("fig = plots.ablation_profiles(prof)\\nplots.glue_figure('fig-ablation', fig)", {"plots"})
    False
    """
    lines = code_lines(source)
    if not lines or len(lines) > MAX_API_CELL:
        return False
    tree = _tree(source)
    if tree is None:
        return False
    nodes = list(ast.walk(tree))
    if any(isinstance(n, _LOOPS + _SETUP) for n in nodes):
        return False
    calls = [(_root_name(n.func), n.func.attr if isinstance(n.func, ast.Attribute) else _root_name(n.func))
             for n in nodes if isinstance(n, ast.Call)]
    if any(leaf in GLUES for _, leaf in calls):
        return False
    return any(name in api and name not in NOT_API and leaf not in NOT_API for name, leaf in calls)


def visible(source: str, api: frozenset | set = frozenset()) -> bool:
    """Whether a code cell stays visible: it states a claim (:func:`is_claim`) or shows the API
    (:func:`shows_api`). Everything else is folded away."""
    return bool(code_lines(source)) and (is_claim(source) or shows_api(source, api))


def api_names(sources) -> frozenset:
    """The names a notebook binds to the library: ``from resdecay_lib import probe, plots as P``
    gives {probe, P}; ``import resdecay_lib.book.ledger as L`` gives {L}; ``import resdecay_lib``
    gives {resdecay_lib}.

    >>> sorted(api_names(["from resdecay_lib import probe, results as R", "import numpy as np"]))
    ['R', 'probe']
    """
    names = set()
    for source in sources:
        tree = _tree(source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "resdecay_lib":
                names |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Import):
                names |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] == "resdecay_lib"}
    return frozenset(names)


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _shown(cell) -> bool:
    return not set(_tags(cell)) & {HIDE, *REMOVED}


def retag(nb: dict) -> dict:
    """Set ``hide-input`` on every code cell the rules fold away and remove it from every cell
    they keep; other tags, sources and outputs are untouched. Returns ``nb`` (changed in place)."""
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    api = api_names("".join(c["source"]) for c in cells)
    for cell in cells:
        tags = _tags(cell)
        if set(tags) & set(REMOVED):
            continue
        keep = visible("".join(cell["source"]), api)
        if keep and HIDE in tags:
            tags.remove(HIDE)
        elif not keep and HIDE not in tags:
            tags.append(HIDE)
        else:
            continue
        meta = cell.setdefault("metadata", {})
        if tags:
            meta["tags"] = tags
        else:
            meta.pop("tags", None)
    return nb


def visible_lines(nb: dict) -> int:
    """Code lines a reader sees unfolded: those of code cells without hide/remove tags."""
    return sum(len(code_lines("".join(c["source"]))) for c in nb["cells"]
               if c["cell_type"] == "code" and _shown(c))


def dumps(nb: dict) -> str:
    """The notebook as nbformat writes it (so rewriting an unchanged notebook changes no byte)."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def book_notebooks(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    import yaml
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]
    return [root / f"{f}.ipynb" for f in files if (root / f"{f}.ipynb").exists()]


def main(argv) -> int:
    check = "--check" in argv
    paths = [pathlib.Path(a) for a in argv if a != "--check"] or book_notebooks()
    stale = []
    for path in paths:
        raw = path.read_text(encoding="utf-8")
        nb = json.loads(raw)
        before = visible_lines(nb)
        text = dumps(retag(nb))
        after = visible_lines(nb)
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        n_shown = sum(_shown(c) for c in code)
        # asserts inside long analysis cells are folded with them: split them out to show them
        folded = sum(not _shown(c) and bool(_tree("".join(c["source"])))
                     and any(isinstance(n, ast.Assert) for n in ast.walk(_tree("".join(c["source"])))) for c in code)
        changed = text != raw
        print(f"{path.name}: visible code lines {before} -> {after} ({n_shown} of {len(code)} code cells shown; "
              f"{folded} folded cells hold an assert)"
              + (" [would change]" if check and changed else " [rewritten]" if changed else ""))
        if changed:
            stale.append(path)
            if not check:
                path.write_text(text, encoding="utf-8")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
