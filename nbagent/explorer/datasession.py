"""A long data-analysis session for comparing context policies, with facts planted early.

One task ("Analyse the sales data."), then ``requests`` API requests: each reply but the last calls
the ``python`` tool and the next user message answers with its result; the last reply is the
analysis (text). ``large_results`` of the results
are data loads of about ``large_tokens`` tokens (spread evenly over the session), the others short
outputs; the first ``planted`` data loads each carry one planted fact (:func:`planted_facts`), the
*recall probe*: per request, which of them a policy still shows the model. Deterministic (same
shape, same messages), so the bench and notebook 07 print the same numbers.

Sizes are in tokens: the filler is words that encode as one token each (:func:`~.synth.filler`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..engine.contracts.messages import Message
from .synth import filler


@dataclass(frozen=True)
class AnalysisShape:
    """How to build the session (defaults: the issue's 300 requests with 40 results of ~5k tokens)."""

    requests: int = 300
    large_results: int = 40
    large_tokens: int = 5_000
    small_tokens: int = 150
    assistant_tokens: int = 120
    planted: int = 10
    """How many facts are planted (one in each of the first data loads)."""

    def __post_init__(self) -> None:
        if self.requests < 1:
            raise ValueError("a session needs at least one request")
        if not 0 <= self.large_results <= self.requests - 1:
            raise ValueError(f"large_results must be between 0 and requests - 1 ({self.requests - 1}): "
                             "the last request's reply is the analysis, not a tool call")
        if not 0 <= self.planted <= self.large_results:
            raise ValueError(f"facts are planted in data loads: at most large_results ({self.large_results})")
        if min(self.large_tokens, self.small_tokens, self.assistant_tokens) < 1:
            raise ValueError("message sizes must be at least one token")

    def large_at(self) -> tuple[int, ...]:
        """The tool steps (0-based) whose result is a data load, evenly spread."""
        steps = self.requests - 1
        return tuple(sorted({round(i * steps / self.large_results) for i in range(self.large_results)}))


def planted_facts(shape: AnalysisShape | None = None) -> tuple[str, ...]:
    """The facts planted in the first data loads, in order (each a distinct, searchable string)."""
    shape = shape or AnalysisShape()
    return tuple(f"FACT-{k}: region {k} revenue {1_000 + 137 * k} k$" for k in range(shape.planted))


def data_analysis_session(shape: AnalysisShape | None = None, **fields: Any) -> list[Message]:
    """The session's history (``2 × requests`` messages, ending on the analysis); keywords are :class:`AnalysisShape`
    fields (``requests=100``, ``large_tokens=3000``, …)."""
    shape = replace(shape or AnalysisShape(), **fields)
    facts = planted_facts(shape)
    large = {step: k for k, step in enumerate(shape.large_at())}
    history: list[Message] = [{"role": "user", "content": [{"type": "text", "text": "Analyse the sales data."}]}]
    for step in range(shape.requests - 1):
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": filler(shape.assistant_tokens, step)},
            {"type": "tool_use", "id": f"toolu_{step:04d}", "name": "python", "input": {"code": f"step({step})"}}]})
        k = large.get(step)
        body = filler(shape.large_tokens if k is not None else shape.small_tokens, step + 1)
        if k is not None and k < len(facts):
            body = f"{facts[k]}\n{body}"
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{step:04d}", "content": body}]})
    history.append({"role": "assistant", "content": [{"type": "text", "text": filler(shape.assistant_tokens, 0)}]})
    return history


__all__ = ["AnalysisShape", "data_analysis_session", "planted_facts"]
