"""The agent view's text parts: streamed assistant text, folded thinking, status lines and the
per-request table. Each has three faces: a stock-ipywidgets ``widget``, a ``plain()`` transcript
and a static ``html()``; widgets change only through methods the view calls from the agent loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as w

from ...display.html import NO_TEX, esc, pre
from .render import STYLE
from .safe import markdown_html
from .stream import StreamedMarkdown

if TYPE_CHECKING:
    import pandas as pd


class TextBlock:
    """Streaming assistant text, rendered by the front-end as Markdown in a chain of ``Output``
    widgets where only the live tail changes (``stream.StreamedMarkdown``)."""

    def __init__(self) -> None:
        self.interrupted = False
        self.stream = StreamedMarkdown()
        self.widget = self.stream.widget
        self.pushed = 0  # widget updates sent (coalescing is measured by tests)

    @property
    def text(self) -> str:
        return self.stream.text

    def append(self, text: str) -> None:
        self.stream.append(text)

    def ready(self) -> bool:
        """Whether an update now fits the byte budget (the view asks before a throttled push)."""
        return self.interrupted or self.stream.ready()

    def push(self) -> None:
        """Send what changed to the widgets."""
        self.pushed += 1
        if self.interrupted:
            self.stream.replace({"text/html": self._interrupted_html(), "text/plain": self.plain()})
        else:
            self.stream.push()

    def shown(self) -> str:
        """The text the widgets show (tests)."""
        return self.stream.shown()

    def interrupt(self, message: str = "") -> None:
        self.interrupted = True
        self.note = message
        self.push()

    def _interrupted_html(self) -> str:
        note = f" — {esc(self.note)}" if getattr(self, "note", "") else ""
        return (f'<div class="{NO_TEX}" style="{STYLE["interrupted"]}"><div style="white-space:pre-wrap">{esc(self.text)}</div>'
                f"<small><b>⚠ interrupted</b>{note} (not kept in the conversation)</small></div>")

    def plain(self) -> str:
        return f"{self.text}\n  [interrupted]" if self.interrupted else self.text

    def html(self) -> str:
        return self._interrupted_html() if self.interrupted else markdown_html(self.text)


class ThinkingBlock:
    """Extended thinking, folded in an Accordion."""

    def __init__(self) -> None:
        self.text = ""
        self.interrupted = False
        self._body = w.HTML()
        self.widget = w.Accordion(children=[self._body], titles=("Thinking",), selected_index=None)

    def append(self, text: str) -> None:
        self.text += text

    def push(self) -> None:
        style = STYLE["interrupted"] if self.interrupted else STYLE["muted"]
        self._body.value = pre(self.text, style)
        if self.interrupted:
            self.widget.set_title(0, "Thinking (interrupted)")

    def interrupt(self, message: str = "") -> None:
        self.interrupted = True
        self.push()

    def plain(self) -> str:
        return "[thinking] " + self.text.strip().replace("\n", "\n  ")

    def html(self) -> str:
        return f"<details><summary>Thinking</summary>{pre(self.text, STYLE['muted'])}</details>"


class Line:
    """One line of status (truncation, fallback, notice, end of run)."""

    def __init__(self, text: str, *, icon: str = "ℹ", style: str = STYLE["muted"]) -> None:
        self.text, self.icon, self.style = text, icon, style
        self.widget = w.HTML(self.html())

    def plain(self) -> str:
        return f"{self.icon} {self.text}"

    def html(self) -> str:
        return f'<div style="{self.style}">{esc(self.icon)} {esc(self.text)}</div>'


class TableBlock:
    """A pandas table (the per-request accounting) shown after a turn."""

    def __init__(self, df: pd.DataFrame, title: str) -> None:
        from ...display.tables import html_table

        self.df, self.title = df, title
        self._static = html_table(df)
        self.widget = w.Output()
        self.widget.outputs = ({
            "output_type": "display_data",
            "data": {"text/html": f'<div class="{NO_TEX}"><b>{esc(title)}</b>{_df_html(df)}</div>',
                     "text/plain": self.plain()},
            "metadata": {},
        },)

    def plain(self) -> str:
        from ...display.tables import text_table

        return f"{self.title}\n{text_table(self.df)}"

    def html(self) -> str:
        return f"<b>{esc(self.title)}</b>{self._static}"


def _df_html(df: pd.DataFrame) -> str:
    try:
        table = str(df.to_html(index=False, na_rep="", border=0)).replace("<table", '<table style="white-space:nowrap"', 1)
        # A wide run table scrolls in its own box instead of being cut at the cell's edge.
        return f'<div style="overflow-x:auto;max-width:100%">{table}</div>'
    except Exception:  # pragma: no cover - pandas always has to_html
        return pre(str(df))


__all__ = ["Line", "TableBlock", "TextBlock", "ThinkingBlock"]
