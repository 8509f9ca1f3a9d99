"""The context-policy explorer: the data-analysis session, the replay of whole policies through the
engine's layers (money, cache, strips, recall probe) and its static and widget views."""

from __future__ import annotations

import re

import pytest

import nbagent
from nbagent.engine.api_facts.cost import Usage, price_of
from nbagent.engine.api_facts.models import get_model
from nbagent.engine.contracts.messages import blocks, is_tool_result, is_tool_use
from nbagent.explorer import (
    AnalysisShape,
    PolicyExplorer,
    compare_policies,
    comparison_df,
    data_analysis_session,
    planted_facts,
    recall_df,
    simulate_policy,
)
from nbagent.explorer.simulate import request_points

SHAPE = AnalysisShape(requests=60, large_results=12, large_tokens=3_000, planted=4)
WINDOW = 30_000
POLICIES = ("mask:keep=2:clear=6000", "cline", "summary:headroom=2000")


@pytest.fixture(scope="module")
def results():
    return compare_policies(data_analysis_session(SHAPE), POLICIES, WINDOW, facts=planted_facts(SHAPE), max_tokens=4_000)


def assert_api_valid(messages) -> None:
    """Roles alternate and every tool_use is answered by a tool_result in the next message."""
    assert messages[0]["role"] == "user"
    for a, b in zip(messages, messages[1:], strict=False):
        assert a["role"] != b["role"]
    for i, m in enumerate(messages):
        uses = {b["id"] for b in blocks(m) if is_tool_use(b)}
        if uses and i + 1 < len(messages):
            answered = {b["tool_use_id"] for b in blocks(messages[i + 1]) if is_tool_result(b)}
            assert uses <= answered, (i, uses - answered)
        if i:
            results = {b["tool_use_id"] for b in blocks(m) if is_tool_result(b)}
            asked = {b["id"] for b in blocks(messages[i - 1]) if is_tool_use(b)}
            assert results <= asked, (i, results - asked)


def test_the_session_has_one_request_per_reply_and_plants_each_fact_once():
    history = data_analysis_session(SHAPE)
    assert len(history) == 2 * SHAPE.requests and history[-1]["role"] == "assistant"
    assert len(request_points(history)) == SHAPE.requests
    assert_api_valid(history)
    text = str(history)
    assert all(text.count(f) == 1 for f in planted_facts(SHAPE))
    assert data_analysis_session(SHAPE) == history  # deterministic


def test_a_shape_that_cannot_be_built_is_refused_with_the_reason():
    with pytest.raises(ValueError, match="at most large_results"):
        AnalysisShape(large_results=3, planted=5)
    with pytest.raises(ValueError, match="requests - 1"):
        AnalysisShape(requests=10, large_results=10)


def test_each_policy_acts_with_its_own_layer_and_its_strip_shows_it(results):
    masked, cline, summary = results
    assert {a for r in masked.records for a in r.actions} == {"mask"}
    assert {a for r in cline.records for a in r.actions} == {"truncate"}
    assert "summary" in {a for r in summary.records for a in r.actions}
    last = [r.records[-1] for r in results]
    assert "m" in last[0].strip and "." in last[1].strip and "s" in last[2].strip
    for result in results:
        for r in result.records:
            assert len(r.strip) == r.history_len and r.strip.startswith("PP"[:r.history_len])


def test_every_request_of_every_policy_stays_api_valid(results):
    for result in results:  # the summary folds mid-turn, as the engine does
        for r in result.records:
            assert_api_valid(list(r.sent))


def test_dollars_are_the_model_prices_of_each_requests_tokens(results):
    info = get_model("claude-sonnet-5-5")
    for r in results[1].records:
        uncached = r.tokens_sent - r.cache_read_tokens - r.cache_write_tokens
        expected = price_of(Usage(uncached, r.output_tokens, r.cache_write_tokens, r.cache_read_tokens), info)
        assert r.usd == pytest.approx(expected)
    assert results[1].usd == pytest.approx(sum(r.usd for r in results[1].records))
    summary = results[2]
    with_summary = [r for r in summary.records if "summary" in r.actions]
    assert all(r.usd > price_of(Usage(0, r.output_tokens, r.cache_write_tokens + (r.tokens_sent - r.cache_read_tokens
                                                                                    - r.cache_write_tokens),
                                      r.cache_read_tokens), info) for r in with_summary)  # + the summary request


def test_masking_sends_less_and_reads_the_cache_after_each_clearing(results):
    masked, cline, _ = results
    assert max(r.tokens_sent for r in masked.records) < max(r.tokens_sent for r in cline.records)
    assert masked.usd < cline.usd
    assert masked.cache_hit_share > 0.8


def test_the_recall_probe_says_which_request_stopped_showing_each_fact(results):
    masked, cline, _ = results
    facts = planted_facts(SHAPE)
    for result in (masked, cline):
        for k, lost in enumerate(result.lost_at()):
            assert lost is not None
            assert not result.record(lost).facts_seen[k] and result.record(lost - 1).facts_seen[k]
            assert facts[k] not in str(result.record(lost).sent)
    df = recall_df(results)
    assert list(df.columns) == ["fact", *POLICIES] and list(df["fact"]) == [f"FACT-{k}" for k in range(4)]


def test_the_comparison_table_gives_dollars_relative_to_the_first_policy(results):
    df = comparison_df(results)
    assert list(df["policy"]) == list(POLICIES)
    assert df[f"× {POLICIES[0]}"][0] == 1.0
    assert df[f"× {POLICIES[0]}"][1] == round(results[1].usd / results[0].usd, 2)


