"""The rendered book as a reader gets it: every page opened in headless Chromium.

The book is built from its stored outputs (no execution) into ``$RESDECAY_BROWSER_OUT``
(default ``_build/browser``), and each page of ``_toc.yml`` (plus the pages Sphinx adds:
index, search, bibliography) is loaded from ``file://`` with every host name resolving to
nothing. For each page the tests assert:

* the math is typeset: at least one MathJax ``mjx-container`` per math element Sphinx wrote,
  and no raw ``\\(``, ``\\[`` or ``$$`` left in the visible text (code excluded);
* every image has loaded (``complete`` and ``naturalWidth > 0`` in the browser);
* every internal link resolves (the file exists, and the ``#fragment`` is an id in it);
* no request leaves the machine: no script, stylesheet, image, font, frame or media in the
  HTML or in its local CSS points to a remote URL, and the browser fetched nothing remote.

A screenshot of each page (1280 px wide) is written to ``<out>/screenshots/`` so a person
can look at what readers see. Without Chromium the tests skip with the install line, except
under ``CI=true``, where a missing browser fails.
"""
from __future__ import annotations

import concurrent.futures
import html.parser
import json
import os
import pathlib
import re
import sys
import time
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import book  # noqa: E402  (tools/book.py)

pytestmark = pytest.mark.slow

OUT = pathlib.Path(os.environ.get("RESDECAY_BROWSER_OUT", ROOT / "_build" / "browser"))
SCREENSHOTS = OUT / "screenshots"
PROBE_ID = "resdecay-probe"

# Runs in the page after load and after MathJax's typesetting promise; leaves its findings
# as JSON in a <script> element that --dump-dom serialises.
PROBE = """
<script>
(function () {
  function report() {
    var imgs = Array.prototype.map.call(document.images, function (im) {
      return {src: im.getAttribute('src'), complete: im.complete, width: im.naturalWidth};
    });
    var resources = performance.getEntriesByType('resource').map(function (e) { return e.name; });
    var clone = document.body.cloneNode(true);
    clone.querySelectorAll('pre, code, script, style, textarea, mjx-container, mjx-assistive-mml')
         .forEach(function (n) { n.remove(); });
    // what sticks out of the text column and is not inside a box that scrolls or clips it
    var box = document.querySelector('article.bd-article') || document.body;
    var edge = box.getBoundingClientRect().right, wide = [];
    box.querySelectorAll('*').forEach(function (e) {
      var r = e.getBoundingClientRect(), visible = getComputedStyle(e).overflowX === 'visible';
      // a box's right edge, or its content's when that spills out of it (a long <pre> line)
      var right = Math.max(r.right, visible ? r.left + e.scrollWidth : 0);
      if (r.width === 0 || right <= edge + 1 || wide.length >= 5) return;
      for (var a = e.parentElement; a && a !== box; a = a.parentElement) {
        var o = getComputedStyle(a).overflowX;
        if (['auto', 'scroll', 'hidden', 'clip'].indexOf(o) >= 0 && a.getBoundingClientRect().right <= edge + 1) return;
      }
      wide.push(e.tagName + ' ' + Math.round(right - edge) + ' px: ' + (e.textContent || '').slice(0, 60));
    });
    var out = document.createElement('script');
    out.type = 'application/json';
    out.id = '%s';
    out.textContent = JSON.stringify({
      images: imgs, resources: resources, text: clone.textContent,
      mjx: document.querySelectorAll('mjx-container').length,
      page_width: document.documentElement.scrollWidth, window_width: document.documentElement.clientWidth,
      overflow: wide
    }).replace(/</g, '\\\\u003c');
    document.body.appendChild(out);
  }
  window.addEventListener('load', function () {
    var ready = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
    ready.then(report, report);
  });
})();
</script>
""" % PROBE_ID

REMOTE = re.compile(r"^\s*(https?:)?//", re.I)
RAW_TEX = ("\\(", "\\[", "$$")


def _pages(html_root: pathlib.Path) -> list[pathlib.Path]:
    skip = {"_static", "_sources", "_images", "_downloads"}
    return sorted(p for p in html_root.rglob("*.html")
                  if not skip & set(p.relative_to(html_root).parts) and PROBE_ID not in p.name)


