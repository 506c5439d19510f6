"""The library's layers: data flows one way.

    checks < maths < stats < nn < training < book < analysis < cli

Every module's imports (at the top and inside functions alike) are read with ``ast``: a module
imports only its own layer and the layers to its left, no two modules import each other
(directly or through others), and no module imports another's private name (``_x``). The
torch-free layers (maths, stats) and the run store's loader import with torch made
unimportable.
"""
from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "resdecay_lib"

#: the layers, left to right; a module may import its own layer and those to its left
LAYERS = ("root", "checks", "maths", "stats", "nn", "training", "book", "analysis", "cli")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> str:
    parts = module.split(".")
    if parts == ["resdecay_lib"]:
        return "root"
    if parts[1] in ("__main__", "cli"):
        return "cli"
    if parts[1] == "checks":
        return "checks"
    if parts[1] in LAYERS:
        return parts[1]
    raise AssertionError(f"{module} is in no layer: add it to a layer's package (resdecay_lib/<layer>/)")


def modules(pkg: Path = PKG) -> dict[str, Path]:
    return {module_name(p): p for p in sorted(pkg.rglob("*.py"))}


def imports(path: Path, name: str, known: set[str]) -> list[tuple[str, str | None, int]]:
    """(imported module of the library, imported name or None, line) for every import in the
    file at ``path`` (module ``name``), relative imports resolved."""
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "resdecay_lib":
                    out.append((a.name, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "resdecay_lib":
                continue
            for a in node.names:
                sub = f"{mod}.{a.name}"
                if sub in known:           # `from pkg import module`
                    out.append((sub, None, node.lineno))
                else:
                    out.append((mod, a.name, node.lineno))
    return out


def graph(pkg: Path = PKG) -> tuple[dict[str, set[str]], list[str]]:
    """{module: modules it imports} and the list of cross-module private imports."""
    mods = modules(pkg)
    known = set(mods)
    edges, private = {}, []
    for name, path in mods.items():
        edges[name] = set()
        for mod, imported, line in imports(path, name, known):
            if mod != name:
                edges[name].add(mod)
            if imported is not None and imported.startswith("_") and not imported.startswith("__"):
                private.append(f"{name}:{line} imports {mod}.{imported}")
            if mod in known and imported is None and mod.rsplit(".", 1)[-1].startswith("_") \
                    and not mod.endswith("__main__"):
                private.append(f"{name}:{line} imports the private module {mod}")
    return edges, private


def upward(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for src, dsts in edges.items():
        for dst in dsts:
            if dst.split(".")[0] != "resdecay_lib":
                continue
            if LAYERS.index(layer_of(dst)) > LAYERS.index(layer_of(src)):
                bad.append(f"{src} ({layer_of(src)}) imports {dst} ({layer_of(dst)})")
    return sorted(bad)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer():
    for name in modules():
        layer_of(name)


def test_no_upward_import():
    edges, _ = graph()
    assert upward(edges) == []


def test_no_import_cycle():
    edges, _ = graph()
    # a package's __init__ is not an edge target that closes a cycle: they import nothing
    assert cycles(edges) == []


def test_no_private_name_crosses_modules():
    _, private = graph()
    assert private == []


def test_the_layer_checks_can_fail(tmp_path):
    """A planted upward import, a cycle and a private import are each caught."""
    pkg = tmp_path / "resdecay_lib"
    for sub in ("", "stats", "analysis", "nn"):
        (pkg / sub).mkdir(parents=True, exist_ok=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "stats" / "fit.py").write_text("from ..analysis import front\n")
    (pkg / "analysis" / "front.py").write_text("from ..nn.probe import _private\nfrom . import recheck\n")
    (pkg / "analysis" / "recheck.py").write_text("def f():\n    from .front import x\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        edges, private = graph(pkg)
    finally:
        ROOT = saved
    assert upward(edges) == ["resdecay_lib.stats.fit (stats) imports resdecay_lib.analysis.front (analysis)"]
    assert cycles(edges) == [["resdecay_lib.analysis.front", "resdecay_lib.analysis.recheck"]]
    assert private == ["resdecay_lib.analysis.front:1 imports resdecay_lib.nn.probe._private"]


def argparse_importers(pkg: Path = PKG) -> list[str]:
    """The modules outside the command line (``resdecay_lib.cli`` and ``__main__``) that import
    argparse (``import argparse``, ``from argparse import ...``, at the top or inside a function)."""
    bad = []
    for name, path in modules(pkg).items():
        if layer_of(name) == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found = any(a.name.split(".")[0] == "argparse" for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                found = not node.level and (node.module or "").split(".")[0] == "argparse"
            else:
                continue
            if found:
                bad.append(f"{name}:{node.lineno}")
    return bad


def test_only_the_command_line_imports_argparse():
    """Library modules define no command line: each command is a module of resdecay_lib/cli."""
    assert argparse_importers() == []


def test_the_argparse_check_can_fail(tmp_path):
    pkg = tmp_path / "resdecay_lib"
    for sub in ("", "training", "cli"):
        (pkg / sub).mkdir(parents=True, exist_ok=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "training" / "runs.py").write_text("def f():\n    from argparse import ArgumentParser\n")
    (pkg / "cli" / "train.py").write_text("import argparse\n")
    (pkg / "__main__.py").write_text("import argparse\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert argparse_importers(pkg) == ["resdecay_lib.training.runs:2"]
    finally:
        ROOT = saved


def test_init_is_torch_free_and_the_module_map():
    text = (PKG / "__init__.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    for name in modules():
        if name.count(".") == 2 and not name.endswith("__init__"):
            assert name.split(".", 1)[1] in text, f"{name} is missing from the module map of resdecay_lib/__init__.py"


#: makes torch unimportable. ``sys.modules["torch"] = None`` does that too, but SciPy's own
#: ``import scipy.stats`` then fails (its array-API helper reads ``sys.modules["torch"].Tensor``),
#: so the layers that use SciPy (stats) are checked with an import hook that refuses torch
_NO_TORCH = {
    "modules": 'sys.modules["torch"] = None',
    "hook": textwrap.dedent("""
        class _NoTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError(f"torch is blocked in this test ({name})")
        sys.meta_path.insert(0, _NoTorch())
    """),
}


def _run_without_torch(how: str, body: str) -> subprocess.CompletedProcess:
    code = "import sys\n" + _NO_TORCH[how] + "\n" + textwrap.dedent(body) + \
        "\nassert sys.modules.get('torch') is None, 'torch was imported'\nprint('ok')\n"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("how, target", [
    ("modules", "import resdecay_lib, resdecay_lib.checks"),
    ("modules", "import resdecay_lib.maths, resdecay_lib.maths.theory, resdecay_lib.maths.gaussian"),
    ("modules", "from resdecay_lib.training.store import load_sweep, result_path, run_id, sweep_runs, read_result, "
                "write_json_atomic, code_version"),
    ("modules", "import resdecay_lib.nn.config, resdecay_lib.training.plan"),
    ("hook", "import resdecay_lib.stats, resdecay_lib.stats.inference, resdecay_lib.stats.fit, "
             "resdecay_lib.stats.exponents"),
    ("hook", "import resdecay_lib.maths.theory, resdecay_lib.maths.gaussian, resdecay_lib.training.store"),
])
def test_torch_free_layers_import_without_torch(how, target):
    proc = _run_without_torch(how, target)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_the_hook_does_block_torch():
    """The check can fail: with torch blocked, a module of the nn layer does not import."""
    proc = _run_without_torch("hook", "import resdecay_lib.nn.models")
    assert proc.returncode != 0 and "torch is blocked" in proc.stderr


def test_the_store_loads_a_sweep_without_torch():
    proc = _run_without_torch("modules", """
        from resdecay_lib.training.store import load_sweep, result_path, run_id, sweep_runs
        spec = load_sweep({"out": "results/x", "archs": ["pre_ln"], "depths": [2, 4], "seeds": [0]})
        print([run_id(spec, c) for c in sweep_runs(spec)], result_path(spec, sweep_runs(spec)[0]).as_posix())
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["['pre_ln_L4_s0',", "'pre_ln_L2_s0']", "results/x/pre_ln_L4_s0.json", "ok"]
