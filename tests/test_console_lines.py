"""The terminal's lines (``python -m nbagent.demo``, ``print_event``) say what a request was charged for."""

from __future__ import annotations

from typing import Any

from nbagent import Agent
from nbagent.console import format_event
from nbagent.engine.contracts import events as ev


def test_a_request_line_names_the_cache_tokens_its_cost_is_for(monkeypatch: Any, tmp_path: Any) -> None:
    # make demo's second request printed "0 in / 21 out, $0.0029": its 1,062-token cache write left out,
    # so the price read as the price of 21 tokens
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    agent = Agent(allow=["python"])
    events = [e for prompt in ("What is 17 * 23?", "What is 6 * 7?") for e in agent.run_sync(prompt)]
    records = [e.record for e in events if isinstance(e, ev.RequestCompleted) and e.record is not None]
    written = next(r for r in records if r.usage.cache_creation_input_tokens and not r.usage.cache_read_input_tokens)
    read = next(r for r in records if r.usage.cache_read_input_tokens)
    for record in (written, read):
        line = format_event(ev.RequestCompleted(record=record)) or ""
        u = record.usage
        assert f"{u.cache_creation_input_tokens:,} cache write" in line, line
        assert (f"{u.cache_read_input_tokens:,} cache read" in line) == bool(u.cache_read_input_tokens), line
        assert line.count(" / ") == 1 and f"{u.input_tokens:,} in" in line


def test_the_done_line_of_a_model_without_prices_whose_attempt_was_cut_off_says_unknown_not_at_least_zero() -> None:
    """Two requests spent on a model without prices (a dropped attempt, then its retry): the history's
    count (1) against the 2 spent read as one priced request: "session spent ≥ $0.0000"."""
    totals = ev.Totals(requests=1, unpriced_requests=1, spent_usd=0.0, spent_requests=2, spent_unpriced_requests=2)
    line = format_event(ev.Done(reason="end_turn", totals=totals)) or ""
    assert "session spent unknown (2 request(s) without prices) in 2 requests" in line, line
    saved = ev.Totals(requests=1, unpriced_requests=1, spent_requests=1)  # a Done saved before the field
    assert "unknown (1 request(s) without prices)" in (format_event(ev.Done(reason="end_turn", totals=saved)) or "")
