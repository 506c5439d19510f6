"""The appendix's recipes recompute the headline numbers from the stored JSON with numpy alone,
and print what the chapters glued (recipes.md)."""
import contextlib
import io
import pathlib
import re

import pytest

from resdecay_lib.book import evidence as E, ledger

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _blocks():
    return re.findall(r"```python\n(.*?)```", (ROOT / "recipes.md").read_text(encoding="utf-8"), re.S)


def _run(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "recipes.md", "exec"), {"__name__": "recipe"})   # noqa: S102 -- the book's own recipe
    return out.getvalue()


def test_every_recipe_imports_nothing_but_the_standard_library_and_numpy():
    for code in _blocks():
        mods = re.findall(r"^\s*(?:import|from)\s+([\w.]+)", code, re.M) + \
            [m for line in re.findall(r"^\s*import\s+(.+)$", code, re.M) for m in re.split(r",\s*", line)]
        assert {m.split(" ")[0].split(".")[0] for m in mods} <= {"json", "glob", "re", "tomllib", "numpy"}, mods


def test_the_recipes_print_the_numbers_the_chapters_glued(monkeypatch):
    ev = ledger.read_evidence(ROOT / "chapters")
    text = "".join(_run(code, monkeypatch) for code in _blocks())
    got = lambda pat: [float(x) for x in re.search(pat, text).groups()]   # noqa: E731
    # the theorem over k = 2..24 in the trained runs' (seed) and the initial runs' (embedding) convention
    assert got(r"seed convention: (-?[\d.]+)")[0] == pytest.approx(ev[E.TRAINED_REF_PRE_LN], abs=5e-4)
    assert got(r"embedding-counted: (-?[\d.]+)")[0] == pytest.approx(ev[E.INIT_REF_PRE_LN], abs=5e-4)
    for step, e in ((0, E.INIT_EXP_TRAINEDRUNS_PRE_LN), (3600, E.TRAINED_EXP_PRE_LN)):
        m, lo, hi = got(rf"step {step}: exponent (-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]")
        assert (m, lo, hi) == pytest.approx((ev[e], ev[e.lo], ev[e.hi]), abs=5e-4)
    for model, key in (("smollm2-135m", "smollm2"), ("qwen2.5-coder-0.5b", "qwen")):
        assert got(rf"{re.escape(model)}: exponent (-?[\d.]+)")[0] == pytest.approx(ev[E.PRETRAINED_EXP[key]], abs=5e-4)
    assert got(r"slope (-?[\d.]+) nats/char")[0] == pytest.approx(ev[E.DEPTH_SLOPE_PRE_LN], abs=5e-4)
