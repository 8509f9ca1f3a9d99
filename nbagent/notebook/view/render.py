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

# JupyterLab's theme variables, with the light theme's values as fallbacks for static HTML
# (nbconvert, GitHub): fixed colours were unreadable in the dark theme.
STYLE = {
    "muted": "color:var(--jp-ui-font-color2, #666)",
    "interrupted": "color:var(--jp-ui-font-color3, #999);opacity:0.8",
    "error": "color:var(--jp-error-color1, #b71c1c)",
    "ok": "color:var(--jp-success-color1, #1b5e20)",
    "warn": "color:var(--jp-warn-color1, #8a6d00)",
    "card": "border:1px solid var(--jp-border-color2, #ddd);border-radius:4px;padding:4px 8px;margin:4px 0",
    # The code the user must read before Allow: the editor's own colours, whatever the theme.
    "code": ("background:var(--jp-cell-editor-background, #f7f7f7);color:var(--jp-content-font-color1, #111);"
             "font-family:var(--jp-code-font-family, monospace);font-size:var(--jp-code-font-size, 13px);"
             "border:1px solid var(--jp-cell-editor-border-color, #ddd);border-radius:3px;padding:4px 6px"),
}


def esc(text: Any) -> str:
    """HTML-escape any value's ``str``."""
    return escape("" if text is None else str(text))


def pre(text: str, style: str = "") -> str:
    """An escaped ``<pre>`` block that wraps long lines."""
    return (f'<pre style="white-space:pre-wrap;margin:2px 0;font-family:var(--jp-code-font-family, monospace);'
            f'{style}">{esc(text)}</pre>')


def clip(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``text`` cut in the middle to about ``limit`` characters, with a marker."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters not shown] …\n{text[-half:]}"


def highlight(code: str, language: str = "python") -> str:
    """Code in a box coloured by the theme (see ``STYLE["code"]``).

    pygments marks tokens with its CSS classes only: its inline colours assume a white page and
    made the code pale grey on white in the dark theme. The box's text and background come from
    JupyterLab's variables, so the code is readable in any theme even where no token is styled.
    """
    try:
        from pygments import highlight as _hl
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        inner = _hl(code, get_lexer_by_name(language), HtmlFormatter(nowrap=True))
    except Exception:  # pygments missing or an unknown lexer: plain is fine
        inner = esc(code)
    return (f'<pre class="highlight nbagent-code" style="white-space:pre-wrap;margin:2px 0;{STYLE["code"]}">'
            f"{inner}</pre>")


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
