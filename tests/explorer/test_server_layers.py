"""The server layers in the context-policy explorer's replay: ``edit`` clears what the simulated
Messages API clears on the same request (checked through the SDK), ``compact`` summarises as the
simulator does and its block goes back verbatim, and the strip, recall probe and table show both."""

from __future__ import annotations

from typing import Any

import pytest

from nbagent.engine.api_facts.context_edits import CLEARED_PLACEHOLDER
from nbagent.engine.api_facts.cost import Usage, price_of
from nbagent.engine.api_facts.models import DEFAULT_MODEL, get_model
from nbagent.engine.api_facts.server_context import sign
from nbagent.engine.contracts.config import SessionConfig
from nbagent.engine.contracts.context_policy import ContextPolicy, ContextPolicyError
from nbagent.engine.contracts.messages import blocks, is_compaction
from nbagent.engine.contracts.provider import MessageComplete, ModelRequest
from nbagent.engine.loop.request_context import server_edits
from nbagent.explorer import AnalysisShape, compare_policies, comparison_df, data_analysis_session, planted_facts
from nbagent.explorer.policies import STRIP, simulate_policy
from nbagent.providers.anthropic import simulated_provider
from nbagent.providers.simulated import Reply, SimulatedAPI, text_reply

from .test_policies import assert_api_valid

SHAPE = AnalysisShape(requests=60, large_results=12, large_tokens=3_000, planted=4)
EDIT = "edit:trigger=20000:keep=2:clear=5000"
BIG = AnalysisShape(requests=40, large_results=12, large_tokens=5_000, planted=4)  # passes 50k: compaction acts
COMPACT = "compact:trigger=50000"


@pytest.fixture(scope="module")
def edited():
    return simulate_policy(EDIT, data_analysis_session(SHAPE), 200_000, facts=planted_facts(SHAPE))


@pytest.fixture(scope="module")
def compacted():
    return simulate_policy(COMPACT, data_analysis_session(BIG), 200_000, facts=planted_facts(BIG))


def without_cache_control(messages: Any) -> list[dict]:
    return [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks(m)]}
            for m in messages]


async def what_the_simulator_shows(messages: list, policy: str) -> tuple[list, MessageComplete]:
    """One request through the simulated API served to the SDK, with the ``context_management``
    the engine sends for ``policy``: the messages its model saw, and the completed reply."""
    seen: list = []

    def responder(body: dict) -> Reply:
        seen.extend(body["messages"])
        return text_reply("ok")

    config = SessionConfig(model=DEFAULT_MODEL, context=ContextPolicy.parse(policy))
    request = ModelRequest(model=DEFAULT_MODEL, messages=messages, system=None, tools=(), max_tokens=100,
                           context_management=server_edits(config, DEFAULT_MODEL))
    chunks = [c async for c in simulated_provider(SimulatedAPI(responder=responder)).stream(request)]
    assert isinstance(chunks[-1], MessageComplete)
    return seen, chunks[-1]


def test_a_server_policy_replays_and_the_server_clears_what_the_client_still_sends(edited):
    acted = [r for r in edited.records if "edit" in r.actions]
    assert acted and acted[0].request > 1
    for r in edited.records:
        assert_api_valid(list(r.sent))  # the client's request stays valid; the server edits its copy
        assert len(r.strip) == r.history_len
    last = edited.records[-1]
    assert "e" in last.strip and "e" in STRIP
    cleared = [b for m in last.seen for b in blocks(m) if b.get("content") == CLEARED_PLACEHOLDER]
    assert len(cleared) == last.strip.count("e")
    assert CLEARED_PLACEHOLDER not in str(last.sent)
    assert last.tokens_removed > 0 and last.tokens_sent < acted[0].tokens_sent + last.tokens_removed


async def test_edit_clears_what_the_simulated_api_clears_on_the_same_request(edited):
    record = next(r for r in edited.records if "edit" in r.actions and r.request > 40)
    seen, reply = await what_the_simulator_shows([dict(m) for m in record.sent], EDIT)
    assert without_cache_control(seen) == without_cache_control(record.seen)
    cleared = [e for e in reply.applied_edits if e["type"] == "clear_tool_uses_20250919"]
    assert cleared and cleared[0]["cleared_input_tokens"] == record.tokens_removed


@pytest.mark.parametrize("policy", [EDIT, COMPACT])
async def test_tokens_and_cache_are_what_the_simulated_api_bills_request_by_request(policy, edited, compacted):
    # The cache is charged on what the server processed after its edits (see server_layers.py):
    # the same requests through the SDK to the simulated API, 10 s apart, bill the same figures.
    result = edited if policy == EDIT else compacted
    now = [0.0]
    api = SimulatedAPI(responder=lambda body: text_reply("ok"), clock=lambda: now[0])
    config = SessionConfig(model=DEFAULT_MODEL, context=ContextPolicy.parse(policy))
    for r in result.records:
        now[0] = r.request * 10.0
        request = ModelRequest(model=DEFAULT_MODEL, messages=[dict(m) for m in r.sent], system=None, tools=(),
                               max_tokens=100, context_management=server_edits(config, DEFAULT_MODEL))
        done = [c async for c in simulated_provider(api).stream(request)][-1]
        assert isinstance(done, MessageComplete)
        u = done.usage
        assert (u.prompt_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens) == (
            r.tokens_sent, r.cache_read_tokens, r.cache_write_tokens), r.request
        if "compact" in r.actions:
            assert done.compaction_usage is not None
            assert done.compaction_usage.input_tokens == r.tokens_sent + r.tokens_removed