def test_an_unknown_model_is_refused_because_the_replay_needs_its_prices():
    with pytest.raises(ValueError, match="unknown model"):
        simulate_policy("cline", data_analysis_session(SHAPE), WINDOW, model="no-such-model")


def test_the_explorer_has_static_html_and_text_that_read_in_any_theme():
    ex = nbagent.explore_policies(policies=POLICIES, window=WINDOW, max_tokens=4_000, request=30, **SHAPE.__dict__)
    assert isinstance(ex, PolicyExplorer) and ex.request == 30 and ex.requests == SHAPE.requests
    bundle = ex._repr_mimebundle_()
    html, text = bundle["text/html"], bundle["text/plain"]
    assert "FACT-0" in html and "FACT-0" in text and "request 30:" in text
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # Text colours are the theme's (light and dark), never a fixed colour.
    text_colours = re.findall(r'<text[^>]*style="fill:([^"]+)"', html) + re.findall(r'[;"]color:([^;"]+)', html)
    assert text_colours and all(c.startswith(("var(--jp-", "color-mix(")) for c in text_colours), set(text_colours)
    assert "<text" not in re.sub(r"<text[^>]*style=\"fill:[^\"]+\"", "", html)  # every SVG text is themed


def test_the_slider_moves_the_strips_to_the_request():
    ex = nbagent.explore_policies(policies=POLICIES[:2], window=WINDOW, **SHAPE.__dict__)
    widget = ex.widget
    ex._slider.value = 10
    assert ex.request == 10 and "request 10:" in ex._panels.value
    ex.show(999)
    assert ex.request == SHAPE.requests and ex._slider.value == SHAPE.requests
    assert widget is ex.widget


def test_a_live_session_or_a_history_is_replayed_and_a_mixup_is_refused():
    history = data_analysis_session(SHAPE)
    ex = PolicyExplorer(history=history, policies=("cline",), window=WINDOW, facts=["FACT-1"])
    assert ex.results[0].facts == ("FACT-1",) and "120 messages" in ex.describe()
    with pytest.raises(TypeError, match="synthetic session only"):
        PolicyExplorer(history=history, requests=10)
    with pytest.raises(ValueError, match="at least one"):
        compare_policies(history, ())


def test_a_live_session_is_replayed_with_its_window_system_prompt_and_tools(tmp_path):
    from nbagent import Agent
    from nbagent.providers.simulated import SimulatedAPI
    from tests.engine.loop.test_context_policy_loop import Load, responder

    api = SimulatedAPI(responder=responder(4), thinks_by_default=False)
    a = Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, tools=[Load()],
              task_dir=tmp_path / "task", context_window=12_000)
    a.run_sync("load four parts")
    ex = nbagent.explore_policies(a, policies=("mask:keep=1:clear=2000", "cline"), facts=["part 0 fact", "part 3 fact"])
    assert ex.window == 12_000 and ex.requests == len(a.records) and "live session (simulated)" in ex.describe()
    masked, cline = ex.results
    assert masked.records[-1].tokens_sent < cline.records[-1].tokens_sent  # masking cleared the old loads
    assert masked.records[-1].facts_seen == (False, True) and "m" in masked.records[-1].strip
    first = a.sent[0]
    assert cline.records[0].tokens_sent >= len(first.system) // 8  # the system prompt and tools are counted
    a.close()


def test_cache_figures_agree_with_the_simulated_apis_prompt_cache_on_the_providers_own_breakpoints() -> None:
    from nbagent.engine.api_facts.caching import PromptCache
    from nbagent.engine.api_facts.tokens import TokenCounter
    from nbagent.engine.contracts.provider import ModelRequest
    from nbagent.providers.anthropic_request import request_kwargs

    system = "You analyse data with care and say what you did. " * 60
    result = simulate_policy("mask:keep=2:clear=3000", data_analysis_session(SHAPE), 200_000, system=system)
    assert sum(bool(r.cache_anchors) for r in result.records) > 20  # the anchors are exercised
    assert any(len(r.cache_anchors) == 2 for r in result.records)  # and the maskings that read one
    now = [0.0]
    counter = TokenCounter()
    reference = PromptCache(lambda: now[0], counter)
    for r in result.records:
        now[0] = r.request * 10.0  # simulate_policy's default spacing
        body = request_kwargs(ModelRequest(model=result.model, messages=list(r.sent), system=system, tools=[],
                                            max_tokens=100, cache_anchors=r.cache_anchors))
        usage = reference.account(body, counter.count_request(list(r.sent), system))
        assert (usage.read, usage.write) == (r.cache_read_tokens, r.cache_write_tokens), r.request


def test_a_short_sessions_dollars_are_not_rounded_to_cents_in_the_comparison_table():
    """The table rounded each policy's dollars to cents: a short session's two policies, $0.0117 and
    $0.0115, both read 0.01 (the difference the table is for; under $0.005, 0.0), where every other
    table shows money to four decimals."""
    shape = AnalysisShape(requests=4, large_results=1, large_tokens=500, planted=1)
    short = compare_policies(data_analysis_session(shape), POLICIES[:2], WINDOW, facts=planted_facts(shape), max_tokens=4_000)
    df = comparison_df(short)
    assert list(df["usd"]) == [round(r.usd, 4) for r in short]
    assert df["usd"][0] != df["usd"][1]
