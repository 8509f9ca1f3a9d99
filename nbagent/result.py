"""``RunResult``: what :meth:`nbagent.Agent.run_sync` returns.

A list of the run's events (so code that loops over them or reads ``events[-1]`` keeps working)
with the answers most callers want: ``.text``, ``.cost``, ``.done``, ``.events``, and a one-line
repr instead of ~40 raw event objects in a notebook cell.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .display.format import fmt_total_cost
from .engine.contracts.events import Done, Event, RequestCompleted, RequestRecord, StreamInterrupted, TextDelta, ToolResult
from .engine.contracts.messages import Message, text_of
from .engine.loop.structured import OutputSpec

BILLED_ROUNDING_USD = 1e-9
"""Below this, what the session was billed and the records' sum differ by float rounding only."""


class RunResult(list):  # type: ignore[type-arg]  # list[Event]; generic subclassing needs 3.9+ typing
    """The events of one run, plus ``text`` (the assistant's text, all requests joined), ``cost``
    (this run's cost in USD, None when a request had no price; what the session spent is
    ``done.totals.spent_usd``) and ``done`` (the ``Done``
    event, None if the run did not finish)."""

    def __init__(self, events: Iterable[Event] = (), *, unpriced_billed: int = 0, billed_usd: float | None = None) -> None:
        super().__init__(events)
        self.unpriced_billed = unpriced_billed
        """Requests of the run billed without a price (as the session counted them), those no record
        keeps included (a stream that broke, or was stopped, after the answer began): the run's
        cost is unknown then, never ``0.0``. Set by :meth:`~nbagent.Agent.run_sync`."""
        self.billed_usd = billed_usd
        """What the session was billed for the run's priced requests, those no record keeps included
        (a broken stream is billed too); None where unknown (events alone). Set by ``run_sync``."""

    @property
    def events(self) -> list[Event]:
        """The events as a plain list."""
        return list(self)

    @property
    def done(self) -> Done | None:
        return next((e for e in reversed(self) if isinstance(e, Done)), None)

    @property
    def text(self) -> str:
        """The assistant's text: each request's, a blank line between requests. The partial text of
        a stream that broke (``StreamInterrupted``) is left out, as it is from history: the request
        sent again streams it anew, and counting both read ``The answer isThe answer is 42``."""
        parts: list[str] = []
        current: list[str] = []
        for e in self:
            if isinstance(e, TextDelta):
                current.append(e.text)
            elif isinstance(e, StreamInterrupted):
                current = []
            elif isinstance(e, RequestCompleted):
                parts.append("".join(current))
                current = []
        parts.append("".join(current))  # a run stopped mid-stream keeps what it showed
        return "\n\n".join(p for p in parts if p)

    @property
    def cost(self) -> float | None:
        """This run's cost in USD; None when a request of it has no price (a local or gateway
        model): a total that left it out would read as the run's cost, and None sums as nothing."""
        costs = [r.cost_usd for r in self._records()]
        if self.unpriced_billed or any(c is None for c in costs):
            return None
        recorded = sum((c for c in costs if c is not None), 0.0)  # a float as typed, 0.0 with no request
        # Streams that broke after the answer began were billed and no record keeps them: money
        # spent is never left out (a difference of float rounding alone is no such request).
        if self.billed_usd is not None and self.billed_usd - recorded > BILLED_ROUNDING_USD:
            return self.billed_usd
        return recorded

    def _records(self) -> list[RequestRecord]:
        return [e.record for e in self if isinstance(e, RequestCompleted) and e.record is not None]

    @property
    def reason(self) -> str | None:
        """Why the run ended (``end_turn``, ``max_requests``, ``error``, …), None if it did not."""
        done = self.done
        return done.reason if done is not None else None

    def __repr__(self) -> str:
        requests = sum(1 for e in self if isinstance(e, RequestCompleted))
        tools = sum(1 for e in self if isinstance(e, ToolResult))
        text = " ".join(self.text.split())
        if len(text) > 60:
            text = text[:57] + "…"
        records = self._records()
        priced = [r.cost_usd for r in records if r.cost_usd is not None]
        unpriced = max(len(records) - len(priced), self.unpriced_billed)
        total = self.cost if self.cost is not None else sum(priced)
        return (f"RunResult({self.reason or 'unfinished'}, {requests} request(s), {tools} tool call(s), "
                f"{fmt_total_cost(total, unpriced, len(priced) + unpriced)}, text={text!r})")

    def _repr_pretty_(self, p: object, cycle: bool) -> None:
        p.text(repr(self))  # type: ignore[attr-defined]  # IPython's pretty printer




def run_answer(spec: OutputSpec | None, done: Done, history: Sequence[Message]) -> Any:
    """What :attr:`nbagent.Agent.last_output` holds after a run that ended with ``done``: the
    structured output parsed by ``spec``, else the last assistant message's text."""
    if spec is not None:
        return spec.parse(done.output) if done.output is not None else None
    for message in reversed(history):
        if message.get("role") == "assistant":
            return text_of(message)
    return None


__all__ = ["RunResult", "run_answer"]
