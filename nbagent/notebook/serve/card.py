"""The serve panel: what ``%agent serve`` shows in its cell, and where a client's calls ask.

No cell runs while an external client calls (the kernel is idle), so a card cannot go in "the
running cell". It goes in the ``%agent serve`` cell's output instead: that cell displays one VBox
(the panel) when the server starts, and each question is added to the panel's children from the
kernel's loop. Changing a displayed widget needs no cell (it is a comm message), and the click
comes back as a ``comm_msg`` the idle kernel handles (see :mod:`.kernel_loop`).

The question itself is nbagent's own :class:`~nbagent.notebook.view.prompts.PermissionPrompt`
(Allow / Allow always / Deny with a reason), under a line naming the client and what it asks and
the text it acts on, shown as nbagent's own cards show a tool's input (:func:`input_html`): whole,
in a box that scrolls, with invisible and direction-changing characters marked and warned of.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from ...display.html import esc
from ...engine.contracts.events import CallPreview
from ..view.diff import preview_html
from ..view.prompts import PermissionPrompt
from ..view.render import STYLE, input_html, reveal_hidden

SERVE_CLASS = "nbagent-serve"
"""The panel's DOM class: a card under it, retired by a kernel restart, says to run ``%agent serve`` again."""

CARDS_KEPT = 6
"""Settled cards kept on the panel (the record keeps every call; the panel is not a log). A card
still waiting for a click always stays: one dropped could never be answered."""


class ServePanel:
    """The widget ``%agent serve`` displays: a status line and the latest permission cards."""

    def __init__(self) -> None:
        self.status = w.HTML()
        self.cards = w.VBox([])
        self._prompts: dict[int, PermissionPrompt] = {}  # id(card) -> its prompt
        self.widget = w.VBox([self.status, self.cards])
        # The page tells its cards from the agent's when the kernel restarts (frontend/src/prompts.ts).
        self.widget.add_class(SERVE_CLASS)

    def set_status(self, text: str) -> None:
        self.status.value = f'<div style="{STYLE["muted"]}">{esc(text)}</div>'

    def ask(self, client: str, tool: str, summary: str, detail: str, reason: str,
            preview: CallPreview | None = None) -> PermissionPrompt:
        """Add a card asking about one call (kernel loop only); returns its prompt to await.

        ``preview`` (an edit's): which cell, as it is and as it will be, shown instead of ``detail``."""
        prompt = PermissionPrompt(f"{tool} from {client}", {}, reason)
        # Under the key "code" the input renderer shows the text alone, highlighted as Python.
        body = preview_html(preview) if preview is not None else input_html(tool, {"code": detail}) if detail else ""
        head = w.HTML(f'<div><b>MCP client {esc(client)}</b> asks: {esc(reveal_hidden(summary)[0])}</div>' + body)
        card = w.VBox([head, prompt.widget], layout=w.Layout(border="1px solid #ccc", padding="4px", margin="4px 0"))
        self._prompts[id(card)] = prompt
        self.cards.children = self._kept(self.cards.children) + (card,)
        return prompt

    def not_done(self, prompt: PermissionPrompt, line: str) -> None:
        """Say on an allowed card how the call ended where it did not succeed (kernel loop): not
        done (the cell changed while the user was asked), or ran and then failed (code that raised
        may have done part of its work). "✓ allowed" alone would read as done."""
        for card in self.cards.children:
            if self._prompts.get(id(card)) is prompt:
                note = w.HTML(f'<div style="{STYLE["error"]}">{esc(reveal_hidden(line)[0])}</div>')
                card.children = (*card.children, note)

    def _kept(self, cards: tuple[Any, ...]) -> tuple[Any, ...]:
        """``cards`` without the oldest settled ones beyond CARDS_KEPT - 1, and all of them while a
        card waits: a card dropped above it would move its buttons under the user's pointer as a
        new call arrives (a client chooses when its calls arrive)."""
        settled = [c for c in cards if _settled(self._prompts[id(c)])]
        if len(settled) < len(cards):
            return cards
        drop = {id(c) for c in settled[:max(len(settled) - (CARDS_KEPT - 1), 0)]}
        for key in drop:
            del self._prompts[key]
        return tuple(c for c in cards if id(c) not in drop)

    def close(self, note: str) -> None:
        self.set_status(note)
        for card in self.cards.children:
            for child in getattr(card, "children", ()):
                _disable(child)


def _settled(prompt: PermissionPrompt) -> bool:
    """Answered, or closed without an answer (timed out, cancelled): nothing waits on it any more."""
    return prompt.outcome is not None or prompt.stopped is not None


def _disable(widget: Any) -> None:
    if hasattr(widget, "disabled"):
        widget.disabled = True
    for child in getattr(widget, "children", ()):
        _disable(child)
