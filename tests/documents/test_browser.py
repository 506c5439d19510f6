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

and, for what a reader sees at normal size: every chapter's heading and sidebar entry
carries the number the prose uses ("7b. Past the front ..."); a figure's smallest text, drawn at
``plots.MIN_FONT_PT`` at 100 dpi, is shown at least 0.8 of the body text's size at 1280 px;
caption text has a WCAG AA contrast (at least 4.5) over its background; each figure's image has
its caption's text as alt; and no text output is wider than its box (nothing behind a scrollbar).

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

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
    // what a reader sees at normal size: the body text's size, each figure's image
    // (its natural and shown widths), the colours of each caption's text over its background,
    // and every shown text output whose content is wider than its box
    var para = box.querySelector('section > p') || box.querySelector('p');
    var figures = Array.prototype.map.call(box.querySelectorAll('figure img'), function (im) {
      return {src: im.getAttribute('src'), natural: im.naturalWidth, shown: im.getBoundingClientRect().width};
    });
    function backgrounds(e) {
      var out = [];
      for (; e; e = e.parentElement) out.push(getComputedStyle(e).backgroundColor);
      return out;
    }
    var captions = [], seen = {};
    box.querySelectorAll('figcaption, table > caption').forEach(function (c) {
      var walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT), id = (c.closest('[id]') || {}).id;
      for (var t = walker.nextNode(); t; t = walker.nextNode()) {
        var e = t.parentElement;
        if (!t.textContent.trim() || e.closest('a.headerlink, mjx-assistive-mml')) continue;
        var colour = getComputedStyle(e).color, bgs = backgrounds(e), key = colour + getComputedStyle(e).fontWeight + bgs.join();
        if (seen[key]) continue;
        seen[key] = 1;
        captions.push({id: id, colour: colour, backgrounds: bgs, weight: getComputedStyle(e).fontWeight,
                       text: t.textContent.trim().slice(0, 40)});
      }
    });
    var outputs = 0, wideOutputs = [];
    box.querySelectorAll('.cell_output pre').forEach(function (e) {
      if (e.clientWidth === 0) return;  // not shown (a collapsed cell)
      outputs += 1;
      if (e.scrollWidth > e.clientWidth) wideOutputs.push(e.scrollWidth + ' > ' + e.clientWidth + ' px: ' + e.textContent.slice(0, 60));
    });
    var out = document.createElement('script');
    out.type = 'application/json';
    out.id = '%s';
    out.textContent = JSON.stringify({
      images: imgs, resources: resources, text: clone.textContent,
      mjx: document.querySelectorAll('mjx-container').length,
      page_width: document.documentElement.scrollWidth, window_width: document.documentElement.clientWidth,
      overflow: wide,
      body_font: para ? parseFloat(getComputedStyle(para).fontSize) : null, figures: figures,
      captions: captions, outputs: outputs, wide_outputs: wideOutputs
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


# --- what a reader sees at normal size ---------------------------------------------

#: a chapter's number, from its file name: chapters/07b_front -> "7b"; its title reads "7b. ..."
CHAPTER_FILE = re.compile(r"^chapters/0*(\d+b?)_")
#: a figure's smallest text against the body text's, at a 1280 px window
MIN_FIGURE_TEXT_RATIO = 0.8
#: WCAG 2 AA for normal text
MIN_CONTRAST = 4.5
#: the resolution the notebooks store their figures at (matplotlib's default)
FIGURE_DPI = 100


def _toc_files() -> list[str]:
    import yaml
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


def _text(fragment: str) -> str:
    """An HTML fragment's text on one line (tags dropped, entities decoded)."""
    import html as html_lib
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def _first_h1(page: pathlib.Path) -> str:
    m = re.search(r"<h1\b[^>]*>(.*?)</h1>", page.read_text(encoding="utf-8"), re.S)
    return _text(m.group(1)) if m else ""


def _sidebar(page: pathlib.Path) -> dict[pathlib.Path, str]:
    """{page a sidebar entry links to: the entry's text} for the primary sidebar of ``page``."""
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<nav class="[^"]*\bbd-docs-nav\b[^"]*"[^>]*>(.*?)</nav>', text, re.S)
    entries = {}
    for href, inner in re.findall(r'<a class="[^"]*\breference internal\b[^"]*" href="([^"]*)"[^>]*>(.*?)</a>',
                                  m.group(1) if m else "", re.S):
        path = urllib.parse.unquote(href.split("#")[0])
        entries[(page.parent / path).resolve() if path else page.resolve()] = _text(inner)
    return entries


def test_every_chapter_heading_and_sidebar_entry_carries_its_number(site):
    """The prose says "Chapter 6" and "Chapter 7b": the chapter's h1, and its entry in every
    page's sidebar, start with that number ("7b. Past the front ..."); the Preface has none."""
    html_root, probes = site
    wrong = []
    numbered = {}
    for doc in _toc_files():
        m = CHAPTER_FILE.match(doc)
        if m:
            numbered[(html_root / f"{doc}.html").resolve()] = f"{m.group(1)}. "
    assert len(numbered) >= 11, f"chapters with a number in their file name: {sorted(numbered)}"
    for page, prefix in numbered.items():
        h1 = _first_h1(page)
        if not h1.startswith(prefix):
            wrong.append(f"{page.name}: h1 {h1[:60]!r} does not start with {prefix!r}")
    preface = (html_root / f"{_toc_files()[0]}.html").resolve()
    if re.match(r"\d", _first_h1(preface)):
        wrong.append(f"{preface.name}: the Preface is numbered: {_first_h1(preface)[:60]!r}")
    for page, r in probes.items():
        if "redirect" in r:
            continue
        entries = _sidebar(page)
        for target, prefix in numbered.items():
            if target not in entries:
                wrong.append(f"{page.name}: no sidebar entry for {target.name}")
            elif not entries[target].startswith(prefix):
                wrong.append(f"{page.name}: sidebar entry {entries[target][:60]!r} does not start with {prefix!r}")
    assert not wrong, "\n".join(wrong[:40])


def test_figure_text_is_at_least_0_8_of_the_body_text(site):
    """Each figure is drawn with no text under plots.MIN_FONT_PT at 100 dpi; shown at the
    column's width its smallest text is MIN_FONT_PT * 100/72 * shown/natural px, at least 0.8 of
    the body text's computed size at a 1280 px window."""
    from resdecay_lib.book import plots
    _, probes = site
    small, n = [], 0
    for page, r in probes.items():
        for fig in r.get("figures", []):
            if not fig["natural"] or not fig["shown"]:
                continue
            n += 1
            font = plots.MIN_FONT_PT * FIGURE_DPI / 72 * fig["shown"] / fig["natural"]
            ratio = font / r["body_font"]
            if ratio < MIN_FIGURE_TEXT_RATIO:
                small.append(f"{page.name} {fig['src']}: {fig['natural']} px shown at {fig['shown']:.0f} px, "
                             f"text {font:.1f} px / body {r['body_font']} px = {ratio:.3f}")
    assert n >= 20, f"only {n} figures measured"
    assert not small, f"figure text under {MIN_FIGURE_TEXT_RATIO} of the body text:\n" + "\n".join(small)


def _rgba(css: str) -> tuple[float, float, float, float]:
    nums = [float(x) for x in re.findall(r"[-\d.]+", css)]
    assert css.startswith("rgb") and len(nums) in (3, 4), f"unparsed colour {css!r}"
    return tuple(nums[:3]) + ((nums[3],) if len(nums) == 4 else (1.0,))


def _over(colour: tuple, below: tuple) -> tuple[float, float, float]:
    *rgb, a = colour
    return tuple(a * c + (1 - a) * b for c, b in zip(rgb, below))


def _luminance(rgb) -> float:
    lin = [(c / 255 / 12.92) if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(colour: str, backgrounds: list[str]) -> float:
    """WCAG 2 contrast ratio of text ``colour`` over the stack of ``backgrounds`` (innermost
    first, as computed; the canvas under them white)."""
    bg = (255.0, 255.0, 255.0)
    for layer in reversed(backgrounds):
        bg = _over(_rgba(layer), bg)
    hi, lo = sorted((_luminance(_over(_rgba(colour), bg)), _luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_is_wcag_2s():
    assert round(contrast("rgb(0, 0, 0)", ["rgba(0, 0, 0, 0)"]), 2) == 21.0
    assert round(contrast("rgb(118, 118, 118)", ["rgb(255, 255, 255)"]), 2) == 4.54
    assert contrast("rgb(255, 255, 255)", ["rgba(0, 0, 0, 0)", "rgb(255, 255, 255)"]) == 1.0
    assert contrast("rgba(0, 0, 0, 0.5)", ["rgb(255, 255, 255)"]) < 4.5


def test_captions_have_wcag_aa_contrast(site):
    """Every piece of caption text (number, label, prose, code) has a contrast of at least 4.5
    against the background it is drawn on, at no lighter a weight than normal (the theme's
    captions were muted grey at weight 300)."""
    _, probes = site
    low, n = [], 0
    for page, r in probes.items():
        for cap in r.get("captions", []):
            n += 1
            ratio = contrast(cap["colour"], cap["backgrounds"])
            if ratio < MIN_CONTRAST:
                low.append(f"{page.name}#{cap['id']}: {cap['text']!r} {cap['colour']} contrast {ratio:.2f}")
            if int(cap["weight"]) < 400:
                low.append(f"{page.name}#{cap['id']}: {cap['text']!r} at font weight {cap['weight']}")
    assert n, "no caption text found"
    assert not low, f"caption text under {MIN_CONTRAST}:1 contrast, or light:\n" + "\n".join(low)


class _Figures(html.parser.HTMLParser):
    """The article's images: each figure's id, its images' alts and its caption's text without
    the number, the label and the link; and the images outside any figure."""
    SKIP = {"caption-number", "caption-label", "headerlink"}
    VOID = {"img", "br", "hr", "input", "meta", "link", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.figures, self.loose = [], []
        self._article = self._caption = False
        self._figure, self._skip = None, 0

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag == "article" and "bd-article" in classes:
            self._article = True
        if not self._article:
            return
        if tag == "figure":
            self._figure = {"id": a.get("id"), "alts": [], "caption": []}
        elif tag == "img":
            if self._figure is not None:
                self._figure["alts"].append(a.get("alt"))
            else:
                self.loose.append(a.get("src"))
        elif tag == "figcaption" and self._figure is not None:
            self._caption = True
        if self._caption and tag not in self.VOID and (self._skip or self.SKIP & classes):
            self._skip += 1

    def handle_endtag(self, tag):
        if self._caption and self._skip:
            self._skip -= 1
        elif tag == "figcaption":
            self._caption = False
        elif tag == "figure" and self._figure is not None:
            self._figure["caption"] = " ".join("".join(self._figure["caption"]).split())
            self.figures.append(self._figure)
            self._figure = None
        elif tag == "article":
            self._article = False

    def handle_data(self, data):
        if self._caption and not self._skip:
            self._figure["caption"].append(data.replace("\\(", "").replace("\\)", ""))


def test_every_image_has_its_caption_as_alt(site):
    """A figure's image has its caption's text (math as TeX) as alt, not its file name: what a
    screen reader reads, and what shows when the image does not load (_ext/caption_labels.py)."""
    html_root, _ = site
    wrong, n = [], 0
    for page in _pages(html_root):
        parser = _Figures()
        parser.feed(page.read_text(encoding="utf-8"))
        wrong.extend(f"{page.name}: image outside a figure (no caption): {src}" for src in parser.loose)
        for fig in parser.figures:
            for alt in fig["alts"]:
                n += 1
                if not fig["caption"] or alt != fig["caption"]:
                    wrong.append(f"{page.name}#{fig['id']}: alt {alt!r:.80} is not the caption {fig['caption']!r:.80}")
    assert n >= 20, f"only {n} figure images found"
    assert not wrong, "\n".join(wrong)


def test_no_text_output_is_wider_than_its_box(site):
    """A text output wraps in its box (_ext/static/resdecay.css): no line of it is hidden
    behind a scrollbar at 1280 px (scrollWidth <= clientWidth for every shown output)."""
    _, probes = site
    # a guard that the probe measured the book's text outputs at all (26 are shown: most listings are
    # tables now, which "no page is wider than the window" covers)
    assert sum(r.get("outputs", 0) for r in probes.values()) >= 20, "too few text outputs measured"
    wide = {page.name: r["wide_outputs"] for page, r in probes.items() if r.get("wide_outputs")}
    assert not wide, f"text outputs wider than their box: {wide}"


def test_the_built_book_carries_its_commit_in_citation_files(site):
    import subprocess
    import yaml
    html_root, _ = site
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    cff = yaml.safe_load((html_root / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["commit"] == head
    # the address is optional (none is set until the repository has a public remote): cited by
    # version, commit and label, never by a placeholder
    assert "repository-code" not in cff or cff["repository-code"].startswith("https://")
    assert f"commit {head}" in (html_root / "CITATION.bib").read_text(encoding="utf-8")


def test_the_probe_catches_a_broken_image_and_raw_tex(tmp_path):
    """The checks above can fail: a page with a missing image, untypeset TeX and a block wider
    than the window is caught."""
    book.require_chromium()
    global SCREENSHOTS
    page = tmp_path / "broken.html"
    page.write_text("<html><body><article class='bd-article'><section>"
                    "<p style='font-size: 16px'>\\(x^2\\) and $$y$$</p><img src='missing.png'>"
                    "<img src='data:image/png;base64,iVBORw0KGgo='>"
                    "<pre style='white-space: pre'>" + "wide " * 400 + "</pre>"
                    # a figure shown at half its natural width, a pale caption, a clipped output
                    "<figure><img style='width: 50px' src=\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' "
                    "width='100' height='10'/%3E\"><figcaption style='color: #bbb'>pale</figcaption></figure>"
                    "<div class='cell_output'><pre style='white-space: pre; overflow-x: auto'>" + "clip " * 400 +
                    "</pre></div></section></article></body></html>")
    saved, SCREENSHOTS = SCREENSHOTS, tmp_path
    try:
        r = _probe(page, tmp_path)
    finally:
        SCREENSHOTS = saved
    assert "error" not in r, r
    assert [im["width"] > 0 and im["complete"] for im in r["images"]] == [False, False, True]
    assert "\\(" in r["text"] and "$$" in r["text"] and r["mjx"] == 0
    assert r["page_width"] > r["window_width"] and r["overflow"]
    [fig] = r["figures"]
    assert (fig["natural"], fig["shown"], r["body_font"]) == (100, 50, 16)
    assert [round(contrast(c["colour"], c["backgrounds"]), 2) for c in r["captions"]] == [1.92]  # #bbb on white
    assert r["outputs"] == 1 and len(r["wide_outputs"]) == 1