class _Page(html.parser.HTMLParser):
    """The parts of a built page the checks need: ids, links, fetched assets, math count."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.assets, self.inline_scripts = set(), [], [], []
        self.math = 0
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        classes = (a.get("class") or "").split()
        if "math" in classes and tag in ("span", "div"):
            self.math += 1
        if tag == "a" and a.get("href") is not None:
            self.links.append(a["href"])
        # everything a browser fetches on load: scripts, styles, preloads, icons, images,
        # frames, media, fonts (through stylesheets, checked separately)
        if tag == "link" and a.get("href") and a.get("rel") not in ("canonical", "next", "prev",
                                                                  "index", "search"):
            self.assets.append((tag, a["href"]))
        for key in ("src", "data", "poster", "srcset"):
            if tag in ("script", "img", "iframe", "source", "video", "audio", "embed",
                       "object", "track", "input") and a.get(key):
                self.assets.append((tag, a[key]))
        if "style" in a and "url(" in a["style"]:
            self.assets.extend(("style", u) for u in re.findall(r"url\(['\"]?([^'\")]+)", a["style"]))
        self._in_script = tag in ("script", "style") and not a.get("src")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.inline_scripts.append(data)


def _parse(path: pathlib.Path) -> _Page:
    parser = _Page()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _probe(page: pathlib.Path, html_root: pathlib.Path) -> dict:
    """Load ``page`` in Chromium with the probe; screenshot it; return the probe's JSON."""
    text = page.read_text(encoding="utf-8")
    redirect = re.search(r'http-equiv="Refresh" content="\d+;\s*url=([^"]+)"', text, re.I)
    if redirect:  # index.html only forwards to the root page; its target is checked as a link
        return {"redirect": redirect.group(1), "images": [], "resources": [], "text": "", "mjx": 0}
    probe_page = page.with_name(f"{page.stem}.{PROBE_ID}.html")
    probe_page.write_text(text.replace("</body>", PROBE + "</body>", 1), encoding="utf-8")
    shot = SCREENSHOTS / (str(page.relative_to(html_root).with_suffix("")).replace(os.sep, "__") + ".png")
    try:
        proc = book.run_chromium(["--window-size=1280,2000", "--virtual-time-budget=10000",
                                  f"--screenshot={shot}", "--dump-dom", probe_page.as_uri()], timeout=90)
    finally:
        probe_page.unlink()
    m = re.search(r'<script type="application/json" id="%s">(.*?)</script>' % PROBE_ID,
                  proc.stdout, re.S)
    if not m:
        return {"error": f"probe did not report (rc={proc.returncode}): {proc.stderr[-500:]}",
                "screenshot": str(shot)}
    result = json.loads(m.group(1))
    result["screenshot"] = str(shot)
    return result


@pytest.fixture(scope="module")
def site():
    """Build the book, open every page in Chromium; return (html_root, {page: probe})."""
    book.require_chromium()
    html_root = book.build(OUT, "html")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for old in SCREENSHOTS.glob("*.png"):
        old.unlink()
    pages = _pages(html_root)
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        probes = dict(zip(pages, pool.map(lambda p: _probe(p, html_root), pages)))
    print(f"\n{len(pages)} pages opened in Chromium in {time.monotonic() - start:.0f} s; "
          f"screenshots in {SCREENSHOTS}")
    return html_root, probes


def test_every_toc_page_is_built_and_opened(site):
    html_root, probes = site
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]
    missing = [f for f in files if html_root / (f + ".html") not in probes]
    assert not missing, f"pages of _toc.yml not built: {missing}"
    failed = {str(p): r["error"] for p, r in probes.items() if "error" in r}
    assert not failed, f"pages Chromium could not open: {failed}"


def test_every_page_has_a_screenshot(site):
    _, probes = site
    bad = [r["screenshot"] for r in probes.values() if "redirect" not in r and (
           not pathlib.Path(r["screenshot"]).is_file()
           or pathlib.Path(r["screenshot"]).read_bytes()[:8] != b"\x89PNG\r\n\x1a\n")]
    assert not bad, f"screenshots missing or not PNG: {bad}"


def test_math_is_typeset_on_every_page(site):
    _, probes = site
    problems = []
    for page, r in probes.items():
        if "error" in r:
            continue
        wanted = _parse(page).math
        if r["mjx"] < wanted:
            problems.append(f"{page.name}: {r['mjx']} MathJax containers for {wanted} math elements")
        raw = [t for t in RAW_TEX if t in r["text"]]
        if raw:
            i = min(r["text"].find(t) for t in raw)
            problems.append(f"{page.name}: raw TeX {raw} in visible text: ...{r['text'][max(0, i - 60):i + 60]!r}")
    assert not problems, "\n".join(problems)


def test_every_image_loads(site):
    _, probes = site
    broken = [f"{page.name}: {im['src']}" for page, r in probes.items()
              for im in r.get("images", []) if not (im["complete"] and im["width"] > 0)]
    assert not broken, f"images that did not load: {broken}"


def test_every_internal_link_resolves(site):
    html_root, probes = site
    ids_cache: dict[pathlib.Path, set] = {}

    def ids(path):
        if path not in ids_cache:
            ids_cache[path] = _parse(path).ids
        return ids_cache[path]

    broken = []
    for page in probes:
        hrefs = _parse(page).links + ([probes[page]["redirect"]] if "redirect" in probes[page] else [])
        for href in hrefs:
            url = urllib.parse.urlsplit(href)
            if url.scheme or href.startswith("//"):
                continue  # outbound (arXiv anchors, mailto): clicked, never fetched on load
            target = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.name}: {href} (no file)")
            elif url.fragment and target.suffix == ".html" and urllib.parse.unquote(url.fragment) not in ids(target):
                broken.append(f"{page.name}: {href} (no id {url.fragment!r})")
    assert not broken, "internal links that do not resolve:\n" + "\n".join(broken)


