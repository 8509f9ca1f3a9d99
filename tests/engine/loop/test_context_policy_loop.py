"""Context policies in the loop, against the simulated API through the real SDK: masking leaves
placeholders and a record of what it cleared, rollback (also after a resume) restores the requests
byte for byte, server compaction's block goes back and the run ends well, an unsupported model
gets one notice and the client-side layers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic

from nbagent import Agent
from nbagent.engine.context.mask import is_placeholder
from nbagent.engine.contracts.events import Done, Notice
from nbagent.engine.contracts.messages import history_problems
from nbagent.engine.contracts.tool_api import Tool, ToolOutput
from nbagent.providers.simulated import Fault, SimulatedAPI, text_reply, tool_reply
from tests.engine.loop._blocks import content_list
from tests.engine.loop.test_query_support import make_engine, messages_requests, run


class Load(Tool):
    name = "load"
    description = "Load a part of the data (a big output)."
    read_only = True

    class Input(pydantic.BaseModel):
        part: int

    async def run(self, tool_input: dict[str, Any], ctx: Any) -> ToolOutput:
        return ToolOutput(content=f"part {tool_input['part']} fact: {'cell ' * 2500}")


def responder(calls_per_prompt: int) -> Any:
    def reply(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        done = sum(1 for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result") \
            if isinstance(last["content"], list) else 0
        results = sum(1 for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
                      if isinstance(b, dict) and b.get("type") == "tool_result")
        if done and results % calls_per_prompt == 0:
            return text_reply("done")
        return tool_reply("load", {"part": results})
    return reply


def agent(tmp_path: Path, context: str, api: SimulatedAPI, **settings: Any) -> Agent:
    return Agent(provider="simulated", simulated_options={"api": api}, cwd=tmp_path, tools=[Load()],
                 context=context, task_dir=tmp_path / "task", **settings)


def sent_bytes(api: SimulatedAPI) -> str:
    return json.dumps(messages_requests(api)[-1].body["messages"], sort_keys=True)


def test_masking_clears_old_results_records_it_and_keeps_the_history_valid(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(6), thinks_by_default=False)
    a = agent(tmp_path, "mask:keep=2:clear=5000", api)
    a.run_sync("load six parts")
    acted = [x for r in a.records for x in r.context_actions if x.layer == "mask"]
    assert acted and acted[0].tokens_removed >= 5000
    sent = messages_requests(api)[-1].body["messages"]
    results = [b for m in sent for b in (m["content"] if isinstance(m["content"], list) else [])
               if b.get("type") == "tool_result"]
    assert sum(is_placeholder(str(b["content"])) for b in results) >= 3 and history_problems(sent) == []
    assert not is_placeholder(str(results[-1]["content"]))  # the newest stay whole
    a.close()


def one_hour_marks(body: dict[str, Any]) -> list[int]:
    """Indices of the messages whose last block carries a one-hour breakpoint."""
    return [i for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)
            and m["content"][-1].get("cache_control", {}).get("ttl") == "1h"]


def test_a_masking_reads_the_prompt_before_it_from_the_cache_and_rewrites_only_the_rest(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(14), thinks_by_default=False)
    # A system prompt above the cacheable minimum, so the prefix up to every anchor is cacheable.
    a = agent(tmp_path, "mask:keep=2:clear=5000", api, append_system_prompt="Work carefully. " * 400)
    a.run_sync("load fourteen parts")
    bodies, records = [r.body for r in messages_requests(api)], list(a.records)
    masking = [k for k, r in enumerate(records) if any(x.layer == "mask" for x in r.context_actions)]
    assert len(masking) >= 3
    for before, k in zip(masking, masking[1:], strict=False):
        marks = one_hour_marks(bodies[k])
        # Two anchors: where this masking started (read) and where the next one will (written).
        assert len(marks) == 2 and bodies[k]["system"][-1]["cache_control"]["ttl"] == "1h"
        assert one_hour_marks(bodies[k - 1]) == marks[:1]  # placed by the requests before it
        # What the previous masking wrote at one hour (up to this masking's start) is read now.
        previous, usage = records[before].usage, records[k].usage
        assert usage.cache_read_input_tokens == previous.cache_read_input_tokens + previous.cache_creation_1h
        assert usage.cache_creation_1h > 0
    a.close()


async def test_a_retried_masking_request_still_reads_up_to_where_the_masking_started(tmp_path: Path) -> None:
    settings: dict[str, Any] = {"context": "mask:keep=2:clear=5000", "append_system_prompt": "Work carefully. " * 400}
    dry = SimulatedAPI(responder=responder(10), thinks_by_default=False)
    engine = make_engine(dry, tmp_path / "a", tools=[Load()], **settings)  # same length: same prompt size
    await run(engine, "load ten parts")
    second = [k for k, r in enumerate(engine.session.records) if any(x.layer == "mask" for x in r.context_actions)][1]
    number = messages_requests(dry)[second].number
    dry_usage = engine.session.records[second].usage
    api = SimulatedAPI(responder=responder(10), thinks_by_default=False, faults={number: Fault.overloaded()})
    engine = make_engine(api, tmp_path / "b", tools=[Load()], **settings)
    await run(engine, "load ten parts")
    failed, retried = (r.body for r in messages_requests(api) if r.number in (number, number + 1))
    assert len(one_hour_marks(failed)) == 2 and one_hour_marks(retried) == one_hour_marks(failed)
    record = engine.session.records[second]
    assert record.retries == 1  # and it reads what the request without the failure read
    assert record.usage.cache_read_input_tokens == dry_usage.cache_read_input_tokens > 0
    assert record.usage.cache_creation_1h == dry_usage.cache_creation_1h


def test_an_endpoint_refusing_the_one_hour_ttl_keeps_five_minute_caching(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(8), thinks_by_default=False, rejects=("cache_ttl",))
    a = agent(tmp_path, "mask:keep=2:clear=5000", api)
    events = a.run_sync("load eight parts")
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    notices = [e.message for e in events if isinstance(e, Notice) and "switched off" in e.message]
    assert len(notices) == 1 and "one-hour prompt cache" in notices[0]
    bodies = [r.body for r in messages_requests(api)]
    refused = next(k for k, b in enumerate(bodies) if one_hour_marks(b))
    assert all(one_hour_marks(b) == [] and "cache_control" in json.dumps(b) for b in bodies[refused + 1:])
    assert any(r.usage.cache_read_input_tokens > 0 for r in a.records[refused:])  # still cached, five minutes
    a.close()


def test_without_masking_no_one_hour_breakpoint_is_sent(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(8), thinks_by_default=False)
    a = agent(tmp_path, "cline", api)
    a.run_sync("load eight parts")
    assert all(one_hour_marks(r.body) == [] for r in messages_requests(api))
    a.close()


def view(a: Agent) -> str:
    """What the next request would send of the history, as bytes."""
    s = a.session
    return json.dumps(s.context.get_truncated_messages(s.history, s.deleted_range), sort_keys=True)


def test_rollback_across_masking_restores_the_request_byte_for_byte_also_after_resume(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(3), thinks_by_default=False)
    a = agent(tmp_path, "mask:keep=1:clear=3000", api)
    a.run_sync("first")
    a.run_sync("second")
    at_two = view(a)
    a.run_sync("third")  # masks turn 2's results too
    assert view(a)[:len(at_two) - 2] != at_two[:len(at_two) - 2]
    a.rollback(2)
    assert view(a) == at_two
    a.close()
    b = Agent.resume(tmp_path / "task", provider="simulated", simulated_options={"api": api}, tools=[Load()],
                     context="mask:keep=1:clear=3000")
    assert view(b) == at_two and str(b.config.context) == "mask:keep=1:clear=3000"
    b.close()


def test_a_refused_turn_takes_its_maskings_with_it(tmp_path: Path) -> None:
    refuse = {"on": False}
    base = responder(3)

    def reply(body: dict[str, Any]) -> Any:
        results = sum(1 for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
                      if isinstance(b, dict) and b.get("type") == "tool_result")
        if refuse["on"] and results >= 5:
            return text_reply("I can't help with that.", stop_reason="refusal")
        return base(body)

    api = SimulatedAPI(responder=reply, thinks_by_default=False)
    a = agent(tmp_path, "mask:keep=1:clear=3000", api)
    a.run_sync("first")
    at_one = view(a)
    refuse["on"] = True
    assert a.run_sync("second").reason == "refusal"
    assert any(x.layer == "mask" for r in a.records if r.turn == 2 for x in r.context_actions)
    assert view(a) == at_one  # the turn's masks went with it: they pointed at its own messages
    refuse["on"] = False
    a.run_sync("third")
    sent = messages_requests(api)[-1].body["messages"]
    assert history_problems(sent) == [] and not is_placeholder(str(sent[-1]["content"][0]["content"]))
    a.close()


def test_server_compaction_is_sent_back_and_the_run_ends_well(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(30), thinks_by_default=False)
    a = agent(tmp_path, "compact:trigger=50000", api)
    events = a.run_sync("load thirty parts")
    assert isinstance(events[-1], Done) and events[-1].reason != "error"
    compacted = [r for r in a.records if any(x.layer == "server_compaction" for x in r.context_actions)]
    assert compacted and compacted[0].compaction_usage is not None
    assert compacted[0].cost_usd is not None and compacted[0].cost_usd > 0
    later = messages_requests(api)[-1]
    assert later.headers["anthropic-beta"] == "compact-2026-01-12"
    a.close()


def test_a_model_without_server_edits_gets_one_notice_and_client_layers(tmp_path: Path) -> None:
    api = SimulatedAPI(responder=responder(3), thinks_by_default=False)
    a = agent(tmp_path, "compact+truncate", api, model="claude-sonnet-4-5")
    events = a.run_sync("go") + a.run_sync("again")
    notices = [e for e in events if isinstance(e, Notice) and "does not take" in e.message]
    assert len(notices) == 1 and "context_management" not in messages_requests(api)[-1].body
    a.close()


def test_server_edits_with_inputs_clear_the_tool_uses_inputs_the_history_keeps_them(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    reply = responder(8)

    def watching(body: dict[str, Any]) -> Any:
        seen[:] = body["messages"]  # what the model sees, after the server's edits
        return reply(body)

    api = SimulatedAPI(responder=watching, thinks_by_default=False)
    a = agent(tmp_path, "edit:trigger=10000:keep=2:clear=1000:inputs=1", api)
    events = a.run_sync("load eight parts")
    assert isinstance(events[-1], Done) and events[-1].reason == "end_turn"
    edit = messages_requests(api)[-1].body["context_management"]["edits"][-1]
    assert edit["type"] == "clear_tool_uses_20250919" and edit["clear_tool_inputs"] is True
    inputs = [b["input"] for m in seen if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert {} in inputs and inputs[-2:] == [{"part": 6}, {"part": 7}]  # cleared ones emptied, the kept 2 whole
    kept = [b["input"] for m in a.history if m["role"] == "assistant" for b in content_list(m) if b["type"] == "tool_use"]
    assert kept == [{"part": i} for i in range(8)] and history_problems(list(a.history)) == []  # client side intact
    assert any(x.layer == "server_edit" for r in a.records for x in r.context_actions)
    a.close()
