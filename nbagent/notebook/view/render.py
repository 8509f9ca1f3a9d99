"""Pure text/HTML helpers for the agent view: escaping, highlighting, previews (numbers, money
and ranges are in :mod:`nbagent.notebook.format`).

Nothing here touches widgets, so the static transcript (nbconvert, GitHub, terminals) and the live
widgets are built from the same strings.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

CODE_KEYS = ("code", "command", "source")
PREVIEW_CHARS = 4000

STYLE = {
    "muted": "color:#777",
    "interrupted": "color:#999;opacity:0.7",
    "error": "color:#b71c1c",
    "ok": "color:#1b5e20",
    "warn": "color:#8a6d00",
    "card": "border:1px solid #ddd;border-radius:4px;padding:4px 8px;margin:4px 0",
}


def esc(text: Any) -> str:
    """HTML-escape any value's ``str``."""
    return escape("" if text is None else str(text))


def pre(text: str, style: str = "") -> str:
    """An escaped ``<pre>`` block that wraps long lines."""
    return f'<pre style="white-space:pre-wrap;margin:2px 0;{style}">{esc(text)}</pre>'


def clip(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``text`` cut in the middle to about ``limit`` characters, with a marker."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters not shown] …\n{text[-half:]}"


def highlight(code: str, language: str = "python") -> str:
    """Code as self-contained HTML (inline styles, no CSS classes needed) via pygments."""
    try:
        from pygments import highlight as _hl
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        html = _hl(code, get_lexer_by_name(language), HtmlFormatter(noclasses=True, style="default"))
        # Wrap long lines inside the pygments <pre>.
        return html.replace('<pre style="', '<pre style="white-space:pre-wrap;margin:0;', 1)
    except Exception:  # pygments missing or an unknown lexer: plain is fine
        return pre(code)


def code_of(tool_name: str, tool_input: Any) -> tuple[str, str] | None:
    """``(code, language)`` when the tool input is essentially a piece of code, else ``None``."""
    if not isinstance(tool_input, dict):
        return None
    for key in CODE_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str):
            lang = "bash" if tool_name == "shell" or key == "command" else "python"
            return value, lang
    return None


def input_plain(tool_name: str, tool_input: Any) -> str:
    """A readable plain-text rendering of a tool call's input."""
    code = code_of(tool_name, tool_input)
    rest = {k: v for k, v in tool_input.items() if k not in CODE_KEYS} if isinstance(tool_input, dict) else tool_input
    out = []
    if code is not None:
        out.append(code[0])
    if code is None or rest:
        out.append(json.dumps(rest, indent=2, ensure_ascii=False, default=str))
    return clip("\n".join(out))


def input_html(tool_name: str, tool_input: Any) -> str:
    """HTML of a tool call's input: code highlighted, other fields as highlighted JSON."""
    code = code_of(tool_name, tool_input)
    html = []
    if code is not None:
        html.append(highlight(clip(code[0]), code[1]))
        rest = {k: v for k, v in tool_input.items() if k not in CODE_KEYS}
        if rest:
            html.append(highlight(json.dumps(rest, indent=2, ensure_ascii=False, default=str), "json"))
    else:
        html.append(highlight(clip(json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)), "json"))
    return "".join(html)


def markdown_html(text: str) -> str:
    """Static HTML for assistant Markdown (mistune when available, else preformatted text)."""
    try:
        import mistune

        return str(mistune.create_markdown(escape=True)(text))
    except Exception:
        return f'<div style="white-space:pre-wrap">{esc(text)}</div>'


def error_line(error_kind: str, status: int | None, message: str) -> str:
    """``overloaded (529): Overloaded``."""
    code = f" ({status})" if status is not None else ""
    return f"{error_kind or 'error'}{code}: {message}"