def test_the_recall_probe_loses_a_fact_the_server_cleared(edited):
    facts = planted_facts(SHAPE)
    lost = edited.lost_at()
    assert lost[0] is not None
    record = edited.record(lost[0])
    assert "edit" in record.actions
    assert facts[0] not in str(record.seen) and facts[0] in str(record.sent)  # sent, but not shown
    assert not record.facts_seen[0]


def test_a_server_compaction_is_billed_as_the_simulator_bills_it_and_its_block_goes_back(compacted):
    at = [r for r in compacted.records if "compact" in r.actions]
    assert len(at) == 1
    record, after = at[0], compacted.record(at[0].request + 1)
    info = get_model(DEFAULT_MODEL)
    assert info is not None
    block = next(b for b in blocks(compacted.history[record.history_len]) if is_compaction(b))
    summarised = price_of(Usage(input_tokens=record.tokens_removed + record.tokens_sent,
                                output_tokens=max(1, len(block["content"]) // 4)), info)
    plain = price_of(Usage(record.tokens_sent - record.cache_write_tokens - record.cache_read_tokens,
                           record.output_tokens, record.cache_write_tokens, record.cache_read_tokens), info)
    assert record.usd == pytest.approx(plain + summarised)
    assert block["signature"] == sign(block["content"])  # the server's own block, sent back verbatim
    assert block in [b for m in after.sent for b in blocks(m)]
    assert after.seen[0]["content"][0]["text"] == block["content"]  # the server reads from the block on
    assert set(after.strip[2:record.history_len - 1]) == {"c"} and "c" in STRIP
    assert after.tokens_sent < record.tokens_removed


async def test_the_simulated_api_takes_the_replayed_compaction_block_and_shows_the_same(compacted):
    request = next(r for r in compacted.records if "compact" in r.actions).request + 3
    record = compacted.record(request)
    seen, _ = await what_the_simulator_shows([dict(m) for m in record.sent], COMPACT)
    assert without_cache_control(seen) == without_cache_control(record.seen)


def test_the_recall_probe_reads_the_server_summary(compacted):
    facts = planted_facts(BIG)
    end = compacted.records[-1]
    summary = end.seen[0]["content"][0]["text"]
    assert [f in summary for f in facts] == list(end.facts_seen)  # what survived is what the summary lists
    assert any(end.facts_seen)


def test_the_table_counts_server_layers_only_when_a_policy_has_one():
    history = data_analysis_session(SHAPE)
    client = comparison_df(compare_policies(history, ("layered", "cline"), 200_000))
    assert "edit" not in client.columns and "compact" not in client.columns
    both = comparison_df(compare_policies(history, ("layered", EDIT), 200_000))
    assert list(both["edit"]) == [0, sum("edit" in r.actions for r in simulate_policy(EDIT, history).records)]
    assert list(both["compact"]) == [0, 0]


LOOP_ORDER = ("summary", "mask", "truncate", "edit", "compact")
"""The client's layers act before a request, in the loop's order, then the server's at the API."""


def in_loop_order(actions: tuple[str, ...]) -> bool:
    return list(actions) == sorted(actions, key=LOOP_ORDER.index)


def test_client_and_server_layers_act_on_one_request_in_the_loops_order():
    policy = "mask:keep=2:clear=6000+edit:trigger=9000:keep=1:clear=1000+truncate"
    result = simulate_policy(policy, data_analysis_session(SHAPE), 30_000, facts=planted_facts(SHAPE), max_tokens=4_000)
    acted = [r.actions for r in result.records if r.actions]
    assert ("mask", "edit") in acted and any(a == ("edit",) for a in acted)  # masking first, the server on what it left
    assert all(in_loop_order(a) for a in acted) and all(len(r.strip) == r.history_len for r in result.records)


def test_the_all_preset_replays_with_every_layer_available():
    result = simulate_policy("all", data_analysis_session(SHAPE), 30_000, facts=planted_facts(SHAPE), max_tokens=4_000)
    acted = [r.actions for r in result.records if r.actions]
    # In this 30k window the summary and the mask layer both act; the server triggers are never reached.
    assert {"summary", "mask"} <= {a for actions in acted for a in actions}
    assert all(in_loop_order(a) for a in acted) and all(len(r.strip) == r.history_len for r in result.records)


def test_a_model_that_does_not_take_a_server_layer_is_refused_with_what_to_do():
    with pytest.raises(ContextPolicyError, match="claude-opus-4-5 does not take.*compact_20260112.*client-side"):
        simulate_policy("server", data_analysis_session(SHAPE), model="claude-opus-4-5")


def test_the_strips_draw_the_server_layers_with_their_own_colour_and_legend(edited, compacted):
    from nbagent.explorer.policy_render import STRIP_COLOURS, comparison_html, comparison_text

    assert set(STRIP_COLOURS) == set(STRIP)
    html = comparison_html([edited, compacted], 30)
    assert STRIP["e"] in html and STRIP["c"] in html and STRIP_COLOURS["e"] in html and STRIP_COLOURS["c"] in html
    text = comparison_text([edited, compacted], 30)
    assert "tool result cleared by the server" in text and "summarised by the server" in text
