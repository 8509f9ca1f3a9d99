"""Untrusted text and display data made into HTML that cannot run script.

JupyterLab renders the outputs of a running session as *trusted*: Markdown or HTML placed in an
``Output`` widget is inserted as it is, so an ``<img onerror=…>`` in a model's reply ran in the page
and, with the page's token, could execute code in the kernel without any permission prompt. So
nothing the model produces or reads reaches the front-end as Markdown or raw HTML: it is rendered
here, in the kernel, and cleaned by an allow-list before it is sent.

- Model text: Markdown rendered by mistune with raw HTML escaped, then cleaned by nh3 (the ammonia
  sanitiser): formatting, lists, tables, code and links (http, https, mailto) only; no images, so a
  reply cannot make the browser fetch a URL that carries data out.
- Display data from a tool (what the python tool's code displayed): a mime allow-list; HTML is
  cleaned the same way but may hold images from ``data:`` URIs of raster types (what the tool
  produced); SVG is shown only as an image, where its scripts never run. Inline styles keep an
  allow-list of properties whose values call no CSS function but colours, ``var`` and ``calc``:
  ``background:url(https://…)`` would make the page fetch from anywhere (CSS escapes and comments,
  which can spell ``url(``, drop the declaration too); ``<style>`` is dropped with its content.
- Bounded: html5ever and ammonia take time quadratic in how deeply tags nest (a 0.55 MB display of
  nested ``<div>`` took 6.5 s, 1.1 MB 45 s). HTML over :data:`MAX_HTML_CHARS` characters or nested
  deeper than :data:`MAX_HTML_DEPTH` is left out with a one-line note (its text/plain stays), and
  each display is cleaned once: the card, its transcript and the materialised cell share the result.

The same functions build the live widgets and the static transcript, so both show the same.
"""

from __future__ import annotations

import base64
import re
import threading
from collections import OrderedDict
from functools import lru_cache
from html import escape
from typing import Any, Callable, Mapping

import nh3

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
RASTER_IMAGES = ("image/png", "image/jpeg", "image/gif")
# Inline style a table or a coloured cell may keep; no positioning and no negative margin
# (:func:`safe_style`), so no output can lay itself over the permission buttons.
STYLE_PROPERTIES = frozenset({
    "color", "background-color", "background", "font-weight", "font-style", "font-family", "font-size",
    "text-align", "vertical-align", "white-space", "border", "border-collapse", "border-bottom", "border-top",
    "border-left", "border-right", "padding", "margin", "width", "max-width", "height", "max-height",
})
CSS_FUNCTIONS = frozenset({"rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color-mix",
                           "var", "calc"})
"""The only CSS functions a kept style value may call: none of them fetches anything."""
MAX_HTML_CHARS = 1_000_000
"""Most characters of one HTML display that is cleaned and shown (about 0.4 s to clean when shallow)."""
MAX_HTML_DEPTH = 512
"""Deepest tag nesting cleaned and shown (a styled pandas table nests about 8 deep)."""
_DROPPED_WITH_CONTENT = frozenset({"script", "style", "template", "iframe", "object", "embed", "svg", "math", "noscript"})
_NO_IMAGES = frozenset(nh3.ALLOWED_TAGS) - {"img", "map", "area"}


