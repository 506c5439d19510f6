"""``make book``'s executor (tools/execute_book.py): the copy it executes in, the order it runs the
chapters in, and the durations it orders them by."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import execute_book  # noqa: E402  (tools/execute_book.py)


def _notebook(path, *spans):
    """A notebook whose cells record the (start, reply) times ``spans``."""
    cells = [{"cell_type": "code", "metadata": {"execution": {"iopub.execute_input": a, "shell.execute_reply": b}},
              "source": [], "outputs": []} for a, b in spans]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_notebooks_duration_runs_from_its_first_cells_start_to_its_last_reply(tmp_path):
    nb = _notebook(tmp_path / "a.ipynb", ("2026-12-03T12:00:00.000Z", "2026-12-03T12:00:05.000Z"),
                   ("2026-12-03T12:00:06.000Z", "2026-12-03T12:01:40.500Z"))
    assert execute_book.stored_seconds(nb) == 100.5
    assert execute_book.stored_seconds(_notebook(tmp_path / "b.ipynb")) == 0.0


def test_the_chapters_run_longest_first_and_the_ledger_and_preface_after_them():
    names = ["chapters/01_a.ipynb", "chapters/06_b.ipynb", "chapters/09_c.ipynb", "chapters/10_verdict.ipynb",
             "intro.ipynb", "chapters/02_d.ipynb"]
    seconds = {"chapters/06_b.ipynb": 200.0, "chapters/09_c.ipynb": 300.0, "chapters/01_a.ipynb": 5.0,
               "chapters/10_verdict.ipynb": 999.0}
    assert execute_book.schedule(names, seconds) == [
        "chapters/09_c.ipynb", "chapters/06_b.ipynb", "chapters/01_a.ipynb", "chapters/02_d.ipynb"]
    assert execute_book.LAST == ("chapters/10_verdict.ipynb", "intro.ipynb")


def test_the_copy_holds_fresh_notebooks_and_links_the_rest(tmp_path):
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / "results").mkdir()
    (book / "_toc.yml").write_text("root: intro\n")
    (book / ".git").mkdir()
    (book / "_build").mkdir()
    _notebook(book / "intro.ipynb")
    _notebook(book / "chapters" / "01_a.ipynb")
    (book / "chapters" / "notes.md").write_text("x")
    dest = tmp_path / "out"
    execute_book.mirror(book, dest, ["intro.ipynb", "chapters/01_a.ipynb"])
    assert not (dest / "intro.ipynb").is_symlink() and not (dest / "chapters" / "01_a.ipynb").is_symlink()
    assert (dest / "intro.ipynb").read_text() == (book / "intro.ipynb").read_text()
    assert (dest / "_toc.yml").is_symlink() and (dest / "results").resolve() == (book / "results").resolve()
    assert (dest / "chapters" / "notes.md").is_symlink() and not (dest / "chapters").is_symlink()
    assert not (dest / ".git").exists() and not (dest / "_build").exists()
    # a second copy replaces the first: nothing executed before survives
    (dest / "intro.ipynb").write_text("executed")
    execute_book.mirror(book, dest, ["intro.ipynb", "chapters/01_a.ipynb"])
    assert (dest / "intro.ipynb").read_text() == (book / "intro.ipynb").read_text()


def test_the_book_has_the_notebooks_that_run_last():
    names = execute_book.notebooks(ROOT)
    assert all(n in names for n in execute_book.LAST) and "chapters/09_pretrained.ipynb" in names


def test_make_book_runs_the_executor():
    assert "tools/execute_book.py" in (ROOT / "Makefile").read_text()


def test_jobs_below_one_is_refused_before_anything_runs(capsys, tmp_path, monkeypatch):
    import pytest
    monkeypatch.setattr(execute_book, "mirror", lambda *a: pytest.fail("the copy was made"))
    with pytest.raises(SystemExit) as stop:
        execute_book.main(["--jobs", "0"])
    assert stop.value.code == 2 and "--jobs must be an integer >= 1, got 0" in capsys.readouterr().err
