"""The book's API page is the library's docstrings as they are (tools/api_page.py)."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import api_page  # noqa: E402  (tools/api_page.py)


def test_the_api_page_is_the_docstrings_as_they_are_now():
    assert api_page.main(["--check"]) == 0, "api.md is stale: run python tools/api_page.py"


def test_the_api_page_lists_every_call_of_a_measurement_with_its_signature():
    text = (ROOT / "api.md").read_text(encoding="utf-8")
    for _, names in api_page.API:
        for name in names:
            assert f"### `{name}`" in text
    assert "def residual_stream(" in text and "def exponent(" in text   # the signatures, as text blocks


def test_the_api_page_is_in_the_book():
    assert "- file: api" in (ROOT / "_toc.yml").read_text(encoding="utf-8")


def test_every_example_on_the_api_page_runs_as_written():
    """Each ``python`` block of the page is a docstring's doctest; it runs here as the page
    prints it, in the namespace of the module it documents, and gives the printed output."""
    import doctest
    import importlib
    import re
    text = (ROOT / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^Example \(`([\w.]+)`\):\n\n```python\n(.*?)^```", text, re.S | re.M)
    assert blocks, "the API page shows no example"
    assert len(blocks) == len(re.findall(r"^```python$", text, re.M)), "a python block that is not an example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for module, code in blocks:
        test = doctest.DocTestParser().get_doctest(code, dict(vars(importlib.import_module(module))),
                                                   f"api.md:{module}", "api.md", 0)
        assert runner.run(test).failed == 0, f"an example of {module} on api.md fails"
