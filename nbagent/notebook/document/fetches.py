"""What a Markdown cell makes the page fetch when it renders: said in a ``notebook_edit`` question.

The agent view shows a Markdown image of the model's as a link (docs/security.md, "How untrusted
content is shown"), so a reply cannot make the browser fetch a URL that carries data out. A Markdown
*cell* the model (or an MCP client) writes is rendered by JupyterLab itself, whose sanitiser keeps
``<img src="https://…">``: once the cell renders (at once, under Run All, when the notebook is opened
again) the browser fetches it, and its query string can hold whatever the model read. The user
allows such a cell reading its source, where ``![chart](https://…/c.png?d=…)`` looks like a chart;
so the question names the hosts it will be fetched from.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser
from typing import Callable

_FETCHING = frozenset({"src", "srcset", "poster", "data", "background", "xlink:href"})
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")\s]+)", re.IGNORECASE)
_CSS_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{1,6})[ \t\n\r\f]?|([^\n\r\f0-9A-Fa-f]))")
MAX_HOSTS = 3


class _Sources(HTMLParser):
    """The URLs of attributes the browser loads by itself (an image, a video's poster, a style)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in _FETCHING or (tag in ("link", "image") and name == "href"):
                # srcset: "a.png 1x, https://… 2x"; every candidate may be fetched
                self.urls += [part.strip().split(" ")[0] for part in value.split(",")] if name == "srcset" else [value]
            elif name == "style":
                self.urls += _CSS_URL.findall(_css_unescape(value))

    handle_startendtag = handle_starttag


def _css_unescape(css: str) -> str:
    """``css`` with its escapes read as the browser reads them: JupyterLab's sanitiser keeps
    ``url(\\68ttps://host/…)`` (its rule wants ``url(`` spelled out, not the URL) and the page
    fetches ``https://host/…``, which read as written was a path beside the notebook."""
    def char(match: re.Match[str]) -> str:
        digits, other = match.groups()
        if other is not None:
            return other
        code = int(digits, 16)
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"

    return _CSS_ESCAPE.sub(char, css) if "\\" in css else css


@lru_cache(maxsize=1)
def _html() -> Callable[[str], str]:
    import mistune

    # Raw HTML kept, as JupyterLab's renderer keeps it (then cleaned by its sanitiser, which keeps <img>).
    render = mistune.create_markdown(escape=False, plugins=["strikethrough", "table"])
    return lambda text: str(render(text))


def _host(url: str) -> str | None:
    """The host a browser fetches ``url`` from, None for a relative or ``data:`` URL. As the URL
    standard reads it: controls and spaces trimmed, tabs and newlines dropped, ``\\`` as ``/``, and
    ``https:evil.example/x`` (no slashes) is ``https://evil.example/x`` too."""
    url = re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(0x21)))).replace("\\", "/")
    match = re.match(r"(?:(https?):)?(/*)([^/?#]*)", url, re.IGNORECASE)
    if match is None or not match.group(3):
        return None
    scheme, slashes, host = match.groups()
    if scheme is None and len(slashes) < 2:  # a path beside the notebook (or another scheme: data:, …)
        return None
    return host.rsplit("@", 1)[-1].lower()


def fetched_hosts(markdown: str) -> list[str]:
    """The hosts a Markdown cell of ``markdown`` loads from when it renders (none: an empty list).
    Relative URLs (a file beside the notebook) and ``data:`` images are not fetched from elsewhere."""
    parser = _Sources()
    parser.feed(_html()(markdown))
    hosts: list[str] = []
    for url in parser.urls:
        host = _host(url)
        if host and host not in hosts:
            hosts.append(host)
    return hosts


def fetch_warning(markdown: str) -> str:
    """`` — when it renders, the page fetches from host, …`` for the question's summary, or ``""``."""
    hosts = fetched_hosts(markdown)
    if not hosts:
        return ""
    named = ", ".join(ascii(h)[1:-1] for h in hosts[:MAX_HOSTS]) + (f" and {len(hosts) - MAX_HOSTS} more"
                                                                    if len(hosts) > MAX_HOSTS else "")
    return (f" — when this Markdown renders, the page fetches from {named} (an image's URL can carry data "
            "out: allow it only if you expect that)")


__all__ = ["fetch_warning", "fetched_hosts"]
