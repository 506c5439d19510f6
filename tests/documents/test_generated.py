"""The one write-or-check of the generating tools (tools/generated.py)."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import generated  # noqa: E402  (tools/generated.py)


def _write(path, text, check):
    return generated.write_or_check(path, text, check=check, wrote="WROTE", stale="STALE")


def test_writes_when_absent_or_different_and_leaves_an_identical_file_untouched(tmp_path, capsys):
    path = tmp_path / "page.md"
    assert _write(path, "one\n", check=False) == 0
    assert path.read_text(encoding="utf-8") == "one\n" and "WROTE" in capsys.readouterr().out
    assert _write(path, "two\n", check=False) == 0
    assert path.read_text(encoding="utf-8") == "two\n"
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    capsys.readouterr()
    assert _write(path, "two\n", check=False) == 0
    assert path.stat().st_mtime_ns == 1_000_000_000 and "WROTE" not in capsys.readouterr().out


def test_check_writes_nothing_and_fails_only_when_stale(tmp_path, capsys):
    path = tmp_path / "page.md"
    assert _write(path, "new\n", check=True) == 1 and not path.exists()
    assert "STALE" in capsys.readouterr().err
    path.write_text("old\n", encoding="utf-8")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    assert _write(path, "new\n", check=True) == 1
    assert path.read_text(encoding="utf-8") == "old\n" and path.stat().st_mtime_ns == 1_000_000_000
    capsys.readouterr()
    assert _write(path, "old\n", check=True) == 0 and "STALE" not in capsys.readouterr().err


def test_the_command_line_is_an_optional_check_flag():
    assert generated.wants_check([]) is False and generated.wants_check(["--check"]) is True
    with pytest.raises(SystemExit):
        generated.wants_check(["--chekc"])
