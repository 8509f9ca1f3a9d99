"""Compaction: one summary request replaces what would be hidden, is a row of the turn table with
its cost, is undone by rollback, falls back with a notice on failure; auto_compact keeps a long
session under a small window; the simulated brain's summary is deterministic and labelled."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from nbagent import Agent
from nbagent.engine.contracts.events import Notice
from nbagent.engine.contracts.hooks import Hooks
from nbagent.engine.contracts.messages import history_problems, is_text
from nbagent.engine.loop.compaction import COMPACT_KEEP, NOTHING_TO_COMPACT
from nbagent.engine.state.compactions import SUMMARY_MARK
from nbagent.providers.simulated import SimulatedAPI
from tests.engine.loop._blocks import content_list
from tests.engine.loop.test_query_support import messages_requests

if TYPE_CHECKING:  # typing.Unpack is 3.11+
    from typing_extensions import Unpack


class WindowSettings(TypedDict, total=False):
    """The session settings these tests vary (SessionConfig fields, passed on to the Agent)."""

    context_window: int
    auto_compact: float
    context: str


def agent_on(tmp_path: Path, **settings: Unpack[WindowSettings]) -> tuple[Agent, SimulatedAPI]:
    api = SimulatedAPI()  # the demo brain
    return Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, allow=["python"],
                 **settings), api


def chat(agent: Agent, n: int) -> None:
    for i in range(n):
        agent.run_sync(f"What is {i + 2} * 3? Tell me about topic {i}.")


def test_compact_summarises_the_hidden_part_and_rollback_restores(tmp_path: Path) -> None:
    agent, api = agent_on(tmp_path)
    chat(agent, 3)
    before, records, turn = copy.deepcopy(agent.history), len(agent.records), agent.turn
    events = agent.compact_sync("keep the numbers")
    summary_request = messages_requests(api)[-1].body
    assert "nbagent-compaction" in str(summary_request["system"]) and "keep the numbers" in str(summary_request)
    assert any(isinstance(e, Notice) and "Compacted messages" in e.message for e in events)
    (marked,) = [b["text"] for b in content_list(agent.history[2]) if is_text(b) and SUMMARY_MARK in b["text"]]
    assert "(simulated model) Summary (simulated" in marked and history_problems(agent.history) == []
    assert len(agent.history) < len(before) and agent.history[:2] == before[:2]
    assert agent.history[-1]["content"] == before[-1]["content"] or history_problems(agent.history) == []
    row = agent.records[-1]
    assert row.keep == COMPACT_KEEP and row.cost_usd is not None and len(agent.records) == records + 1
    assert agent.totals.requests == records + 1
    agent.run_sync("What is 9 * 9?")
    assert SUMMARY_MARK in str(messages_requests(api)[-1].body["messages"])  # the model saw it
    agent.rollback(turn)
    assert agent.history == before and len(agent.records) == records


def test_the_summary_request_is_sent_without_cache_breakpoints_and_billed_as_plain_input(tmp_path: Path) -> None:
    # Notebook 05's summary row read "cache write 2,280, cache read 0": a one-off prompt written to
    # the cache at 1.25x the input price, which no later request reads.
    agent, api = agent_on(tmp_path)
    chat(agent, 3)
    agent.compact_sync()
    body = messages_requests(api)[-1].body
    assert "nbagent-compaction" in str(body["system"]) and "cache_control" not in str(body)
    usage = agent.records[-1].usage
    assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0 and usage.input_tokens > 0


def test_a_summary_is_not_summarised_again_and_failure_is_a_notice(tmp_path: Path) -> None:
    agent, api = agent_on(tmp_path)
    chat(agent, 3)
    agent.compact_sync()
    history = copy.deepcopy(agent.history)
    events = agent.compact_sync()
    assert [e.message for e in events if isinstance(e, Notice)][0].startswith("Nothing to compact")
    assert agent.history == history


def test_compact_with_nothing_to_compact_sends_nothing_and_is_no_failure_of_the_summariser(tmp_path: Path) -> None:
    # Each `%agent compact` with too little to summarise counted as a failed summary: three of them
    # switched the summary layer off for the rest of the session, with a warning that it had failed.
    hooked: list[int] = []
    agent, api = agent_on(tmp_path, context="mask+summary+truncate")
    agent.engine.hooks = Hooks.from_mapping({"pre_compact": lambda turn, hidden: hooked.append(turn)})
    chat(agent, 1)
    sent = len(messages_requests(api))
    notices = [e.message for _ in range(3) for e in agent.compact_sync() if isinstance(e, Notice)]
    assert notices == [NOTHING_TO_COMPACT] * 3 and len(messages_requests(api)) == sent and hooked == []
    assert agent.engine._summary.failures == 0  # the layer stays on: it compacts by itself when due
    chat(agent, 3)
    agent.compact_sync()
    assert agent.records[-1].keep == COMPACT_KEEP and hooked == [agent.turn]


def test_auto_compact_keeps_a_long_session_under_the_window(tmp_path: Path) -> None:
    agent, api = agent_on(tmp_path, context_window=20_000, auto_compact=0.8)
    for i in range(30):  # 60 requests
        agent.run_sync(f"What is {i + 2} * 7? Please also explain at length: " + "word " * 900)
    assert len(agent.records) >= 60
    compactions = [r for r in agent.records if r.keep == COMPACT_KEEP]
    assert compactions and all(r.context_tokens < 20_000 for r in agent.records)
    assert abs(agent.totals.cost_usd - sum(r.cost_usd or 0 for r in agent.records)) < 1e-9
    assert history_problems(agent.history) == []


def test_compact_notice_says_tokens_before_and_after_and_what_it_cost(tmp_path: Path) -> None:
    import re

    from nbagent.engine.api_facts.tokens import TokenCounter

    agent, _ = agent_on(tmp_path)
    for i in range(4):  # turns long enough that a summary is shorter than what it replaces
        agent.run_sync(f"What is {i + 2} * 3? Tell me about topic {i}: " + "some context " * 40)
    before = TokenCounter().count_request(agent.history)  # nothing hidden yet: the history is what is sent
    (notice,) = [e.message for e in agent.compact_sync() if isinstance(e, Notice)]
    after = TokenCounter().count_request(agent.history)
    row = agent.records[-1]
    assert row.keep == COMPACT_KEEP and row.cost_usd is not None
    assert notice.startswith("Compacted messages 2-")
    assert f"history {before:,} → {after:,} tokens" in notice and after < before
    assert f"${row.cost_usd:.4f}" in notice
    counts = re.search(r"\(([\d,]+) in, ([\d,]+) out\)", notice)
    assert counts and counts.groups() == (f"{row.usage.prompt_tokens:,}", f"{row.usage.output_tokens:,}")


def test_compact_notice_says_when_the_summary_saved_nothing(tmp_path: Path) -> None:
    import re

    agent, _ = agent_on(tmp_path)
    chat(agent, 3)  # short turns, as in a first demo: the summary is longer than what it replaces
    (notice,) = [e.message for e in agent.compact_sync() if isinstance(e, Notice)]
    sizes = re.search(r"history ([\d,]+) → ([\d,]+) tokens", notice)
    assert sizes is not None
    before, after = (int(g.replace(",", "")) for g in sizes.groups())
    assert after >= before, notice  # the case under test
    assert "no shorter than the messages it replaced, so it saved nothing" in notice