_CSS_CALL = re.compile(r"([A-Za-z0-9_-]*)\s*\(")
_URL_ATTRIBUTES = frozenset({"href", "src", "cite"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_URL_TRIMMED = "".join(map(chr, range(0x21)))  # C0 controls and space, which a URL parser strips at either end


def _pulls_over(declaration: str) -> bool:
    # A "-" anywhere in a margin's value: -9999px, -.5em, calc(0px - 1em), var(--x, -1em). A positive
    # margin never needs one (a page variable in a margin is dropped too, as it could be negative).
    name, _, value = declaration.partition(":")
    return name.strip().lower().startswith("margin") and "-" in value


def safe_style(style: str) -> str:
    """A ``style`` attribute without the declarations that could fetch: those calling a CSS function
    outside :data:`CSS_FUNCTIONS` (``url``, ``image-set``, ``image``, ``element`` …) or holding a
    backslash or a comment, with which ``url(`` can be spelt otherwise; and without a negative
    margin, with which an output could pull itself over what is shown above it."""
    kept = []
    for declaration in style.split(";"):
        if "\\" in declaration or "/*" in declaration or _pulls_over(declaration):
            continue
        if any(name.lower() not in CSS_FUNCTIONS for name in _CSS_CALL.findall(declaration)):
            continue
        kept.append(declaration)
    return ";".join(kept)


def _url_scheme(url: str) -> str:
    """The scheme a browser reads in ``url``, lower-case ("" for a relative URL): the URL standard
    strips C0 controls and spaces at either end and drops every tab and newline first."""
    match = _SCHEME.match(re.sub(r"[\t\n\r]", "", url).strip(_URL_TRIMMED))
    return match.group(1).lower() if match else ""


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    """nh3 attribute filter: an ``img`` keeps a ``src`` only when it is a raster ``data:`` URI; any
    other URL (a link's ``href``, a quote's ``cite``) only when it is relative or in
    :data:`LINK_SCHEMES` — the cleaner lets ``data:`` through for the images; a ``style`` keeps what
    :func:`safe_style` keeps."""
    if tag == "img" and attribute == "src":
        head = value[:32].lower()
        return value if any(head.startswith(f"data:{mime};") for mime in RASTER_IMAGES) else None
    if attribute in _URL_ATTRIBUTES:
        return value if _url_scheme(value) in LINK_SCHEMES | {""} else None
    if attribute == "style":
        return safe_style(value) or None
    return value


def _attributes(style: bool) -> dict[str, set[str]]:
    attributes = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
    attributes["*"] = {"title"} | ({"style"} if style else set())
    return attributes


@lru_cache(maxsize=1)
def _cleaners() -> tuple[Callable[[str], str], Callable[[str], str]]:
    """(model text cleaner, tool output cleaner), built once: nh3's Cleaner compiles its rules."""
    common: dict[str, Any] = dict(url_schemes=set(LINK_SCHEMES), link_rel="noopener noreferrer nofollow",
                                  clean_content_tags=set(_DROPPED_WITH_CONTENT), strip_comments=True)
    text = nh3.Cleaner(tags=set(_NO_IMAGES), attributes=_attributes(style=False), **common)
    output = nh3.Cleaner(tags=set(nh3.ALLOWED_TAGS), attributes=_attributes(style=True),
                         filter_style_properties=set(STYLE_PROPERTIES), attribute_filter=_attribute_filter,
                         url_schemes=set(LINK_SCHEMES) | {"data"}, link_rel="noopener noreferrer nofollow",
                         clean_content_tags=set(_DROPPED_WITH_CONTENT), strip_comments=True)
    return text.clean, output.clean


@lru_cache(maxsize=1)
def _markdown() -> Callable[[str], str]:
    import mistune

    class Renderer(mistune.HTMLRenderer):
        def image(self, text: str, url: str, title: str | None = None) -> str:
            # A link the user may follow, never a fetch the page makes by itself.
            return self.link(f"🖼 {text or 'image'}", url, title)

    render = mistune.create_markdown(escape=True, renderer=Renderer(escape=True), plugins=["strikethrough", "table"])
    return lambda text: str(render(text))


def markdown_html(text: str) -> str:
    """Model Markdown as HTML that runs nothing: raw HTML shown as text, no images, safe links
    (Markdown nested past the bounds, e.g. thousands of ``>``, is shown as plain text)."""
    html = _markdown()(text)
    if too_big(html):
        return f'<pre style="white-space:pre-wrap">{escape(text)}</pre>'
    return _cleaners()[0](html)


_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)[^>]*?(/?)>")
# Tags that never nest (void) or whose end tag may be left out (a table's rows, a list's items):
# they do not deepen the document, whatever the count of their starts.
_FLAT = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option",
                   "optgroup", "colgroup", "caption", "rb", "rt", "rp"})


