"""The book's API page is the library's docstrings as they are (tools/api_page.py)."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import api_page  # noqa: E402  (tools/api_page.py)


def test_the_api_page_is_the_docstrings_as_they_are_now():
    assert api_page.main(["--check"]) == 0, "api.md is stale: run python tools/api_page.py"


def test_the_api_page_lists_every_call_of_a_measurement_with_its_signature():
    text = (ROOT / "api.md").read_text(encoding="utf-8")
    for _, names in api_page.API:
        for name in names:
            assert f"### `{name}`" in text
    assert "def residual_stream(" in text and "def exponent(" in text


def test_the_api_page_is_in_the_book():
    assert "- file: api" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
