"""Citing the book (_ext/citation.py): one optional repository URL setting (empty until the
repository has a public address: then nothing prints a URL, and the book is cited by version,
commit and label), CITATION.cff and CITATION.bib that carry the version (and the URL when it is
set), the commit in the built copies, and the one-line citation."""
from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import types

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "_ext"))
import citation  # noqa: E402  (_ext/citation.py)

VERSION = re.search(r'__version__ = "([^"]+)"', (ROOT / "resdecay_lib" / "__init__.py").read_text()).group(1)


PLACEHOLDER = re.compile(r"example\.invalid|https?://[^\s/]*\.invalid\b")


def _copy_root(tmp_path, url: str | None = None) -> pathlib.Path:
    """A copy of the files citation.py reads, with the URL setting set to ``url`` (when given)."""
    for name in ("_config.yml", "CITATION.cff", "CITATION.bib"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "resdecay_lib").mkdir(exist_ok=True)
    shutil.copy(ROOT / "resdecay_lib" / "__init__.py", tmp_path / "resdecay_lib" / "__init__.py")
    if url is not None:
        config = tmp_path / "_config.yml"
        text, n = re.subn(r"(" + citation.SETTING + r":\s*)\"[^\"]*\"", lambda m: f'{m.group(1)}"{url}"',
                          config.read_text(encoding="utf-8"))
        assert n == 1
        config.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_repository_url_is_set_once_in_the_config_and_is_no_placeholder():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert len(re.findall(r"^\s*" + citation.SETTING + r":", config, re.M)) == 1
    url = citation.repository_url()
    assert url == "" or url.startswith("https://"), url
    assert not PLACEHOLDER.search(config), "a placeholder address in _config.yml: leave the setting empty"


def test_a_placeholder_address_is_refused(tmp_path):
    root = _copy_root(tmp_path, "https://example.invalid/resdecay")
    with pytest.raises(ValueError, match="placeholder"):
        citation.repository_url(root)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ValueError, match="http"):
        citation.repository_url(_copy_root(other, "not a url"))


def test_no_url_is_printed_when_the_setting_is_empty(tmp_path):
    """Unset or empty, no file cites an address: CITATION.cff has no repository-code, CITATION.bib
    no url, the built copies cite version and commit, the cite line version and label."""
    root = _copy_root(tmp_path, "")
    assert citation.repository_url(root) == ""
    citation.write_repository_files(root)
    cff_text = (root / "CITATION.cff").read_text(encoding="utf-8")
    bib = (root / "CITATION.bib").read_text(encoding="utf-8")
    assert "repository-code" not in yaml.safe_load(cff_text)
    assert not re.search(r"^\s*url\s*=", bib, re.M)
    line = citation.cite_line("claim-fifth-at-24", "About a fifth at k = 24", root)
    assert line.endswith('claim-fifth-at-24 ("About a fifth at k = 24").') and "://" not in line
    sha = "0123456789abcdef0123456789abcdef01234567"
    built = yaml.safe_load(citation.cff_text(root, sha))
    assert built["commit"] == sha and str(built["version"]) == VERSION and "repository-code" not in built
    assert f"commit {sha}" in citation.citation_bib(root, sha) and "url" not in citation.citation_bib(root, sha)
    for text in (cff_text, bib, line):
        assert not PLACEHOLDER.search(text)


def test_citation_cff_and_bib_carry_the_url_setting_and_the_version():
    """Fails when CITATION.cff or CITATION.bib is stale. Fix: python _ext/citation.py"""
    url = citation.repository_url()
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff.get("repository-code") == (url or None)
    assert str(cff["version"]) == VERSION == str(cff["preferred-citation"]["version"])
    bib = (ROOT / "CITATION.bib").read_text(encoding="utf-8")
    if url:
        assert re.search(r"^\s*url\s*=\s*\{" + re.escape(url) + r"\}", bib, re.M)
    else:
        assert not re.search(r"^\s*url\s*=", bib, re.M)
    assert re.search(r"^\s*version\s*=\s*\{" + re.escape(VERSION) + r"\}", bib, re.M)
    for name in ("CITATION.cff", "CITATION.bib"):
        assert not PLACEHOLDER.search((ROOT / name).read_text(encoding="utf-8")), f"a placeholder address in {name}"
    assert "commit" not in cff, "a committed file cannot hold its own commit: the build adds it"
    assert citation.write_repository_files(ROOT, check=True) == [], "run python _ext/citation.py"


def test_changing_the_one_setting_changes_both_files(tmp_path):
    citation.write_repository_files(_copy_root(tmp_path, ""))          # from no address ...
    _copy_root(tmp_path, "https://git.example.org/me/resdecay")
    assert sorted(citation.write_repository_files(tmp_path, check=True)) == ["CITATION.bib", "CITATION.cff"]
    citation.write_repository_files(tmp_path)                          # ... to one
    cff = yaml.safe_load((tmp_path / "CITATION.cff").read_text())
    assert cff["repository-code"] == "https://git.example.org/me/resdecay"
    assert list(cff).index("repository-code") == list(cff).index("version") + 1
    assert "url     = {https://git.example.org/me/resdecay}" in (tmp_path / "CITATION.bib").read_text()
    assert citation.cite_line("thm-omega", root=tmp_path).endswith(". https://git.example.org/me/resdecay")
    assert citation.write_repository_files(tmp_path, check=True) == []


def test_the_build_writes_citation_files_with_the_commit(tmp_path):
    sha = citation.commit(ROOT)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert sha == head and re.fullmatch(r"[0-9a-f]{40}", sha)
    app = types.SimpleNamespace(srcdir=str(ROOT), outdir=str(tmp_path), builder=types.SimpleNamespace(format="html"))
    citation._write_built(app, None)
    cff = yaml.safe_load((tmp_path / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["commit"] == sha and cff.get("repository-code") == (citation.repository_url() or None)
    committed = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert {k: v for k, v in cff.items() if k != "commit"} == committed
    assert f"commit {sha}" in (tmp_path / "CITATION.bib").read_text(encoding="utf-8")


def test_cite_line_is_one_line_with_the_label_the_version_and_the_url_if_any():
    line = citation.cite_line("claim-fifth-at-24", "About a fifth at k = 24")
    assert "\n" not in line
    assert "claim-fifth-at-24" in line and VERSION in line and citation.repository_url() in line
    assert ("://" in line) == bool(citation.repository_url()) and not PLACEHOLDER.search(line)
    assert line.startswith("The resdecay authors (2026).")
    assert citation.cite_line("thm-omega") == line.replace('claim-fifth-at-24 ("About a fifth at k = 24")', "thm-omega")
    with pytest.raises(ValueError, match="stable label"):
        citation.cite_line("not a label")


def test_the_cite_line_role_writes_the_same_line():
    env = types.SimpleNamespace(srcdir=str(ROOT))
    inliner = types.SimpleNamespace(document=types.SimpleNamespace(settings=types.SimpleNamespace(env=env)))
    nodes_, messages = citation._cite_line_role("cite-line", "", "About a fifth at k = 24 <claim-fifth-at-24>", 1, inliner)
    assert not messages and nodes_[0].astext() == citation.cite_line("claim-fifth-at-24", "About a fifth at k = 24")
