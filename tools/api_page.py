"""Write ``api.md``, the book's API page, from the docstrings of the calls a reader needs to
measure their own model.

The page is generated, never edited by hand: ``python tools/api_page.py`` rewrites it, and
``tests/documents/test_api_page.py`` fails when it is stale (as the labels page and the README's findings
do). Each entry is the call's signature and its docstring, printed verbatim in a literal block,
so the strict build has no reference in it to resolve.

Usage: python tools/api_page.py [--check]
"""
from __future__ import annotations

import importlib
import inspect
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
import generated  # noqa: E402  (tools/generated.py: write, or --check)
PAGE = ROOT / "api.md"

#: (module, names): the calls of a measurement, in the order a reader makes them
API = (
    ("resdecay_lib.nn.pretrained", ("load", "blocks_of", "sample_inputs")),
    ("resdecay_lib.nn.probe", ("residual_stream", "layer_change", "measure", "LayerChange", "exponent",
                               "rms_change", "gram")),
    ("resdecay_lib.stats.fit", ("power_law",)),
    ("resdecay_lib.stats.exponents", ("rho", "convention", "reference_exponent")),
    ("resdecay_lib.maths.theory", ("omega_sq",)),
)

HEAD = """# Appendix: the API for measuring your own model

This page is generated from the library's docstrings (`tools/api_page.py`; a test fails when it
is stale). It lists the calls a measurement makes, in the order it makes them: load a model and
its residual blocks, capture the stream, measure each block's change, fit its exponent against
the theorem's over the same range and convention. The README's quick start shows
them together; every other module is documented in its own docstrings, and
`resdecay_lib/__init__.py` maps the layers.
"""


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _split(doc: str) -> tuple[str, str]:
    """A docstring's prose and its doctest examples (the ``>>>`` lines, their ``...``
    continuations and expected outputs), each as text; the examples run as they stand."""
    prose, examples, in_example = [], [], False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_example = True
        elif in_example and not stripped:
            in_example = False
        (examples if in_example else prose).append(line)
    return "\n".join(prose).rstrip(), "\n".join(l.strip() if l.strip().startswith((">>>", "...")) else l
                                                    for l in examples).strip()


def page() -> str:
    """The page's text."""
    out = [HEAD]
    for modname, names in API:
        mod = importlib.import_module(modname)
        out.append(f"\n## `{modname}`\n")
        summary = (inspect.getdoc(mod) or "").split("\n\n")[0].replace("\n", " ")
        if summary:
            out.append("```text\n" + summary + "\n```\n")
        for name in names:
            obj = getattr(mod, name)
            kind = "class" if inspect.isclass(obj) else "def"
            doc = inspect.getdoc(obj) or "(no docstring)"
            prose, examples = _split(doc)
            out.append(f"\n### `{name}`\n\n```text\n{kind} {name}{_signature(obj)}\n```\n\n```text\n{prose}\n```\n")
            if examples:
                # the docstring's doctest, as a block a reader can run (tests/documents/test_api_page.py runs it)
                out.append(f"\nExample (`{modname}`):\n\n```python\n{examples}\n```\n")
    return "".join(out)


def main(argv=None) -> int:
    check = generated.wants_check(argv, __doc__)
    return generated.write_or_check(PAGE, page(), check=check,
                                    wrote=f"wrote {PAGE} ({sum(len(n) for _, n in API)} calls)",
                                    stale="api.md is stale: run python tools/api_page.py")


if __name__ == "__main__":
    sys.exit(main())
