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
  produced); SVG is shown only as an image, where its scripts never run.

The same functions build the live widgets and the static transcript, so both show the same.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from html import escape
from typing import Any, Callable

import nh3

LINK_SCHEMES = frozenset({"http", "https", "mailto"})
RASTER_IMAGES = ("image/png", "image/jpeg", "image/gif")
# Inline style a table or a coloured cell may keep; no positioning, so no output can lay itself
# over the permission buttons.
STYLE_PROPERTIES = frozenset({
    "color", "background-color", "background", "font-weight", "font-style", "font-family", "font-size",
    "text-align", "vertical-align", "white-space", "border", "border-collapse", "border-bottom", "border-top",
    "border-left", "border-right", "padding", "margin", "width", "max-width", "height", "max-height",
})
_DROPPED_WITH_CONTENT = frozenset({"script", "style", "template", "iframe", "object", "embed", "svg", "math", "noscript"})
_NO_IMAGES = frozenset(nh3.ALLOWED_TAGS) - {"img", "map", "area"}


def _data_image_only(tag: str, attribute: str, value: str) -> str | None:
    """nh3 attribute filter: an ``img`` keeps a ``src`` only when it is a raster ``data:`` URI."""
    if tag == "img" and attribute == "src":
        head = value[:32].lower()
        return value if any(head.startswith(f"data:{mime};") for mime in RASTER_IMAGES) else None
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
                         filter_style_properties=set(STYLE_PROPERTIES), attribute_filter=_data_image_only,
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
    """Model Markdown as HTML that runs nothing: raw HTML shown as text, no images, safe links."""
    return _cleaners()[0](_markdown()(text))


def clean_html(html: str) -> str:
    """HTML a tool displayed, kept to an allow-list (tables, formatting, data: raster images)."""
    return _cleaners()[1](html)


def _svg_img(svg: str) -> str:
    # As an <img>, an SVG's scripts and event handlers never run.
    data = base64.b64encode(svg.encode("utf-8", "replace")).decode("ascii")
    return f'<img src="data:image/svg+xml;base64,{data}" style="max-width:100%"/>'


def safe_display_data(data: dict[str, Any]) -> dict[str, Any]:
    """One display bundle from a tool, reduced to what the front-end may render.

    Raster images pass (JupyterLab shows them as ``<img>``); SVG becomes an image; HTML is cleaned;
    Markdown is rendered as model text; other mime types are dropped for their text/plain.
    """
    safe: dict[str, Any] = {}
    for mime in RASTER_IMAGES:
        if isinstance(data.get(mime), str):
            safe[mime] = data[mime]
    if isinstance(data.get("image/svg+xml"), str):
        safe["text/html"] = _svg_img(data["image/svg+xml"])
    elif isinstance(data.get("text/html"), str):
        safe["text/html"] = clean_html(data["text/html"])
    elif isinstance(data.get("text/markdown"), str):
        safe["text/html"] = markdown_html(data["text/markdown"])
    plain = data.get("text/plain")
    safe["text/plain"] = plain if isinstance(plain, str) else f"[output: {', '.join(map(str, data)) or 'empty'}]"
    return safe


def static_output_html(data: dict[str, Any]) -> str:
    """A tool's display bundle as static HTML: an image, the cleaned HTML, or the plain text."""
    safe = safe_display_data(data)
    for mime in RASTER_IMAGES:
        if mime in safe:
            return f'<img src="data:{mime};base64,{escape(safe[mime])}" style="max-width:100%"/>'
    if "text/html" in safe:
        return str(safe["text/html"])
    return f'<pre style="white-space:pre-wrap">{escape(str(safe["text/plain"]))}</pre>'


__all__ = ["clean_html", "markdown_html", "safe_display_data", "static_output_html"]
