"""The records the engine's events carry: one API request's accounting and the session's totals.

Frozen, saved as JSON (``requests.json``, ``ui_messages.json``): the dataclasses are the schema
(see :mod:`.saved`). Re-exported by :mod:`.events`, where most code reaches them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..api_facts.cost import Usage
from .saved import Money, NonNegInt, Number, saved_record


@saved_record
@dataclass(frozen=True, slots=True)
class ContextAction:
    """What one context layer did to one request: which layer (``mask``, ``server_edit``,
    ``summary``, ``server_compaction``, ``truncate``), the tokens it removed, and whether the API
    reported that figure (server layers) or nbagent estimated it (client layers)."""

    layer: str
    tokens_removed: NonNegInt
    detail: str = ""
    reported: bool = False


@saved_record
@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One API request's accounting: a row of the per-turn table.

    ``turn`` counts user prompts (1-based), ``request`` counts API requests in the session.
    ``context_tokens`` is the prompt size the API reported; ``cost_usd`` is None for unknown prices.
    """

    turn: NonNegInt
    request: NonNegInt
    model: str
    usage: Usage
    cost_usd: Money | None
    context_tokens: int
    max_allowed: Number
    context_window: int
    deleted_range: tuple[int, int] | None
    keep: str | None
    file_read_saving: Number | None
    retries: NonNegInt
    stop_reason: str | None
    duration_s: Number
    ts: int
    estimated_input_tokens: int = 0
    trigger_tokens: int | None = None
    """When the context manager changed what this request sent: the previous request's tokens
    that made it act (the figure its notice shows)."""
    without: tuple[str, ...] = ()
    """Request features the endpoint refused and this request was sent without (``cache_control``,
    ``thinking``, ...; see ``engine.loop.degrade``)."""
    context_actions: tuple[ContextAction, ...] = ()
    """What the context policy's layers did to this request (the cache write it caused is
    ``usage.cache_creation_input_tokens``)."""
    compaction_usage: Usage | None = None
    """Tokens of the server's compaction iterations on this request: billed (in ``cost_usd``),
    not part of ``usage``, which is the context the model saw."""
    rate_limit_wait_s: Number = 0.0
    """Seconds this request waited for the shared rate limit (paced, or told to by ``retry-after``)."""
    unanswered_usage: Usage | None = None
    """What this request's attempts cut off mid-answer (a dropped stream, an error event) and then
    retried were billed for: in ``cost_usd`` (so the row adds up to what the session spent), not
    part of ``usage``, which is the attempt that answered."""
    __omit_when_default__: ClassVar[tuple[str, ...]] = ("context_actions", "compaction_usage", "without",
                                                         "rate_limit_wait_s", "unanswered_usage")
    """Written only when set (see :data:`~nbagent.engine.disk.persist.OMIT_WHEN_DEFAULT`)."""


@saved_record
@dataclass(frozen=True, slots=True)
class Totals:
    """Session totals of the requests in the current history (``requests``, ``usage``,
    ``cost_usd``: the sum of per-request costs, None parts count as 0), and ``spent_usd`` /
    ``spent_requests``: every request billed in this session, rolled-back ones included (a
    rollback never lowers them; budgets count them)."""

    requests: int = 0
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: Number = 0.0
    retries: int = 0
    truncations: int = 0
    unpriced_requests: int = 0
    spent_usd: Number = 0.0
    spent_requests: int = 0
    spent_unpriced_requests: int = 0
    """Of ``spent_requests``, those without prices (rolled back or cut off mid-answer too): with
    ``unpriced_requests`` alone, a dropped attempt on such a model made "≥ $0.0000" of "unknown"."""
    __omit_when_default__: ClassVar[tuple[str, ...]] = ("spent_unpriced_requests",)
    """Written only when set: a folder's saved events read as an earlier version wrote them."""

    @property
    def cost(self) -> float | None:
        """The current history's cost in USD, None when a request of it had no price (a local or
        gateway model): ``cost_usd`` alone is the priced requests' sum, ``0.0`` for a session on a
        local model, which read as free where it is unknown (as ``RunResult.cost``)."""
        return None if self.unpriced_requests else float(self.cost_usd)


__all__ = ["ContextAction", "RequestRecord", "Totals"]
