"""Fingerprints of the ledger's rules, so that a verdict can be shown to use the rule that was
declared before its data were read.

A rule's fingerprint is the SHA-256 of a canonical text made of

* the rule's own code (a decorated rule's: :func:`inspect.unwrap`, and its decorators are
  dropped from its tree): its abstract syntax tree (``ast.dump``) without its name and docstring,
  so that a comment, a docstring, the formatting or a move to another module leave it as it is,
  while any change to what it computes changes it;
* recursively, the same for every helper function it calls by a bare name that is defined in
  the rule's own module (the helpers move with the rules);
* the value of every constant it reads by a bare name or as ``module.NAME`` (numbers, strings,
  tuples, and the names of declared evidence; a dict of evidence by its keys and names);
* the dotted names of library functions of other modules it calls (``stats.t_quantile``): by
  name only, since their numerics are tested on their own and may change their implementation.
* a relative import inside the rule by its first component and its names only (``from
  ..stats.inference import t_quantile`` reads as ``from .stats import t_quantile``), so that
  moving a module into a layer's package leaves every fingerprint as it was.

:data:`REGISTRY` (``results/preregistration.json``) holds, per claim, the fingerprint at the
commit that declared it, with the claim's sentence, primary statistic, rule and margin. The
verdict chapter asserts that every current fingerprint equals the registered one.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
import json
import numbers
import os
import textwrap
import types
from collections.abc import Mapping
from pathlib import Path
from ..checks import ArgumentTypeError, one_line, show

__all__ = ["fingerprint", "fingerprints", "REGISTRY", "read_registry", "mismatches"]

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
    """SHA-256 (hex, first 16 digits) of the canonical text of rule ``fn`` (see the module docstring).

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


def fingerprints(claims=None) -> dict[str, str]:
    """{claim id: fingerprint of its rule} for ``claims`` (default: the ledger's)."""
    from . import ledger
    return {c.id: fingerprint(c.rule) for c in (ledger.CLAIMS if claims is None else claims)}


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
