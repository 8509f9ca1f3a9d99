"""What the model saw at one request, kept as a reference into the session's history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..contracts.messages import Message


@dataclass(frozen=True, slots=True)
class SentRequest:
    """What the model saw at one request, kept as a reference into the session, not a copy.

    ``messages`` is rebuilt on demand (for ``%agent saw`` and the explorer) from the session's
    history: its first ``history_len`` messages (the last one cut to ``last_blocks`` blocks, in
    case a later prompt was merged into it), ``deleted_range`` hidden and the context updates as
    of ``ts``. A copy per request made memory quadratic in a long session. ``system`` is shared
    between requests (the system prompt is static for a session), ``tools`` names the tools offered.
    """

    request: int
    turn: int
    model: str
    system: str
    tools: tuple[str, ...]
    history_len: int
    last_blocks: int
    deleted_range: tuple[int, int] | None
    ts: int
    rebuild: Callable[["SentRequest"], list[Message]] = field(repr=False, compare=False)

    @property
    def messages(self) -> list[Message]:
        """The messages of the request as sent (without the provider's cache breakpoints)."""
        return self.rebuild(self)
