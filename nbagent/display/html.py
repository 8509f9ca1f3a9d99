"""HTML text helpers shared by every front-end that writes HTML (the agent view, the truncation
explorer): escaping, a wrapping ``<pre>``, clipping long text in the middle.

Pure strings, no widgets, so static transcripts (nbconvert, GitHub) and live widgets agree.
"""

from __future__ import annotations

from html import escape

PREVIEW_CHARS = 4000
# The class of every top-level element of nbagent's HTML outputs: JupyterLab and Notebook 7 typeset
# LaTeX in HTML outputs, so two dollar amounts in one output ("session spent $0.0230 ($0.0102 of it
# …") became math, the dollar signs gone. MathJax 3 skips an element of class ``mathjax_ignore``
# (MathJax 2 and the classic Notebook: ``tex2jax_ignore``).
NO_TEX = "mathjax_ignore tex2jax_ignore"


def esc(text: object) -> str:
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


def svg_figure(svg: str) -> str:
    """``svg`` in a block whose own text is 0 px. A notebook opened untrusted (a lesson handed to
    students, before they run it) has its HTML sanitised, which drops the ``<svg>`` tags but keeps
    their text: each chart's labels and every hover title ran together in the page ("#0 user: first
    pair#1 assistant: …", "0250k500k750k1Mwindowmax allowed…"). Hidden there, while a rendered SVG
    sizes its own text (each chart sets ``font-size`` on its root). The tables beside the charts
    carry their numbers. Inline, as the bare SVG was: two charts sit side by side where the page is wide."""
    return f'<div style="font-size:0;display:inline-block">{svg}</div>'
