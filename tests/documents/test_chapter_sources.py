"""What the chapters' sources may hold: prose, calls, glues and asserts, never analysis.

A chapter calls its typed result (``resdecay_lib.analysis.chapters.<name>.chapter``), glues
it, draws its figures and asserts on it; it defines nothing, builds no sentence and no table,
and imports the library under the modules' own names. Its directive fences open as MyST
reads them.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb")) + [ROOT / "intro.ipynb"]
#: third-party modules a chapter may import under their customary short names
CUSTOMARY = {"numpy": "np", "sympy": "sp"}


def _cells(nb: pathlib.Path, kind: str) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == kind]


def _code(source: str) -> str:
    # IPython magics are not Python
    return "\n".join("" if re.match(r"^\s*[%!]", line) else line for line in source.splitlines())


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_chapter_defines_nothing_and_builds_no_prose(nb):
    for source in _cells(nb, "code"):
        tree = ast.parse(_code(source))
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)), \
                f"{nb.name} defines {type(node).__name__} in a cell; it belongs in the chapter's result module:\n{source}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id != "Markdown", f"{nb.name} builds a sentence in a cell:\n{source}"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_chapter_imports_the_library_under_its_own_names(nb):
    for source in _cells(nb, "code"):
        for node in ast.walk(ast.parse(_code(source))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname is None:
                        continue
                    assert CUSTOMARY.get(alias.name) == alias.asname, \
                        f"{nb.name} imports {alias.name} as {alias.asname}: import it under its own name"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_backtick_fence_has_an_info_string_without_backticks(nb):
    # CommonMark: a backtick fence's info string may not contain a backtick, or the line is
    # not a fence at all and the directive (a table's caption with `code` in it) is shown as text
    for source in _cells(nb, "markdown"):
        for line in source.splitlines():
            m = re.match(r"^ {0,3}(`{3,})(.*)$", line)
            if m:
                assert "`" not in m.group(2), f"{nb.name}: use a colon fence (::::) for {line[:80]!r}"
