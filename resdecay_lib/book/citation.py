"""Citing the book: its version, its commit and a stable label; the optional repository URL
(``_config.yml``'s ``sphinx: config: resdecay_repository_url``, empty until the repository has
a public address, and then no URL is printed anywhere); ``CITATION.cff`` and ``CITATION.bib``
written from the settings; :func:`cite_line`, the one-line citation of a label that Chapter 10
shows per claim.

Every function reads the book at ``root`` (default: :func:`~resdecay_lib.book.notebooks.find_book_root`
from the working directory). The book's Sphinx extension ``_ext/citation.py`` adds the role
``{cite-line}`` and writes the built copies with the commit (a file cannot hold the commit it is
committed in, and neither can a notebook's stored output, which nbval compares).
"""
from __future__ import annotations

import pathlib
import re
import subprocess

from .notebooks import find_book_root

__all__ = ["SETTING", "BIB_KEY", "repository_url", "version", "commit", "cite_line", "citation_bib", "cff_text",
           "write_repository_files"]


def _root(root) -> pathlib.Path:
    return find_book_root() if root is None else pathlib.Path(root)


SETTING = "resdecay_repository_url"
#: the bibliography key of the book in CITATION.bib (and the Preface's BibTeX block)
BIB_KEY = "resdecay2026"


def _yaml(path: pathlib.Path):
    import yaml
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def repository_url(root=None) -> str:
    """The repository's address, ``_config.yml``'s ``sphinx.config.resdecay_repository_url``, or
    "" when it is unset or empty (then nothing prints a URL). A set value must be an http(s) URL."""
    url = ((_yaml(_root(root) / "_config.yml").get("sphinx") or {}).get("config") or {}).get(SETTING)
    url = str(url or "").strip()
    if url and not re.fullmatch(r"https?://[^\s\"{}]+", url):
        raise ValueError(f"_config.yml's sphinx: config: {SETTING} must be an http(s) URL or empty, got {url!r}")
    if re.match(r"https?://[^/]*\.invalid(?:[:/]|$)", url):
        raise ValueError(f"_config.yml's sphinx: config: {SETTING} is a placeholder ({url}): leave it empty "
                         "until the repository has a public address")
    return url


def version(root=None) -> str:
    """``resdecay_lib.__version__``, read from its source (nothing is imported)."""
    text = (_root(root) / "resdecay_lib" / "__init__.py").read_text(encoding="utf-8")
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def commit(root=None) -> str | None:
    """``git rev-parse HEAD`` of the working tree at ``root``, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=_root(root), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", sha) else None


def _cff(root: pathlib.Path) -> dict:
    return _yaml(_root(root) / "CITATION.cff")


def _authors(cff: dict) -> list[str]:
    return [a.get("name") or " ".join(x for x in (a.get("given-names"), a.get("family-names")) if x)
            for a in cff["authors"]]


def cite_line(label: str, title: str | None = None, root=None) -> str:
    """One line that cites a result of the book by its stable label: authors, year, the book's
    short name and version, the label (and the result's title, when given), and the repository's
    address when one is set (:func:`repository_url`).

    >>> cite_line("claim-fifth-at-24", "About a fifth at k = 24")  # doctest: +ELLIPSIS
    'The resdecay authors (2026). resdecay 0.4.0, claim-fifth-at-24 ("About a fifth at k = 24").'
    """
    if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z][\w-]*", label):
        raise ValueError(f"label must be a stable label such as 'claim-fifth-at-24', got {label!r}")
    cff = _cff(root)
    year = str(cff.get("date-released", ""))[:4]
    name = cff["title"].split(":")[0]
    what = f'{label} ("{title}")' if title else label
    url = repository_url(root)
    return f"{' and '.join(_authors(cff))} ({year}). {name} {version(root)}, {what}." + (f" {url}" if url else "")


def _bib_escape(text: str) -> str:
    return text.replace("&", r"\&").replace("%", r"\%").replace("#", r"\#")


def citation_bib(root=None, sha: str | None = None) -> str:
    """The book's BibTeX entry, from CITATION.cff's preferred citation and the URL setting (a
    ``url`` field only when it is set); ``sha`` (the build's commit) goes into the note."""
    cff = _cff(root)
    pc = cff.get("preferred-citation", cff)
    note = (f"Executable book and companion library, version {version(root)}"
            + (f", commit {sha}" if sha else "")
            + ". Tests Theorem 3.3 and Corollaries 3.4 and 3.5 of Xie et al. (2023), arXiv:2304.14802."
            + " Cite a result by its stable label (the book's Labels page).")
    authors = " and ".join("{" + a + "}" if " " in a and "," not in a else a for a in _authors(pc))
    fields = [("title", "{" + _bib_escape(pc["title"]) + "}"), ("author", "{" + authors + "}"),
              ("year", "{" + str(pc.get("year") or str(cff["date-released"])[:4]) + "}"),
              ("version", "{" + version(root) + "}")]
    if repository_url(root):
        fields.append(("url", "{" + repository_url(root) + "}"))
    fields.append(("note", "{" + note + "}"))
    width = max(len(k) for k, _ in fields)
    body = ",\n".join(f"  {k:<{width}} = {v}" for k, v in fields)
    return f"@book{{{BIB_KEY},\n{body}\n}}\n"


_HEADER_BIB = ("% Written by python _ext/citation.py from CITATION.cff and _config.yml's " + SETTING + "\n"
               "% (a url only when it is set); the built book's CITATION.bib adds the commit.\n")


def cff_text(root=None, sha: str | None = None) -> str:
    """CITATION.cff as committed, with both versions and ``repository-code`` set from the
    settings (``repository-code`` only when the URL is set; every other line kept as written);
    ``sha`` adds ``commit:`` after the version (the built copy)."""
    text = (_root(root) / "CITATION.cff").read_text(encoding="utf-8")
    url, ver = repository_url(root), version(root)
    text = re.sub(r"^repository-code:.*\n", "", text, flags=re.M)
    text = re.sub(r"^commit:.*\n", "", text, flags=re.M)
    text = re.sub(r"^version: .*$", f"version: {ver}", text, count=1, flags=re.M)
    text = re.sub(r"^(  version: ).*$", rf"\g<1>{ver}", text, count=1, flags=re.M)
    after = ""
    if url:
        after += f'repository-code: "{url}"   # from _config.yml: {SETTING}\n'
    if sha:
        after += f"commit: {sha}   # git rev-parse HEAD at build time\n"
    if after:
        text = re.sub(r"^(version:.*\n)", lambda m: m.group(1) + after, text, count=1, flags=re.M)
    return text


def write_repository_files(root=None, check: bool = False) -> list[str]:
    """Rewrite CITATION.cff and CITATION.bib at ``root`` from the settings (no commit); with
    ``check``, write nothing and return the names of the files that differ."""
    stale = []
    for name, text in (("CITATION.cff", cff_text(root)), ("CITATION.bib", _HEADER_BIB + citation_bib(root))):
        path = _root(root) / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if not check:
                path.write_text(text, encoding="utf-8")
    return stale


