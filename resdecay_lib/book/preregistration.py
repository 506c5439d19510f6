"""Fingerprints of the ledger's claims, so that a verdict can be shown to use the rule, and the
statistics, that the registry holds; whether they were registered before its data were committed
is what :mod:`resdecay_lib.book.history` computes.

A claim's fingerprint (:func:`claim_fingerprint`, :func:`fingerprints`) is the SHA-256 (first 16
hex digits) of a canonical text: the sorted set of the parts below, one a line, of

* the claim's rule;
* the producer of every evidence the claim reads, needed or optional
  (:data:`resdecay_lib.book.producers.PRODUCERS`: its chapter's ``chapter(root)``, which chooses
  the runs and parameters, calls the analysis and constructs the result whose ``glues()``
  rounds and writes the value);
* :class:`~resdecay_lib.book.verdicts.Claim`, whose ``verdict`` makes missing evidence and NaN
  ``open`` and lets a rule read only the declared names;

and of everything these reach inside ``resdecay_lib``, transitively, with the claim's needed and
optional evidence names and its rule's own :func:`fingerprint`. What a part is:

* a function: its abstract syntax tree (``ast.dump``) without its name, its decorators
  (argument checks, caches, the rules' evidence check: what it computes is its body) and every
  docstring or bare string statement inside it; a relative import in it by its first component
  and names (``from ..stats.inference import t_quantile`` reads as ``from .stats import
  t_quantile``). So a comment, a docstring, the formatting or a move to another module (or
  into a layer's package) leave it as it is, and any change to what it computes changes it;
* a class defined in the library (called, constructed, named in an annotation or held in a
  registry of classes): its skeleton (bases, decorators, fields, class attributes; a
  dataclass's constructor is made from these), the kind of each method it defines, and each of
  its methods as a function, read from the class as it is now (a method replaced at run time
  counts as the replacement);
* what a name in such a tree stands for, resolved through the function's imports (its module's
  ``__globals__`` and its own ``from ... import``), aliases bound in it (``ta =
  training_analysis``), and dotted names through the library's modules (``module.func``,
  ``module.sub.func``, ``module.Class.method``): a function or class of the library is followed;
  a module-level constant is written with its value, as the code names it (``front_models.WINDOWS
  = {...}``: numbers, strings, None, tuples, lists, sets, dicts, frozen dataclass records and
  NumPy arrays of these, and declared evidence by its name); a container of library functions
  or classes (``ARCHS``) has each followed;
* anything outside the library (NumPy, SciPy, torch, the standard library) by its dotted name
  only (``np=ext numpy``, ``t_quantile=ext scipy...``): its numerics are its own, pinned by the
  requirements, and reading them would tie a fingerprint to an installed version's internals;
* a registry that other code fills at run time (``checks.DECLARED``: written ``{}``, holding
  every ``@accepts`` function imported so far) by the word ``registry``: what it holds depends on
  what was imported, not on what a function computes;
* a module's ``__file__`` (and ``__path__``, ``__spec__``, ..., and the release, ``__version__``) by its
  name only: it is where the
  checkout lies (a fresh clone elsewhere found 4 claims moved by ``training.store``'s ``__file__``);
* module-level state by its name only: a name some function of its module rebinds (``global
  _POOL``: a pool made on first use) or changes in place (``_CORPUS_CACHE[key] = ...``, or
  ``.append``, ``.update``, ...: a cache filled by the first call); its value depends on what
  ran before, and a CI run found fingerprints that moved with the tests run before them.

Blind spots, by construction: a call through an object whose class is never named or
constructed in the closure (an instance returned by an outside library), ``getattr`` by a
computed name, and code outside the library. :func:`unresolved` lists what the ledger's closures
name but cannot follow (empty today). A constant copied by ``from m import NAME`` is read where
the code reads it (``training_analysis.FRONT_BLOCKS``, not ``stats.exponents.FRONT_BLOCKS``).

A rule's own fingerprint (:func:`fingerprint`, :func:`rule_fingerprints`) is the older,
narrower text of the rule alone: its tree, the helpers of its own module, the constants it
reads and the other modules' functions by name only. ``results/predictions/front.json`` records
it for ``rule_front``, and it is part of the claim's text.

:data:`REGISTRY` (``results/preregistration.json``) holds, per claim, its fingerprint at the
commit that declared it, with the claim's sentence, primary statistic, rule and margin
(``tools/preregister.py`` writes it). The verdict chapter asserts that every current fingerprint
equals the registered one. Computing every claim's fingerprint imports every chapter's module
(torch among them, about 3 s of CPU) and reads about 800 functions and classes (about 2 s of CPU
on the first call of a process; the trees are kept, so a second call takes about 0.5 s).
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import hashlib
import importlib
import inspect
import json
import linecache
import numbers
import os
import sys
import textwrap
import types
from collections.abc import Mapping
from pathlib import Path, PurePath
from ..checks import ArgumentTypeError, check_items, one_line, show

__all__ = ["fingerprint", "fingerprints", "claim_fingerprint", "canonical_text", "code_fingerprint",
           "rule_fingerprints", "unresolved",
           "REGISTRY", "read_registry", "mismatches", "reading_mismatches"]

#: the registry of declared rules (relative to the repository root)
REGISTRY = Path("results") / "preregistration.json"


def _constant(value):
    """A canonical text for a constant, or None when ``value`` is not one."""
    from .evidence import Evidence
    if isinstance(value, Evidence):
        return f"ev:{str(value)}"
    if isinstance(value, bool) or isinstance(value, (numbers.Real, str)):
        return repr(value)
    if isinstance(value, tuple) and all(_constant(v) is not None for v in value):
        return "(" + ",".join(_constant(v) for v in value) + ")"
    if isinstance(value, dict) and all(_constant(v) is not None for v in value.values()):
        return "{" + ",".join(f"{k!r}:{_constant(v)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    return None


def _tree(fn) -> ast.FunctionDef:
    src = textwrap.dedent(inspect.getsource(fn))
    node = ast.parse(src).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ArgumentTypeError(f"{fn!r} is not a function defined by def")
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    node.body = body or [ast.Pass()]
    node.name = "_"
    node.decorator_list = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.ImportFrom) and sub.level:
            # a relative import of a library module counts by its first component and the
            # names it imports: a module moved into a layer's package (``from .stats import
            # t_quantile`` -> ``from ..stats.inference import t_quantile``) keeps the fingerprint
            sub.module = (sub.module or "").split(".")[0] or None
            sub.level = 1
    return node


def _canonical(fn, seen: set) -> list[str]:
    # a decorated rule (functools.wraps: ``__wrapped__``) is read as the function it wraps: its
    # code, its module's globals; the decorator is not part of what the rule computes
    fn = inspect.unwrap(fn)
    if fn in seen:
        return []
    seen.add(fn)
    node = _tree(fn)
    parts = [ast.dump(node, annotate_fields=False, include_attributes=False)]
    glob = fn.__globals__
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in glob:
            value = glob[sub.id]
            text = _constant(value)
            if text is not None:
                parts.append(f"{sub.id}={text}")
            elif isinstance(value, types.FunctionType) and value.__module__ == fn.__module__:
                parts.extend(_canonical(value, seen))
        elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id in glob \
                and isinstance(glob[sub.value.id], types.ModuleType):
            value = getattr(glob[sub.value.id], sub.attr, None)
            text = _constant(value)
            if text is not None:
                parts.append(f"{sub.value.id}.{sub.attr}={text}")
            elif callable(value):
                parts.append(f"call {getattr(value, '__name__', sub.attr)}")
    return parts


def fingerprint(fn) -> str:
    """SHA-256 (hex, first 16 digits) of rule ``fn``'s own canonical text: the rule alone, with its
    module's helpers and its constants (the module docstring's last but one paragraph).

    >>> def r(ev): return ev["x"] > 0.1
    >>> def s(ev):
    ...     '''A docstring does not count.'''
    ...     return ev["x"] > 0.1   # nor does a comment
    >>> fingerprint(r) == fingerprint(s)
    True
    """
    if not isinstance(fn, types.FunctionType):
        raise ArgumentTypeError(f"fn must be a Python function (a rule), got {type(fn).__name__}")
    fn = inspect.unwrap(fn)     # a decorated rule counts as the rule it wraps (its decorator does not)
    if not isinstance(fn, types.FunctionType):
        raise ArgumentTypeError(f"fn must wrap a Python function (a rule), got {type(fn).__name__}")
    text = "\n".join(sorted(set(_canonical(fn, set()))))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------------
# a claim's fingerprint: the rule, the producers of its evidence, transitively, and the ledger
# ------------------------------------------------------------------------------------------

_LIB = "resdecay_lib"


def _in_lib(obj) -> bool:
    mod = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    return isinstance(mod, str) and (mod == _LIB or mod.startswith(_LIB + "."))


def _strip(node):
    """``node`` without its docstrings and bare string statements (which compute nothing), at
    every depth, and with every relative import read as in :func:`_tree`."""
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if isinstance(body, list):
            kept = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                            and isinstance(s.value.value, str))]
            if len(kept) != len(body):
                sub.body = kept or [ast.Pass()]
        if isinstance(sub, ast.ImportFrom) and sub.level:
            sub.module = (sub.module or "").split(".")[0] or None
            sub.level = 1
    return node


#: parsed trees by code object / class: the source of a function or class does not change in a
#: process, only which object a name holds
_TREES: dict = {}


#: {file name: {("def", first line) or ("class", qualified name): node}} of the modules read
_INDEX: dict = {}


#: a module's own attributes that say where it lies (``__file__``: the checkout's absolute path)
#: or which release it is (``__version__``, which the runs' provenance records), read by name
#: only: a fingerprint is the same in every clone and in every release that decides alike
_WHERE = frozenset({"__file__", "__path__", "__cached__", "__spec__", "__loader__", "__version__"})

#: the methods that change a dict, list or set in place
_MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "popitem", "clear", "update", "setdefault",
                       "add", "discard", "sort", "reverse"})


def _index(filename: str) -> dict:
    """Every function and class of the source file ``filename``, by the line its code starts on
    (its first decorator's, as ``co_firstlineno``) and by qualified name: one parse a file,
    where ``inspect.getsource`` would parse the module again for every class."""
    if filename not in _INDEX:
        out = {}
        try:
            tree = ast.parse("".join(linecache.getlines(filename)) or Path(filename).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])

        def visit(body, prefix):
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    out[("def", first)] = node
                    out[("class" if isinstance(node, ast.ClassDef) else "fn", prefix + node.name)] = node
                    inner = prefix + node.name + ("." if isinstance(node, ast.ClassDef) else ".<locals>.")
                    visit(node.body, inner)
                elif isinstance(node, (ast.If, ast.Try, ast.With)):
                    visit(getattr(node, "body", []) + getattr(node, "orelse", []), prefix)
        visit(tree.body, "")
        assigned = {}
        for node in tree.body:                # the module's own top-level assignments
            targets = (node.targets if isinstance(node, ast.Assign) else
                       [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
            for t in targets:
                if isinstance(t, ast.Name):
                    assigned[t.id] = node.value
        out["assigned"] = assigned
        # names some function of the module rebinds (``global _POOL``) or changes in place
        # (``_CORPUS_CACHE[key] = ...``, ``.append``, ``.update``, ...): state, not constants
        state = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Global):
                    state.update(node.names)
                elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                        and isinstance(node.value, ast.Name):
                    state.add(node.value.id)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name):
                    state.add(node.func.value.id)
        out["state"] = frozenset(state)
        _INDEX[filename] = out
    return _INDEX[filename]


def _source_node(obj):
    """The tree of function or class ``obj`` as its source file writes it, or None."""
    if isinstance(obj, types.FunctionType):
        code = obj.__code__
        node = _index(code.co_filename).get(("def", code.co_firstlineno))
        return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == obj.__name__ \
            else None
    mod = sys.modules.get(obj.__module__)
    filename = getattr(mod, "__file__", None)
    node = _index(filename).get(("class", obj.__qualname__)) if filename else None
    return node if isinstance(node, ast.ClassDef) else None


def _reparsed(obj, raw):
    """A second, independent tree of ``raw`` (the one :func:`_parsed` strips), parsed from its
    lines of source: faster than a deep copy."""
    filename = (obj.__code__.co_filename if isinstance(obj, types.FunctionType)
                else getattr(sys.modules.get(obj.__module__), "__file__", None))
    lines = linecache.getlines(filename) if filename else []
    first = min([raw.lineno] + [d.lineno for d in raw.decorator_list])
    try:
        node = ast.parse(textwrap.dedent("".join(lines[first - 1:raw.end_lineno]))).body[0]
    except (SyntaxError, IndexError):
        node = None
    if type(node) is not type(raw) or node.name != raw.name:
        node = copy.deepcopy(raw)
    return node


def _parsed(obj):
    """(tree, its stripped canonical dump) of a function (decorators dropped, name '_') or a class
    (decorators kept: ``@dataclass(frozen=True)`` makes its constructor; name '_')."""
    key = getattr(obj, "__code__", obj)
    if key in _TREES:
        return _TREES[key]
    raw = _source_node(obj)
    if raw is None:                       # not in a file's top levels (a lambda, a function made
        try:                              # at run time): its own source, if it has one
            raw = ast.parse(textwrap.dedent(inspect.getsource(obj))).body[0]
        except (OSError, TypeError, SyntaxError, IndexError):
            _TREES[key] = None
            return None
    if not isinstance(raw, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        _TREES[key] = None
        return None
    node = _reparsed(obj, raw)            # raw keeps its imports as written, to resolve them
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node.decorator_list = []
    else:                                 # a class: its skeleton; its methods are read as they are
        def skeleton(c):                  # now (:meth:`_Closure.node`), a replaced one included
            c = copy.copy(c)
            c.body = [b for b in c.body if not isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))] or [ast.Pass()]
            return c
        node, raw = skeleton(node), skeleton(raw)
    node.name = "_"
    _strip(node)
    _TREES[key] = (raw, ast.dump(node, annotate_fields=False, include_attributes=False))
    return _TREES[key]


class _Outside(str):
    """A name a function imports from outside the library, by its dotted name (not imported)."""


def _local_imports(nodes, module: str) -> dict:
    """{bound name: object} of the imports inside a function's or class's tree (``from
    ..stats.inference import t_quantile`` inside a rule), resolved against ``module``: the
    library's modules imported, any other by its dotted name only (:class:`_Outside`; importing
    ``transformers`` to read a name would cost seconds)."""
    out = {}
    package = module.rpartition(".")[0]
    for sub in nodes:
        if isinstance(sub, ast.ImportFrom):
            if sub.level:
                parts = package.split(".")
                base_name = ".".join(parts[:len(parts) - (sub.level - 1)] + ([sub.module] if sub.module else []))
            else:
                base_name = sub.module or ""
            if not (base_name == _LIB or base_name.startswith(_LIB + ".")):
                for a in sub.names:
                    out[a.asname or a.name] = _Outside(f"{base_name}.{a.name}")
                continue
            try:
                base = importlib.import_module(base_name)
            except ImportError:
                continue
            for a in sub.names:
                value = getattr(base, a.name, None)
                if value is None:
                    try:
                        value = importlib.import_module(f"{base.__name__}.{a.name}")
                    except ImportError:
                        continue
                out[a.asname or a.name] = value
        elif isinstance(sub, ast.Import):
            for a in sub.names:
                if a.name == _LIB or a.name.startswith(_LIB + "."):
                    try:
                        importlib.import_module(a.name)
                    except ImportError:
                        continue
                    out[a.asname or _LIB] = sys.modules[a.name if a.asname else _LIB]
                else:
                    out[a.asname or a.name.split(".")[0]] = _Outside(a.name if a.asname else a.name.split(".")[0])
    return out


def _value_text(value, depth: int = 0):
    """A canonical text for a module-level value a function reads: a constant's (see
    :func:`_constant`; also lists, sets, None and frozen records of constants), or None."""
    if isinstance(value, _Outside):
        return None
    if isinstance(value, PurePath):
        return f"path:{value.as_posix()}"
    text = _constant(value)
    if text is not None or depth > 4:
        return text
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        parts = [_value_text(v, depth + 1) for v in value]
        return None if None in parts else ("[" if isinstance(value, list) else "(") + ",".join(parts) + "]"
    if isinstance(value, (set, frozenset)):
        parts = [_value_text(v, depth + 1) for v in value]
        return None if None in parts else "{" + ",".join(sorted(parts)) + "}"
    if isinstance(value, Mapping):
        parts = {repr(k): _value_text(v, depth + 1) for k, v in value.items()}
        return None if None in parts.values() else "{" + ",".join(f"{k}:{v}" for k, v in sorted(parts.items())) + "}"
    if isinstance(getattr(value, "dtype", None), object) and callable(getattr(value, "tobytes", None)) \
            and hasattr(value, "shape") and type(value).__module__ == "numpy":
        return f"array{tuple(value.shape)}:{value.dtype}:{hashlib.sha256(value.tobytes()).hexdigest()[:16]}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = {f.name: _value_text(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)}
        if None not in parts.values():
            return f"{type(value).__qualname__}(" + ",".join(f"{k}={v}" for k, v in parts.items()) + ")"
    return None


def _code_objects(value, depth: int = 0) -> list:
    """The library's functions and classes held by a module-level value (itself, or inside a
    container of it: a registry ``{name: class}``), and the class of a library object."""
    if isinstance(value, types.ModuleType):
        return []
    if callable(value) and hasattr(value, "__wrapped__") and _in_lib(inspect.unwrap(value)):
        value = inspect.unwrap(value)
    if isinstance(value, (types.FunctionType, type)):
        return [value] if _in_lib(value) else []
    if isinstance(value, (types.MethodType, property, staticmethod, classmethod)):
        return _code_objects(getattr(value, "__func__", getattr(value, "fget", None)), depth)
    if depth > 3 or isinstance(value, (str, bytes, numbers.Number)):
        return []
    if isinstance(value, Mapping):
        return [o for v in list(value.values()) for o in _code_objects(v, depth + 1)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [o for v in value for o in _code_objects(v, depth + 1)]
    return [type(value)] if _in_lib(type(value)) else []


def _is_registry(module: str, name: str, value) -> bool:
    """Whether module-level ``name`` of ``module`` is a registry that other code fills at run
    time (``checks.DECLARED = {}``, filled by every ``@accepts``): a dict, list or set written as a
    display with another number of entries than it holds now. A registry's entries are what was
    imported, not what a function computes, so a fingerprint reads none of them."""
    if not isinstance(value, (dict, list, set)):
        return False
    node = None
    for mod in [sys.modules.get(module)] + [m for k, m in sorted(sys.modules.items()) if _in_lib(m)]:
        filename = getattr(mod, "__file__", None)   # where it is assigned, if imported (from m import X)
        if filename and getattr(mod, name, None) is value:
            node = _index(filename)["assigned"].get(name)
            if node is not None:
                break
    size = (len(node.keys) if isinstance(node, ast.Dict) else
            len(node.elts) if isinstance(node, (ast.List, ast.Set)) else None)
    return size is not None and size != len(value)


def _is_state(module: str, name: str) -> bool:
    """Whether module-level ``name`` of ``module`` is state that a function of the module rebinds
    (``global _POOL``: a pool made on first use) or changes in place (``_CORPUS_CACHE[key] =``,
    ``DECLARED[...] =``, ``.append``, ``.update``, ...). Its value depends on what ran before (a
    test that used the pool or loaded the corpus, a chapter that did not), so a fingerprint reads
    its name only, never its value. Today: ``training.data._CORPUS_CACHE``,
    ``checks.DECLARED``, ``book.evidence.DECLARED`` (and this module's own caches)."""
    filename = getattr(sys.modules.get(module), "__file__", None)
    return bool(filename) and name in _index(filename)["state"]


def _external(value) -> str | None:
    """The dotted name of a value from outside the library (numpy, scipy, torch, the standard
    library): its module's name, or its defining module and qualified name."""
    if isinstance(value, _Outside):
        return str(value)
    if isinstance(value, types.ModuleType):
        return value.__name__
    mod, qual = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(mod, str) and isinstance(qual, str) and not _in_lib(value):
        return f"{mod}.{qual}"
    return None


class _Closure:
    """The canonical parts of the library's functions and classes, and the edges between them,
    computed once per call of :func:`fingerprints` (a constant's value is read when the call
    reads it, so a changed constant is seen by the next call)."""

    def __init__(self):
        self.nodes: dict = {}        # object -> (parts, referenced objects)
        self.unresolved: set = set()

    def node(self, obj):
        if obj in self.nodes:
            return self.nodes[obj]
        self.nodes[obj] = ((), ())              # a cycle reads the node as seen
        parsed = _parsed(obj)
        if parsed is None:
            self.unresolved.add(f"{obj.__module__}.{obj.__qualname__} (no source)")
            self.nodes[obj] = ((f"nosource {obj.__module__}.{obj.__qualname__}",), ())
            return self.nodes[obj]
        tree, dump = parsed
        glob = (obj.__globals__ if isinstance(obj, types.FunctionType)
                else vars(sys.modules[obj.__module__]))
        walked = list(ast.walk(tree))
        local = _local_imports([n for n in walked if isinstance(n, (ast.Import, ast.ImportFrom))], obj.__module__)
        parts, refs = [dump], []

        def resolve(name):
            if name in local:
                return True, local[name]
            if name in glob:
                return True, glob[name]
            return False, None

        def dotted(expr):
            """The object a name or a dotted name through modules stands for, or None."""
            chain = []
            while isinstance(expr, ast.Attribute):
                chain.append(expr.attr)
                expr = expr.value
            if not isinstance(expr, ast.Name):
                return None
            found, value = resolve(expr.id)
            for attr in reversed(chain):
                if not (found and isinstance(value, types.ModuleType)):
                    return None
                value = getattr(value, attr, None)
            return value if found else None

        # an alias bound inside the function (``ta = training_analysis``) is read as what it names
        for sub in walked:
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                pairs = ([(sub.targets[0], sub.value)] if isinstance(sub.targets[0], ast.Name) else
                         list(zip(sub.targets[0].elts, sub.value.elts))
                         if isinstance(sub.targets[0], ast.Tuple) and isinstance(sub.value, ast.Tuple)
                         and len(sub.targets[0].elts) == len(sub.value.elts) else [])
                for target, expr in pairs:
                    if isinstance(target, ast.Name) and isinstance(expr, (ast.Name, ast.Attribute)):
                        value = dotted(expr)
                        if value is not None and _in_lib(value) and \
                                isinstance(value, (types.ModuleType, types.FunctionType, type)):
                            local[target.id] = value

        def read(text, value, module=obj.__module__, name=None):
            if (text if name is None else name) in _WHERE:      # where the checkout lies, not code
                parts.append(f"{text}=where")
                return
            if _is_state(module, text if name is None else name):
                parts.append(f"{text}=state")
                return
            if _is_registry(module, text if name is None else name, value):
                parts.append(f"{text}=registry")
                return
            const = _value_text(value)
            if const is not None:
                parts.append(f"{text}={const}")
                return
            code = _code_objects(value)
            refs.extend(code)
            if not code:
                ext = _external(value)
                if ext is not None:
                    parts.append(f"{text}=ext {ext}")

        for sub in walked:
            if isinstance(sub, ast.Name):
                found, value = resolve(sub.id)
                if found and not (isinstance(value, types.ModuleType) and _in_lib(value)):
                    read(sub.id, value)     # a library module is read through its attributes
            elif isinstance(sub, ast.Attribute):
                chain, base = [sub.attr], sub.value
                while isinstance(base, ast.Attribute):
                    chain.append(base.attr)
                    base = base.value
                if not isinstance(base, ast.Name):
                    continue
                found, value = resolve(base.id)
                if not (found and isinstance(value, types.ModuleType) and _in_lib(value)):
                    continue
                text = base.id
                for attr in reversed(chain):       # a.b.c: through the library's modules
                    text += "." + attr
                    if not hasattr(value, attr):
                        try:         # a submodule that no import has loaded yet
                            importlib.import_module(f"{value.__name__}.{attr}")
                        except ImportError:
                            pass
                    if not hasattr(value, attr):
                        self.unresolved.add(f"{text} in {obj.__module__}.{obj.__qualname__}")
                        break
                    owner, value = value, getattr(value, attr)
                    if not isinstance(value, types.ModuleType):
                        read(text, value, owner.__name__, attr)
                        break
                    if not _in_lib(value):
                        read(text, value)
                        break
        if isinstance(obj, type):
            kinds = []
            for name, member in vars(obj).items():
                kind = {types.FunctionType: "def", property: "property", staticmethod: "staticmethod",
                        classmethod: "classmethod"}.get(type(member))
                fn = getattr(member, "fget", getattr(member, "__func__", member))
                fn = inspect.unwrap(fn) if isinstance(fn, types.FunctionType) else fn
                if kind is None or not isinstance(fn, types.FunctionType) or not _in_lib(fn) \
                        or fn.__code__.co_filename.startswith("<"):     # a dataclass's generated methods
                    continue
                kinds.append(f"{name}:{kind}")
                refs.append(fn)
                if isinstance(member, property):
                    refs.extend(f for f in (member.fset, member.fdel) if isinstance(f, types.FunctionType))
            parts.append("members " + ",".join(sorted(kinds)))
        self.nodes[obj] = (tuple(parts), tuple(dict.fromkeys(refs)))
        return self.nodes[obj]

    def parts(self, roots) -> set:
        """Every canonical part of ``roots`` and of everything they reach in the library."""
        out, seen, todo = set(), set(), [r for r in roots]
        while todo:
            obj = todo.pop()
            if obj in seen:
                continue
            seen.add(obj)
            own, refs = self.node(obj)
            out.update(own)
            todo.extend(refs)
        return out

    def reach(self, roots) -> set:
        """Every function and class of the library that ``roots`` reach (themselves included)."""
        seen, todo = set(), list(roots)
        while todo:
            obj = todo.pop()
            if obj not in seen:
                seen.add(obj)
                todo.extend(self.node(obj)[1])
        return seen


def _claim_roots(claim) -> list:
    """What decides ``claim``: its rule, the producer of each evidence it reads (needed and
    optional, :mod:`resdecay_lib.book.producers`) and :class:`~resdecay_lib.book.verdicts.Claim`
    (``Claim.verdict``: the missing and NaN rules, the evidence a rule may read)."""
    from . import producers
    from .verdicts import Claim
    found = dict.fromkeys(producers.producer(str(n)) for n in (*claim.needs, *claim.optional))
    return [inspect.unwrap(claim.rule), *found, Claim]


def canonical_text(claim, closure: "_Closure | None" = None) -> str:
    """The canonical text of ``claim``'s fingerprint (see the module docstring): sorted, one part
    a line. ``closure``: a :class:`_Closure` to share between claims (one per call of
    :func:`fingerprints`)."""
    from .verdicts import Claim
    if not isinstance(claim, Claim):
        raise ArgumentTypeError(f"claim must be a Claim (the ledger's), got {type(claim).__name__} {show(claim)}")
    closure = _Closure() if closure is None else closure
    parts = closure.parts(_claim_roots(claim))
    parts.add(f"rule {fingerprint(claim.rule)}")
    parts.add("needs " + ",".join(sorted(claim.keys)))
    parts.add("optional " + ",".join(sorted(claim.optional_keys)))
    return "\n".join(sorted(parts))


def claim_fingerprint(claim, closure: "_Closure | None" = None) -> str:
    """SHA-256 (hex, first 16 digits) of :func:`canonical_text` of ``claim``."""
    return hashlib.sha256(canonical_text(claim, closure).encode()).hexdigest()[:16]


def code_fingerprint(*objs) -> str:
    """SHA-256 (hex, first 16 digits) of the canonical parts of functions or classes ``objs`` and
    of everything they reach in the library (the parts of a claim's text; module docstring).

    >>> def r(ev): return ev["x"] > 0.1
    >>> def s(ev):
    ...     '''A docstring does not count.'''
    ...     return ev["x"] > 0.1   # nor does a comment
    >>> code_fingerprint(r) == code_fingerprint(s)
    True
    """
    for o in objs:
        if not isinstance(o, (types.FunctionType, type)):
            raise ArgumentTypeError(f"objs must be functions or classes, got {type(o).__name__} {show(o)}")
    text = "\n".join(sorted(_Closure().parts([inspect.unwrap(o) if isinstance(o, types.FunctionType) else o
                                               for o in objs])))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _claims(claims) -> list:
    """``claims`` checked (a list of :class:`~resdecay_lib.book.verdicts.Claim`), the ledger's by default."""
    from . import ledger
    from .verdicts import Claim
    return list(ledger.CLAIMS) if claims is None else check_items("claims", claims, Claim, "a Claim")


def fingerprints(claims=None) -> dict[str, str]:
    """{claim id: its fingerprint} (:func:`claim_fingerprint`: the rule, the producers of its
    evidence and what they call, transitively, and ``Claim.verdict``) for ``claims`` (default:
    the ledger's). What the registry records and :func:`mismatches` compares."""
    closure = _Closure()
    return {c.id: claim_fingerprint(c, closure) for c in _claims(claims)}


def rule_fingerprints(claims=None) -> dict[str, str]:
    """{claim id: :func:`fingerprint` of its rule alone} for ``claims`` (default: the ledger's):
    what a record committed with a rule (``results/predictions/front.json``) holds."""
    return {c.id: fingerprint(c.rule) for c in _claims(claims)}


def unresolved(claims=None) -> list[str]:
    """What the claims' closures name but cannot follow statically (an attribute a module lacks,
    code without source), sorted: the report of :func:`fingerprints`' blind spots."""
    closure = _Closure()
    for c in _claims(claims):
        closure.parts(_claim_roots(c))
    return sorted(closure.unresolved)




def read_registry(root=".") -> dict:
    """The registry ``root/results/preregistration.json``. ``root``: the repository's folder (a
    non-empty str or ``os.PathLike``; :class:`~resdecay_lib.checks.ArgumentTypeError`
    otherwise); a root without the registry, or a registry that is not a JSON object, raises
    ``ValueError`` naming the path."""
    fs = os.fspath(root) if isinstance(root, os.PathLike) else root
    if not isinstance(fs, str):
        raise ArgumentTypeError(f"root must be the repository's folder (a non-empty str or os.PathLike), "
                                f"got {type(root).__name__} {show(root)}")
    if not fs.strip() or "\x00" in fs:
        raise ValueError(f"root must be the repository's folder (a non-empty path without NUL), got {show(root)}")
    path = Path(fs) / REGISTRY
    if not path.is_file():
        raise ValueError(f"root {fs!r} has no registry of declared rules: {str(path)!r} is not a file")
    try:
        registry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{str(path)!r} cannot be read as JSON: {type(exc).__name__}: {one_line(exc)}"[:300]) from None
    if not isinstance(registry, dict):
        raise ValueError(f"{str(path)!r} is not a registry: its JSON is {type(registry).__name__}, not an object")
    return registry


def _registered(registry) -> dict[str, str]:
    """{claim id: registered fingerprint} of ``registry`` (read_registry's), checked."""
    if not isinstance(registry, Mapping):
        raise ArgumentTypeError(f"registry must be a dict (read_registry's), got {type(registry).__name__} {show(registry)}")
    claims = registry.get("claims", {})
    if not isinstance(claims, Mapping):
        raise ValueError(f"registry['claims'] must be a dict {{claim id: declaration}}, got {show(claims)}")
    for k, v in claims.items():
        if not isinstance(k, str) or not isinstance(v, Mapping) or not isinstance(v.get("fingerprint"), str):
            raise ValueError(f"registry['claims'][{k!r}] must be a declaration with a 'fingerprint' string, got {show(v)}")
    return {k: v["fingerprint"] for k, v in claims.items()}


def mismatches(registry: dict, current: dict[str, str] | None = None) -> dict[str, tuple]:
    """{claim id: (registered, current)} for every claim whose rule changed since it was
    declared, or that one side lacks (None for the missing side). ``registry``: a dict as
    :func:`read_registry` returns it; ``current``: {claim id: fingerprint} (default: the
    ledger's, :func:`fingerprints`)."""
    reg = _registered(registry)
    if current is not None and (not isinstance(current, Mapping) or not all(isinstance(k, str) for k in current)):
        raise ArgumentTypeError(f"current must be a dict {{claim id: fingerprint}} (fingerprints()'s), "
                                f"got {type(current).__name__} {show(current)}")
    current = fingerprints() if current is None else current
    return {k: (reg.get(k), current.get(k)) for k in sorted(set(reg) | set(current))
            if reg.get(k) != current.get(k)}


def reading_mismatches(registry: dict) -> dict[str, tuple]:
    """{claim id: (registered, declared now)} for every claim whose confirmatory reading
    (:data:`resdecay_lib.book.claims.CONFIRMATORY_NEEDS`: the evidence names its rule reads there)
    differs from the ``confirmatory_needs`` the registry recorded with its fingerprint, or that one
    side lacks (None for the missing side). The fingerprint covers the rule and the producers of
    every evidence, which both readings share, but not which names each reading reads; this is
    the check that does (``tools/preregister.py`` records them)."""
    from .claims import CONFIRMATORY_NEEDS
    _registered(registry)
    reg = {k: tuple(v["confirmatory_needs"]) for k, v in registry.get("claims", {}).items()
           if isinstance(v.get("confirmatory_needs"), list)}
    now = {k: tuple(map(str, v)) for k, v in CONFIRMATORY_NEEDS.items()}
    return {k: (reg.get(k), now.get(k)) for k in sorted(set(reg) | set(now)) if reg.get(k) != now.get(k)}
