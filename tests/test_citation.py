"""Citing the book (_ext/citation.py): one repository URL setting, CITATION.cff and CITATION.bib
that carry it and the version, the commit in the built copies, and the one-line citation."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import types

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "_ext"))
import citation  # noqa: E402  (_ext/citation.py)

VERSION = re.search(r'__version__ = "([^"]+)"', (ROOT / "resdecay_lib" / "__init__.py").read_text()).group(1)


def test_the_repository_url_is_set_once_in_the_config():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert len(re.findall(r"^\s*" + citation.SETTING + r":", config, re.M)) == 1
    assert citation.repository_url().startswith("https://")


def test_citation_cff_and_bib_carry_the_url_setting_and_the_version():
    """Fails when CITATION.cff or CITATION.bib is stale. Fix: python _ext/citation.py"""
    url = citation.repository_url()
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["repository-code"] == url
    assert str(cff["version"]) == VERSION == str(cff["preferred-citation"]["version"])
    bib = (ROOT / "CITATION.bib").read_text(encoding="utf-8")
    assert re.search(r"^\s*url\s*=\s*\{" + re.escape(url) + r"\}", bib, re.M)
    assert re.search(r"^\s*version\s*=\s*\{" + re.escape(VERSION) + r"\}", bib, re.M)
    assert "commit" not in cff, "a committed file cannot hold its own commit: the build adds it"
    assert citation.write_repository_files(ROOT, check=True) == [], "run python _ext/citation.py"


def test_changing_the_one_setting_changes_both_files(tmp_path):
    for name in ("_config.yml", "CITATION.cff", "CITATION.bib"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "resdecay_lib").mkdir()
    shutil.copy(ROOT / "resdecay_lib" / "__init__.py", tmp_path / "resdecay_lib" / "__init__.py")
    config = tmp_path / "_config.yml"
    config.write_text(re.sub(r"(" + citation.SETTING + r":\s*)\"[^\"]*\"", r'\1"https://git.example.org/me/resdecay"',
                             config.read_text(encoding="utf-8")), encoding="utf-8")
    assert sorted(citation.write_repository_files(tmp_path, check=True)) == ["CITATION.bib", "CITATION.cff"]
    citation.write_repository_files(tmp_path)
    assert yaml.safe_load((tmp_path / "CITATION.cff").read_text())["repository-code"] == "https://git.example.org/me/resdecay"
    assert "url     = {https://git.example.org/me/resdecay}" in (tmp_path / "CITATION.bib").read_text()
    assert citation.write_repository_files(tmp_path, check=True) == []


def test_the_build_writes_citation_files_with_the_commit(tmp_path):
    sha = citation.commit(ROOT)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert sha == head and re.fullmatch(r"[0-9a-f]{40}", sha)
    app = types.SimpleNamespace(srcdir=str(ROOT), outdir=str(tmp_path), builder=types.SimpleNamespace(format="html"))
    citation._write_built(app, None)
    cff = yaml.safe_load((tmp_path / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["commit"] == sha and cff["repository-code"] == citation.repository_url()
    committed = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert {k: v for k, v in cff.items() if k != "commit"} == committed
    assert f"commit {sha}" in (tmp_path / "CITATION.bib").read_text(encoding="utf-8")


def test_cite_line_is_one_line_with_the_label_the_version_and_the_url():
    line = citation.cite_line("claim-fifth-at-24", "About a fifth at k = 24")
    assert "\n" not in line
    assert "claim-fifth-at-24" in line and VERSION in line and citation.repository_url() in line
    assert line.startswith("The resdecay authors (2026).")
    assert citation.cite_line("thm-omega") == line.replace('claim-fifth-at-24 ("About a fifth at k = 24")', "thm-omega")
    with pytest.raises(ValueError, match="stable label"):
        citation.cite_line("not a label")


def test_the_cite_line_role_writes_the_same_line():
    env = types.SimpleNamespace(srcdir=str(ROOT))
    inliner = types.SimpleNamespace(document=types.SimpleNamespace(settings=types.SimpleNamespace(env=env)))
    nodes_, messages = citation._cite_line_role("cite-line", "", "About a fifth at k = 24 <claim-fifth-at-24>", 1, inliner)
    assert not messages and nodes_[0].astext() == citation.cite_line("claim-fifth-at-24", "About a fifth at k = 24")
