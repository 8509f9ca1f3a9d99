"""``RunBody``: the parts of one run's view, in order, and the throttled pushes of streamed ones.

A part is anything with a ``widget`` and ``plain()`` / ``html()`` faces (a line, a text or
thinking block, a tool card, a prompt). Streamed parts change many times a second; ``mark_dirty``
pushes them at most once per ``min_interval`` and never drops the last change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol, TypeVar, Union

import ipywidgets as w

from .render import STYLE
from .text import Line, TextBlock, ThinkingBlock
from .tools import ToolCard


class Part(Protocol):
    """One part of a run's view: its widget, and its plain and HTML faces (for the static copy)."""

    @property
    def widget(self) -> w.Widget: ...

    def plain(self) -> str: ...

    def html(self) -> str: ...


P = TypeVar("P", bound=Part)
Streamed = Union[TextBlock, ThinkingBlock, ToolCard]
"""A part that changes while it streams (pushed by :meth:`RunBody.flush`)."""


class RunBody:
    """The parts of one run and the parts of the request being streamed."""

    def __init__(self, min_interval: float, clock: Callable[[], float]) -> None:
        self.min_interval, self.clock = min_interval, clock
        self.widget = w.VBox()
        self.parts: list[Part] = []
        self.stream_updates = 0  # widget pushes of streamed content (≤ 1 per min_interval)
        self._stream: dict[tuple[str, int], TextBlock | ThinkingBlock] = {}
        self._request_parts: list[Part] = []
        self._dirty: list[Streamed] = []
        self._last_push = float("-inf")
        self._timer: asyncio.TimerHandle | None = None

    @property
    def request_parts(self) -> tuple[Part, ...]:
        """The blocks and tool cards of the request being streamed, in order."""
        return tuple(self._request_parts)

    def add(self, part: P, *, of_request: bool = False) -> P:
        """Append a part (a line, a block, a card, a prompt); ``of_request``: it belongs to the
        request being streamed. Returns the part."""
        self.parts.append(part)
        self.widget.children = (*self.widget.children, part.widget)
        if of_request:
            self._request_parts.append(part)
        return part

    def line(self, text: str, icon: str = "ℹ", style: str = STYLE["muted"]) -> None:
        """Append one line of text (a notice, a truncation, the closing line)."""
        self.add(Line(text, icon=icon, style=style))

    def stream_part(self, kind: str, index: int) -> TextBlock | ThinkingBlock:
        """The current request's streamed block ``index`` of ``kind`` ("text" or "thinking")."""
        part = self._stream.get((kind, index))
        if part is None:
            part = self._stream[(kind, index)] = self.add(
                TextBlock() if kind == "text" else ThinkingBlock(), of_request=True)
        return part

    def close_request(self) -> None:
        """The current request is over: flush it; later blocks belong to the next request."""
        self.flush()
        self._stream.clear()
        self._request_parts = []

    def mark_dirty(self, part: Streamed) -> None:
        """A streamed part changed: push it now, or soon (at most one push per ``min_interval``)."""
        if part not in self._dirty:
            self._dirty.append(part)
        wait = self.min_interval - (self.clock() - self._last_push)
        if wait <= 0:
            self.flush(due=True)
        elif self._timer is None:
            try:  # the trailing update, in case the stream pauses (same loop: same thread)
                self._timer = asyncio.get_running_loop().call_later(wait, lambda: self.flush(due=True))
            except RuntimeError:
                pass  # no loop: the next non-stream event or finish() flushes

    def flush(self, *, due: bool = False) -> None:
        """Send pending stream updates now (the last update is never dropped). ``due``: a throttled
        update, which skips text whose byte budget (``stream.RATE``) does not allow one yet."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        ready = [p for p in self._dirty if not due or not isinstance(p, TextBlock) or p.ready()]
        if ready:
            for part in ready:
                if isinstance(part, ToolCard):
                    part.push_partial()
                else:
                    part.push()
            self._dirty = [p for p in self._dirty if p not in ready]
            self.stream_updates += 1
            self._last_push = self.clock()


__all__ = ["RunBody"]