def nesting_depth(html: str, stop_at: int = MAX_HTML_DEPTH) -> int:
    """How deeply the tags of ``html`` nest (a linear scan, stopped once past ``stop_at``)."""
    depth = deepest = 0
    for match in _TAG.finditer(html):
        closing, name, self_closing = match.groups()
        if name.lower() in _FLAT or self_closing:
            continue
        if closing:
            depth = max(depth - 1, 0)
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop_at:
                break
    return deepest


def too_big(html: str) -> str:
    """Why ``html`` is not cleaned and shown ("" when it may be): too long, or nested too deep."""
    if len(html) > MAX_HTML_CHARS:
        return f"{len(html):,} characters (more than {MAX_HTML_CHARS:,})"
    if nesting_depth(html) > MAX_HTML_DEPTH:
        return f"tags nested more than {MAX_HTML_DEPTH} deep"
    return ""


_cleaned: OrderedDict[str, str] = OrderedDict()
_cleaned_lock = threading.Lock()
_CLEANED_KEPT = 8  # displays: the card, its transcript and the materialised cell ask within moments


def clean_html(html: str) -> str:
    """HTML a tool displayed, kept to an allow-list (tables, formatting, data: raster images), or a
    one-line note where it is too large or nested too deep to clean (:func:`too_big`). Each display
    is cleaned once: the latest results are kept, and a cleaned result counts as clean itself."""
    with _cleaned_lock:
        if html in _cleaned:
            _cleaned.move_to_end(html)
            return _cleaned[html]
    why = too_big(html)
    clean = (f'<div class="nbagent-left-out" style="font-style:italic">[HTML output left out: {escape(why)}; '
             "its text is kept]</div>") if why else _cleaners()[1](html)
    with _cleaned_lock:
        _cleaned[html] = _cleaned[clean] = clean
        while len(_cleaned) > 2 * _CLEANED_KEPT:
            _cleaned.popitem(last=False)
    return clean


def _svg_img(svg: str) -> str:
    # As an <img>, an SVG's scripts and event handlers never run.
    data = base64.b64encode(svg.encode("utf-8", "replace")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" style="max-width:100%"/>'


def safe_display_data(data: Mapping[str, object]) -> dict[str, str]:
    """One display bundle from a tool, reduced to what the front-end may render.

    Raster images pass (JupyterLab shows them as ``<img>``); SVG becomes an image; HTML is cleaned;
    Markdown is rendered as model text; other mime types are dropped for their text/plain.
    """
    safe: dict[str, str] = {}
    for mime in RASTER_IMAGES:
        if isinstance(image := data.get(mime), str):
            safe[mime] = image
    svg, html, markdown = data.get("image/svg+xml"), data.get("text/html"), data.get("text/markdown")
    if isinstance(svg, str):
        safe["text/html"] = _svg_img(svg)
    elif isinstance(html, str):
        safe["text/html"] = clean_html(html)
    elif isinstance(markdown, str):
        safe["text/html"] = markdown_html(markdown)
    plain = data.get("text/plain")
    safe["text/plain"] = plain if isinstance(plain, str) else f"[output: {', '.join(map(str, data)) or 'empty'}]"
    return safe


def static_output_html(data: Mapping[str, object]) -> str:
    """A tool's display bundle as static HTML: an image, the cleaned HTML, or the plain text."""
    safe = safe_display_data(data)
    for mime in RASTER_IMAGES:
        if mime in safe:
            return f'<img src="data:{mime};base64,{escape(safe[mime])}" style="max-width:100%"/>'
    if "text/html" in safe:
        return str(safe["text/html"])
    return f'<pre style="white-space:pre-wrap">{escape(str(safe["text/plain"]))}</pre>'


__all__ = ["clean_html", "markdown_html", "nesting_depth", "safe_display_data", "safe_style", "static_output_html",
           "too_big"]
