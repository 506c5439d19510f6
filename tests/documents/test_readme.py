"""Every code block of the README runs as written.

A reader copies the README's blocks before reading anything else, so each is executed here
exactly as it stands: the Python blocks as a script, in a fresh interpreter, from the
repository's root, offline (``HF_HUB_OFFLINE=1``); each ``.venv/bin/resdecay`` line of a shell
block as a command. A ``make`` line would rebuild the book inside the test suite that it
runs, so it is checked by ``make -n`` instead: the target exists and its recipe parses.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


def _shell_lines() -> list[str]:
    lines = []
    for block in _blocks("bash"):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command:
                lines.append(command)
    return lines


def test_the_readme_has_a_quick_start_of_shell_and_python_blocks():
    assert _shell_lines(), "the README's quick start has no shell block"
    assert _blocks("python"), "the README has no Python block measuring a model"
    fenced = re.findall(r"^```(\w*)$", README.read_text(encoding="utf-8"), re.M)
    opening = fenced[::2]
    unchecked = [lang or "(none)" for lang in opening if lang not in ("bash", "python")]
    assert not unchecked, f"README blocks no test runs: {unchecked}"


@pytest.mark.parametrize("command", [c for c in _shell_lines() if c.startswith("make ")])
def test_each_make_line_of_the_readme_names_a_target_that_exists(command):
    out = subprocess.run(["make", "-n", *shlex.split(command)[1:]], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, f"{command!r}: {out.stderr.strip()}"


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in _shell_lines() if c.startswith(".venv/bin/resdecay ")])
def test_each_command_line_of_the_readme_runs_as_written(command):
    out = subprocess.run(shlex.split(command), cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, f"{command!r} exited {out.returncode}: {out.stderr.strip()[-2000:]}"
    assert "theorem:" in out.stdout, f"{command!r} printed no exponent against the theorem: {out.stdout[-1000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_each_python_block_of_the_readme_runs_as_written(index):
    code = _blocks("python")[index]
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, f"README Python block {index} failed: {out.stderr.strip()[-2000:]}"
