"""Rewrite imports of resdecay_lib's flat modules (before issue 21) to the layered ones.

    python tools/migrate_imports.py [PATH ...]    (default: intro.ipynb chapters/*.ipynb)

A ``.py`` or ``.md`` file is rewritten as text; a notebook only in the ``source`` of its code
cells: markdown cells, outputs and metadata are left byte-identical (the file is rewritten
only where a code cell's source line changes, as its JSON string). Running it again changes
nothing: every pattern matches only the old names. Aliases are kept, so cell bodies do not
change: ``from resdecay_lib import results as R`` becomes
``from resdecay_lib.analysis import training_analysis as R``; an unaliased module keeps its
old name as an alias (``from resdecay_lib.stats import inference as stats``).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

#: old module (``resdecay_lib.<old>``) -> new module (``resdecay_lib.<new>``)
MODULES = {
    "_checks": "checks",
    "theory": "maths.theory",
    "gaussian": "maths.gaussian",
    "stats": "stats.inference",
    "fit": "stats.fit",
    "models": "nn.models",
    "probe": "nn.probe",
    "evaluation": "nn.evaluation",
    "pretrained": "nn.pretrained",
    "quantise": "nn.quantise",
    "device": "nn.device",
    "data": "training.data",
    "baselines": "training.baselines",
    "train": "training.train",
    "runs": "training.runs",
    "sweep": "training.sweep",
    "engines": "training.engines",
    "evidence": "book.evidence",
    "ledger": "book.ledger",
    "preregistration": "book.preregistration",
    "findings": "book.findings",
    "plots": "book.plots",
    "results": "analysis.training_analysis",
    "realmodels": "analysis.pretrained_analysis",
    "depthcost": "analysis.depthcost",
    "front": "analysis.front",
    "recheck": "analysis.recheck",
    "training_claims": "analysis.training_claims",
    "measure_cli": "cli.measure",
}

#: names that left their module: (old module, name) -> new module (the old module may still
#: import the name for its own use; an import names the module that defines it)
NAMES = {
    ("sweep", "write_json_atomic"): "training.store",
    ("sweep", "load_sweep"): "training.store",
    ("sweep", "result_path"): "training.store",
    ("sweep", "run_id"): "training.store",
    ("sweep", "sweep_runs"): "training.store",
    ("sweep", "read_result"): "training.store",
    ("sweep", "plan_of"): "training.store",
    ("sweep", "claim"): "training.store",
    ("sweep", "release"): "training.store",
    ("sweep", "SweepSpec"): "training.store",
    ("sweep", "SPEC_KEYS"): "training.store",
    ("sweep", "STALE_AFTER_S"): "training.store",
    ("sweep", "local_executor"): "training.engines",
    ("sweep", "MAX_WORKERS"): "training.engines",
    ("runs", "code_version"): "training.store",
    ("runs", "library_versions"): "training.store",
    ("runs", "machine"): "training.store",
    ("runs", "cpu_model"): "training.store",
    ("runs", "cpu_capability"): "training.store",
    ("results", "rho"): "stats.exponents",
    ("results", "convention"): "stats.exponents",
    ("results", "reference_exponent"): "stats.exponents",
    ("results", "halves"): "stats.exponents",
    ("results", "half_ratio"): "stats.exponents",
    ("front", "FRONT_BLOCKS"): "stats.exponents",
    ("front", "TAIL_BLOCKS"): "stats.exponents",
    ("data", "cache_dir"): "nn.device",
    ("train", "TrainConfig"): "training.config",
    ("runs", "RunPlan"): "training.config",
    ("models", "GPTConfig"): "nn.config",
    ("models", "MAX_SIZES"): "nn.config",
    ("models", "MAX_PARAMS"): "nn.config",
    ("models", "_validate"): "nn.config",
    ("pretrained", "_one_line"): "checks",
}

#: the packages of the layers; ``resdecay_lib.stats`` is both an old module and a new package
PACKAGES = ("maths", "stats", "nn", "training", "book", "analysis", "cli")
_NEW_SUBMODULES = {new.split(".", 1)[1] for new in list(MODULES.values()) + list(NAMES.values()) if "." in new}

_OLD = "|".join(sorted(MODULES, key=len, reverse=True))
# `from resdecay_lib import a, b as c` (one line, or parenthesised over several)
_FROM_PKG = re.compile(r"^(?P<ind>[ \t]*)from resdecay_lib import (?P<names>\([^)]*\)|[^\n#]*?)(?P<tail>[ \t]*(#[^\n]*)?)$",
                       re.M)
# `from resdecay_lib.old import names`
_FROM_MOD = re.compile(r"^(?P<ind>[ \t]*)from resdecay_lib\.(?P<old>" + _OLD + r") import "
                       r"(?P<names>\([^)]*\)|[^\n#]*?)(?P<tail>[ \t]*(#[^\n]*)?)$", re.M)
# any other dotted mention: `resdecay_lib.old` (an import, a string, a docstring)
_DOTTED = re.compile(r"\bresdecay_lib\.(?P<old>" + _OLD + r")\b(?P<rest>(\.\w+)?)")


def _comment(m: re.Match) -> str:
    """The comment after the import, or else the first one inside its parentheses (a ``noqa``),
    to be written after each line the import becomes."""
    if m["tail"].strip():
        return m["tail"]
    inner = re.findall(r"#[^\n]*", m["names"])
    return "  " + inner[0].strip() if inner else ""


def _split_names(names: str) -> list[tuple[str, str | None]]:
    out = []
    names = re.sub(r"#[^\n]*", "", names)
    for part in names.strip().strip("()").replace("\n", " ").split(","):
        part = part.strip()
        if not part:
            continue
        bits = part.split()
        out.append((bits[0], bits[2] if len(bits) == 3 and bits[1] == "as" else None))
    return out


def _from_pkg(m: re.Match) -> str:
    pairs = _split_names(m["names"])
    if not any(name in MODULES for name, _ in pairs):
        return m[0]
    groups: dict[str, list[str]] = {}      # new package -> its modules, in the order named
    for name, alias in pairs:
        if name not in MODULES:
            groups.setdefault("", []).append(name if alias is None else f"{name} as {alias}")
            continue
        pkg, _, leaf = ("." + MODULES[name]).rpartition(".")
        as_name = alias or name
        groups.setdefault(pkg, []).append(leaf if as_name == leaf else f"{leaf} as {as_name}")
    lines = [f"from resdecay_lib{pkg} import {', '.join(names)}" for pkg, names in groups.items()]
    return "\n".join(m["ind"] + line + _comment(m) for line in lines)


def _from_mod(m: re.Match) -> str:
    old = m["old"]
    pairs = _split_names(m["names"])
    if old == "stats" and pairs and all(name in _NEW_SUBMODULES for name, _ in pairs):
        return m[0]          # `from resdecay_lib.stats import inference`: the new package already
    groups: dict[str, list[str]] = {}
    for name, alias in pairs:
        new = NAMES.get((old, name), MODULES[old])
        groups.setdefault(new, []).append(name if alias is None else f"{name} as {alias}")
    lines = [f"from resdecay_lib.{new} import {', '.join(names)}" for new, names in groups.items()]
    return "\n".join(m["ind"] + line + _comment(m) for line in lines)


def _dotted(m: re.Match) -> str:
    old, rest = m["old"], m["rest"]
    attr = rest[1:] if rest else ""
    if old == "stats" and attr in _NEW_SUBMODULES:
        return m[0]          # already the new package's module
    if attr and (old, attr) in NAMES:
        return f"resdecay_lib.{NAMES[(old, attr)]}{rest}"
    return f"resdecay_lib.{MODULES[old]}{rest}"


def rewrite(text: str) -> str:
    """``text`` with every old import and dotted name of resdecay_lib replaced (idempotent)."""
    text = _FROM_PKG.sub(_from_pkg, text)
    text = _FROM_MOD.sub(_from_mod, text)
    # the dotted pass must not touch the `from resdecay_lib.X import` lines written above
    out = []
    for line in text.split("\n"):
        if re.match(r"^\s*from resdecay_lib\.[\w.]+ import ", line):
            head, sep, rest = line.partition(" import ")
            mod = head.split("from ", 1)[1].strip()
            if mod.split(".")[1] in PACKAGES or mod == "resdecay_lib.checks" or \
                    mod.split(".")[1] in ("__main__",):
                out.append(head + sep + _DOTTED.sub(_dotted, rest))
                continue
        out.append(_DOTTED.sub(_dotted, line))
    return "\n".join(out)


def rewrite_notebook(raw: str) -> str:
    """The notebook text ``raw`` with its code cells' source rewritten, nothing else changed."""
    nb = json.loads(raw)
    changes = []
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell["source"]
        lines = src if isinstance(src, list) else src.splitlines(keepends=True)
        old = "".join(lines)
        new = rewrite(old)
        if new != old:
            changes.append((lines, new.splitlines(keepends=True), isinstance(src, list)))
    for before, after, as_list in changes:
        # the cell's source as it is written in the file (nbformat: indent 1, one string a line)
        def dump(ls, indent):
            if not as_list:
                return json.dumps("".join(ls), ensure_ascii=False)
            inner = (",\n" + indent).join(json.dumps(s, ensure_ascii=False) for s in ls)
            return "[\n" + indent + inner + "\n" + indent[:-1] + "]"
        found = False
        for indent in ("    ", "   ", "  "):
            was = '"source": ' + dump(before, indent)
            if raw.count(was) == 1:
                raw = raw.replace(was, '"source": ' + dump(after, indent))
                found = True
                break
        if not found:
            raise ValueError("a code cell's source could not be found as written; not rewritten")
    if json.loads(raw).get("metadata") != nb.get("metadata"):
        raise AssertionError("metadata changed")
    return raw


def main(paths: list[str]) -> int:
    root = Path(__file__).resolve().parents[1]
    files = [Path(p) for p in paths] or [root / "intro.ipynb", *sorted((root / "chapters").glob("*.ipynb"))]
    for path in files:
        text = path.read_text(encoding="utf-8")
        new = rewrite_notebook(text) if path.suffix == ".ipynb" else rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