def test_no_request_leaves_the_machine(site):
    html_root, probes = site
    remote = []
    css_files = set()
    for page, r in probes.items():
        parsed = _parse(page)
        for tag, url in parsed.assets:
            if REMOTE.match(url):
                remote.append(f"{page.name}: <{tag}> {url}")
            elif url.split("?")[0].endswith(".css") and not url.startswith("data:"):
                css_files.add((page.parent / url.split("?")[0]).resolve())
        for body in parsed.inline_scripts:
            for url in re.findall(r"https?://[^\s\"'<>)]+", body):
                remote.append(f"{page.name}: inline script/style {url}")
        remote.extend(f"{page.name}: fetched {u}" for u in r.get("resources", [])
                      if urllib.parse.urlsplit(u).scheme not in ("file", "data", "blob", "about"))
    for css in sorted(css_files):
        text = css.read_text(encoding="utf-8", errors="replace")
        for url in re.findall(r"(?:url\(\s*['\"]?|@import\s+['\"])((?:https?:)?//[^'\")\s]+)", text):
            remote.append(f"{css.name}: {url}")
    assert not remote, "remote URLs a browser would fetch on load:\n" + "\n".join(sorted(set(remote)))


def test_no_page_is_wider_than_the_window(site):
    """Wide outputs (a long log line, a wide table, a long equation) scroll or wrap inside their
    own box (_ext/static/resdecay.css and the theme): nothing sticks out of the text column
    and no page scrolls sideways at 1280 px."""
    _, probes = site
    wide = {page.name: (r["page_width"], r["window_width"], r["overflow"]) for page, r in probes.items()
            if "page_width" in r and (r["page_width"] > r["window_width"] or r["overflow"])}
    assert not wide, f"pages wider than the window, or with content outside the column: {wide}"


def test_the_labels_page_numbers_are_the_rendered_books(site):
    """Each number tools/labels.py computes (Fig. 18, Table 2, (7), Theorem 1) is the one the
    built HTML prints beside that label."""
    sys.path.insert(0, str(ROOT / "tools"))
    import labels
    html_root, _ = site
    computed, rendered = labels.numbers(), labels.numbers_in_html(html_root)
    assert computed, "no numbered labels?"
    wrong = {label: (n, rendered.get(label)) for label, n in computed.items() if rendered.get(label) != n}
    assert not wrong, f"labels.md's numbers differ from the book's (label: computed, rendered): {wrong}"


def test_every_numbered_caption_shows_its_label(site):
    """A numbered figure or table caption reads "Fig. 18 (fig-ablation) ..." (_ext/caption_labels.py)."""
    html_root, _ = site
    missing, n = [], 0
    pattern = re.compile(r'<(figure|table)\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</(?:figcaption|caption)>', re.S)
    for page in _pages(html_root):
        for tag, ident, inner in pattern.findall(page.read_text(encoding="utf-8")):
            if 'class="caption-number"' not in inner:
                continue
            n += 1
            if f'<span class="caption-label">({ident}) </span>' not in inner:
                missing.append(f"{page.name}#{ident}")
    assert n, "no numbered figure or table found"
    assert not missing, f"captions without their label: {missing}"


def test_the_built_book_carries_its_commit_in_citation_files(site):
    import subprocess
    import yaml
    html_root, _ = site
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    cff = yaml.safe_load((html_root / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["commit"] == head and cff["repository-code"].startswith("https://")
    assert f"commit {head}" in (html_root / "CITATION.bib").read_text(encoding="utf-8")


def test_the_probe_catches_a_broken_image_and_raw_tex(tmp_path):
    """The checks above can fail: a page with a missing image, untypeset TeX and a block wider
    than the window is caught."""
    book.require_chromium()
    global SCREENSHOTS
    page = tmp_path / "broken.html"
    page.write_text("<html><body><p>\\(x^2\\) and $$y$$</p><img src='missing.png'>"
                    "<img src='data:image/png;base64,iVBORw0KGgo='>"
                    "<pre style='white-space: pre'>" + "wide " * 400 + "</pre></body></html>")
    saved, SCREENSHOTS = SCREENSHOTS, tmp_path
    try:
        r = _probe(page, tmp_path)
    finally:
        SCREENSHOTS = saved
    assert "error" not in r, r
    assert [im["width"] > 0 and im["complete"] for im in r["images"]] == [False, False]
    assert "\\(" in r["text"] and "$$" in r["text"] and r["mjx"] == 0
    assert r["page_width"] > r["window_width"] and r["overflow"]
