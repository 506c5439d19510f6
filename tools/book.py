"""Build the book from its stored outputs, and drive headless Chromium over it.

Shared by ``tools/pdf.py`` (``make pdf``), ``tests/documents/test_browser.py`` and ``tests/documents/test_pdf.py``.
Nothing here executes a notebook: the book is built from the outputs stored in
``chapters/*.ipynb`` (``tools/stored_config.py``), strictly (``-W -n --keep-going``).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent

#: the line that installs the browser on Debian (CI runs as root)
INSTALL_HINT = "apt-get update && apt-get install -y chromium   (or run: bash tools/ensure_chromium.sh)"

#: flags for a quiet, offline, throw-away headless Chromium (checked on this kind of machine)
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
    # every host name resolves to nothing, so no request can leave the machine
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
]


def chromium() -> str | None:
    """Path of a Chromium executable, or None. ``$CHROMIUM`` overrides the search."""
    if os.environ.get("CHROMIUM"):
        return shutil.which(os.environ["CHROMIUM"])
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def require_chromium() -> None:
    """In a test: skip when Chromium is missing, with the install line; fail under ``CI=true``,
    where a missing browser means the set-up is broken, not that the test does not apply."""
    import pytest
    if chromium() is None:
        message = f"headless Chromium not found; install it with: {INSTALL_HINT}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def run_chromium(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """Run headless Chromium with ``CHROMIUM_FLAGS`` + ``args`` in a fresh profile."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError(f"no chromium found; install it: {INSTALL_HINT}")
    with tempfile.TemporaryDirectory(prefix="resdecay-chromium-") as profile:
        return subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)


def build(out: pathlib.Path, builder: str = "html") -> pathlib.Path:
    """Build the book from stored outputs into ``out``; return the folder of the pages.

    ``builder`` is ``html`` (one page per file) or ``singlehtml`` (the whole book on one
    page, for the PDF). Strict: a warning fails the build (``RuntimeError`` with the log).
    """
    if builder not in ("html", "singlehtml"):
        raise ValueError(f"builder must be 'html' or 'singlehtml', got {builder!r}")
    out = pathlib.Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = out / "_config_stored.yml"
    subprocess.run([str(BIN / "python"), str(ROOT / "tools" / "stored_config.py"),
                    str(ROOT / "_config.yml"), str(config)], check=True)
    cmd = [str(BIN / "jupyter-book"), "build", "-W", "-n", "--keep-going", "--all",
           "--builder", builder, "--config", str(config), "--path-output", str(out), str(ROOT)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"book build failed ({' '.join(cmd)}):\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}")
    return out / "_build" / builder
