"""The explorer's cache-read share of the no-truncation replay is the session's own: a live session
run against the simulated Messages API (which applies the API's caching rules) and replayed by the
explorer must report the same share of tokens read from the cache."""

from __future__ import annotations

from pathlib import Path

import pytest

import nbagent
from nbagent.explorer import explore

SHORT = ["what is 2+3", "what is 4+4", "what is 5+6", "what is 7+1"]
READS = ["read a.txt", "what is 2+3", "read b.txt", "read c.txt", "what is 4+4"]


@pytest.mark.parametrize("prompts", [SHORT, READS], ids=["short prompts", "file reads"])
async def test_baseline_cache_share_matches_the_turn_table(
        prompts: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name in "abc":
        (tmp_path / f"{name}.txt").write_text("".join(f"{name} line {i} with several words\n" for i in range(300)))
    agent = nbagent.Agent(provider="simulated", allow=["python", "read_file"], cwd=tmp_path)
    try:
        for prompt in prompts:
            await agent.ask(prompt)
        table = agent.records  # what the turn table shows, request by request
        session_share = sum(r.usage.cache_read_input_tokens for r in table) / sum(r.context_tokens for r in table)
        assert session_share > 0.5  # the session really read from the cache
        replay = explore(session=agent).results["baseline"].summary_row()
        # Short prompts used to show 0%: the tool definitions, which head every cached prefix, were
        # left out of it, so the prefixes fell under the 1,024-token minimum.
        assert replay["cache-read share"] == pytest.approx(session_share, abs=0.01)
    finally:
        await agent.aclose()
