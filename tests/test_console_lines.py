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
