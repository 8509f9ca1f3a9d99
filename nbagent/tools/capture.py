"""Bounded capture of a tool's output: the head and the tail, and how much was dropped between.

A python call printing 200 MB must not hold 200 MB (nor save it): past ``limit`` characters only
the last part is kept (rolling), so the start and the end of the output, usually what matters,
survive, and the gap is stated.
"""

from __future__ import annotations

import io

from nbagent.engine.contracts.config import DEFAULT_TOOL_CAPTURE_LIMIT

_MARKER_ROOM = 80  # so head + marker + tail fit in ``limit`` and nothing downstream cuts again


class BoundedText(io.TextIOBase):
    """A write-only text buffer keeping at most about ``limit`` characters (half head, half tail)."""

    def __init__(self, limit: int = DEFAULT_TOOL_CAPTURE_LIMIT) -> None:
        self.limit = limit
        keep = max(limit - _MARKER_ROOM, 2)
        self._head_max, self._tail_max = keep // 2, keep - keep // 2
        self._head: list[str] = []
        self._head_len = 0
        self._tail: list[str] = []
        self._tail_len = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        n = len(s)
        self.total += n
        room = self._head_max - self._head_len
        if room > 0:
            self._head.append(s[:room])
            self._head_len += min(room, n)
            s = s[room:]
        if s:
            self._tail.append(s)
            self._tail_len += len(s)
            if self._tail_len > 2 * self._tail_max:  # compact now and then, not on every write
                self._tail = [self._tail_text()]
                self._tail_len = len(self._tail[0])
        return n

    def clear(self) -> None:
        """Forget what was written (a cell's ``clear_output()``): nothing kept, nothing dropped."""
        self._head, self._tail = [], []
        self._head_len = self._tail_len = self.total = 0

    def _tail_text(self) -> str:
        text = "".join(self._tail)
        return text[-self._tail_max:] if len(text) > self._tail_max else text

    @property
    def dropped(self) -> int:
        """Characters written but not kept."""
        return self.total - self._head_len - len(self._tail_text())

    def getvalue(self) -> str:
        """What was kept; a marker in the middle says how much was dropped."""
        tail = self._tail_text()
        dropped = self.total - self._head_len - len(tail)
        head = "".join(self._head)
        if not dropped:
            return head + tail
        return f"{head}\n... [{dropped:,} characters of output not captured] ...\n{tail}"
