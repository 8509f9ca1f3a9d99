"""Every stop reason handled as documented, server tools, thinking/effort per model and budgets
without prices, against the simulated API through the real SDK (issue 11)."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.api_facts.request_params import SettingNotSupported
from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.events import Notice, StreamInterrupted
from nbagent.providers.simulated import RawBlock, Reply, SimulatedAPI, TextBlock, text_reply, tool_reply
from tests.engine.loop._blocks import as_server_tool_use, as_text, as_thinking, content_list
from tests.engine.loop.test_query_support import assert_persisted_valid, done_of, kinds, make_engine, messages_requests, run

REFUSAL = {"type": "refusal", "category": "cyber", "explanation": "This request was declined because it could "
                                                                  "enable cyber harm."}
SEARCH = RawBlock({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "nbagent"}})
RESULT = RawBlock({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
    {"type": "web_search_result", "url": "https://example.org/a", "title": "A", "encrypted_content": "enc",
     "page_age": None}]})
CITATION = {"type": "web_search_result_location", "url": "https://example.org/a", "title": "A",
            "encrypted_index": "idx", "cited_text": "nbagent runs agents"}
CITED = RawBlock({"type": "text", "text": "It runs agents.", "citations": [CITATION]})


async def test_a_refusal_shows_its_explanation_and_the_refused_exchange_is_not_sent_again(tmp_path: Any) -> None:
    api = SimulatedAPI([text_reply("hello"), Reply((TextBlock("Hel"),), "refusal", stop_details=REFUSAL),
                        text_reply("fine")])
    engine = make_engine(api, tmp_path)
    await run(engine, "one")
    ev = await run(engine, "something refused")
    assert done_of(ev).reason == "refusal"
    notice = next(e for e in ev if isinstance(e, Notice))
    assert "cyber harm" in notice.message and "(cyber)" in notice.message
    assert len(engine.session.records) == 2 and engine.session.records[1].cost_usd  # billed, recorded
    await run(engine, "three")
    sent = messages_requests(api)[2].body["messages"]
    assert "something refused" not in str(sent) and "Hel" not in str(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_a_context_window_exceeded_answer_is_kept_and_billed(tmp_path: Any) -> None:
    api = SimulatedAPI([Reply((TextBlock("A long answer that gets cut"),), "model_context_window_exceeded"),
                        text_reply("next")])
    engine = make_engine(api, tmp_path)
    ev = await run(engine, "one")
    assert not any(isinstance(e, StreamInterrupted) for e in ev)
    assert done_of(ev).reason == "end_turn"
    assert "gets cut" in str(engine.session.history[-1])
    record = engine.session.records[-1]
    assert record.stop_reason == "model_context_window_exceeded" and record.cost_usd and record.usage.output_tokens
    assert any(isinstance(e, Notice) and "context window" in e.message for e in ev)
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_pause_turn_sends_the_content_back_and_counts_against_max_requests(tmp_path: Any) -> None:
    api = SimulatedAPI([Reply((SEARCH,), "pause_turn"), Reply((RESULT, CITED))])
    engine = make_engine(api, tmp_path, server_tools=("web_search",))
    ev = await run(engine, "search it")
    assert done_of(ev).reason == "end_turn" and kinds(ev).count("request_completed") == 2
    second = messages_requests(api)[1].body
    paused = content_list(engine.session.history[1])  # the default model's thinking, then the search
    assert [b["type"] for b in paused] == ["thinking", "server_tool_use"] and as_thinking(paused[0])["signature"]
    sent = second["messages"][-1]
    assert sent["role"] == "assistant"  # sent back as it came (plus the cache breakpoint on its last block)
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in sent["content"]] == paused
    assert any(t.get("type", "").startswith("web_search_") for t in second["tools"])
    api2 = SimulatedAPI([Reply((SEARCH,), "pause_turn")] * 3)
    limited = make_engine(api2, tmp_path, task="limited", server_tools=("web_search",), max_requests=2)
    assert done_of(await run(limited, "search")).reason == "max_requests"


async def test_server_tool_blocks_and_citations_enter_history_and_searches_are_costed(tmp_path: Any) -> None:
    api = SimulatedAPI([Reply((SEARCH, RESULT, CITED)), text_reply("again")])
    engine = make_engine(api, tmp_path, server_tools=("web_search",))
    ev = await run(engine, "search it")
    assert done_of(ev).reason == "end_turn"
    content = content_list(engine.session.history[-1])
    assert [b["type"] for b in content] == ["thinking", "server_tool_use", "web_search_tool_result", "text"]
    thinking = as_thinking(content[0])
    assert thinking["thinking"] == "" and thinking["signature"]  # thought unasked, text omitted
    assert as_server_tool_use(content[1])["input"] == {"query": "nbagent"}
    assert as_text(content[3])["citations"] == [CITATION]
    record = engine.session.records[-1]
    assert record.usage.web_search_requests == 1
    found = [e for e in ev if e.kind == "server_tool_result"]
    assert len(found) == 1 and found[0].name == "web_search" and found[0].sources == ("A — https://example.org/a",)
    await run(engine, "next")
    assert messages_requests(api)[1].body["messages"][1]["content"] == content  # passed back unchanged
    assert_persisted_valid(engine.config.task_dir, engine)


def test_a_thinking_budget_on_an_adaptive_model_is_a_clear_error_before_sending() -> None:
    with pytest.raises(SettingNotSupported, match="effort=low"):
        SessionConfig(model="claude-sonnet-5-5", thinking_budget=2048)
    with pytest.raises(SettingNotSupported, match="refuses effort"):
        SessionConfig(model="claude-haiku-4-5", effort="high")
    assert SessionConfig(model="claude-haiku-4-5", thinking_budget=2048).thinking_budget == 2048


async def test_three_thinking_requests_on_sonnet_5_5_send_nothing_refused_and_pass_thinking_back(tmp_path: Any) -> None:
    api = SimulatedAPI([tool_reply("add", {"a": 1, "b": 2}), tool_reply("add", {"a": 3, "b": 4}), text_reply("7")])
    engine = make_engine(api, tmp_path, model="claude-sonnet-5-5", effort="low")
    ev = await run(engine, "add things")
    assert done_of(ev).reason == "end_turn" and kinds(ev).count("request_completed") == 3
    bodies = [r.body for r in messages_requests(api)]
    for body in bodies:
        assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "low"}
        assert not {"temperature", "top_p", "top_k", "tool_choice"} & set(body)
        assert body["messages"][-1]["role"] == "user"
    first_thinking = content_list(engine.session.history[1])[0]
    assert first_thinking["type"] == "thinking" and first_thinking["signature"]
    assert bodies[2]["messages"][1]["content"][0] == first_thinking  # byte-identical
    assert_persisted_valid(engine.config.task_dir, engine)


async def test_an_unpriced_model_is_budgeted_at_its_familys_highest_price(tmp_path: Any) -> None:
    api = SimulatedAPI([tool_reply("add", {"a": 1, "b": 2})] * 3)
    engine = make_engine(api, tmp_path, model="claude-opus-4-1-20250805", max_budget_usd=0.000001)
    with pytest.warns(UserWarning, match="prices"):
        ev = await run(engine, "spend")
    assert done_of(ev).reason == "max_budget" and len(engine.session.records) == 1
    assert engine.session.records[0].cost_usd is None and engine.totals.unpriced_requests == 1
    notices = [e.message for e in ev if e.kind == "notice"]
    assert len(notices) == 1 and "counts its requests at claude-opus" in notices[0]
    again = await run(engine, "more")  # said once per session
    assert not [e for e in again if e.kind == "notice"]
