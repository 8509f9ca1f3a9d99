"""Append-only streaming of assistant Markdown to stock ipywidgets, as cleaned HTML (see ``.safe``).

The text is shown as a chain of ``Output`` widgets: settled chunks (cut at a paragraph break
outside code fences) are never sent again; only the live tail changes. Chunks sit in groups of
``GROUP`` so adding one resends a short children list, not the whole chain. A byte budget (credit
of ``RATE`` bytes per streamed character, plus ``SLACK``) holds back updates that would cost more
than that, so the bytes sent stay linear in the answer whatever the model's speed; the view's
interval limit (≤ 20 updates/s) applies on top, and the final update is always sent.
"""

from __future__ import annotations

import ipywidgets as w

from ...display.html import NO_TEX
from .safe import markdown_html

SEAL = 400  # a tail this long is cut at its last paragraph break outside a code fence
LINE_SEAL = 1_600  # ... or at its last line break (a code fence is closed and reopened)
HARD_SEAL = 3_200  # ... or at its last space, or anywhere
GROUP = 8  # chunks per group widget
RATE = 2.75  # bytes of widget updates allowed per streamed character
SLACK = 3_000  # bytes allowed before any character has earned them (a prompt first update)
UPDATE_COST = 150  # bytes of an update besides its text (the Output's outputs structure)
OPEN_COST = 650  # bytes of a new chunk widget (its comm_open) and its group's children list
HTML_SIZE = 1.3  # bytes of cleaned HTML (JSON-encoded) per character of Markdown, measured on bench_stream's answer


def _fence_open(text: str) -> str | None:
    """The opening fence line when ``text`` ends inside a fenced code block, else None."""
    opener = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if opener is None and stripped.startswith(("```", "~~~")):
            opener = stripped
        elif opener is not None and stripped.startswith(opener[:3]) and not stripped[3:].strip():
            opener = None
    return opener


def split_point(tail: str) -> int:
    """Where to cut the tail (0: keep it whole). The cut falls after a paragraph break outside code
    when the tail is ≥ ``SEAL``, at a line break when ≥ ``LINE_SEAL``, at a space or anywhere when
    ≥ ``HARD_SEAL``."""
    if len(tail) < SEAL:
        return 0
    at = tail.rfind("\n\n")
    while at > 0:
        if _fence_open(tail[:at]) is None:
            return at + 2
        at = tail.rfind("\n\n", 0, at)
    if len(tail) < LINE_SEAL:
        return 0
    at = tail.rfind("\n")
    if at > 0:
        return at + 1
    if len(tail) < HARD_SEAL:
        return 0
    at = tail.rfind(" ")
    return at + 1 if at > 0 else len(tail)


def _markdown(text: str) -> tuple[dict[str, object], ...]:
    # Rendered and cleaned here, never sent as text/markdown: JupyterLab renders a running
    # session's outputs as trusted, raw HTML in Markdown included (see .safe).
    # In a div of class NO_TEX: the live answer shows "$5 and $10" as written, as its transcript does.
    html = f'<div class="{NO_TEX}">{markdown_html(text)}</div>'
    return ({"output_type": "display_data", "data": {"text/html": html}, "metadata": {}},)


class StreamedMarkdown:
    """The chain of widgets showing one streamed text; ``widget`` is its container."""

    def __init__(self) -> None:
        self.text = ""
        self.chunks: list[str] = []  # settled chunks (raw text; their concatenation + tail = text)
        self.tail = ""
        self._shown_tail = ""  # the tail as last sent
        self.fence = ""  # the reopened fence shown before the tail (a cut inside a code block)
        self.credit = float(SLACK)
        self.layout = w.Layout()
        self._tail_widget = w.Output(layout=self.layout)
        self._group = w.VBox([self._tail_widget], layout=self.layout)
        self.widget = w.VBox([self._group])

    def append(self, text: str) -> None:
        self.text += text
        self.tail += text
        self.credit += RATE * len(text)

    def cost(self) -> int:
        """Bytes the next update would send, about."""
        cut = split_point(self.tail)
        shown = HTML_SIZE * (len(self.fence) + len(self.tail))
        return int(shown) + UPDATE_COST + (OPEN_COST + UPDATE_COST if cut else 0)

    def ready(self) -> bool:
        """Whether the budget allows an update now."""
        return self.credit >= self.cost()

    def push(self) -> None:
        """Send the tail (cutting off a settled chunk when it is long enough)."""
        self.credit -= self.cost()
        cut = split_point(self.tail)
        if not cut:
            self._tail_widget.outputs = _markdown(self.fence + self.tail)
            self._shown_tail = self.tail
            return
        chunk, rest = self.tail[:cut], self.tail[cut:]
        opener = _fence_open(self.fence + chunk)
        shown = self.fence + chunk + ("\n" + opener[:3] if opener else "")
        self._tail_widget.outputs = _markdown(shown)
        self.chunks.append(chunk)
        self.fence = opener + "\n" if opener else ""
        self.tail = self._shown_tail = rest
        self._tail_widget = w.Output(layout=self.layout, outputs=_markdown(self.fence + rest))
        if len(self._group.children) >= GROUP:
            self._group = w.VBox([self._tail_widget], layout=self.layout)
            self.widget.children = (*self.widget.children, self._group)
        else:
            self._group.children = (*self._group.children, self._tail_widget)

    def shown(self) -> str:
        """The text the widgets show, fences reopened at cuts removed (``text`` once flushed)."""
        return "".join(self.chunks) + self._shown_tail

    def replace(self, data: dict[str, str]) -> None:
        """Show one final bundle instead of the chain (an interrupted stream)."""
        out = w.Output(layout=self.layout)
        out.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)
        self.widget.children = (out,)


__all__ = ["StreamedMarkdown", "split_point"]
